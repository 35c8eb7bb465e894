# lib/wse: libwse, the runtime library (public headers in lib/include/wse/).
libs += wse
wse_srcs := lib/wse/ctl.c lib/wse/device.c lib/wse/bo.c lib/wse/job.c \
	lib/wse/program.c lib/wse/ring.c lib/wse/batch.c lib/wse/run.c lib/wse/params.c \
	lib/wse/appliance.c lib/wse/strerror.c lib/wse/access.c
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


# The library as `make install` installs it (Documentation/libwse.rst,
# "Installed library"): libwse.so.$(WSE_VERSION) with the soname
# libwse.so.$(WSE_SOVERSION), exporting only the API of wse/wse.h and
# wse/ctl.h (libwse.map), and libwse.a. Both carry what libwse's own
# objects use of the others (the closure of their undefined symbols, by
# nm): the payloads of an appliance and a RUN, the frame header's error
# text, link addresses, and the leaf libraries those use. Nothing else of
# libwselink (frame I/O, the client, regions) and none of the test
# support (libwselinktest), so a program needs only `pkg-config --libs
# libwse`, and the library carries only what it exports and what that
# calls.
WSE_SONAME = libwse.so.$(WSE_SOVERSION)
libwse_link_srcs := lib/link/frame_header.c lib/link/exec_payloads.c \
	lib/link/appliance_payloads.c lib/link/link_addr.c lib/crc32c/crc32c.c \
	lib/numparse/numparse.c lib/outfile/outfile.c
libwse_dist_srcs = $(sort $(wse_srcs) $(libwse_link_srcs))
libwse_dist := $(B)/dist/lib/libwse.so.$(WSE_VERSION) $(B)/dist/lib/libwse.so.$(WSE_SOVERSION) \
	$(B)/dist/lib/libwse.so $(B)/dist/lib/libwse.a
# Rebuilt when this list changes too (a shorter list has no newer object).
$(B)/dist/lib/libwse.so.$(WSE_VERSION): $(call objs,$(libwse_dist_srcs),obj-pic) lib/wse/libwse.map \
		lib/wse/module.mk
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(WSE_SONAME) -Wl,--version-script=lib/wse/libwse.map \
		-Wl,-z,defs -Wl,--as-needed -o $@ $(filter %.o,$^) $(WSE_LDLIBS)
$(B)/dist/lib/libwse.so.$(WSE_SOVERSION) $(B)/dist/lib/libwse.so: $(B)/dist/lib/libwse.so.$(WSE_VERSION)
	ln -sfn $(notdir $<) $@
$(B)/dist/lib/libwse.a: $(call objs,$(libwse_dist_srcs),obj) lib/wse/module.mk
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(filter %.o,$^)
