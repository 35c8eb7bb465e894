# Documentation/: the man pages of the tools and of libwse, made from the
# pages here by rst2man (Debian's python3-docutils), so nothing is written
# twice. A page names its section (":Manual section:" under its title). The
# reStructuredText is plain docutils but for Sphinx's :doc: role, which
# becomes a man page reference (wsectl(8)) or the page's path; the version
# is config.mk's.
man_pages := wsectl.8 wsefwd.8 wse-appliance.8 wsetrain.1 wsecc.1 wsebench.1 wsereport.1 libwse.3 wse.3py
man_files := $(addprefix $(B)/man/,$(man_pages))
RST2MAN ?= rst2man

#
# A man page stands alone: a reference to another page that is a man page
# (:doc:`wsecc`, or Documentation/wsecc.rst in the text) becomes wsecc(1);
# one to any other page becomes its installed path, @DOCDIR@/NAME.rst,
# which `make install` fills in as it copies the page (packaging/module.mk
# installs the pages there).
# Sections on the source tree and on measurements made here stay in the
# installed documentation; the man page says where (man-sections.awk).
man_dropped_sections := Files|Source|Tests|Measured|MEASURED
man_doc_refs := $(foreach m,$(man_pages),-e 's/:doc:`$(basename $(m))`/$(basename $(m))($(subst .,,$(suffix $(m))))/g' \
	-e 's|Documentation/$(basename $(m))\.rst|$(basename $(m))($(subst .,,$(suffix $(m))))|g')
define man_rule
$(B)/man/$(1): Documentation/$(basename $(1)).rst Documentation/module.mk Documentation/man-sections.awk
	@mkdir -p $$(dir $$@)
	@command -v $(RST2MAN) >/dev/null || { echo "no rst2man: run tools/install-deps (python3-docutils)" >&2; exit 1; }
	sed $(man_doc_refs) -e 's/:doc:`\([^`]*\)`/@DOCDIR@\/\1.rst/g' \
		-e 's|Documentation/\([A-Za-z0-9_-]*\.rst\)|@DOCDIR@/\1|g' \
		-e '/^:Manual section:/a :Version: $(WSE_VERSION)' $$< | \
		awk -v drop='$(man_dropped_sections)' -v doc='@DOCDIR@/$$(notdir $$<)' -f Documentation/man-sections.awk | \
		$(RST2MAN) --halt=warning --no-generator --no-datestamp - $$@.tmp && mv $$@.tmp $$@
endef
$(foreach m,$(man_pages),$(eval $(call man_rule,$(m))))

# Every page without a groff warning, and standing alone.
host_scripts += man_pages_test
# Every function, file and option the pages name exists (tools/check-docs).
host_scripts += doc_names_test
