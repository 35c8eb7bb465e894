# lib/numparse: libwsenum, the one number parser of the tools (wse/numparse.h)
# and its printer with units (wse/numformat.h).
# libwse, libwselink and libwafer carry the same object, so programs that
# link one of them need nothing more; others link wsenum.
libs += wsenum
wsenum_srcs := lib/numparse/numparse.c lib/numparse/numformat.c

host_tests += numparse_test
numparse_test_srcs := tests/host/numparse_test.c
numparse_test_libs := wsenum
