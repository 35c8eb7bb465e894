// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzzing the .wsep validator: a seeded, bounded loop of mutations of a
 * valid file (flips, overwrites, truncations, extensions), some re-sealed
 * so they get past the checksums to the semantic checks; and the crafted
 * files of tests/corpus/wsep/, each refused with the message listed in its
 * EXPECTED file. ASan/UBSan (the -san build) catch any read out of bounds:
 * every mutated file is copied into a buffer of exactly its size.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kselftest_harness.h"
#include "wse/engine_graph.h"
#include "wse/engine_wsep.h"
#include "wse/splitmix64.h"
#include "wse/wsep.h"
#include "wsep_sample.h"

#define FUZZ_ITERATIONS	3000
#define FUZZ_SECONDS	15
#define CORPUS_DIR	"tests/corpus/wsep"
#define CORPUS_MAX	256

static uint64_t rng_state;

static uint64_t rng(void)
{
	return wse_splitmix64(&rng_state);
}

/* The dense sample (with or without weights), or the graph sample (@with_weights 2). */
static uint8_t *valid_file(size_t *len, int with_weights)
{
	struct wsep_program p;
	char err[256];
	void *b;

	if (with_weights == 2)
		wsep_sample_graph_program(&p);
	else
		wsep_sample_program(&p, with_weights);
	if (wsep_write(&p, &b, len, err, sizeof(err)))
		b = NULL;
	wsep_sample_release(&p);
	return b;
}

/* One mutation of @src into a new buffer of exactly *@len bytes. */
static uint8_t *mutate(const uint8_t *src, size_t srclen, size_t *len, int *changed)
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
	*changed = n != srclen;
	if (n == 0)
		goto out;
	switch (kind) {
	case 0:	/* flip one bit */
		b[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
		break;
	case 1:	/* overwrite a few bytes */
		for (int k = 1 + rng() % 8; k > 0; k--)
			b[rng() % n] = (uint8_t)rng();
		break;
	case 2:	/* write an interesting 32-bit value somewhere aligned */
	{
		static const uint32_t vals[] = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff,
						 64, 4096, 0xffff, 0x8001 };
		size_t at = (rng() % (n / 4)) * 4;
		uint32_t v = vals[rng() % (sizeof(vals) / sizeof(vals[0]))];

		for (int i = 0; i < 4 && at + i < n; i++)
			b[at + i] = (uint8_t)(v >> (8 * i));
		break;
	}
	case 3:	/* zero a run */
	{
		size_t at = rng() % n, run = 1 + rng() % 32;

		memset(b + at, 0, at + run <= n ? run : n - at);
		break;
	}
	}
	if (!*changed)
		*changed = memcmp(b, src, n) != 0;
out:
	*len = n;
	return b;
}

/*
 * A seeded loop of mutations of @src; whatever the validator accepts must
 * read back and re-write, and a graph program's graph must build (its
 * shapes checked by the engine, nothing allocated) or be refused with a
 * message.
 */
static void fuzz(struct __test_metadata *_metadata, const uint8_t *src, size_t srclen,
		 uint64_t seed)
{
	struct timespec t0, t;
	size_t rejected = 0, resealed_rejected = 0, runs = 0, graphs = 0;
	char err[256];

	rng_state = seed;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < FUZZ_ITERATIONS; i++) {
		size_t len;
		int changed, reseal = i % 2;
		uint8_t *b = mutate(src, srclen, &len, &changed);
		int ret;

		if (reseal)
			wsep_sample_reseal(b, len);
		ret = wsep_validate(b, len, err, sizeof(err));
		runs++;
		/* Unsealed, every real change must be caught (CRCs, zero padding). */
		if (!reseal && changed)
			EXPECT_EQ(-EINVAL, ret) TH_LOG("iteration %d: unsealed change accepted", i);
		if (ret) {
			EXPECT_NE(0, err[0]);
			rejected++;
			resealed_rejected += reseal;
		} else {
			/* Whatever is accepted must read back and re-write. */
			struct wsep_program *q;
			struct engine_graph *g;
			void *again;
			size_t againlen;

			ASSERT_EQ(0, wsep_read(b, len, &q, err, sizeof(err)));
			EXPECT_EQ(0, wsep_write(q, &again, &againlen, err, sizeof(err)))
				TH_LOG("iteration %d: %s", i, err);
			if (!err[0] || again)
				free(again);
			err[0] = 0;
			if (q->graph && engine_graph_from_wsep(q, q->batch, &g, err, sizeof(err))) {
				EXPECT_NE(0, err[0]);
			} else if (q->graph) {
				engine_graph_destroy(g);
			}
			graphs += q->graph != NULL;
			wsep_program_free(q);
		}
		free(b);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > FUZZ_SECONDS)
			break;
	}
	TH_LOG("%zu mutations, %zu rejected (%zu of them with valid checksums), %zu graphs built",
	       runs, rejected, resealed_rejected, graphs);
	EXPECT_GT(rejected, runs / 2);
	/* The semantic checks did run: re-sealed files were refused too. */
	EXPECT_GT(resealed_rejected, 50);
}

TEST(seeded_mutations)
{
	size_t srclen;
	uint8_t *src = valid_file(&srclen, 1);
	char err[256];

	ASSERT_NE(NULL, src);
	ASSERT_EQ(0, wsep_validate(src, srclen, err, sizeof(err))) TH_LOG("%s", err);
	fuzz(_metadata, src, srclen, 20261122);
	free(src);
}

/* The same over a graph program: its graph, values, nodes and units. */
TEST(seeded_graph_mutations)
{
	size_t srclen;
	uint8_t *src = valid_file(&srclen, 2);
	char err[256];

	ASSERT_NE(NULL, src);
	ASSERT_EQ(0, wsep_validate(src, srclen, err, sizeof(err))) TH_LOG("%s", err);
	fuzz(_metadata, src, srclen, 20261123);
	free(src);
}

/* Every prefix of a valid file is refused. */
TEST(every_truncation_is_refused)
{
	size_t srclen;
	uint8_t *src = valid_file(&srclen, 0);
	char err[256];

	ASSERT_NE(NULL, src);
	for (size_t n = 0; n < srclen; n++) {
		uint8_t *b = malloc(n ? n : 1);

		memcpy(b, src, n);
		EXPECT_EQ(-EINVAL, wsep_validate(b, n, err, sizeof(err))) TH_LOG("prefix %zu accepted", n);
		free(b);
	}
	free(src);
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(n > 0 ? (size_t)n : 1);
	*len = fread(b, 1, (size_t)(n > 0 ? n : 0), f);
	fclose(f);
	return b;
}

/* tests/corpus/wsep/EXPECTED: "FILE<TAB>ok" or "FILE<TAB>message fragment". */
TEST(corpus)
{
	FILE *f = fopen(CORPUS_DIR "/EXPECTED", "r");
	char line[512], listed[CORPUS_MAX][128];
	int nlisted = 0;
	DIR *d;
	struct dirent *de;

	ASSERT_NE(NULL, f) TH_LOG("run from the repository root: %s/EXPECTED", CORPUS_DIR);
	while (nlisted < CORPUS_MAX && fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), path[300], err[256] = "";
		size_t len;
		uint8_t *b;
		int ret;

		if (line[0] == '#' || !tab)
			continue;
		*tab++ = 0;
		tab[strcspn(tab, "\n")] = 0;
		snprintf(listed[nlisted++], sizeof(listed[0]), "%.100s", line);
		snprintf(path, sizeof(path), "%s/%.100s", CORPUS_DIR, line);
		b = load(path, &len);
		ASSERT_NE(NULL, b) TH_LOG("%s listed but missing", path);
		ret = wsep_validate(b, len, err, sizeof(err));
		if (strcmp(tab, "ok") == 0) {
			EXPECT_EQ(0, ret) TH_LOG("%s: %s", line, err);
		} else {
			EXPECT_EQ(-EINVAL, ret) TH_LOG("%s accepted", line);
			EXPECT_NE(NULL, strstr(err, tab))
				TH_LOG("%s: '%s' lacks '%s'", line, err, tab);
		}
		free(b);
	}
	fclose(f);
	EXPECT_LT(40, nlisted);

	/* Every file in the directory is listed, so none is silently skipped. */
	d = opendir(CORPUS_DIR);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		int found = 0;

		if (!strstr(de->d_name, ".wsep"))
			continue;
		for (int i = 0; i < nlisted; i++)
			found |= strcmp(listed[i], de->d_name) == 0;
		EXPECT_TRUE(found) TH_LOG("%s is not listed in EXPECTED", de->d_name);
	}
	closedir(d);
}

TEST_HARNESS_MAIN
