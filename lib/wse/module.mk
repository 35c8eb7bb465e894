# lib/wse: libwse, the runtime library (public headers in lib/include/wse/).
libs += wse
wse_srcs := lib/wse/ctl.c lib/wse/device.c lib/wse/bo.c lib/wse/job.c \
	lib/wse/program.c lib/wse/ring.c lib/wse/strerror.c
# Programs linking libwse also need libwselink after it, and these.
WSE_LDLIBS := -lnl-genl-3 -lnl-3 -luring

