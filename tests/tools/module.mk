# tests/tools: helper programs for tests, built as ordinary binaries in
# build/bin (and so copied into the QEMU guest).
progs += wse-fakehost
wse-fakehost_srcs := tests/tools/wse_fakehost.c
wse-fakehost_libs := wselink
