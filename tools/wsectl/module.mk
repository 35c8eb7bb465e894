# tools/wsectl: devices, links and health (Documentation/wsectl.rst).
progs += wsectl
wsectl_srcs := $(addprefix tools/wsectl/, wsectl.c advice.c devices.c stats.c link.c monitor.c \
	json.c appliance.c)
wsectl_libs := wse wselink
wsectl_ldlibs = $(WSE_LDLIBS) -ljson-c
