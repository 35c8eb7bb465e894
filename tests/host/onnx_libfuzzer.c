// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the ONNX importer and the graph executor (optional;
 * needs clang): `make onnx-fuzz`, then
 *   cp -r tests/corpus/onnx /tmp/onnx-corpus
 *   build/fuzz/onnx_libfuzzer -max_total_time=60 /tmp/onnx-corpus
 * What must hold: no crash or sanitizer report on any input, and a message
 * for every refusal. The seeded loop in onnx_fuzz_test.c is what make
 * check runs.
 */
#include <stdint.h>
#include <stdlib.h>

#include "onnx_fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (onnx_fuzz_run(data, size) == FUZZ_BAD)
		abort();
	return 0;
}
