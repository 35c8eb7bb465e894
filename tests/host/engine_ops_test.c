// SPDX-License-Identifier: GPL-2.0-only
/*
 * The graph ops of wse/engine_ops.h: forward passes against plain loops
 * (where the op is more than a formula), every backward pass against
 * central finite differences of a random projection of the output,
 * dropout's seeding, and the layout ops' round trips.
 *
 * Finite differences: L(x) = sum_i r_i y_i(x) with r random, summed in
 * double; dL/dx_j ~ (L(x + h e_j) - L(x - h e_j)) / 2h with h = 1e-2 on
 * fp32 kernels. The truncation error is O(h^2) and the rounding error
 * about 1e-7 * |L| / h, so analytic and numeric gradients must agree to
 * 2e-3 + 2e-2 |g|. Inputs to max pooling and ReLU are spread so that no
 * step crosses a kink.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/engine.h"
#include "wse/engine_ops.h"

/* The shape tables below leave the derived fields (out_h, out_w) out. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static float *floats(size_t n)
{
	float *p = calloc(n ? n : 1, sizeof(float));

	if (!p)
		abort();
	return p;
}

static float *randoms(struct engine_rng *rng, size_t n, float lo, float hi)
{
	float *p = floats(n);

	for (size_t i = 0; i < n; i++)
		p[i] = lo + (hi - lo) * engine_rng_uniform(rng);
	return p;
}

/* A shuffled ramp: distinct values at least @step apart, centred on 0. */
static float *ramp(struct engine_rng *rng, size_t n, float step)
{
	float *p = floats(n);

	for (size_t i = 0; i < n; i++)
		p[i] = ((float)i - (float)n / 2 + 0.5f) * step;	/* never 0: ReLU's kink */
	for (size_t i = n; i > 1; i--) {
		size_t j = engine_rng_next(rng) % i;
		float t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

struct fd {
	size_t n_in;
	float *in[4];
	size_t in_n[4];
	bool skip[4];		/* no gradient for this input */
	size_t y_n;
	const void *p;
	int (*fwd)(struct fd *f, float *y);
	int (*bwd)(struct fd *f, const float *dy, float **din);
};

static double project(const float *y, const float *r, size_t n)
{
	double s = 0.0;

	for (size_t i = 0; i < n; i++)
		s += (double)y[i] * r[i];
	return s;
}

/* Checks every input gradient of @f against finite differences. */
static void fd_check(struct __test_metadata *_metadata, struct fd *f, uint64_t seed)
{
	struct engine_rng rng;
	float *y = floats(f->y_n), *r, *din[4] = { NULL };
	const float h = 1e-2f;

	engine_rng_seed(&rng, seed);
	r = randoms(&rng, f->y_n, -1.0f, 1.0f);
	for (size_t i = 0; i < f->n_in; i++)
		if (!f->skip[i]) {
			din[i] = floats(f->in_n[i]);
			for (size_t j = 0; j < f->in_n[i]; j++)
				din[i][j] = NAN;	/* backward must overwrite */
		}
	ASSERT_EQ(0, f->fwd(f, y));
	ASSERT_EQ(0, f->bwd(f, r, din));
	for (size_t i = 0; i < f->n_in; i++) {
		if (f->skip[i])
			continue;
		for (size_t j = 0; j < f->in_n[i]; j++) {
			float keep = f->in[i][j];
			double lp, lm, num;

			f->in[i][j] = keep + h;
			ASSERT_EQ(0, f->fwd(f, y));
			lp = project(y, r, f->y_n);
			f->in[i][j] = keep - h;
			ASSERT_EQ(0, f->fwd(f, y));
			lm = project(y, r, f->y_n);
			f->in[i][j] = keep;
			num = (lp - lm) / (2.0 * h);
			if (!(fabs(num - din[i][j]) <= 2e-3 + 2e-2 * fabs(num)))
				TH_LOG("input %zu element %zu: backward %g, finite differences %g", i, j,
				       din[i][j], num);
			ASSERT_TRUE(fabs(num - din[i][j]) <= 2e-3 + 2e-2 * fabs(num));
		}
	}
	for (size_t i = 0; i < 4; i++)
		free(din[i]);
	free(r);
	free(y);
}

static void fd_free(struct fd *f)
{
	for (size_t i = 0; i < f->n_in; i++)
		free(f->in[i]);
}

/* --- convolution ----------------------------------------------------------------- */

static int conv_fwd(struct fd *f, float *y)
{
	float s[4096];

	return engine_conv2d_forward(f->p, f->in[0], f->in[1], f->in[2], y, s);
}

static int conv_bwd(struct fd *f, const float *dy, float **d)
{
	float s[4096];

	return engine_conv2d_backward(f->p, f->in[0], f->in[1], dy, d[0], d[1], d[2], s);
}

/* Direct definition of the convolution, in double. */
static void conv_ref(const struct engine_conv2d *p, const float *x, const float *w,
		     const float *b, double *y)
{
	for (size_t n = 0; n < p->batch; n++)
		for (size_t m = 0; m < p->out_ch; m++)
			for (size_t oy = 0; oy < p->out_h; oy++)
				for (size_t ox = 0; ox < p->out_w; ox++) {
					double s = b ? b[m] : 0.0;

					for (size_t c = 0; c < p->in_ch; c++)
						for (size_t i = 0; i < p->k_h; i++)
							for (size_t j = 0; j < p->k_w; j++) {
								long iy = (long)(oy * p->stride_h + i * p->dil_h) - (long)p->pad_top;
								long ix = (long)(ox * p->stride_w + j * p->dil_w) - (long)p->pad_left;

								if (iy < 0 || ix < 0 || iy >= (long)p->in_h || ix >= (long)p->in_w)
									continue;
								s += (double)x[((n * p->in_ch + c) * p->in_h + iy) * p->in_w + ix] *
								     w[((m * p->in_ch + c) * p->k_h + i) * p->k_w + j];
							}
					y[((n * p->out_ch + m) * p->out_h + oy) * p->out_w + ox] = s;
				}
}

TEST(conv2d_matches_definition_and_finite_differences)
{
	const struct engine_conv2d shapes[] = {
		{ 2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1 },	/* "same" */
		{ 1, 2, 7, 6, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 0 },	/* strided, asymmetric */
		{ 2, 1, 7, 7, 2, 2, 2, 1, 2, 2, 2, 1, 0, 0, 1 },	/* dilated */
		{ 1, 2, 4, 4, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 },	/* 1x1 */
	};
	struct engine_rng rng;

	engine_rng_seed(&rng, 11);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct engine_conv2d p = shapes[s];
		struct fd f = { .n_in = 3, .p = &p, .fwd = conv_fwd, .bwd = conv_bwd };

		ASSERT_EQ(0, engine_conv2d_setup(&p));
		ASSERT_LE(engine_conv2d_scratch(&p), 4096);
		f.in_n[0] = p.batch * p.in_ch * p.in_h * p.in_w;
		f.in_n[1] = p.out_ch * p.in_ch * p.k_h * p.k_w;
		f.in_n[2] = p.out_ch;
		f.y_n = p.batch * p.out_ch * p.out_h * p.out_w;
		for (int i = 0; i < 3; i++)
			f.in[i] = randoms(&rng, f.in_n[i], -1.0f, 1.0f);

		float *y = floats(f.y_n);
		double *ref = calloc(f.y_n, sizeof(double));

		ASSERT_EQ(0, conv_fwd(&f, y));
		conv_ref(&p, f.in[0], f.in[1], f.in[2], ref);
		for (size_t i = 0; i < f.y_n; i++)
			ASSERT_LT(fabs(y[i] - ref[i]), 1e-5);
		free(y);
		free(ref);
		fd_check(_metadata, &f, 100 + s);
		fd_free(&f);
	}
	/* A kernel larger than the padded input, and a pad the size of the kernel. */
	struct engine_conv2d bad = { 1, 1, 2, 2, 1, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0 };

	EXPECT_EQ(-EINVAL, engine_conv2d_setup(&bad));
	bad.pad_top = 3;
	EXPECT_EQ(-EINVAL, engine_conv2d_setup(&bad));
}

/* --- pooling ------------------------------------------------------------------- */

static int maxpool_fwd(struct fd *f, float *y)
{
	return engine_maxpool2d_forward(f->p, f->in[0], y);
}

static int maxpool_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_maxpool2d_backward(f->p, f->in[0], dy, d[0]);
}

static int avgpool_fwd(struct fd *f, float *y)
{
	return engine_avgpool2d_forward(f->p, f->in[0], y);
}

static int avgpool_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_avgpool2d_backward(f->p, dy, d[0]);
}

TEST(pooling_shapes_values_and_finite_differences)
{
	/* planes, in_h, in_w, k_h, k_w, stride_h, stride_w, dil, dil, pads t l b r */
	const struct engine_pool2d shapes[] = {
		{ 2, 4, 4, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, false, false },
		{ 1, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, false },
		{ 1, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, false, true },
		{ 1, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0, 0, 0, true, false },	/* ceil: 2x2 */
		{ 3, 6, 5, 2, 3, 1, 2, 1, 1, 0, 1, 1, 0, false, false },
		{ 1, 7, 7, 2, 2, 1, 1, 2, 2, 0, 0, 0, 0, false, false },	/* dilated */
	};
	struct engine_rng rng;

	engine_rng_seed(&rng, 12);
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct engine_pool2d p = shapes[s];
		struct fd f = { .n_in = 1, .p = &p };

		ASSERT_EQ(0, engine_pool2d_setup(&p));
		f.in_n[0] = p.planes * p.in_h * p.in_w;
		f.y_n = p.planes * p.out_h * p.out_w;
		f.in[0] = ramp(&rng, f.in_n[0], 0.05f);
		f.fwd = maxpool_fwd;
		f.bwd = maxpool_bwd;
		fd_check(_metadata, &f, 200 + s);
		f.fwd = avgpool_fwd;
		f.bwd = avgpool_bwd;
		fd_check(_metadata, &f, 300 + s);
		fd_free(&f);
	}
	/* The ceil_mode window past the edge averages only what it covers. */
	struct engine_pool2d c = shapes[3];
	float x[16], y[4];

	for (int i = 0; i < 16; i++)
		x[i] = (float)(i + 1);
	ASSERT_EQ(0, engine_pool2d_setup(&c));
	ASSERT_EQ(2, c.out_h);
	ASSERT_EQ(0, engine_avgpool2d_forward(&c, x, y));
	EXPECT_EQ(6.0f, y[0]);		/* 1 2 3 / 5 6 7 / 9 10 11 */
	EXPECT_EQ(13.5f, y[3]);		/* 11 12 / 15 16 */
	ASSERT_EQ(0, engine_maxpool2d_forward(&c, x, y));
	EXPECT_EQ(11.0f, y[0]);
	EXPECT_EQ(16.0f, y[3]);
	/* Padding as large as the kernel (windows of padding only) is refused. */
	struct engine_pool2d bad = shapes[0];

	bad.pad_top = 2;
	EXPECT_EQ(-EINVAL, engine_pool2d_setup(&bad));
}

/* --- matrix products ---------------------------------------------------------------- */

static int gemm_fwd(struct fd *f, float *y)
{
	return engine_gemm_forward(f->p, f->in[0], f->in[1], f->in[2], y);
}

static int gemm_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_gemm_backward(f->p, f->in[0], f->in[1], dy, d[0], d[1], d[2]);
}

TEST(gemm_all_transposes_and_bias_shapes)
{
	struct engine_rng rng;
	const size_t c_shapes[][2] = { { 1, 1 }, { 1, 5 }, { 4, 1 }, { 4, 5 } };

	engine_rng_seed(&rng, 13);
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++)
			for (int c = 0; c < 4; c++) {
				struct engine_gemm p = { 4, 5, 3, ta, tb, 0.5f, 2.0f, c_shapes[c][0],
							 c_shapes[c][1] };
				struct fd f = { .n_in = 3, .p = &p, .fwd = gemm_fwd, .bwd = gemm_bwd };
				float y[20];

				f.in_n[0] = 12;
				f.in_n[1] = 15;
				f.in_n[2] = p.c_rows * p.c_cols;
				f.y_n = 20;
				for (int i = 0; i < 3; i++)
					f.in[i] = randoms(&rng, f.in_n[i], -1.0f, 1.0f);
				ASSERT_EQ(0, gemm_fwd(&f, y));
				for (size_t i = 0; i < 4; i++)
					for (size_t j = 0; j < 5; j++) {
						double s = 0.0;

						for (size_t k = 0; k < 3; k++)
							s += (double)f.in[0][ta ? k * 4 + i : i * 3 + k] *
							     f.in[1][tb ? j * 3 + k : k * 5 + j];
						s = 0.5 * s + 2.0 * f.in[2][(p.c_rows == 1 ? 0 : i) * p.c_cols +
									   (p.c_cols == 1 ? 0 : j)];
						ASSERT_LT(fabs(y[i * 5 + j] - s), 1e-5);
					}
				fd_check(_metadata, &f, 400 + ta * 8 + tb * 4 + c);
				fd_free(&f);
			}
}

static int matmul_fwd(struct fd *f, float *y)
{
	return engine_matmul_forward(f->p, f->in[0], f->in[1], y);
}

static int matmul_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_matmul_backward(f->p, f->in[0], f->in[1], dy, d[0], d[1]);
}

TEST(matmul_batches_broadcast_and_finite_differences)
{
	struct {
		size_t ar, br, a[4], b[4], yr, y[4];
	} cases[] = {
		{ 2, 2, { 3, 4 }, { 4, 2 }, 2, { 3, 2 } },
		{ 3, 2, { 2, 3, 4 }, { 4, 5 }, 3, { 2, 3, 5 } },	/* Linear on [B, T, C] */
		{ 4, 3, { 2, 1, 3, 4 }, { 3, 4, 2 }, 4, { 2, 3, 3, 2 } },	/* both broadcast */
		{ 4, 4, { 1, 2, 3, 2 }, { 2, 2, 2, 3 }, 4, { 2, 2, 3, 3 } },
		{ 2, 3, { 3, 4 }, { 2, 4, 2 }, 3, { 2, 3, 2 } },	/* a broadcast */
	};
	struct engine_rng rng;

	engine_rng_seed(&rng, 14);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct engine_matmul p = { .a_rank = cases[c].ar, .b_rank = cases[c].br };
		struct fd f = { .n_in = 2, .p = &p, .fwd = matmul_fwd, .bwd = matmul_bwd };

		memcpy(p.a_dims, cases[c].a, sizeof(cases[c].a));
		memcpy(p.b_dims, cases[c].b, sizeof(cases[c].b));
		ASSERT_EQ(0, engine_matmul_setup(&p));
		ASSERT_EQ(cases[c].yr, p.y_rank);
		for (size_t i = 0; i < p.y_rank; i++)
			ASSERT_EQ(cases[c].y[i], p.y_dims[i]);
		f.in_n[0] = engine_numel(p.a_dims, p.a_rank);
		f.in_n[1] = engine_numel(p.b_dims, p.b_rank);
		f.y_n = engine_numel(p.y_dims, p.y_rank);
		f.in[0] = randoms(&rng, f.in_n[0], -1.0f, 1.0f);
		f.in[1] = randoms(&rng, f.in_n[1], -1.0f, 1.0f);
		fd_check(_metadata, &f, 500 + c);
		fd_free(&f);
	}
	struct engine_matmul bad = { .a_rank = 2, .b_rank = 2, .a_dims = { 3, 4 }, .b_dims = { 3, 2 } };

	EXPECT_EQ(-EINVAL, engine_matmul_setup(&bad));
}

/* --- element-wise ----------------------------------------------------------------- */

static int binary_fwd(struct fd *f, float *y)
{
	return engine_binary_forward(f->p, f->in[0], f->in[1], y);
}

static int binary_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_binary_backward(f->p, f->in[0], f->in[1], dy, d[0], d[1]);
}

TEST(binary_ops_broadcast_and_finite_differences)
{
	struct {
		size_t ar, br, a[4], b[4];
	} cases[] = {
		{ 3, 3, { 2, 3, 4 }, { 2, 3, 4 } },	/* residual */
		{ 3, 1, { 2, 3, 4 }, { 4 } },		/* bias */
		{ 1, 3, { 4 }, { 2, 3, 4 } },		/* bias first, as torch exports it */
		{ 3, 0, { 2, 3, 4 }, { 0 } },		/* scalar */
		{ 4, 3, { 2, 1, 3, 1 }, { 1, 3, 2 } },	/* both broadcast */
	};
	struct engine_rng rng;

	engine_rng_seed(&rng, 15);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int k = ENGINE_BIN_ADD; k <= ENGINE_BIN_DIV; k++) {
			struct engine_binary p = { .kind = k, .a_rank = cases[c].ar, .b_rank = cases[c].br };
			struct fd f = { .n_in = 2, .p = &p, .fwd = binary_fwd, .bwd = binary_bwd };

			memcpy(p.a_dims, cases[c].a, sizeof(cases[c].a));
			memcpy(p.b_dims, cases[c].b, sizeof(cases[c].b));
			ASSERT_EQ(0, engine_binary_setup(&p));
			f.in_n[0] = engine_numel(p.a_dims, p.a_rank);
			f.in_n[1] = engine_numel(p.b_dims, p.b_rank);
			f.y_n = engine_numel(p.y_dims, p.y_rank);
			f.in[0] = randoms(&rng, f.in_n[0], -1.0f, 1.0f);
			/* Divisors away from 0. */
			f.in[1] = randoms(&rng, f.in_n[1], 0.5f, 1.5f);
			fd_check(_metadata, &f, 600 + c * 4 + k);
			fd_free(&f);
		}
	struct engine_binary bad = { .a_rank = 1, .b_rank = 1, .a_dims = { 3 }, .b_dims = { 2 } };

	EXPECT_EQ(-EINVAL, engine_binary_setup(&bad));
}

static enum engine_act_kind act_kind;

static int act_fwd(struct fd *f, float *y)
{
	return engine_act_forward(act_kind, f->in[0], f->in_n[0], y);
}

static int act_bwd(struct fd *f, const float *dy, float **d)
{
	float *y = floats(f->in_n[0]);
	int err = act_fwd(f, y) ?: engine_act_backward(act_kind, f->in[0], y, dy, f->in_n[0], d[0]);

	free(y);
	return err;
}

TEST(activations_values_and_finite_differences)
{
	const float x[] = { -3.0f, -1.0f, 0.0f, 0.5f, 1.0f, 2.0f };
	float y[6];
	struct engine_rng rng;

	/* Reference values from the definitions, computed with Python's math. */
	ASSERT_EQ(0, engine_act_forward(ENGINE_ACT_GELU, x, 6, y));
	EXPECT_LT(fabsf(y[0] - -0.0040496985f), 1e-7f);
	EXPECT_LT(fabsf(y[4] - 0.8413447461f), 1e-7f);
	ASSERT_EQ(0, engine_act_forward(ENGINE_ACT_GELU_TANH, x, 6, y));
	EXPECT_LT(fabsf(y[4] - 0.8411919906f), 1e-7f);
	EXPECT_LT(fabsf(y[5] - 1.9545976940f), 1e-6f);
	ASSERT_EQ(0, engine_act_forward(ENGINE_ACT_SIGMOID, x, 6, y));
	EXPECT_LT(fabsf(y[0] - 0.0474258732f), 1e-7f);
	ASSERT_EQ(0, engine_act_forward(ENGINE_ACT_TANH, x, 6, y));
	EXPECT_LT(fabsf(y[3] - 0.4621171573f), 1e-7f);
	ASSERT_EQ(0, engine_act_forward(ENGINE_ACT_SILU, x, 6, y));
	EXPECT_LT(fabsf(y[0] - -0.1422776195f), 1e-7f);
	EXPECT_LT(fabsf(y[4] - 0.7310585786f), 1e-7f);

	engine_rng_seed(&rng, 16);
	for (int k = ENGINE_ACT_RELU; k <= ENGINE_ACT_SILU; k++) {
		struct fd f = { .n_in = 1, .y_n = 40, .fwd = act_fwd, .bwd = act_bwd };

		act_kind = k;
		f.in_n[0] = 40;
		f.in[0] = k == ENGINE_ACT_RELU ? ramp(&rng, 40, 0.1f) : randoms(&rng, 40, -3.0f, 3.0f);
		fd_check(_metadata, &f, 700 + k);
		fd_free(&f);
	}
	EXPECT_EQ(-EINVAL, engine_act_forward(ENGINE_ACT_SILU + 1, x, 6, y));
}

static size_t ln_rows, ln_cols;

static int ln_fwd(struct fd *f, float *y)
{
	float mean[16], rstd[16];

	return engine_layernorm_forward(f->in[0], f->in[1], f->in[2], ln_rows, ln_cols, 1e-5f, y,
					mean, rstd);
}

static int ln_bwd(struct fd *f, const float *dy, float **d)
{
	float mean[16], rstd[16], y[256];

	return engine_layernorm_forward(f->in[0], f->in[1], f->in[2], ln_rows, ln_cols, 1e-5f, y,
					mean, rstd) ?:
	       engine_layernorm_backward(f->in[0], f->in[1], mean, rstd, dy, ln_rows, ln_cols, d[0],
					 d[1], d[2]);
}

TEST(layernorm_normalizes_and_matches_finite_differences)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 3, .fwd = ln_fwd, .bwd = ln_bwd };
	float y[256], mean[16], rstd[16];
	float ones[16];

	ln_rows = 5;
	ln_cols = 7;
	engine_rng_seed(&rng, 17);
	f.in_n[0] = f.y_n = 35;
	f.in_n[1] = f.in_n[2] = 7;
	f.in[0] = randoms(&rng, 35, -2.0f, 3.0f);
	f.in[1] = randoms(&rng, 7, 0.5f, 1.5f);
	f.in[2] = randoms(&rng, 7, -0.5f, 0.5f);
	fd_check(_metadata, &f, 800);
	/* With scale 1 and no bias each row has mean 0 and variance ~1. */
	for (int i = 0; i < 16; i++)
		ones[i] = 1.0f;
	ASSERT_EQ(0, engine_layernorm_forward(f.in[0], ones, NULL, 5, 7, 1e-5f, y, mean, rstd));
	for (size_t r = 0; r < 5; r++) {
		double s = 0.0, q = 0.0;

		for (size_t j = 0; j < 7; j++) {
			s += y[r * 7 + j];
			q += (double)y[r * 7 + j] * y[r * 7 + j];
		}
		EXPECT_LT(fabs(s / 7), 1e-6);
		EXPECT_LT(fabs(q / 7 - 1.0), 1e-3);
	}
	fd_free(&f);
}

static int rms_fwd(struct fd *f, float *y)
{
	float rstd[16];

	return engine_rmsnorm_forward(f->in[0], f->in[1], ln_rows, ln_cols, 1e-6f, y, rstd);
}

static int rms_bwd(struct fd *f, const float *dy, float **d)
{
	float rstd[16], y[256];

	return engine_rmsnorm_forward(f->in[0], f->in[1], ln_rows, ln_cols, 1e-6f, y, rstd) ?:
	       engine_rmsnorm_backward(f->in[0], f->in[1], rstd, dy, ln_rows, ln_cols, d[0], d[1]);
}

TEST(rmsnorm_scales_to_unit_rms_and_matches_finite_differences)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 2, .fwd = rms_fwd, .bwd = rms_bwd };
	float y[256], rstd[16], ones[16];

	ln_rows = 5;
	ln_cols = 7;
	engine_rng_seed(&rng, 18);
	f.in_n[0] = f.y_n = 35;
	f.in_n[1] = 7;
	f.in[0] = randoms(&rng, 35, -2.0f, 3.0f);
	f.in[1] = randoms(&rng, 7, 0.5f, 1.5f);
	fd_check(_metadata, &f, 850);
	/* With scale 1 each row's mean square is ~1; its mean is not removed. */
	for (int i = 0; i < 16; i++)
		ones[i] = 1.0f;
	ASSERT_EQ(0, engine_rmsnorm_forward(f.in[0], ones, 5, 7, 1e-6f, y, rstd));
	for (size_t r = 0; r < 5; r++) {
		double q = 0.0;

		for (size_t j = 0; j < 7; j++) {
			q += (double)y[r * 7 + j] * y[r * 7 + j];
			EXPECT_LT(fabsf(y[r * 7 + j] - f.in[0][r * 7 + j] * rstd[r]), 1e-6f);
		}
		EXPECT_LT(fabs(q / 7 - 1.0), 1e-4);
	}
	EXPECT_EQ(-EINVAL, engine_rmsnorm_forward(f.in[0], ones, 5, 7, 0.0f, y, rstd));
	fd_free(&f);
}

static int rot_fwd(struct fd *f, float *y)
{
	return engine_rotary_forward(f->p, f->in[0], f->in[1], f->in[2], y);
}

static int rot_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_rotary_backward(f->p, f->in[1], f->in[2], dy, d[0]);
}

/*
 * Rotary embedding, [2 rows][3 positions][2 heads][4]: by hand at one
 * point (the pairs (0, 2) and (1, 3) rotate), a rotation keeps each pair's
 * length with cos^2 + sin^2 = 1, and the gradient matches finite
 * differences.
 */
TEST(rotary_rotates_pairs_and_matches_finite_differences)
{
	const struct engine_rotary p = { .rows = 2, .seq = 3, .heads = 2, .dim = 4 };
	struct fd f = { .n_in = 3, .y_n = 48, .p = &p, .fwd = rot_fwd, .bwd = rot_bwd,
			.skip = { false, true, true } };
	struct engine_rng rng;
	float c[12], s[12], y[48];

	engine_rng_seed(&rng, 19);
	f.in_n[0] = 48;
	f.in_n[1] = f.in_n[2] = 12;
	f.in[0] = randoms(&rng, 48, -2.0f, 2.0f);
	f.in[1] = randoms(&rng, 12, -1.0f, 1.0f);
	f.in[2] = randoms(&rng, 12, -1.0f, 1.0f);
	fd_check(_metadata, &f, 860);
	for (int t = 0; t < 3; t++)
		for (int d = 0; d < 4; d++) {
			c[t * 4 + d] = cosf(0.3f * (float)(t + 1) * (float)(d % 2 + 1));
			s[t * 4 + d] = sinf(0.3f * (float)(t + 1) * (float)(d % 2 + 1));
		}
	ASSERT_EQ(0, engine_rotary_forward(&p, f.in[0], c, s, y));
	/* Row 1, position 2, head 1: elements from (1 * 3 + 2) * 2 + 1 = 11, times 4. */
	const float *x = f.in[0] + 44, *o = y + 44;

	EXPECT_LT(fabsf(o[0] - (x[0] * c[8] - x[2] * s[8])), 1e-6f);
	EXPECT_LT(fabsf(o[2] - (x[2] * c[10] + x[0] * s[10])), 1e-6f);
	EXPECT_LT(fabsf(o[1] - (x[1] * c[9] - x[3] * s[9])), 1e-6f);
	for (int i = 0; i < 48; i += 4)
		for (int d = 0; d < 2; d++) {
			float before = f.in[0][i + d] * f.in[0][i + d] + f.in[0][i + d + 2] * f.in[0][i + d + 2];
			float after = y[i + d] * y[i + d] + y[i + d + 2] * y[i + d + 2];

			EXPECT_LT(fabsf(after - before), 1e-5f * (1.0f + before));
		}
	const struct engine_rotary odd = { .rows = 1, .seq = 1, .heads = 1, .dim = 3 };

	EXPECT_EQ(-EINVAL, engine_rotary_forward(&odd, f.in[0], c, s, y));
	fd_free(&f);
}

static size_t sm_outer, sm_len, sm_inner;

static int sm_fwd(struct fd *f, float *y)
{
	return engine_softmax_forward(f->in[0], sm_outer, sm_len, sm_inner, y);
}

static int sm_bwd(struct fd *f, const float *dy, float **d)
{
	float y[256];

	return sm_fwd(f, y) ?: engine_softmax_backward(y, dy, sm_outer, sm_len, sm_inner, d[0]);
}

TEST(softmax_any_axis_and_finite_differences)
{
	struct engine_rng rng;
	const size_t shapes[][3] = { { 4, 6, 1 }, { 2, 5, 3 }, { 1, 4, 6 } };
	float x[3] = { 1000.0f, -1000.0f, 999.0f }, y[3];

	engine_rng_seed(&rng, 18);
	for (size_t s = 0; s < 3; s++) {
		struct fd f = { .n_in = 1, .fwd = sm_fwd, .bwd = sm_bwd };
		float out[256];

		sm_outer = shapes[s][0];
		sm_len = shapes[s][1];
		sm_inner = shapes[s][2];
		f.in_n[0] = f.y_n = sm_outer * sm_len * sm_inner;
		f.in[0] = randoms(&rng, f.in_n[0], -3.0f, 3.0f);
		ASSERT_EQ(0, sm_fwd(&f, out));
		for (size_t o = 0; o < sm_outer; o++)
			for (size_t i = 0; i < sm_inner; i++) {
				double sum = 0.0;

				for (size_t j = 0; j < sm_len; j++)
					sum += out[(o * sm_len + j) * sm_inner + i];
				EXPECT_LT(fabs(sum - 1.0), 1e-6);
			}
		fd_check(_metadata, &f, 900 + s);
		fd_free(&f);
	}
	ASSERT_EQ(0, engine_softmax_forward(x, 1, 3, 1, y));
	EXPECT_LT(fabsf(y[0] - 0.7310586f), 1e-6f);
	EXPECT_EQ(0.0f, y[1]);
}

static const int64_t gather_idx[] = { 2, 0, -1, 2 };

static int gather_fwd(struct fd *f, float *y)
{
	return engine_gather_forward(f->in[0], 2, 3, 4, gather_idx, 4, y);
}

static int gather_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_gather_backward(dy, 2, 3, 4, gather_idx, 4, d[0]);
}

TEST(gather_rows_and_scatter_add)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 1, .y_n = 32, .fwd = gather_fwd, .bwd = gather_bwd };
	float y[32];
	const int64_t bad[] = { 3 };

	engine_rng_seed(&rng, 19);
	f.in_n[0] = 24;
	f.in[0] = randoms(&rng, 24, -1.0f, 1.0f);
	ASSERT_EQ(0, gather_fwd(&f, y));
	/* y[o][i][j] = data[o][idx[i]][j]; -1 is the last row. */
	EXPECT_EQ(f.in[0][(1 * 3 + 2) * 4 + 3], y[(1 * 4 + 2) * 4 + 3]);
	EXPECT_EQ(f.in[0][(0 * 3 + 0) * 4 + 1], y[(0 * 4 + 1) * 4 + 1]);
	fd_check(_metadata, &f, 1000);
	EXPECT_EQ(-EDOM, engine_gather_forward(f.in[0], 2, 3, 4, bad, 1, y));
	fd_free(&f);
}

/* --- attention ----------------------------------------------------------------------- */

/* The attention's dropout mask of the last att_fwd(): seed 7 each time. */
static uint8_t att_keep[2 * 2 * 5 * 5];

static int att_fwd(struct fd *f, float *y)
{
	const struct engine_attention *p = f->p;
	float *probs = floats(p->batch * p->heads * p->seq * p->seq);
	float *s = floats(engine_attention_scratch(p));
	int err = p->ratio > 0.0f ?
		  engine_attention_forward_dropout(p, f->in[0], f->in[1], f->in[2], 7, y, probs,
						   att_keep, s) :
		  engine_attention_forward(p, f->in[0], f->in[1], f->in[2], y, probs);

	free(probs);
	free(s);
	return err;
}

static int att_bwd(struct fd *f, const float *dy, float **d)
{
	const struct engine_attention *p = f->p;
	float *probs = floats(p->batch * p->heads * p->seq * p->seq);
	float *y = floats(f->y_n), *s = floats(engine_attention_scratch(p));
	int err = att_fwd(f, y);

	if (!err)
		err = engine_attention_forward(p, f->in[0], f->in[1], f->in[2], y, probs);
	if (!err && p->ratio > 0.0f)
		err = engine_attention_backward_dropout(p, f->in[0], f->in[1], f->in[2], probs,
							att_keep, dy, d[0], d[1], d[2], s);
	else if (!err)
		err = engine_attention_backward(p, f->in[0], f->in[1], f->in[2], probs, dy, d[0],
						d[1], d[2], s);
	free(probs);
	free(y);
	free(s);
	return err;
}

/* The unfused computation in double: per head, masked softmax of scaled scores. */
static void att_ref(const struct engine_attention *p, const float *q, const float *k,
		    const float *v, double *y)
{
	size_t c = p->heads * p->head_dim;

	for (size_t b = 0; b < p->batch; b++)
		for (size_t h = 0; h < p->heads; h++)
			for (size_t i = 0; i < p->seq; i++) {
				double s[16], m = -INFINITY, sum = 0.0;
				size_t n = p->causal ? i + 1 : p->seq;

				for (size_t j = 0; j < n; j++) {
					s[j] = 0.0;
					for (size_t e = 0; e < p->head_dim; e++)
						s[j] += (double)q[(b * p->seq + i) * c + h * p->head_dim + e] *
							k[(b * p->seq + j) * c + h * p->head_dim + e];
					s[j] *= p->scale;
					if (p->key_mask)
						s[j] += p->key_mask[b * p->seq + j];
					m = s[j] > m ? s[j] : m;
				}
				for (size_t j = 0; j < n; j++)
					sum += s[j] = exp(s[j] - m);
				for (size_t e = 0; e < p->head_dim; e++) {
					double acc = 0.0;

					for (size_t j = 0; j < n; j++)
						acc += s[j] / sum * v[(b * p->seq + j) * c + h * p->head_dim + e];
					y[(b * p->seq + i) * c + h * p->head_dim + e] = acc;
				}
			}
}

TEST(attention_matches_unfused_and_finite_differences)
{
	struct engine_rng rng;

	/* Variant 2: a key padding mask, sample 1's last two keys padded. */
	static const float key_mask[10] = { 0, 0, 0, 0, 0, 0, 0, 0, -10000.0f, -10000.0f };

	engine_rng_seed(&rng, 20);
	for (int variant = 0; variant < 3; variant++) {
		bool causal = variant == 1;
		struct engine_attention p = { 2, 5, 2, 3, 0.57735f, causal, 0.0f,
					      variant == 2 ? key_mask : NULL };
		struct fd f = { .n_in = 3, .p = &p, .fwd = att_fwd, .bwd = att_bwd };
		double ref[60];
		float y[60];

		f.y_n = 60;
		for (int i = 0; i < 3; i++) {
			f.in_n[i] = 60;
			f.in[i] = randoms(&rng, 60, -1.5f, 1.5f);
		}
		ASSERT_EQ(0, att_fwd(&f, y));
		att_ref(&p, f.in[0], f.in[1], f.in[2], ref);
		for (int i = 0; i < 60; i++)
			ASSERT_LT(fabs(y[i] - ref[i]), 1e-5);
		fd_check(_metadata, &f, 1100 + variant);
		/* Causal: the first position sees only itself, so y = v there. */
		if (causal)
			for (int e = 0; e < 6; e++)
				EXPECT_EQ(f.in[2][e], y[e]);
		/* Padded keys: sample 1's output ignores their values. */
		if (variant == 2) {
			float y2[60];

			for (int e = 0; e < 12; e++)
				f.in[2][30 + 18 + e] += 5.0f;
			ASSERT_EQ(0, att_fwd(&f, y2));
			EXPECT_EQ(0, memcmp(y, y2, sizeof(y)));
		}
		fd_free(&f);
	}
}

/*
 * Attention dropout: a fixed seed makes the mask a constant, so the
 * gradients are checked against finite differences of the dropped-out
 * function; the same seed gives the same mask, about 1 - ratio of it kept.
 */
TEST(attention_dropout_is_seeded_and_differentiable)
{
	struct engine_rng rng;
	struct engine_attention p = { 2, 5, 2, 3, 0.57735f, true, 0.3f };
	struct fd f = { .n_in = 3, .p = &p, .fwd = att_fwd, .bwd = att_bwd };
	uint8_t first[sizeof(att_keep)];
	float y[60], y2[60];
	size_t kept = 0;

	engine_rng_seed(&rng, 21);
	f.y_n = 60;
	for (int i = 0; i < 3; i++) {
		f.in_n[i] = 60;
		f.in[i] = randoms(&rng, 60, -1.5f, 1.5f);
	}
	ASSERT_EQ(0, att_fwd(&f, y));
	memcpy(first, att_keep, sizeof(first));
	ASSERT_EQ(0, att_fwd(&f, y2));
	EXPECT_EQ(0, memcmp(first, att_keep, sizeof(first)));
	EXPECT_EQ(0, memcmp(y, y2, sizeof(y)));
	for (size_t i = 0; i < sizeof(att_keep); i++)
		kept += att_keep[i];
	/* 100 draws at 0.7: within 5 standard deviations (4.6 each) */
	EXPECT_LT(fabs((double)kept - 70.0), 23.0);
	fd_check(_metadata, &f, 1200);
	fd_free(&f);
	p.ratio = 1.0f;
	EXPECT_EQ(-EINVAL, engine_attention_forward(&p, y, y, y, y2, y2));
}

/* Batch normalization: N 3, C 4, 2x3 planes; batch statistics or running ones. */
static bool bn_batch;
static const struct engine_batchnorm bn_p = { 3, 4, 6, 1e-5f, 0.9f, true };
static const float bn_rm0[4] = { 0.1f, -0.2f, 0.3f, 0.0f }, bn_rv0[4] = { 1.0f, 0.5f, 2.0f, 1.5f };

static int bn_fwd(struct fd *f, float *y)
{
	float rm[4], rv[4], mean[4], rstd[4];

	memcpy(rm, bn_rm0, sizeof(rm));
	memcpy(rv, bn_rv0, sizeof(rv));
	return engine_batchnorm_forward(&bn_p, bn_batch, f->in[0], f->in[1], f->in[2], rm, rv, y,
					mean, rstd);
}

static int bn_bwd(struct fd *f, const float *dy, float **d)
{
	float rm[4], rv[4], mean[4], rstd[4], y[72];

	memcpy(rm, bn_rm0, sizeof(rm));
	memcpy(rv, bn_rv0, sizeof(rv));
	return engine_batchnorm_forward(&bn_p, bn_batch, f->in[0], f->in[1], f->in[2], rm, rv, y,
					mean, rstd) ?:
	       engine_batchnorm_backward(&bn_p, bn_batch, f->in[0], f->in[1], mean, rstd, dy, d[0],
					 d[1], d[2]);
}

TEST(batchnorm_statistics_running_update_and_finite_differences)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 3, .fwd = bn_fwd, .bwd = bn_bwd };
	float y[72], rm[4], rv[4], mean[4], rstd[4], ones[4] = { 1, 1, 1, 1 }, zeros[4] = { 0 };

	engine_rng_seed(&rng, 29);
	f.in_n[0] = f.y_n = 72;
	f.in_n[1] = f.in_n[2] = 4;
	f.in[0] = randoms(&rng, 72, -2.0f, 3.0f);
	f.in[1] = randoms(&rng, 4, 0.5f, 1.5f);
	f.in[2] = randoms(&rng, 4, -0.5f, 0.5f);
	for (int batch = 0; batch < 2; batch++) {
		bn_batch = batch;
		fd_check(_metadata, &f, 900 + batch);
	}
	/* Batch statistics: each channel of y has mean 0 and variance ~1; the
	 * running ones move by 1 - momentum towards the batch's, the variance
	 * unbiased (PyTorch's), written out in double here.
	 */
	memcpy(rm, bn_rm0, sizeof(rm));
	memcpy(rv, bn_rv0, sizeof(rv));
	ASSERT_EQ(0, engine_batchnorm_forward(&bn_p, true, f.in[0], ones, zeros, rm, rv, y, mean, rstd));
	for (size_t c = 0; c < 4; c++) {
		double s = 0.0, q = 0.0, xs = 0.0, xq = 0.0;

		for (size_t n = 0; n < 3; n++)
			for (size_t k = 0; k < 6; k++) {
				double v = y[(n * 4 + c) * 6 + k], x = f.in[0][(n * 4 + c) * 6 + k];

				s += v;
				q += v * v;
				xs += x;
				xq += x * x;
			}
		double mu = xs / 18, var = xq / 18 - mu * mu;

		EXPECT_LT(fabs(s / 18), 1e-6);
		EXPECT_LT(fabs(q / 18 - 1.0), 1e-3);
		EXPECT_LT(fabs(rm[c] - (0.9 * bn_rm0[c] + 0.1 * mu)), 1e-5);
		EXPECT_LT(fabs(rv[c] - (0.9 * bn_rv0[c] + 0.1 * var * 18 / 17)), 1e-5);
	}
	/* Running statistics: y = (x - rm) / sqrt(rv + eps), and they stay. */
	ASSERT_EQ(0, engine_batchnorm_forward(&bn_p, false, f.in[0], ones, zeros, rm, rv, y, mean, rstd));
	EXPECT_LT(fabs(y[6] - (f.in[0][6] - rm[1]) / sqrt(rv[1] + 1e-5)), 1e-5);
	EXPECT_EQ(mean[1], rm[1]);
	fd_free(&f);
}

/* --- dropout, layout, loss ------------------------------------------------------------- */

TEST(dropout_is_seeded_scaled_and_masked)
{
	enum { N = 20000 };
	float *x = floats(N), *y1 = floats(N), *y2 = floats(N), *dx = floats(N);
	uint8_t *k1 = malloc(N), *k2 = malloc(N);
	size_t kept = 0;

	for (size_t i = 0; i < N; i++)
		x[i] = 1.0f + (float)(i % 7);
	ASSERT_EQ(0, engine_dropout_forward(x, N, 0.25f, 42, y1, k1));
	ASSERT_EQ(0, engine_dropout_forward(x, N, 0.25f, 42, y2, k2));
	ASSERT_EQ(0, memcmp(y1, y2, N * sizeof(float)));
	for (size_t i = 0; i < N; i++) {
		kept += k1[i];
		ASSERT_EQ(k1[i] ? x[i] * (1.0f / 0.75f) : 0.0f, y1[i]);
	}
	/* 15000 expected; 5 standard deviations is +-306. */
	EXPECT_LT(labs((long)kept - 15000), 306);
	ASSERT_EQ(0, engine_dropout_forward(x, N, 0.25f, 43, y2, k2));
	EXPECT_NE(0, memcmp(k1, k2, N));
	ASSERT_EQ(0, engine_dropout_backward(x, k1, N, 0.25f, dx));
	ASSERT_EQ(0, memcmp(y1, dx, N * sizeof(float)));
	ASSERT_EQ(0, engine_dropout_forward(x, N, 0.0f, 1, y1, k1));
	ASSERT_EQ(0, memcmp(x, y1, N * sizeof(float)));
	EXPECT_EQ(-EINVAL, engine_dropout_forward(x, N, 1.0f, 1, y1, k1));
	free(x);
	free(y1);
	free(y2);
	free(dx);
	free(k1);
	free(k2);
}

TEST(transpose_split_concat_round_trips)
{
	const size_t dims[4] = { 2, 3, 4, 5 }, perm[4] = { 0, 2, 3, 1 }, inv[4] = { 0, 3, 1, 2 };
	const size_t tdims[4] = { 2, 4, 5, 3 }, sizes[3] = { 1, 3, 1 };
	float x[120], t[120], back[120], a[24], b[72], c[24], *parts[3] = { a, b, c };
	const float *cparts[3] = { a, b, c };

	for (int i = 0; i < 120; i++)
		x[i] = (float)i;
	ASSERT_EQ(0, engine_transpose(x, dims, 4, perm, t));
	/* t[n][h][w][c] = x[n][c][h][w] */
	EXPECT_EQ(x[((1 * 3 + 2) * 4 + 3) * 5 + 4], t[((1 * 4 + 3) * 5 + 4) * 3 + 2]);
	ASSERT_EQ(0, engine_transpose(t, tdims, 4, inv, back));
	ASSERT_EQ(0, memcmp(x, back, sizeof(x)));
	ASSERT_EQ(0, engine_split(x, 6, 4, sizes, 3, parts));
	EXPECT_EQ(x[5 * 20 + 4 * 4 + 2], c[5 * 4 + 2]);
	ASSERT_EQ(0, engine_concat(cparts, 6, 4, sizes, 3, back));
	ASSERT_EQ(0, memcmp(x, back, sizeof(x)));
	const size_t bad[4] = { 0, 0, 1, 2 };

	EXPECT_EQ(-EINVAL, engine_transpose(x, dims, 4, bad, t));
}

/* where: cond [3][1] (rows 0 and 2 true), a [3][4], b [4] broadcast to [3][4]. */
static const float where_cond[3] = { 1.0f, 0.0f, 1.0f };
static const struct engine_where where_p = {
	.rank = { 2, 2, 1 }, .dims = { { 3, 1 }, { 3, 4 }, { 4 } }, .y_rank = 2, .y_dims = { 3, 4 },
};

static int where_fwd(struct fd *f, float *y)
{
	return engine_where_forward(&where_p, where_cond, f->in[0], f->in[1], y);
}

static int where_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_where_backward(&where_p, where_cond, dy, d[0], d[1]);
}

TEST(where_selects_broadcast_operands_and_splits_the_gradient)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 2, .y_n = 12, .fwd = where_fwd, .bwd = where_bwd };
	struct engine_where bad = where_p;
	float y[12];

	engine_rng_seed(&rng, 24);
	f.in_n[0] = 12;
	f.in_n[1] = 4;
	f.in[0] = randoms(&rng, 12, -1.0f, 1.0f);
	f.in[1] = randoms(&rng, 4, -1.0f, 1.0f);
	ASSERT_EQ(0, engine_where_setup((struct engine_where *)&where_p));
	ASSERT_EQ(0, where_fwd(&f, y));
	for (int r = 0; r < 3; r++)
		for (int j = 0; j < 4; j++)
			ASSERT_EQ(r == 1 ? f.in[1][j] : f.in[0][r * 4 + j], y[r * 4 + j]);
	/* b's gradient sums row 1's only; a's is dy on rows 0 and 2. */
	fd_check(_metadata, &f, 1400);
	bad.dims[2][0] = 3;
	EXPECT_EQ(-EINVAL, engine_where_setup(&bad));
	fd_free(&f);
}

/* x [6][4][5] sliced along the middle axis, [1, 3): its rows 1 and 2. */
static int slice_fwd(struct fd *f, float *y)
{
	return engine_slice_forward(f->in[0], 6, 4, 5, 1, 2, y);
}

static int slice_bwd(struct fd *f, const float *dy, float **d)
{
	return engine_slice_backward(dy, 6, 4, 5, 1, 2, d[0]);
}

TEST(slice_takes_its_window_and_scatters_the_gradient_back)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 1, .y_n = 60, .fwd = slice_fwd, .bwd = slice_bwd };
	float y[60];

	engine_rng_seed(&rng, 23);
	f.in_n[0] = 120;
	f.in[0] = randoms(&rng, 120, -1.0f, 1.0f);
	ASSERT_EQ(0, slice_fwd(&f, y));
	for (int o = 0; o < 6; o++)
		for (int i = 0; i < 2; i++)
			for (int e = 0; e < 5; e++)
				ASSERT_EQ(f.in[0][(o * 4 + 1 + i) * 5 + e], y[(o * 2 + i) * 5 + e]);
	fd_check(_metadata, &f, 1300);
	EXPECT_EQ(-EINVAL, engine_slice_forward(f.in[0], 6, 4, 5, 3, 2, y));
	EXPECT_EQ(-EINVAL, engine_slice_forward(f.in[0], 6, 4, 5, 0, 0, y));
	fd_free(&f);
}

static const int64_t xent_labels[] = { 3, 0, 4, 1, 1, 2 };

static int xent_fwd(struct fd *f, float *y)
{
	size_t correct;

	return engine_xent_tokens_forward(f->in[0], xent_labels, 6, 5, y, &correct);
}

static int xent_bwd(struct fd *f, const float *dy, float **d)
{
	int err = engine_xent_tokens_backward(f->in[0], xent_labels, 6, 5, 6, d[0]);

	for (size_t i = 0; i < 30; i++)
		d[0][i] *= dy[0];
	return err;
}

TEST(token_cross_entropy_agrees_with_the_byte_label_one)
{
	struct engine_rng rng;
	struct fd f = { .n_in = 1, .y_n = 1, .fwd = xent_fwd, .bwd = xent_bwd };
	const uint8_t labels8[] = { 3, 0, 4, 1, 1, 2 };
	const int64_t bad[] = { 3, 0, 5, 1, 1, 2 };
	float l1, l2, d1[30], d2[30];
	size_t c1, c2;

	engine_rng_seed(&rng, 21);
	f.in_n[0] = 30;
	f.in[0] = randoms(&rng, 30, -2.0f, 2.0f);
	ASSERT_EQ(0, engine_xent_tokens_forward(f.in[0], xent_labels, 6, 5, &l1, &c1));
	ASSERT_EQ(0, engine_xent_forward(f.in[0], labels8, 6, 5, &l2, &c2));
	/* The byte-label kernel sums each row in float, this one in double. */
	EXPECT_LT(fabsf(l1 - l2), 1e-6f * l2);
	EXPECT_EQ(c2, c1);
	ASSERT_EQ(0, engine_xent_tokens_backward(f.in[0], xent_labels, 6, 5, 6, d1));
	ASSERT_EQ(0, engine_xent_backward(f.in[0], labels8, 6, 5, 6, d2));
	for (int i = 0; i < 30; i++)
		EXPECT_LT(fabsf(d1[i] - d2[i]), 1e-7f);
	fd_check(_metadata, &f, 1200);
	EXPECT_EQ(-EDOM, engine_xent_tokens_forward(f.in[0], bad, 6, 5, &l1, &c1));
	/*
	 * ignore_index: rows labelled -100 leave the mean (over rows 1, 3 and
	 * 5 here, the same as those three rows alone) and get no gradient.
	 */
	const int64_t some[6] = { -100, 0, -100, 1, -100, 2 }, only[3] = { 0, 1, 2 };
	float alone[15], d3[15];

	for (int r = 0; r < 3; r++)
		memcpy(alone + r * 5, f.in[0] + (2 * r + 1) * 5, 5 * sizeof(float));
	ASSERT_EQ(0, engine_xent_tokens_forward(f.in[0], some, 6, 5, &l1, &c1));
	ASSERT_EQ(0, engine_xent_tokens_forward(alone, only, 3, 5, &l2, &c2));
	EXPECT_EQ(l2, l1);
	EXPECT_EQ(c2, c1);
	EXPECT_EQ(3, engine_xent_tokens_counted(some, 6));
	ASSERT_EQ(0, engine_xent_tokens_backward(f.in[0], some, 6, 5, 3, d1));
	ASSERT_EQ(0, engine_xent_tokens_backward(alone, only, 3, 5, 3, d3));
	for (int r = 0; r < 6; r++)
		for (int j = 0; j < 5; j++)
			EXPECT_EQ(r % 2 ? d3[(r / 2) * 5 + j] : 0.0f, d1[r * 5 + j]);
	fd_free(&f);
}

TEST_HARNESS_MAIN
