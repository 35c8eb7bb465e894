# examples: short programs that show the libwse API (Documentation/libwse.rst).
# (ldlibs with "=": lib/wse/module.mk, which sets WSE_LDLIBS, is read after this.)
progs += wse-hello
wse-hello_srcs := examples/wse-hello.c
wse-hello_libs := wse wselink
wse-hello_ldlibs = $(WSE_LDLIBS)
