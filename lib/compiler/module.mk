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
	lib/compiler/compiler_svg.c lib/compiler/compiler_emit.c lib/compiler/compiler_param_names.c \
	lib/compiler/compiler_scale.c

# The graph IR, the ONNX importer and the bridge to the engine's graph
# executor (Documentation/onnx-import.rst). The importer parses with
# protobuf-c: onnx.proto comes from Debian's libonnx-dev and is compiled
# into $(B)/gen at build time (the top Makefile's protobuf_c). Programs that
# import ONNX link $(PROTOBUF_C_LIBS); those that build engine graphs,
# wseengine and OpenBLAS.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
$(eval $(call protobuf_c,$(ONNX_PROTO)))
wsecompiler_srcs += lib/compiler/compiler_graph.c lib/compiler/compiler_onnx.c \
	lib/compiler/compiler_onnx_fold.c lib/compiler/compiler_onnx_ops.c \
	lib/compiler/compiler_onnx_external.c lib/compiler/compiler_onnx_uses.c \
	lib/compiler/compiler_fuse.c lib/compiler/compiler_graph_engine.c lib/compiler/compiler_units.c \
	lib/compiler/compiler_graph_program.c lib/compiler/compiler_graph_report.c \
	lib/compiler/compiler_onnx_param_names.c lib/compiler/compiler_onnx_params.c lib/compiler/compiler_onnx_tie.c \
	lib/compiler/compiler_onnx_write.c \
	$(B)/gen/onnx.pb-c.c

host_tests += compiler_parse_test
compiler_parse_test_srcs := tests/host/compiler_parse_test.c
compiler_parse_test_libs := wsecompiler wsep wafer
compiler_parse_test_ldlibs := -lm

host_tests += compiler_place_test
compiler_place_test_srcs := tests/host/compiler_place_test.c
compiler_place_test_libs := wsecompiler wsep wafer
compiler_place_test_ldlibs := -lm

# Weight streaming across 1..192 systems: the sweep's shape, the
# documented formulas, and wsecc --report's table (runs build/bin/wsecc).
host_tests += compiler_scale_test
compiler_scale_test_srcs := tests/host/compiler_scale_test.c
compiler_scale_test_libs := wsecompiler wsep wafer
compiler_scale_test_ldlibs := -lm

# Runs build/bin/wsecc; listed here so the compiler's tests stay together.
host_tests += compiler_cli_test
compiler_cli_test_srcs := tests/host/compiler_cli_test.c
compiler_cli_test_libs := wsep
compiler_cli_test_ldlibs := -lm

# GPT-J 6B, LLaMA-7B and GPT-3 175B compiled by build/bin/wsecc from their
# gzipped shapes-only exports, recompute on, the compiler's peak memory.
host_tests += reference_compile_test
reference_compile_test_srcs := tests/host/reference_compile_test.c
$(B)/host-tests/reference_compile_test: | $(B)/bin/wsecc
$(B)/host-tests-san/reference_compile_test: | $(B)/bin/wsecc

# ONNX's node tests, each supported op forward against libonnx-testdata.
host_tests += onnx_node_test
onnx_node_test_srcs := tests/host/onnx_node_test.c
onnx_node_test_libs := wsecompiler wsep wafer wseengine
onnx_node_test_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm

# PyTorch exports (tests/corpus/onnx) imported, run and trained.
host_tests += onnx_graph_test
onnx_graph_test_srcs := tests/host/onnx_graph_test.c
onnx_graph_test_libs := wsecompiler wsep wafer wseengine
onnx_graph_test_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm

# Mixed precision: fp32, bf16 and fp16 training curves against PyTorch's.
host_tests += precision_test
precision_test_srcs := tests/host/precision_test.c
precision_test_libs := wsecompiler wsep wafer wseengine
precision_test_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm

# Models of any size: external data, --no-weights, counts beyond 2^32.
host_tests += onnx_external_test
onnx_external_test_srcs := tests/host/onnx_external_test.c
onnx_external_test_libs := wsecompiler wsep wafer wseengine
onnx_external_test_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm

# The importer fuzzed: a seeded mutation loop over tests/corpus/onnx.
host_tests += onnx_fuzz_test
onnx_fuzz_test_srcs := tests/host/onnx_fuzz_test.c
onnx_fuzz_test_libs := wsecompiler wsep wafer wseengine
onnx_fuzz_test_ldlibs := $(PROTOBUF_C_LIBS) -lopenblas -lm

# Optional, not part of `make all`: a libFuzzer target (needs clang), as
# wsep-fuzz; see tests/host/onnx_libfuzzer.c. (The other libraries'
# module.mk are read after this one: their sources by wildcard.)
.PHONY: onnx-fuzz
onnx-fuzz: $(B)/fuzz/onnx_libfuzzer
$(B)/fuzz/onnx_libfuzzer: tests/host/onnx_libfuzzer.c tests/host/onnx_fuzz_run.h \
		$(filter-out $(B)/%,$(wsecompiler_srcs)) $(B)/gen/onnx.pb-c.c \
		$(wildcard lib/wsep/*.c lib/wafer/*.c lib/engine/*.c lib/crc32c/*.c lib/outfile/*.c)
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Wno-unused-command-line-argument -Wno-missing-field-initializers \
		-Iuapi -Ilib/include -I$(B)/gen -Itests/host \
		-fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) \
		$(PROTOBUF_C_LIBS) -lopenblas -lm
