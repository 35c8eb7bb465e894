# lib/params: libwseparams, one set of hyperparameters for wsecc and
# wsetrain from a params.yaml in ModelZoo's shape (wse/hparams.h), read
# with libyaml. Documentation/params.rst is its reference.
libs += wseparams
wseparams_srcs := lib/params/params_yaml.c lib/params/params_schedule.c lib/params/params_emit.c
WSEPARAMS_LDLIBS := $(shell pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml)

# The reader: every key, types, ranges, schedules, unknown keys with their line.
host_tests += params_test
params_test_srcs := tests/host/params_test.c
params_test_libs := wseparams wsenum
params_test_ldlibs = $(WSEPARAMS_LDLIBS) -lm
