# packaging/: `make install` and `make uninstall`, as a Linux package lays
# wse out (Documentation/building.rst, "Installing"). PREFIX and DESTDIR as
# usual; the directories below may each be overridden. udev, sysusers,
# systemd and DKMS read only their system directories, so those do not
# follow PREFIX; nor does SYSCONFDIR, where the units read their settings.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
# Debian's multiarch directory (lib/x86_64-linux-gnu), which ld.so and
# pkg-config search under /usr and /usr/local alike; plain lib/ where the
# toolchain knows no multiarch triplet. Asked once, when first needed
# (the $(eval) makes the answer a simple variable).
MULTIARCH ?= $(eval MULTIARCH := $$(shell dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || \
	$(CC) -print-multiarch 2>/dev/null))$(MULTIARCH)
LIBDIR ?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
# The documentation (Documentation/*.rst), which the man pages name.
DOCDIR ?= $(DATADIR)/doc/wse
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
UDEVDIR ?= /usr/lib/udev
SYSUSERSDIR ?= /usr/lib/sysusers.d
SYSTEMDUNITDIR ?= $(eval SYSTEMDUNITDIR := $$(or $$(shell pkg-config --variable=systemdsystemunitdir \
	systemd 2>/dev/null),/usr/lib/systemd/system))$(SYSTEMDUNITDIR)
SYSCONFDIR ?= /etc
DKMSSRCDIR ?= /usr/src/wse-$(WSE_VERSION)
INSTALL ?= install

# What is installed, from where.
install_progs := wsectl wsetrain wsecc wsefwd wse-appliance wsebench wsereport
install_headers := lib/include/wse/wse.h lib/include/wse/ctl.h
# The UAPI header keeps the kernel's drm/ layout, but inside the project's
# own directory: INCLUDEDIR/drm/ is linux-libc-dev's. libwse.pc adds
# -I$(INCLUDEDIR)/wse so that <drm/wse_accel.h> finds it.
install_uapi_dir := $(INCLUDEDIR)/wse/drm
install_models := models/fc-mnist models/fc-large
# The params files (wsetrain --params, wsecc --params) for fc-mnist, the
# CNN and the GPT, as examples to copy.
install_params := $(wildcard models/params/*.yaml)
# One bash completion file for them all (packaging/bash-completion/wse),
# and a link to it named after each tool, which bash-completion loads.
install_completions := $(install_progs)
# systemd units, from packaging/systemd/NAME.in.
install_units := wsefwd@.service wse-appliance.service

# `make all` builds what is installed, so that `make install` (as root)
# only copies. The module is not installed: DKMS builds it from the source
# installed in DKMSSRCDIR, for each kernel.
.PHONY: package install uninstall print-install-progs
# For tests: the programs make install installs.
print-install-progs:
	@echo $(install_progs)
package: $(libwse_dist) $(man_files)
all: package

# @VARS@ of a packaging/*.in file, for the directories given now; those
# under PREFIX relative to ${prefix}, so `pkg-config --define-prefix` (and
# a relocated tree) works.
under_prefix = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
subst_dirs = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(call under_prefix,$(LIBDIR))|g' \
	-e 's|@INCLUDEDIR@|$(call under_prefix,$(INCLUDEDIR))|g' -e 's|@VERSION@|$(WSE_VERSION)|g'
# The same for files that name absolute paths (systemd units).
subst_paths = sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g'

install: userspace package
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(INCLUDEDIR)/wse $(DESTDIR)$(install_uapi_dir) \
		$(DESTDIR)$(DATADIR)/wse/models $(DESTDIR)$(DATADIR)/wse/params \
		$(DESTDIR)$(DATADIR)/wse/timing \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(UDEVDIR)/rules.d $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(DKMSSRCDIR)/driver $(DESTDIR)$(DKMSSRCDIR)/uapi/drm \
		$(addprefix $(DESTDIR)$(MANDIR)/man,1 3 8) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 755 $(addprefix $(B)/bin/,$(install_progs)) $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(B)/dist/lib/libwse.so.$(WSE_VERSION) $(DESTDIR)$(LIBDIR)
	ln -sfn libwse.so.$(WSE_VERSION) $(DESTDIR)$(LIBDIR)/libwse.so.$(WSE_SOVERSION)
	ln -sfn libwse.so.$(WSE_SOVERSION) $(DESTDIR)$(LIBDIR)/libwse.so
	$(INSTALL) -m 644 $(B)/dist/lib/libwse.a $(DESTDIR)$(LIBDIR)
	$(subst_dirs) packaging/libwse.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/libwse.pc
	$(INSTALL) -m 644 $(install_headers) $(DESTDIR)$(INCLUDEDIR)/wse
	$(INSTALL) -m 644 uapi/drm/wse_accel.h $(DESTDIR)$(install_uapi_dir)
	$(INSTALL) -m 644 $(install_models) $(DESTDIR)$(DATADIR)/wse/models
	$(INSTALL) -m 644 $(install_params) $(DESTDIR)$(DATADIR)/wse/params
	$(INSTALL) -m 644 firmware-sim/timing/wse2.params $(DESTDIR)$(DATADIR)/wse/timing
	for m in $(man_pages); do \
		s=$${m##*.}; s=$${s%%[a-z]*}; \
		sed 's|@DOCDIR@|$(DOCDIR)|g' $(B)/man/$$m >$(DESTDIR)$(MANDIR)/man$$s/$$m || exit 1; \
	done
	$(INSTALL) -m 644 $(wildcard Documentation/*.rst) $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 packaging/bash-completion/wse $(DESTDIR)$(BASHCOMPDIR)/wse
	for c in $(install_completions); do ln -sfn wse $(DESTDIR)$(BASHCOMPDIR)/$$c || exit 1; done
	$(INSTALL) -m 644 packaging/60-wse.rules $(DESTDIR)$(UDEVDIR)/rules.d
	$(INSTALL) -m 644 packaging/wse.sysusers $(DESTDIR)$(SYSUSERSDIR)/wse.conf
	for u in $(install_units); do \
		$(subst_paths) packaging/systemd/$$u.in >$(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done
	$(INSTALL) -m 644 Kbuild $(DESTDIR)$(DKMSSRCDIR)
	$(INSTALL) -m 644 $(DRIVER_SRCS) $(DESTDIR)$(DKMSSRCDIR)/driver
	$(INSTALL) -m 644 $(wildcard uapi/*.h) $(DESTDIR)$(DKMSSRCDIR)/uapi
	$(INSTALL) -m 644 $(wildcard uapi/drm/*.h) $(DESTDIR)$(DKMSSRCDIR)/uapi/drm
	$(subst_dirs) packaging/dkms.conf >$(DESTDIR)$(DKMSSRCDIR)/dkms.conf

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(install_progs))
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libwse.so.$(WSE_VERSION) \
		libwse.so.$(WSE_SOVERSION) libwse.so libwse.a)
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/libwse.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/wse/,$(notdir $(install_headers)))
	rm -f $(DESTDIR)$(install_uapi_dir)/wse_accel.h
	rm -rf $(DESTDIR)$(DATADIR)/wse $(DESTDIR)$(DOCDIR)
	for m in $(man_pages); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$${s%%[a-z]*}/$$m; done
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,wse $(install_completions))
	rm -f $(DESTDIR)$(UDEVDIR)/rules.d/60-wse.rules $(DESTDIR)$(SYSUSERSDIR)/wse.conf
	rm -f $(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(install_units))
	rm -rf $(DESTDIR)$(DKMSSRCDIR)
	-rmdir $(DESTDIR)$(install_uapi_dir) $(DESTDIR)$(INCLUDEDIR)/wse 2>/dev/null
host_scripts += install_test
host_scripts += dkms_test
host_scripts += systemd_units_test
