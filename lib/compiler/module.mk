# lib/compiler: the wse compiler library (wse/compiler.h): model parser,
# op lowering and kernel check, mode choice, placement, estimates, report,
# SVG, and .wsep emission. wsecc is its command line and its only program;
# wsetrain runs wsecc rather than linking the library.
# The library is libwsecompiler, not libwsecc: the wsecc program and a
# wsecc library would share the wsecc_srcs variable of the top Makefile.
libs += wsecompiler
wsecompiler_srcs := lib/compiler/compiler_error.c lib/compiler/compiler_parse.c \
	lib/compiler/compiler_ops.c lib/compiler/compiler_cost.c \
	lib/compiler/compiler_place.c lib/compiler/compiler_stream.c \
	lib/compiler/compiler_compile.c lib/compiler/compiler_report.c \
	lib/compiler/compiler_svg.c lib/compiler/compiler_emit.c

host_tests += compiler_parse_test
compiler_parse_test_srcs := tests/host/compiler_parse_test.c
compiler_parse_test_libs := wsecompiler wsep wafer
compiler_parse_test_ldlibs := -lm

host_tests += compiler_place_test
compiler_place_test_srcs := tests/host/compiler_place_test.c
compiler_place_test_libs := wsecompiler wsep wafer
compiler_place_test_ldlibs := -lm

# Runs build/bin/wsecc; listed here so the compiler's tests stay together.
host_tests += compiler_cli_test
compiler_cli_test_srcs := tests/host/compiler_cli_test.c
compiler_cli_test_libs := wsep
compiler_cli_test_ldlibs := -lm
