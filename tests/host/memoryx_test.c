// SPDX-License-Identifier: GPL-2.0-only
/*
 * libwse's MemoryX and SwarmX on the host: MemoryX updates bit for bit as
 * the firmware engine updates resident parameters, keeps its layout and
 * refuses a bad restore; SwarmX runs every member once per call, reports
 * the first failing member, and reduces in a fixed order.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/memoryx.h"
#include "wse/swarmx.h"
#include "wse/engine.h"

/* A two-layer program as wsep_read() would give it. */
static void small_program(struct wsep_program *p, struct wsep_layer *l)
{
	memset(p, 0, sizeof(*p));
	memset(l, 0, 2 * sizeof(*l));
	l[0] = (struct wsep_layer){ .kind = WSEP_LAYER_DENSE, .act = WSEP_ACT_RELU, .in = 12,
				    .out = 5, .weight_offset = 0 };
	l[1] = (struct wsep_layer){ .kind = WSEP_LAYER_DENSE, .act = WSEP_ACT_NONE, .in = 5,
				    .out = 3, .weight_offset = 12 * 5 + 5 };
	p->num_layers = 2;
	p->layers = l;
	p->seed = 7;
	p->batch = 4;
	p->input_dim = 12;
	p->opt = (struct wsep_optimizer){ .kind = WSEP_OPT_ADAM, .lr = 1e-2, .beta1 = 0.9,
					  .beta2 = 0.999, .eps = 1e-8 };
}

TEST(memoryx_updates_as_the_engine)
{
	struct engine_shape shape = { .layers = 2, .width = { 12, 5, 3 }, .relu = { true } };
	struct engine_params *ep;
	struct engine_optim opt;
	struct wse_memoryx *mx;
	struct wsep_program p;
	struct wsep_layer l[2];
	struct engine_rng rng;

	small_program(&p, l);
	ASSERT_EQ(0, wse_memoryx_create(&p, &mx));
	ASSERT_EQ(12 * 5 + 5 + 5 * 3 + 3, wse_memoryx_floats(mx));
	ASSERT_EQ(2, wse_memoryx_state_arrays(mx));
	ASSERT_EQ(0, engine_params_create(&shape, ENGINE_ADAM, &ep));
	engine_optim_defaults(&opt, ENGINE_ADAM, 1e-2);
	for (uint32_t k = 0; k < 2; k++) {
		size_t n;
		const float *w = wse_memoryx_layer(mx, k, &n);

		ASSERT_EQ(l[k].in * l[k].out + l[k].out, n);
		memcpy(ep->layer[k].w, w, l[k].in * l[k].out * 4);
		memcpy(ep->layer[k].b, w + l[k].in * l[k].out, l[k].out * 4);
	}
	engine_rng_seed(&rng, 11);
	for (uint64_t t = 1; t <= 5; t++) {
		for (uint32_t k = 2; k-- > 0;) {
			float *g = wse_memoryx_grad(mx, k);
			size_t wn = l[k].in * l[k].out;

			for (size_t i = 0; i < wn + l[k].out; i++)
				g[i] = engine_rng_uniform(&rng) - 0.5f;
			memcpy(ep->layer[k].dw, g, wn * 4);
			memcpy(ep->layer[k].db, g + wn, l[k].out * 4);
			ASSERT_EQ(0, wse_memoryx_update(mx, k, t));
			ASSERT_EQ(0, engine_params_update_layer(ep, &opt, t, k));
		}
	}
	for (uint32_t k = 0; k < 2; k++) {
		size_t n, wn = l[k].in * l[k].out;
		const float *w = wse_memoryx_layer(mx, k, &n);

		EXPECT_EQ(0, memcmp(w, ep->layer[k].w, wn * 4));
		EXPECT_EQ(0, memcmp(w + wn, ep->layer[k].b, l[k].out * 4));
	}
	EXPECT_EQ(-EINVAL, wse_memoryx_update(mx, 2, 1));
	EXPECT_EQ(-EINVAL, wse_memoryx_update(mx, 0, 0));
	engine_params_destroy(ep);
	wse_memoryx_destroy(mx);
}

TEST(memoryx_slices_update_as_the_whole)
{
	struct wse_memoryx *whole, *sliced;
	struct wsep_program p;
	struct wsep_layer l[2];
	struct engine_rng rng;

	small_program(&p, l);
	ASSERT_EQ(0, wse_memoryx_create(&p, &whole));
	ASSERT_EQ(0, wse_memoryx_create(&p, &sliced));
	engine_rng_seed(&rng, 5);
	for (uint64_t t = 1; t <= 4; t++) {
		for (uint32_t k = 0; k < 2; k++) {
			size_t n, cut[] = { 0, 7, 7, 33, 60, 62, 65 };
			float *g1 = wse_memoryx_grad(whole, k), *g2 = wse_memoryx_grad(sliced, k);

			wse_memoryx_layer(whole, k, &n);
			for (size_t i = 0; i < n; i++)
				g1[i] = g2[i] = engine_rng_uniform(&rng) - 0.5f;
			ASSERT_EQ(0, wse_memoryx_update(whole, k, t));
			/* Slices across the W/b boundary, one empty, out of order. */
			for (int c = 5; c >= 0; c--) {
				size_t a = cut[c] < n ? cut[c] : n, b = cut[c + 1] < n ? cut[c + 1] : n;

				if (c == 5)
					b = n;
				ASSERT_EQ(0, wse_memoryx_update_slice(sliced, k, t, a, b - a));
			}
		}
	}
	for (uint32_t k = 0; k < 2; k++) {
		size_t n;
		const float *a = wse_memoryx_layer(whole, k, &n), *b = wse_memoryx_layer(sliced, k, &n);

		EXPECT_EQ(0, memcmp(a, b, n * 4));
	}
	EXPECT_EQ(-EINVAL, wse_memoryx_update_slice(sliced, 0, 1, 60, 6));
	wse_memoryx_destroy(whole);
	wse_memoryx_destroy(sliced);
}

TEST(memoryx_get_set_round_trip)
{
	struct wse_memoryx *mx, *other;
	struct wsep_program p;
	struct wsep_layer l[2];
	uint64_t n;
	float *w, *s, *w2, *s2;

	small_program(&p, l);
	ASSERT_EQ(0, wse_memoryx_create(&p, &mx));
	p.seed = 8;
	ASSERT_EQ(0, wse_memoryx_create(&p, &other));
	n = wse_memoryx_floats(mx);
	w = calloc(n, 4);
	s = calloc(2 * n, 4);
	w2 = calloc(n, 4);
	s2 = calloc(2 * n, 4);
	ASSERT_TRUE(w && s && w2 && s2);
	wse_memoryx_get(mx, w, s);
	wse_memoryx_get(other, w2, s2);
	EXPECT_NE(0, memcmp(w, w2, n * 4));	/* another seed, other weights */
	s[3] = 0.25f;
	ASSERT_EQ(0, wse_memoryx_set(other, w, s));
	wse_memoryx_get(other, w2, s2);
	EXPECT_EQ(0, memcmp(w, w2, n * 4));
	EXPECT_EQ(0, memcmp(s, s2, 2 * n * 4));
	/* Non-finite values are refused and change nothing. */
	s[n + 1] = NAN;
	EXPECT_EQ(-EINVAL, wse_memoryx_set(other, w, s));
	w[0] = INFINITY;
	EXPECT_EQ(-EINVAL, wse_memoryx_set(other, w, s2));
	wse_memoryx_get(other, w2, s);
	EXPECT_EQ(0, memcmp(s, s2, 2 * n * 4));
	free(w);
	free(s);
	free(w2);
	free(s2);
	wse_memoryx_destroy(mx);
	wse_memoryx_destroy(other);
}

TEST(memoryx_refuses_what_it_cannot_serve)
{
	struct wse_memoryx *mx = (void *)1;
	struct wsep_program p;
	struct wsep_layer l[2];

	small_program(&p, l);
	p.opt.kind = 0;
	EXPECT_EQ(-EINVAL, wse_memoryx_create(&p, &mx));
	EXPECT_EQ(NULL, mx);
	small_program(&p, l);
	l[1].weight_offset = 1000;	/* outside the weights */
	EXPECT_EQ(-EINVAL, wse_memoryx_create(&p, &mx));
	small_program(&p, l);
	p.num_layers = 0;
	EXPECT_EQ(-EINVAL, wse_memoryx_create(&p, &mx));
}

struct each_arg {
	int calls[WSE_SWARMX_MAX];
	int fail_member;
};

static int count_call(unsigned int member, void *p)
{
	struct each_arg *a = p;

	__atomic_add_fetch(&a->calls[member], 1, __ATOMIC_RELAXED);
	return (int)member == a->fail_member || (int)member == a->fail_member + 1 ?
	       -(int)(EIO + member) : 0;
}

TEST(swarmx_runs_every_member_each_time)
{
	struct each_arg a = { .fail_member = -5 };
	struct wse_swarmx *sx;

	EXPECT_EQ(-EINVAL, wse_swarmx_create(0, &sx));
	EXPECT_EQ(-EINVAL, wse_swarmx_create(WSE_SWARMX_MAX + 1, &sx));
	ASSERT_EQ(0, wse_swarmx_create(4, &sx));
	EXPECT_EQ(4, wse_swarmx_members(sx));
	for (int i = 0; i < 200; i++)
		ASSERT_EQ(0, wse_swarmx_each(sx, count_call, &a));
	for (int m = 0; m < 4; m++)
		EXPECT_EQ(200, a.calls[m]);
	/* Members 2 and 3 fail: the lowest-numbered one's code, all still ran. */
	a.fail_member = 2;
	EXPECT_EQ(-(EIO + 2), wse_swarmx_each(sx, count_call, &a));
	for (int m = 0; m < 4; m++)
		EXPECT_EQ(201, a.calls[m]);
	wse_swarmx_destroy(sx);
}

TEST(swarmx_reduce_is_weighted_and_ordered)
{
	float a[5] = { 1, 2, 3, 4, 1e-8f }, b[5] = { 10, 20, 30, 40, 1 }, out[5];
	float *parts[2] = { a, b };
	double one = 1.0, half[2] = { 0.5, 0.5 };
	struct wse_swarmx *sx1, *sx2;

	ASSERT_EQ(0, wse_swarmx_create(1, &sx1));
	ASSERT_EQ(0, wse_swarmx_create(2, &sx2));
	wse_swarmx_reduce(sx1, out, parts, &one, 5);
	EXPECT_EQ(0, memcmp(out, a, sizeof(a)));
	wse_swarmx_reduce(sx2, out, parts, half, 5);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ((a[i] + b[i]) / 2, out[i]);
	/* Member 0 first, then member 1: the same bits every time. */
	EXPECT_EQ(0.5f * a[4] + 0.5f * b[4], out[4]);
	wse_swarmx_destroy(sx1);
	wse_swarmx_destroy(sx2);
}

TEST_HARNESS_MAIN
