# tools/wsecc: the compiler's command line (Documentation/wsecc.rst).
progs += wsecc
wsecc_srcs := tools/wsecc/wsecc.c
wsecc_libs := wsecompiler wseengine wsep wafer wsecli
wsecc_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm
