// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for the .wsep validator and reader (optional; needs
 * clang): `make wsep-fuzz`, then
 *   cp -r tests/corpus/wsep /tmp/wsep-corpus
 *   build/fuzz/wsep_libfuzzer -max_total_time=60 /tmp/wsep-corpus
 * Each input is checked as it is and re-sealed (CRCs recomputed), so
 * that mutations reach the field checks. What must hold: no crash or sanitizer report on any input, and whatever
 * is accepted reads back and writes out to a file that is accepted again.
 * The seeded loop in wsep_fuzz_test.c is what make check runs.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wse/wsep.h"
#include "wsep_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *data, size_t size)
{
	struct wsep_program *p;
	char err[256];
	void *again;
	size_t len;

	if (wsep_validate(data, size, err, sizeof(err)))
		return;
	if (wsep_read(data, size, &p, err, sizeof(err)))
		abort();	/* validate and read must agree */
	if (wsep_write(p, &again, &len, err, sizeof(err)) ||
	    wsep_validate(again, len, err, sizeof(err)))
		abort();	/* an accepted program must survive a round trip */
	free(again);
	wsep_program_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);

	check(data, size);
	/* Re-sealed, the same bytes get past the CRCs to the field checks. */
	memcpy(copy, data, size);
	wsep_sample_reseal(copy, size);
	check(copy, size);
	free(copy);
	return 0;
}
