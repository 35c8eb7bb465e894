progs += wsectl
wsectl_srcs := tools/wsectl/wsectl.c
wsectl_libs := wse wselink
wsectl_ldlibs := $(WSE_LDLIBS)
