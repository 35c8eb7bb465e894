# lib/wse: libwse, the runtime library (public headers in lib/include/wse/).
libs += wse
wse_srcs := lib/wse/ctl.c
# Programs linking libwse also need: -lnl-genl-3 -lnl-3 (and libwselink).
WSE_LDLIBS := -lnl-genl-3 -lnl-3
