# tests/tools: helper programs for tests, built as ordinary binaries in
# build/bin (and so copied into the QEMU guest).
progs += wse-fakehost
wse-fakehost_srcs := tests/tools/wse_fakehost.c
wse-fakehost_libs := wselink

progs += wse-hostile-peer
wse-hostile-peer_srcs := tests/tools/wse_hostile_peer.c tests/tools/hostile_semantic.c
wse-hostile-peer_libs := wselink wselinktest
wse-hostile-peer_ldlibs := -lpthread

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

# Trains an ONNX model on the host with the engine's graph executor
# (Documentation/onnx-import.rst), until graphs go into .wsep programs.
progs += wse-graphtrain
wse-graphtrain_srcs := tests/tools/wse_graphtrain.c
wse-graphtrain_libs := wsecompiler wsep wafer wsedata wseengine
wse-graphtrain_ldlibs := $(PROTOBUF_C_LIBS) -lz -lopenblas -lm

# wsecc on .onnx files and short wse-graphtrain runs (needs both built).
host_tests += onnx_cli_test
onnx_cli_test_srcs := tests/host/onnx_cli_test.c
$(B)/host-tests/onnx_cli_test $(B)/host-tests-san/onnx_cli_test: | $(B)/bin/wsecc $(B)/bin/wse-graphtrain

# Random, seeded calls into the driver from several processes of several
# threads each, as two users, with a real program (in the guest).
progs += wse-fuzz
wse-fuzz_srcs := tests/tools/wse_fuzz.c tests/tools/wse_fuzz_worker.c \
	tests/tools/wse_fuzz_calls.c tests/tools/wse_fuzz_canary.c
wse-fuzz_libs := wse wsep wsenum wselink
wse-fuzz_ldlibs := $(WSE_LDLIBS) -lpthread -lm

# Kernel memory before and after many jobs and attach/detach cycles (in the guest).
progs += wse-soak
wse-soak_srcs := tests/tools/wse_soak.c
wse-soak_libs := wse wsenum wselink
wse-soak_ldlibs := $(WSE_LDLIBS)
