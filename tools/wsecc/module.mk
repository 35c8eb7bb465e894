# tools/wsecc: the compiler's command line (Documentation/wsecc.rst).
progs += wsecc
wsecc_srcs := tools/wsecc/wsecc.c tools/wsecc/params.c
wsecc_libs := wsecompiler wseengine wsep wafer wsecli wseparams wsenum
wsecc_ldlibs = $(PROTOBUF_C_LIBS) $(WSEPARAMS_LDLIBS) -lopenblas -lm
