# lib/wsep: the .wsep program format (wse/wsep.h): writer, reader,
# validator and the seeded weight initialiser. The firmware links it too.
libs += wsep
wsep_srcs := lib/wsep/wsep_names.c lib/wsep/wsep_init.c lib/wsep/wsep_train.c \
	lib/wsep/wsep_check.c lib/wsep/wsep_graph.c lib/wsep/wsep_params.c lib/wsep/wsep_cost.c lib/wsep/wsep_read.c lib/wsep/wsep_write.c lib/wsep/wsep_file.c

host_tests += wsep_format_test
wsep_format_test_srcs := tests/host/wsep_format_test.c tests/host/wsep_sample.c
wsep_format_test_libs := wsep
wsep_format_test_ldlibs := -lm

# The validator fuzzed: a seeded mutation loop and the crafted files of
# tests/corpus/wsep/ (regenerate them with tests/corpus/wsep/make-corpus).
host_tests += wsep_fuzz_test
wsep_fuzz_test_srcs := tests/host/wsep_fuzz_test.c tests/host/wsep_sample.c
wsep_fuzz_test_libs := wsep wseengine
wsep_fuzz_test_ldlibs := -lopenblas -lm

# Optional, not part of `make all`: a libFuzzer target for the validator
# (needs clang). See tests/host/wsep_libfuzzer.c for how to run it.
.PHONY: wsep-fuzz
wsep-fuzz: $(B)/fuzz/wsep_libfuzzer
$(B)/fuzz/wsep_libfuzzer: tests/host/wsep_libfuzzer.c tests/host/wsep_sample.c $(wsep_srcs) \
		lib/include/wse/wsep.h
	@mkdir -p $(dir $@)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -Iuapi -Ilib/include -Itests/host \
		-fsanitize=fuzzer,address,undefined -o $@ $(filter %.c,$^) -lm
