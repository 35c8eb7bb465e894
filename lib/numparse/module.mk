# lib/numparse: libwsenum, the one number parser of the tools (wse/numparse.h)
# and its printer with units (wse/numformat.h).
# A leaf library: every program links it (leaf_libs in the top Makefile);
# the installed libwse carries the parser (lib/wse/module.mk).
libs += wsenum
wsenum_srcs := lib/numparse/numparse.c lib/numparse/numformat.c

host_tests += numparse_test
numparse_test_srcs := tests/host/numparse_test.c
numparse_test_libs := wsenum
