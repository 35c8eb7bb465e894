# tests/tools: helper programs for tests, built as ordinary binaries in
# build/bin (and so copied into the QEMU guest).
progs += wse-fakehost
wse-fakehost_srcs := tests/tools/wse_fakehost.c
wse-fakehost_libs := wselink

progs += wse-hostile-peer
wse-hostile-peer_srcs := tests/tools/wse_hostile_peer.c
wse-hostile-peer_libs := wselink

# The hostile peer against the host side of libwselink.
host_tests += link_hostile_peer_test
link_hostile_peer_test_srcs := tests/host/link_hostile_peer_test.c
link_hostile_peer_test_libs := wselink
$(B)/host-tests/link_hostile_peer_test $(B)/host-tests-san/link_hostile_peer_test: | \
	$(B)/bin/wse-hostile-peer

# A userspace host that trains a compiled program on wsefwd in either mode
# (MemoryX for weight streaming) over the link itself, without the driver:
# the firmware's execution opcodes tested on the host.
progs += wse-trainhost
wse-trainhost_srcs := tests/tools/wse_trainhost.c
wse-trainhost_libs := wse wsedata wsep wseengine wselink
wse-trainhost_ldlibs := -lz -lopenblas -lm
