# lib/link: libwselink, the userspace side of the link protocol (frame codec,
# CRC32C, frame I/O, link addresses, malformed-frame generator).
libs += wselink
wselink_srcs := lib/crc32c/crc32c.c lib/link/frame_header.c lib/link/payloads.c \
	lib/link/frame_io.c lib/link/link_addr.c lib/link/malformed.c \
	lib/link/link_client.c lib/link/exec_payloads.c lib/link/region_payloads.c \
	lib/link/appliance_payloads.c lib/link/link_region.c lib/numparse/numparse.c \
	lib/outfile/outfile.c

host_tests += link_codec_test
link_codec_test_srcs := tests/host/link_codec_test.c
link_codec_test_libs := wselink
