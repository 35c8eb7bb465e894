// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzing the ONNX importer: a seeded, bounded loop of mutations (bit
 * flips, overwritten bytes, interesting varints, zeroed runs, truncations,
 * extensions) of the PyTorch exports in tests/corpus/onnx. Every input
 * must be imported or refused with a message, never crash; what imports
 * and checks is run forward by the graph executor. ASan/UBSan (the -san
 * build) catch reads out of bounds: each input is a buffer of exactly its
 * size. tests/host/onnx_libfuzzer.c is the open-ended version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "onnx_fuzz_run.h"
#include "wse/splitmix64.h"
#include "test_files.h"

#define FUZZ_ITERATIONS	1500
#define FUZZ_SECONDS	20

static uint64_t rng_state;

static uint64_t rng(void)
{
	return wse_splitmix64(&rng_state);
}

static uint8_t *mutate(const uint8_t *src, size_t srclen, size_t *len)
{
	size_t n = srclen;
	unsigned kind = rng() % 6;
	uint8_t *b;

	if (kind == 4)
		n = rng() % srclen;			/* truncate */
	else if (kind == 5)
		n = srclen + 1 + rng() % 64;		/* extend */
	b = malloc(n ? n : 1);
	memcpy(b, src, n < srclen ? n : srclen);
	for (size_t i = srclen; i < n; i++)
		b[i] = (uint8_t)rng();
	*len = n;
	if (!n)
		return b;
	for (int k = 1 + rng() % 3; k > 0; k--) {
		switch (kind) {
		case 0:	/* flip one bit */
			b[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
			break;
		case 1:	/* overwrite a byte */
			b[rng() % n] = (uint8_t)rng();
			break;
		case 2:	/* an interesting varint byte: lengths, dims, types */
		{
			static const uint8_t vals[] = { 0, 1, 2, 7, 0x7f, 0x80, 0xff, 0x10 };

			b[rng() % n] = vals[rng() % sizeof(vals)];
			break;
		}
		case 3:	/* zero a run */
		{
			size_t at = rng() % n, run = 1 + rng() % 16;

			memset(b + at, 0, at + run <= n ? run : n - at);
			break;
		}
		}
	}
	return b;
}

TEST(seeded_mutations_of_pytorch_exports)
{
	static const char *const files[] = { "tests/corpus/onnx/cnn-tiny.onnx",
					     "tests/corpus/onnx/gpt-tiny.onnx",
					     "tests/corpus/onnx/bn-tiny.onnx",
					     "tests/corpus/onnx/gpt-drop-tiny.onnx" };
	size_t counts[FUZZ_BAD + 1] = { 0 }, runs = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rng_state = 20261124;
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t srclen;
		uint8_t *src = test_read_file(files[f], &srclen);

		ASSERT_NE(NULL, src);
		ASSERT_EQ(FUZZ_RAN, onnx_fuzz_run(src, srclen));
		for (int i = 0; i < FUZZ_ITERATIONS; i++) {
			size_t len;
			uint8_t *b = mutate(src, srclen, &len);
			enum fuzz_outcome o = onnx_fuzz_run(b, len);

			free(b);
			EXPECT_NE(FUZZ_BAD, o) TH_LOG("%s, iteration %d: refused without a message",
						      files[f], i);
			counts[o]++;
			runs++;
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > FUZZ_SECONDS)
				break;
		}
		free(src);
	}
	TH_LOG("%zu inputs: %zu files refused, %zu with a refused node, %zu ran, %zu not run (too large)",
	       runs, counts[FUZZ_REFUSED_FILE], counts[FUZZ_REFUSED_NODE], counts[FUZZ_RAN],
	       counts[FUZZ_NOT_RUN]);
	/* The loop must exercise both sides. */
	EXPECT_GT(counts[FUZZ_REFUSED_FILE], 50);
	EXPECT_GT(counts[FUZZ_RAN], 50);
}

TEST_HARNESS_MAIN
