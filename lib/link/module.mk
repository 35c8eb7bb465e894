# lib/link: libwselink, the userspace side of the link protocol (frame codec,
# frame I/O, link addresses, the host-side client, shared regions).
libs += wselink
wselink_srcs := lib/link/frame_header.c lib/link/payloads.c \
	lib/link/frame_io.c lib/link/link_addr.c \
	lib/link/link_client.c lib/link/exec_payloads.c lib/link/region_payloads.c \
	lib/link/appliance_payloads.c lib/link/link_region.c
# libwselinktest, test support: the malformed-frame generator
# (wse/link_malform.h) of the tests, wse-hostile-peer and wsefwd's fault
# injection; never in libwse.
libs += wselinktest
wselinktest_srcs := lib/link/malformed.c

host_tests += link_codec_test
link_codec_test_srcs := tests/host/link_codec_test.c
link_codec_test_libs := wselink wselinktest
