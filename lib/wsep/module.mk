# lib/wsep: the .wsep program format (wse/wsep.h): writer, reader,
# validator and the seeded weight initialiser. The firmware links it too.
libs += wsep
wsep_srcs := lib/wsep/wsep_crc32c.c lib/wsep/wsep_names.c lib/wsep/wsep_init.c \
	lib/wsep/wsep_check.c lib/wsep/wsep_read.c lib/wsep/wsep_write.c lib/wsep/wsep_file.c

host_tests += wsep_format_test
wsep_format_test_srcs := tests/host/wsep_format_test.c tests/host/wsep_sample.c
wsep_format_test_libs := wsep
wsep_format_test_ldlibs := -lm

# The validator fuzzed: a seeded mutation loop and the crafted files of
# tests/corpus/wsep/ (regenerate them with tests/corpus/wsep/make-corpus).
host_tests += wsep_fuzz_test
wsep_fuzz_test_srcs := tests/host/wsep_fuzz_test.c tests/host/wsep_sample.c
wsep_fuzz_test_libs := wsep
wsep_fuzz_test_ldlibs := -lm
