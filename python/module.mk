# python/: the wse Python package (Documentation/wse.rst).
#
# Host test: its ctypes layouts against the headers, its errors, and (with
# PyTorch) its optimizer mapping. Guest test: wse.fit through the driver,
# run where tools/wsevm --host-usr gives the guest the host's Python. Post
# test: what the guest test returned, evaluated in PyTorch on the host.
host_scripts += python_test
$(B)/host-tests/python_test: tests/host/python_layout.c tests/host/python_test.py \
	tests/host/python_ckpt_layout.py

userspace: $(B)/tests/python_fit_test $(B)/tests/python_fit_gpt_test $(B)/tests/python_fit_test.py \
	$(B)/tests/python_example_train_cnn.py $(B)/tests/python_example_compare_wsetrain.py
# The examples, which python_fit_gpt_test runs (mode 644: not tests of their own).
$(B)/tests/python_example_%.py: examples/python/%.py
	@mkdir -p $(dir $@)
	install -m 644 $< $@
# One script, two tests (its parts "cnn" and "gpt"): each within run-tests' 600 s.
$(B)/tests/python_fit_test $(B)/tests/python_fit_gpt_test: tests/guest/python_fit_test.sh
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@
$(B)/tests/python_fit_test.py: tests/guest/python_fit_test.py
	@mkdir -p $(dir $@)
	cp $< $@

# After the guest: the modules python_fit_test returned, in PyTorch on the host.
userspace: $(B)/post-tests/python_host_eval
$(B)/post-tests/python_host_eval: tests/host/python_host_eval.py
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@

# `make install`: the package where Debian's python3 looks (PYTHONDIR):
# under /usr beside what python3-torch installs, /usr/lib/python3/dist-packages;
# under another PREFIX (/usr/local) its lib/python3.X/dist-packages.
PYTHONDIR ?= $(eval PYTHONDIR := $$(if $$(filter /usr,$$(PREFIX)),/usr/lib/python3/dist-packages,$$(PREFIX)/lib/$$(shell \
	/usr/bin/python3 -c 'import sys; print("python3.%d" % sys.version_info[1])' 2>/dev/null || echo python3)/dist-packages))$(PYTHONDIR)
python_files := $(wildcard python/wse/*.py)
.PHONY: install-python uninstall-python
install: install-python
uninstall: uninstall-python
install-python:
	$(INSTALL) -d $(DESTDIR)$(PYTHONDIR)/wse
	$(INSTALL) -m 644 $(python_files) $(DESTDIR)$(PYTHONDIR)/wse
uninstall-python:
	rm -rf $(DESTDIR)$(PYTHONDIR)/wse
