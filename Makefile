# wse top-level build. `make` builds the module and all userspace into build/;
# `make check` runs every test (see Documentation/building.rst).
#
# Each directory's module.mk declares what it builds by appending to:
#   libs        NAME -> build/lib/libNAME.a; NAME_srcs
#   progs       NAME -> build/bin/NAME;      NAME_srcs, NAME_libs, NAME_ldlibs
#   host_tests  NAME -> build/host-tests/NAME and, under ASan/UBSan,
#                       build/host-tests-san/NAME
#   guest_tests NAME -> build/tests/NAME (run inside the QEMU guest)
#   post_tests  NAME -> build/post-tests/NAME (run on the host after the
#                       guest tests, on what they left in the shared runs/)
#   host_scripts NAME -> build/host-tests/NAME from tests/host/NAME.sh, a
#                       shell test run once (with tests/host/tap.sh beside it)
# NAME_libs names project libraries (linked in the order given), NAME_ldlibs
# system ones. Every program and test also links the leaf libraries
# (leaf_libs) last: each of their objects is in one archive only, and a
# program takes from an archive only the members it uses.

include config.mk

# module.mk fragments may define rules; `make` alone still means `all`.
.DEFAULT_GOAL := all

KDIR ?= $(WSE_DEPS)/root/usr/src/linux-headers-$(KVER)
KSRC ?= /usr/src/linux-source-6.12
B := build

CC := gcc
PKG_CFLAGS := $(shell pkg-config --cflags libdrm libnl-genl-3.0 2>/dev/null)
WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O2 $(WARN) -MMD -MP \
	-Iuapi -Ilib/include -I$(B)/gen $(PKG_CFLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# The kselftest harness comes from Debian's linux-source-6.12, never from this tree.
HARNESS_CFLAGS := -isystem $(KSRC)/tools/testing/selftests -Wno-unused-parameter \
	-Wno-missing-prototypes

libs :=
progs :=
host_tests :=
host_scripts :=
guest_tests :=
post_tests :=
gen_headers := $(B)/gen/wse_version.h

# --- protobuf-c -------------------------------------------------------------
# A schema (.proto) is compiled by protoc-c into $(B)/gen at build time, never
# committed: $(eval $(call protobuf_c,PATH/NAME.proto)) in a module.mk makes
# $(B)/gen/NAME.pb-c.c (list it among a library's sources), NAME.pb-c.h
# (which every object waits for) and NAME.desc, the schema as a descriptor
# set for readers in other languages. Programs that link the code add
# $(PROTOBUF_C_LIBS).
PROTOBUF_C_LIBS := $(shell pkg-config --libs libprotobuf-c 2>/dev/null || echo -lprotobuf-c)
define protobuf_c
gen_headers += $(B)/gen/$(basename $(notdir $(1))).pb-c.h
$(B)/gen/$(basename $(notdir $(1))).pb-c.h: $(B)/gen/$(basename $(notdir $(1))).pb-c.c
$(B)/gen/$(basename $(notdir $(1))).pb-c.c: $(1)
	@test -r $$< || { echo "no $$<: run tools/install-deps" >&2; exit 1; }
	@mkdir -p $$(dir $$@)
	protoc-c -I$$(dir $$<) --c_out=$$(dir $$@) \
		--descriptor_set_out=$$(@:.pb-c.c=.desc) $$<
endef

# $(call objs,SRCS,DIR): the objects of SRCS built in $(B)/DIR (obj, obj-san,
# obj-pic); $(call libfiles,NAMES,DIR): the archives of libraries NAMES.
objs = $(patsubst %.c,$(B)/$(2)/%.o,$(1))
libfiles = $(foreach l,$(1),$(B)/$(2)/lib$(l).a)

include $(sort $(wildcard */module.mk */*/module.mk))

.PHONY: all module kmod-tree print-kmod userspace check demo bench bench-train fuzz soak clean distclean help deps print-kdir print-ksrc
all: module userspace

help:
	@echo "make            build wse.ko and all userspace into build/"
	@echo "make check      build, run host and guest tests, checkpatch, sparse"
	@echo "make demo       the main job, in the QEMU guest"
	@echo "make bench      benchmarks (wsebench in the guest)"
	@echo "make bench-train  wsetrain against PyTorch, samples/s"
	@echo "make fuzz       100000 random calls into the driver in the guest"
	@echo "make soak       kernel memory before and after many jobs and attaches"
	@echo "make deps       install the Debian packages and kernel the project needs"
	@echo "make clean      remove build outputs"

deps:
	tools/install-deps

# --- kernel module ----------------------------------------------------------
# Kbuild writes its objects next to the sources it is given, and 6.12 has no
# separate output directory for external modules (MO= came in 6.13). So the
# module is built in $(KMOD), a tree of links to driver/, uapi/ and Kbuild:
# every .o, .cmd and wse.ko lands there, none in the source tree.
KMOD := $(CURDIR)/$(B)/kmod
DRIVER_SRCS := $(wildcard driver/*.c driver/*.h)

module: $(B)/wse.ko
kmod-tree:
	@mkdir -p $(KMOD)/driver
	@find $(KMOD)/driver -xtype l -delete
	@for f in $(DRIVER_SRCS); do ln -sfn $(CURDIR)/$$f $(KMOD)/$$f; done
	@ln -sfn $(CURDIR)/uapi $(KMOD)/uapi
	@ln -sfn $(CURDIR)/Kbuild $(KMOD)/Kbuild
$(B)/wse.ko: $(DRIVER_SRCS) $(wildcard uapi/*/*.h uapi/*.h) Kbuild
	@test -d $(KDIR) || { echo "no kernel headers in $(KDIR): run tools/install-deps" >&2; exit 1; }
	$(MAKE) --no-print-directory kmod-tree
	$(MAKE) -C $(KDIR) M=$(KMOD) modules
	cp $(KMOD)/wse.ko $@

# --- userspace --------------------------------------------------------------
# Generated headers ($(B)/gen) exist before anything compiles.
$(B)/obj/%.o: %.c | $(gen_headers)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@
$(B)/obj-san/%.o: %.c | $(gen_headers)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) $(CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@
# Position-independent objects, for shared libraries.
$(B)/obj-pic/%.o: %.c | $(gen_headers)
	@mkdir -p $(dir $@)
	$(CC) $(BASE_CFLAGS) -fPIC $(CFLAGS_$(firstword $(subst /, ,$<))) -c $< -o $@

# WSE_VERSION (config.mk) for --version: rewritten only when it changes,
# so only what prints it is rebuilt. The recipe runs whenever config.mk or
# this Makefile (which holds the header's text) is newer.
$(B)/gen/wse_version.h: config.mk Makefile
	@mkdir -p $(dir $@)
	@printf '/* Generated from config.mk. */\n#define WSE_VERSION "%s"\n%s\n' '$(WSE_VERSION)' \
		'#define WSE_VERSION_LINE(prog) prog " (wse) " WSE_VERSION "\n"' >$@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@


define lib_rule
$(B)/lib/lib$(1).a: $(call objs,$($(1)_srcs),obj)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(B)/lib-san/lib$(1).a: $(call objs,$($(1)_srcs),obj-san)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef

# $(1) name, $(2) output dir, $(3) obj dir, $(4) lib dir, $(5) extra flags
define link_rule
$(B)/$(2)/$(1): $(call objs,$($(1)_srcs),$(3)) $(call libfiles,$($(1)_libs),$(4))
	@mkdir -p $$(dir $$@)
	$(CC) $(5) -o $$@ $$^ $($(1)_ldlibs)
endef

# The libraries that need no other of the project's: the tools' command line
# (libwsecli), output files (libwseout), numbers (libwsenum), CRC32C
# (libwsecrc). wsecli before wsenum, which its number options use.
leaf_libs := wsecli wseout wsenum wsecrc
$(foreach p,$(progs) $(host_tests) $(guest_tests) $(post_tests),\
	$(eval $(p)_libs := $(filter-out $(leaf_libs),$($(p)_libs)) $(leaf_libs)))
# The sanitizer builds of the daemons have rules of their own (module.mk).
$(B)/san-bin/wsefwd $(B)/san-bin/wse-appliance: $(call libfiles,$(leaf_libs),lib-san)

$(foreach l,$(libs),$(eval $(call lib_rule,$(l))))
$(foreach p,$(progs),$(eval $(call link_rule,$(p),bin,obj,lib,)))
$(foreach t,$(host_tests),$(eval $(call link_rule,$(t),host-tests,obj,lib,)))
$(foreach t,$(host_tests),$(eval $(call link_rule,$(t),host-tests-san,obj-san,lib-san,$(SAN_FLAGS))))
$(foreach t,$(guest_tests),$(eval $(call link_rule,$(t),tests,obj,lib,)))
$(foreach t,$(post_tests),$(eval $(call link_rule,$(t),post-tests,obj,lib,)))

# Shell tests: the script, and the TAP helpers it sources (not a test itself).
$(B)/host-tests/%: tests/host/%.sh | $(B)/host-tests/tap.sh.inc
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@
$(B)/host-tests/tap.sh.inc: tests/host/tap.sh
	@mkdir -p $(dir $@)
	cp $< $@

userspace: $(addprefix $(B)/lib/lib,$(addsuffix .a,$(libs))) \
	$(addprefix $(B)/bin/,$(progs)) \
	$(addprefix $(B)/host-tests/,$(host_tests) $(host_scripts)) \
	$(addprefix $(B)/host-tests-san/,$(host_tests)) \
	$(addprefix $(B)/tests/,$(guest_tests)) \
	$(addprefix $(B)/post-tests/,$(post_tests)) \
	$(B)/tests/run-tests

$(B)/tests/run-tests: tests/run-tests
	@mkdir -p $(dir $@)
	cp $< $@

-include $(shell find $(B)/obj $(B)/obj-san $(B)/obj-pic -name '*.d' 2>/dev/null)

# --- checks -----------------------------------------------------------------
check:
	tools/check

demo:
	tools/demo

# Benchmarks print ratios against baselines measured in the same run.
bench: all
	@test -x tools/bench || { echo "tools/bench is not there yet" >&2; exit 1; }
	tools/bench

bench-train:
	tools/bench-train/run

# The driver's long stress runs (Documentation/testing.rst); make check has
# small ones.
fuzz:
	tools/stress fuzz
soak:
	tools/stress soak

clean:
	rm -rf $(B)

distclean: clean

# For scripts: where the kernel headers are, and the module's build tree.
print-kdir:
	@echo $(KDIR)
print-kmod:
	@echo $(KMOD)
# The kernel source tree the kselftest harness comes from.
print-ksrc:
	@echo $(KSRC)
