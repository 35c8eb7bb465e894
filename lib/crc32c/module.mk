# lib/crc32c: libwsecrc, the one CRC32C (wse/crc32c.h) of the link frames,
# the .wsep files and the TFRecord framing. A leaf library: every program
# links it (leaf_libs in the top Makefile).
libs += wsecrc
wsecrc_srcs := lib/crc32c/crc32c.c
