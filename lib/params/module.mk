# lib/params: libwseparams, one set of hyperparameters for wsecc and
# wsetrain from a params.yaml in ModelZoo's shape (wse/hparams.h), read
# with libyaml. Documentation/wsetrain.rst, "params.yaml", is its reference.
libs += wseparams
wseparams_srcs := lib/params/params_yaml.c lib/params/params_schedule.c lib/params/params_emit.c \
	lib/params/params_args.c
WSEPARAMS_LDLIBS := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)

# The reader: every key, types, ranges, schedules, unknown keys with their line.
host_tests += params_test
params_test_srcs := tests/host/params_test.c
params_test_libs := wseparams wsenum
params_test_ldlibs = $(WSEPARAMS_LDLIBS) -lm

# The tools with it: the example files for fc-mnist, the CNN and the GPT
# compiled into programs that hold what they say, the command line over
# the file, wsetrain handing it to wsecc, bad files refused.
host_tests += params_cli_test
params_cli_test_srcs := tests/host/params_cli_test.c
params_cli_test_libs := wsep
params_cli_test_ldlibs := -lm
$(B)/host-tests/params_cli_test $(B)/host-tests-san/params_cli_test: | $(B)/bin/wsecc $(B)/bin/wsetrain

# In the guest, on the device: one file trains fc-mnist, the CNN and the
# GPT through both tools, and the run directory keeps the resolved set.
guest_tests += wsetrain_params_test
wsetrain_params_test_srcs := tests/guest/wsetrain_params_test.c
wsetrain_params_test_libs := wse wselink
wsetrain_params_test_ldlibs = $(WSE_LDLIBS) -lm
