# lib/wafer: wafer geometry and performance figures (wse/wafer.h).
# A plain library with no other project dependency: the firmware's timing
# model reads the same figures as the compiler.
libs += wafer
wafer_srcs := lib/wafer/wafer_presets.c lib/wafer/wafer_parse.c lib/wafer/wafer_figures.c

host_tests += wafer_test
wafer_test_srcs := tests/host/wafer_test.c
wafer_test_libs := wafer
wafer_test_ldlibs := -lm
