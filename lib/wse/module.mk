# lib/wse: libwse, the runtime library (public headers in lib/include/wse/).
libs += wse
wse_srcs := lib/wse/ctl.c lib/wse/device.c lib/wse/bo.c lib/wse/job.c lib/wse/memoryx.c \
	lib/wse/program.c lib/wse/ring.c lib/wse/batch.c lib/wse/run.c lib/wse/params.c \
	lib/wse/strerror.c lib/wse/swarmx.c \
	lib/numparse/numparse.c lib/numparse/numformat.c
# Programs linking libwse also need libwselink after it, and these.
WSE_LDLIBS := -lnl-genl-3 -lnl-3 -luring


guest_tests += libwse_test
libwse_test_srcs := tests/guest/libwse_test.c
libwse_test_libs := wse wselink
libwse_test_ldlibs := $(WSE_LDLIBS)

guest_tests += libwse_program_test
libwse_program_test_srcs := tests/guest/libwse_program_test.c
libwse_program_test_libs := wse wsep wselink
libwse_program_test_ldlibs := $(WSE_LDLIBS) -lm

# MemoryX and SwarmX against the firmware engine, on the host.
host_tests += memoryx_test
memoryx_test_srcs := tests/host/memoryx_test.c
memoryx_test_libs := wse wsep wseengine
memoryx_test_ldlibs := -lopenblas -lm -lpthread
