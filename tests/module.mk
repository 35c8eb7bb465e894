# Tests: kselftest-harness programs run in the guest (tests/guest) and on the
# host (tests/host). The harness header comes from linux-source-6.12.
CFLAGS_tests := $(HARNESS_CFLAGS)

guest_tests += accel_test job_test link_test module_test train_test uring_test wsetrain_test \
	wsectl_test access_test wsetrain_graph_test harden_test ownership_test stress_test \
	fdinfo_test race_test slots_test params_access_test backlog_test appliance_isolation_test \
	wsetrain_predict_test wsetrain_pytorch_test
accel_test_srcs := tests/guest/accel_test.c
module_test_srcs := tests/guest/module_test.c
module_test_libs := wse wselink
module_test_ldlibs := $(WSE_LDLIBS)
link_test_srcs := tests/guest/link_test.c
link_test_libs := wse wselink
link_test_ldlibs := $(WSE_LDLIBS) -lpthread
ownership_test_srcs := tests/guest/ownership_test.c
ownership_test_libs := wse wsep wselink
ownership_test_ldlibs := $(WSE_LDLIBS) -lm
harden_test_srcs := tests/guest/harden_test.c
harden_test_libs := wse wselink
harden_test_ldlibs := $(WSE_LDLIBS) -lpthread
slots_test_srcs := tests/guest/slots_test.c
slots_test_libs := wse wsep wselink
slots_test_ldlibs := $(WSE_LDLIBS) -lm
params_access_test_srcs := tests/guest/params_access_test.c
params_access_test_libs := wse wsep wselink
params_access_test_ldlibs := $(WSE_LDLIBS) -lm
# Two users' jobs on one appliance: every op, which and slot of each against the other's.
appliance_isolation_test_srcs := tests/guest/appliance_isolation_test.c
appliance_isolation_test_libs := wse wsep wselink wseengine
appliance_isolation_test_ldlibs := $(WSE_LDLIBS) -lopenblas -lm
backlog_test_srcs := tests/guest/backlog_test.c
backlog_test_libs := wse wsep wselink
backlog_test_ldlibs := $(WSE_LDLIBS) -lm
race_test_srcs := tests/guest/race_test.c
race_test_libs := wse wselink
race_test_ldlibs := $(WSE_LDLIBS) -lpthread
fdinfo_test_srcs := tests/guest/fdinfo_test.c
fdinfo_test_libs := wse wselink
fdinfo_test_ldlibs := $(WSE_LDLIBS)
stress_test_srcs := tests/guest/stress_test.c
stress_test_libs := wse wsep wselink
stress_test_ldlibs := $(WSE_LDLIBS) -lm
job_test_srcs := tests/guest/job_test.c
job_test_libs := wse wselink
job_test_ldlibs := $(WSE_LDLIBS) -lpthread
uring_test_srcs := tests/guest/uring_test.c
uring_test_libs := wse wselink
uring_test_ldlibs := $(WSE_LDLIBS)
train_test_srcs := tests/guest/train_test.c
train_test_libs := wse wselink wsep wseengine
train_test_ldlibs := $(WSE_LDLIBS) -lopenblas -lm
# Runs the wsetrain program itself.
wsetrain_test_srcs := tests/guest/wsetrain_test.c
wsetrain_test_libs := wse wsedata wselink
wsetrain_test_ldlibs := $(WSE_LDLIBS) -lz -lm
# wsecc and wsetrain on the ONNX exports: graph programs in both modes.
wsetrain_graph_test_srcs := tests/guest/wsetrain_graph_test.c
wsetrain_graph_test_libs := wse wselink
wsetrain_graph_test_ldlibs := $(WSE_LDLIBS) -lm
# A GPT in bf16 with micro-batches through the driver, against PyTorch in the guest.
wsetrain_pytorch_test_srcs := tests/guest/wsetrain_pytorch_test.c
wsetrain_pytorch_test_libs := wse wselink
wsetrain_pytorch_test_ldlibs := $(WSE_LDLIBS) -lm
# wsetrain --predict and --eval of graph programs, and a signal while they run.
wsetrain_predict_test_srcs := tests/guest/wsetrain_predict_test.c
wsetrain_predict_test_libs := wse wsedata wselink
wsetrain_predict_test_ldlibs := $(WSE_LDLIBS) -lz -lm
# Device access as a user in the rule's group, and as one outside it.
access_test_srcs := tests/guest/access_test.c
access_test_libs := wse wselink
access_test_ldlibs := $(WSE_LDLIBS)
# Runs the wsectl program itself and reads its JSON with json-c.
wsectl_test_srcs := tests/guest/wsectl_test.c
wsectl_test_libs := wse wselink
wsectl_test_ldlibs := $(WSE_LDLIBS) -ljson-c

host_tests += uapi_layout_test
uapi_layout_test_srcs := tests/host/uapi_layout_test.c

# The UAPI layout must be the same for 32-bit userspace: build the layout
# test a second time with -m32 (it is all static_asserts plus a report).
userspace: $(B)/host-tests/uapi_layout_test32
$(B)/host-tests/uapi_layout_test32: tests/host/uapi_layout_test.c uapi/drm/wse_accel.h
	@mkdir -p $(dir $@)
	$(CC) -m32 $(filter-out -MMD -MP,$(BASE_CFLAGS)) $(HARNESS_CFLAGS) -o $@ $<

# Shell tests (host_scripts): bash completion of every installed tool.
host_scripts += completion_test
# BERT by masked LM on wsefwd against PyTorch (models/compare_bert.py --via device).
host_scripts += compare_bert_test
$(B)/host-tests/compare_bert_test: | $(B)/bin/wsecc $(B)/bin/wsefwd $(B)/bin/wse-trainhost
# The YNL spec of the netlink family against the UAPI header and the driver.
host_scripts += ynl_spec_test
# Documentation/train-your-own.rst: run, every command of it, in the guest
# (the page travels beside the test), and checked as a page on the host.
userspace: $(B)/tests/train_your_own_test $(B)/tests/train_your_own_test.py $(B)/tests/train-your-own.rst
$(B)/tests/train_your_own_test: tests/guest/train_your_own_test.sh
	@mkdir -p $(dir $@)
	cp $< $@ && chmod +x $@
$(B)/tests/train_your_own_test.py: tests/guest/train_your_own_test.py
	@mkdir -p $(dir $@)
	cp $< $@
$(B)/tests/train-your-own.rst: Documentation/train-your-own.rst
	@mkdir -p $(dir $@)
	cp $< $@
host_scripts += train_your_own_page_test
