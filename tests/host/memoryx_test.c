// SPDX-License-Identifier: GPL-2.0-only
/*
 * The appliance's MemoryX store and SwarmX's sum on the host: MemoryX
 * updates bit for bit as the firmware engine updates resident parameters,
 * keeps the .wsep layout in its shared region and the PARAMS layout of a
 * device, refuses non-finite weights and ranges outside; the gradient sum
 * tree gives the same bits whoever sums an aligned run of it first.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "../../firmware-sim/appliance/memoryx_store.h"
#include "wse/engine.h"

/* A two-layer program (in -> hidden -> 3) as wsep_read() would give it. */
static void program_of(struct wsep_program *p, struct wsep_layer *l, uint32_t in, uint32_t hidden)
{
	memset(p, 0, sizeof(*p));
	memset(l, 0, 2 * sizeof(*l));
	l[0] = (struct wsep_layer){ .kind = WSEP_LAYER_DENSE, .act = WSEP_ACT_RELU, .in = in,
				    .out = hidden, .weight_offset = 0 };
	l[1] = (struct wsep_layer){ .kind = WSEP_LAYER_DENSE, .act = WSEP_ACT_NONE, .in = hidden,
				    .out = 3, .weight_offset = in * hidden + hidden };
	p->num_layers = 2;
	p->layers = l;
	p->seed = 7;
	p->batch = 4;
	p->input_dim = in;
	p->mode = WSEP_MODE_WEIGHT_STREAMING;
	p->opt = (struct wsep_optimizer){ .kind = WSEP_OPT_ADAM, .lr = 1e-2, .beta1 = 0.9,
					  .beta2 = 0.999, .eps = 1e-8 };
}

static void small_program(struct wsep_program *p, struct wsep_layer *l)
{
	program_of(p, l, 12, 5);
}

/*
 * Five Adam steps of MemoryX against the engine's own update of resident
 * parameters, in -> hidden -> 3: the same bits (a layer large enough is
 * updated on two threads).
 */
static void updates_as_the_engine(struct __test_metadata *_metadata, uint32_t in, uint32_t hidden)
{
	struct engine_shape shape = { .layers = 2, .width = { in, hidden, 3 }, .relu = { true } };
	struct engine_params *ep;
	struct engine_optim opt;
	struct mx_store st;
	struct wsep_program p;
	struct wsep_layer l[2];
	struct engine_rng rng;
	char text[256];
	float *g = malloc(((size_t)in * hidden + hidden) * sizeof(float));

	ASSERT_NE(NULL, g);
	program_of(&p, l, in, hidden);
	ASSERT_EQ(0, mx_store_create(&st, &p, NULL, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(in * hidden + hidden + hidden * 3 + 3, st.floats);
	ASSERT_EQ(2, st.arrays);
	ASSERT_EQ((in * hidden + hidden + hidden * 3 + 3) * 4 * 3, mx_store_bytes(&p));
	ASSERT_EQ(0, engine_params_create(&shape, ENGINE_ADAM, &ep));
	engine_optim_defaults(&opt, ENGINE_ADAM, 1e-2);
	for (uint32_t k = 0; k < 2; k++) {
		size_t n;
		uint64_t at = mx_store_layer_at(&st, k, &n);
		const float *w = (const float *)(st.region.base + at);

		ASSERT_EQ(l[k].in * l[k].out + l[k].out, n);
		/* The region holds the .wsep layout after its header. */
		ASSERT_EQ(WSE_LINK_REGION_HEADER + l[k].weight_offset * 4, at);
		memcpy(ep->layer[k].w, w, l[k].in * l[k].out * 4);
		memcpy(ep->layer[k].b, w + l[k].in * l[k].out, l[k].out * 4);
	}
	engine_rng_seed(&rng, 11);
	for (uint64_t t = 1; t <= 5; t++) {
		for (uint32_t k = 2; k-- > 0;) {
			size_t wn = l[k].in * l[k].out;

			for (size_t i = 0; i < wn + l[k].out; i++)
				g[i] = engine_rng_uniform(&rng) - 0.5f;
			memcpy(ep->layer[k].dw, g, wn * 4);
			memcpy(ep->layer[k].db, g + wn, l[k].out * 4);
			ASSERT_EQ(0, mx_store_update(&st, k, t, g));
			ASSERT_EQ(0, engine_params_update_layer(ep, &opt, t, k));
		}
	}
	EXPECT_EQ(5, st.step);
	EXPECT_EQ(10, st.updates);
	for (uint32_t k = 0; k < 2; k++) {
		size_t n, wn = l[k].in * l[k].out;
		const float *w = (const float *)(st.region.base + mx_store_layer_at(&st, k, &n));

		EXPECT_EQ(0, memcmp(w, ep->layer[k].w, wn * 4));
		EXPECT_EQ(0, memcmp(w + wn, ep->layer[k].b, l[k].out * 4));
	}
	EXPECT_EQ(-EINVAL, mx_store_update(&st, 2, 1, g));
	EXPECT_EQ(-EINVAL, mx_store_update(&st, 0, 0, g));
	engine_params_destroy(ep);
	mx_store_destroy(&st);
	free(g);
}

TEST(memoryx_updates_as_the_engine)
{
	updates_as_the_engine(_metadata, 12, 5);
}

TEST(memoryx_updates_a_large_layer_on_two_threads_as_the_engine)
{
	updates_as_the_engine(_metadata, 784, 101);	/* 79,184 floats: split unevenly */
}

/*
 * fp16 loss scaling: held layers are unscaled in place and applied all
 * together at the commit, to the bits of updating each with the unscaled
 * gradient; a step with one inf applies none (weights and optimizer state
 * unchanged) but counts, as a pipelined device counts it.
 */
TEST(memoryx_holds_a_step_and_applies_all_or_none)
{
	struct mx_store a, b;
	struct wsep_program p;
	struct wsep_layer l[2];
	char text[256];
	float *g[2], *want[2], *w0, *s0;
	size_t n[2];
	const float scale = 1024.0f;

	small_program(&p, l);
	ASSERT_EQ(0, mx_store_create(&a, &p, NULL, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, mx_store_create(&b, &p, NULL, text, sizeof(text))) TH_LOG("%s", text);
	for (uint32_t k = 0; k < 2; k++) {
		mx_store_layer_at(&a, k, &n[k]);
		g[k] = malloc(n[k] * 4);
		want[k] = malloc(n[k] * 4);
		ASSERT_TRUE(g[k] && want[k]);
		for (size_t i = 0; i < n[k]; i++) {
			want[k][i] = ((float)(i % 7) - 3.0f) / 8.0f;	/* exact under the scale */
			g[k][i] = want[k][i] * scale;
		}
	}
	/* Step 1 applied: a holds scaled sums, b updates with the unscaled ones. */
	EXPECT_EQ(1, mx_store_hold(&a, 1, g[1], scale));
	EXPECT_EQ(1, mx_store_hold(&a, 0, g[0], scale));
	EXPECT_EQ(0, memcmp(g[0], want[0], n[0] * 4));
	EXPECT_EQ(0, a.updates);
	ASSERT_EQ(0, mx_store_commit(&a, 1, true));
	for (uint32_t k = 0; k < 2; k++)
		ASSERT_EQ(0, mx_store_update(&b, k, 1, want[k]));
	EXPECT_EQ(0, memcmp(a.w, b.w, a.floats * 4));
	EXPECT_EQ(0, memcmp(a.state, b.state, a.arrays * a.floats * 4));
	EXPECT_EQ(2, a.updates);
	/* Step 2: layer 1 overflowed; layer 0 is finite but not applied either. */
	w0 = malloc(a.floats * 4);
	s0 = malloc(a.arrays * a.floats * 4);
	ASSERT_TRUE(w0 && s0);
	memcpy(w0, a.w, a.floats * 4);
	memcpy(s0, a.state, a.arrays * a.floats * 4);
	for (size_t i = 0; i < n[0]; i++)
		g[0][i] = want[0][i] * scale;
	g[1][3] = INFINITY;
	EXPECT_EQ(0, mx_store_hold(&a, 1, g[1], scale));
	EXPECT_EQ(1, mx_store_hold(&a, 0, g[0], scale));
	ASSERT_EQ(0, mx_store_commit(&a, 2, false));
	EXPECT_EQ(0, memcmp(w0, a.w, a.floats * 4));
	EXPECT_EQ(0, memcmp(s0, a.state, a.arrays * a.floats * 4));
	EXPECT_EQ(2, a.updates);
	EXPECT_EQ(2, a.step);
	EXPECT_EQ(NULL, a.held[0]);
	EXPECT_EQ(-EINVAL, mx_store_hold(&a, 2, g[0], scale));
	EXPECT_EQ(-EINVAL, mx_store_commit(&a, 0, true));
	/* A commit with a layer not held applies none of the step. */
	EXPECT_EQ(1, mx_store_hold(&a, 0, g[0], scale));
	memcpy(w0, a.w, a.floats * 4);
	EXPECT_EQ(-EINVAL, mx_store_commit(&a, 3, true));
	EXPECT_EQ(0, memcmp(w0, a.w, a.floats * 4));
	EXPECT_EQ(NULL, a.held[0]);
	EXPECT_EQ(2, a.step);
	for (uint32_t k = 0; k < 2; k++) {
		free(g[k]);
		free(want[k]);
	}
	free(w0);
	free(s0);
	mx_store_destroy(&a);
	mx_store_destroy(&b);
}

/* PARAMS_READ / _WRITE as a device answers them: the checkpoint's layout. */
TEST(memoryx_params_round_trip_and_refusals)
{
	struct mx_store a, b;
	struct wsep_program p;
	struct wsep_layer l[2];
	char text[256];
	uint64_t n, step_le;
	float *w, *s, *w2;

	small_program(&p, l);
	ASSERT_EQ(0, mx_store_create(&a, &p, NULL, text, sizeof(text)));
	p.seed = 8;
	ASSERT_EQ(0, mx_store_create(&b, &p, NULL, text, sizeof(text)));
	n = a.floats;
	w = calloc(n, 4);
	w2 = calloc(n, 4);
	s = calloc(2 * n + 2, 4);
	ASSERT_TRUE(w && w2 && s);
	ASSERT_EQ(0, mx_store_params(&a, WSE_LINK_PARAMS_WEIGHTS, 0, n * 4, w, false, text,
				     sizeof(text)));
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 0, n * 4, w2, false, text,
				     sizeof(text)));
	EXPECT_NE(0, memcmp(w, w2, n * 4));	/* another seed, other weights */
	/* State and step count: written, then read back the same. */
	for (uint64_t i = 0; i < 2 * n; i++)
		s[i] = (float)i / 7.0f;
	step_le = htole64(42);
	memcpy(s + 2 * n, &step_le, 8);
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 0, n * 4, w, true, text,
				     sizeof(text)));
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_OPT_STATE, 0, 2 * n * 4 + 8, s, true,
				     text, sizeof(text)));
	EXPECT_EQ(42, b.step);
	memset(w2, 0, n * 4);
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 0, n * 4, w2, false, text,
				     sizeof(text)));
	EXPECT_EQ(0, memcmp(w, w2, n * 4));
	/* The step count alone, at its offset, as a host asks for it. */
	step_le = 0;
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_OPT_STATE, 2 * n * 4, 8, &step_le, false,
				     text, sizeof(text)));
	EXPECT_EQ(42, le64toh(step_le));
	/* Non-finite weights are refused and change nothing. */
	w[3] = NAN;
	EXPECT_EQ(-EINVAL, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 0, n * 4, w, true, text,
					   sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "not finite")) TH_LOG("%s", text);
	ASSERT_EQ(0, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 12, 4, w2, false, text,
				     sizeof(text)));
	EXPECT_FALSE(isnan(w2[0]));
	/* Ranges outside, or not whole floats, and other kinds. */
	EXPECT_EQ(-EINVAL, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 4, n * 4, w, false, text,
					   sizeof(text)));
	EXPECT_EQ(-EINVAL, mx_store_params(&b, WSE_LINK_PARAMS_WEIGHTS, 2, 4, w, false, text,
					   sizeof(text)));
	EXPECT_EQ(-EINVAL, mx_store_params(&b, WSE_LINK_PARAMS_OPT_STATE, 0, 2 * n * 4 + 12, s,
					   false, text, sizeof(text)));
	EXPECT_EQ(-EINVAL, mx_store_params(&b, 7, 0, 4, w, false, text, sizeof(text)));
	free(w);
	free(w2);
	free(s);
	mx_store_destroy(&a);
	mx_store_destroy(&b);
}

TEST(memoryx_refuses_what_it_cannot_serve)
{
	struct mx_store st;
	struct wsep_program p;
	struct wsep_layer l[2];
	char text[256];

	small_program(&p, l);
	p.opt.kind = 0;
	EXPECT_EQ(0, mx_store_bytes(&p));
	EXPECT_EQ(-EINVAL, mx_store_create(&st, &p, NULL, text, sizeof(text)));
	small_program(&p, l);
	l[1].weight_offset = 1000;	/* outside the weights */
	EXPECT_EQ(-EINVAL, mx_store_create(&st, &p, NULL, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "layer 1")) TH_LOG("%s", text);
	small_program(&p, l);
	p.num_layers = 0;
	EXPECT_EQ(-EINVAL, mx_store_create(&st, &p, NULL, text, sizeof(text)));
}

/*
 * A RAM budget of the weights and 64 KiB: the rest of the Adam state
 * (about 570 KiB) lies in the nameless file, which has its blocks, and
 * three updates give the bits of an all-RAM store. The directory stays
 * empty; weights beyond the budget and a file system too small are
 * refused naming the figures.
 */
TEST(memoryx_spills_state_to_a_file_with_the_same_bits)
{
	struct mx_store ram, file;
	struct mx_spill sp;
	struct wsep_program p;
	struct wsep_layer l[2];
	struct engine_rng rng;
	struct stat sb;
	char dir[] = "/tmp/memoryx_test.XXXXXX", text[512];
	uint64_t weights;
	uint8_t page[4096];
	float *g;

	program_of(&p, l, 784, 101);
	ASSERT_NE(NULL, mkdtemp(dir));
	weights = wsep_total_params(l, 2) * 4;
	ASSERT_EQ(0, mx_spill_open(&sp, dir, weights + (64 << 10), 1 << 20, text, sizeof(text)))
		TH_LOG("%s", text);
	ASSERT_EQ(0, mx_store_create(&ram, &p, NULL, text, sizeof(text))) TH_LOG("%s", text);
	ASSERT_EQ(0, mx_store_create(&file, &p, &sp, text, sizeof(text))) TH_LOG("%s", text);
	EXPECT_EQ(0, ram.spilled);
	EXPECT_EQ(((2 * weights + 4095) & ~4095ULL) - (64 << 10), file.spilled);
	ASSERT_EQ(0, fstat(sp.fd, &sb));
	EXPECT_EQ((off_t)file.spilled, sb.st_size);
	EXPECT_LE((blkcnt_t)(file.spilled / 512), sb.st_blocks);
	g = malloc(784 * 101 * 4 + 101 * 4);
	ASSERT_NE(NULL, g);
	engine_rng_seed(&rng, 5);
	for (uint64_t t = 1; t <= 3; t++) {
		for (uint32_t k = 0; k < 2; k++) {
			for (uint64_t i = 0; i < ram.n[k]; i++)
				g[i] = engine_rng_uniform(&rng) - 0.5f;
			ASSERT_EQ(0, mx_store_update(&ram, k, t, g));
			ASSERT_EQ(0, mx_store_update(&file, k, t, g));
		}
	}
	EXPECT_EQ(0, memcmp(ram.w, file.w, weights));
	EXPECT_EQ(0, memcmp(ram.state, file.state, 2 * weights));
	/* The state past the RAM part is the file's own bytes. */
	ASSERT_EQ(4096, pread(sp.fd, page, 4096, 0));
	EXPECT_EQ(0, memcmp(page, (uint8_t *)file.state + (64 << 10), 4096));
	free(g);
	mx_store_destroy(&ram);
	mx_store_destroy(&file);
	mx_spill_close(&sp);

	ASSERT_EQ(0, mx_spill_open(&sp, dir, weights - 4, 1 << 20, text, sizeof(text)));
	EXPECT_EQ(-ENOSPC, mx_store_create(&file, &p, &sp, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "RAM budget")) TH_LOG("%s", text);
	mx_spill_close(&sp);
	EXPECT_EQ(-ENOSPC, mx_spill_open(&sp, dir, 1 << 20, 1ULL << 60, text, sizeof(text)));
	EXPECT_NE(NULL, strstr(text, "1152921504606846976")) TH_LOG("%s", text);
	EXPECT_EQ(0, rmdir(dir)) TH_LOG("%s is not empty", dir);
}

/*
 * The sum tree: 8 leaves summed at once, or in aligned runs of 4, 2 or 1
 * summed first and their sums then summed in the same tree (systems and
 * SwarmX), give the same bits; another order (a plain left fold) does not.
 */
TEST(sum_tree_of_aligned_runs_is_the_whole_tree)
{
	enum { N = 8, F = 1000 };
	static float leaf[N][F], part[N][F], whole[F], fold[F];
	struct engine_rng rng;
	float *p[N];

	engine_rng_seed(&rng, 3);
	for (int i = 0; i < N; i++)
		for (int f = 0; f < F; f++)
			leaf[i][f] = (engine_rng_uniform(&rng) - 0.5f) * (float)(1 << (i * 3 % 11));
	for (int i = 0; i < N; i++)
		p[i] = memcpy(part[i], leaf[i], sizeof(leaf[i]));
	engine_sum_tree(p, N, F);
	memcpy(whole, part[0], sizeof(whole));
	for (int systems = 1; systems <= N; systems *= 2) {
		int run = N / systems;
		float *sums[N];

		for (int i = 0; i < N; i++)
			p[i] = memcpy(part[i], leaf[i], sizeof(leaf[i]));
		for (int m = 0; m < systems; m++) {
			engine_sum_tree(p + m * run, run, F);
			sums[m] = p[m * run];
		}
		engine_sum_tree(sums, systems, F);
		EXPECT_EQ(0, memcmp(whole, sums[0], sizeof(whole))) TH_LOG("%d systems", systems);
	}
	memcpy(fold, leaf[0], sizeof(fold));
	for (int i = 1; i < N; i++)
		engine_vec_add(fold, leaf[i], F);
	EXPECT_NE(0, memcmp(whole, fold, sizeof(whole)));
	EXPECT_EQ(1, engine_sum_tree_split(2));
	EXPECT_EQ(4, engine_sum_tree_split(5));
	EXPECT_EQ(4, engine_sum_tree_split(8));
}

TEST_HARNESS_MAIN
