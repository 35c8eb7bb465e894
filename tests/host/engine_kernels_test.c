// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's kernels against plain loops in double precision, against
 * finite differences, and against hand-computed optimizer steps.
 *
 * Tolerance of the GEMM-based kernels: a sum of K products computed in fp32,
 * in any order and with or without FMA, is within gamma_K * sum |x_i w_i| of
 * the exact value, gamma_K = K u / (1 - K u), u = 2^-24 (Higham, "Accuracy
 * and Stability of Numerical Algorithms", 3.1). The reference is double, so
 * its own error is negligible; each element is checked against that bound
 * computed for it (with K + 2 terms for the bias add and a final rounding).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/engine.h"

#define U 0x1p-24

static void fill(struct engine_rng *rng, float *x, size_t n, float lo, float hi)
{
	for (size_t i = 0; i < n; i++)
		x[i] = lo + (hi - lo) * engine_rng_uniform(rng);
}

static float *floats(size_t n)
{
	float *p = calloc(n, sizeof(float));

	if (!p)
		abort();
	return p;
}

static double gamma_bound(size_t k)
{
	return (double)k * U / (1.0 - (double)k * U);
}

/* y = x w^T + b (relu): the result and, per element, sum |x_i w_i| + |b|. */
static void ref_dense_forward(const float *x, const float *w, const float *b,
			      size_t batch, size_t in, size_t out, bool relu,
			      double *y, double *mag)
{
	for (size_t i = 0; i < batch; i++)
		for (size_t j = 0; j < out; j++) {
			double s = b ? b[j] : 0.0, m = b ? fabs(b[j]) : 0.0;

			for (size_t k = 0; k < in; k++) {
				s += (double)x[i * in + k] * w[j * in + k];
				m += fabs((double)x[i * in + k] * w[j * in + k]);
			}
			y[i * out + j] = relu && s < 0 ? 0 : s;
			mag[i * out + j] = m;
		}
}

/* Counts elements of got farther from want than gamma_{k} * mag. */
static size_t count_outside(const float *got, const double *want,
			    const double *mag, size_t n, size_t k)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		if (fabs(got[i] - want[i]) > gamma_bound(k) * mag[i] + 1e-30)
			bad++;
	return bad;
}

TEST(pixels_scale_to_unit_interval)
{
	uint8_t px[256];
	float f[256];

	for (int i = 0; i < 256; i++)
		px[i] = (uint8_t)i;
	/* 255 then 1: both the vector body and the scalar tail run. */
	ASSERT_EQ(0, engine_pixels_to_f32(px, 255, f));
	ASSERT_EQ(0, engine_pixels_to_f32(px + 255, 1, f + 255));
	EXPECT_TRUE(f[0] == 0.0f);
	EXPECT_TRUE(f[255] == 1.0f);
	for (int i = 0; i < 256; i++) {
		/* Correctly rounded: within half an ulp of i / 255. */
		double exact = i / 255.0;

		EXPECT_TRUE(fabs(f[i] - exact) <= 0.5 * FLT_EPSILON * exact)
			TH_LOG("pixel %d -> %.9g", i, f[i]);
	}
	EXPECT_EQ(-EINVAL, engine_pixels_to_f32(NULL, 1, f));
	EXPECT_EQ(-EINVAL, engine_pixels_to_f32(px, 0, f));
}

static void check_forward(struct __test_metadata *_metadata, size_t batch,
			  size_t in, size_t out, bool bias, bool relu)
{
	struct engine_rng rng;
	float *x = floats(batch * in), *w = floats(out * in), *b = floats(out);
	float *y = floats(batch * out);
	double *want = calloc(batch * out, sizeof(double));
	double *mag = calloc(batch * out, sizeof(double));
	size_t negatives = 0;

	ASSERT_TRUE(want && mag);
	engine_rng_seed(&rng, batch * 1000 + in + out);
	fill(&rng, x, batch * in, 0.0f, 1.0f);
	fill(&rng, w, out * in, -0.1f, 0.1f);
	fill(&rng, b, out, -0.5f, 0.5f);
	ASSERT_EQ(0, engine_dense_forward(x, w, bias ? b : NULL, batch, in, out,
					  relu, y));
	ref_dense_forward(x, w, bias ? b : NULL, batch, in, out, relu, want, mag);
	EXPECT_EQ(0, count_outside(y, want, mag, batch * out, in + 2));
	for (size_t i = 0; i < batch * out; i++)
		negatives += y[i] < 0.0f;
	if (relu) {
		EXPECT_EQ(0, negatives);
	} else {
		EXPECT_GT(negatives, 0);	/* the data does reach below zero */
	}
	free(x), free(w), free(b), free(y), free(want), free(mag);
}

TEST(dense_forward_matches_reference)
{
	check_forward(_metadata, 7, 33, 13, true, false);
	check_forward(_metadata, 7, 33, 13, true, true);
	check_forward(_metadata, 5, 9, 3, false, false);
	check_forward(_metadata, 5, 9, 3, false, true);
	check_forward(_metadata, 16, 784, 32, true, true);	/* fc-mnist's K */
}

TEST(dense_forward_rejects_bad_arguments)
{
	float x[4] = { 0 }, w[4] = { 0 }, y[4];

	EXPECT_EQ(-EINVAL, engine_dense_forward(x, w, NULL, 0, 2, 2, false, y));
	EXPECT_EQ(-EINVAL, engine_dense_forward(NULL, w, NULL, 2, 2, 2, false, y));
	EXPECT_EQ(-EOVERFLOW, engine_dense_forward(x, w, NULL, 1, (size_t)1 << 31,
						   1, false, y));
}

/* dx = dy w, dw = dy^T x, db = column sums of dy, in double. */
static void ref_dense_backward(const float *dy, const float *x, const float *w,
			       size_t batch, size_t in, size_t out, double *dx,
			       double *dxmag, double *dw, double *dwmag,
			       double *db, double *dbmag)
{
	for (size_t i = 0; i < batch; i++)
		for (size_t k = 0; k < in; k++) {
			double s = 0, m = 0;

			for (size_t j = 0; j < out; j++) {
				s += (double)dy[i * out + j] * w[j * in + k];
				m += fabs((double)dy[i * out + j] * w[j * in + k]);
			}
			dx[i * in + k] = s, dxmag[i * in + k] = m;
		}
	for (size_t j = 0; j < out; j++) {
		for (size_t k = 0; k < in; k++) {
			double s = 0, m = 0;

			for (size_t i = 0; i < batch; i++) {
				s += (double)dy[i * out + j] * x[i * in + k];
				m += fabs((double)dy[i * out + j] * x[i * in + k]);
			}
			dw[j * in + k] = s, dwmag[j * in + k] = m;
		}
		db[j] = 0, dbmag[j] = 0;
		for (size_t i = 0; i < batch; i++) {
			db[j] += dy[i * out + j];
			dbmag[j] += fabs(dy[i * out + j]);
		}
	}
}

struct backward_case {
	size_t batch, in, out;
	float *dy, *x, *w, *dx, *dw, *db;
	double *rdx, *rdxm, *rdw, *rdwm, *rdb, *rdbm;
};

static void backward_case_init(struct backward_case *c, size_t batch, size_t in,
			       size_t out, uint64_t seed)
{
	struct engine_rng rng;

	c->batch = batch, c->in = in, c->out = out;
	c->dy = floats(batch * out), c->x = floats(batch * in);
	c->w = floats(out * in), c->dx = floats(batch * in);
	c->dw = floats(out * in), c->db = floats(out);
	c->rdx = calloc(batch * in, sizeof(double));
	c->rdxm = calloc(batch * in, sizeof(double));
	c->rdw = calloc(out * in, sizeof(double));
	c->rdwm = calloc(out * in, sizeof(double));
	c->rdb = calloc(out, sizeof(double));
	c->rdbm = calloc(out, sizeof(double));
	if (!c->rdx || !c->rdxm || !c->rdw || !c->rdwm || !c->rdb || !c->rdbm)
		abort();
	engine_rng_seed(&rng, seed);
	fill(&rng, c->dy, batch * out, -1.0f, 1.0f);
	fill(&rng, c->x, batch * in, 0.0f, 1.0f);
	fill(&rng, c->w, out * in, -0.2f, 0.2f);
	ref_dense_backward(c->dy, c->x, c->w, batch, in, out, c->rdx, c->rdxm,
			   c->rdw, c->rdwm, c->rdb, c->rdbm);
}

static void backward_case_free(struct backward_case *c)
{
	free(c->dy), free(c->x), free(c->w), free(c->dx), free(c->dw), free(c->db);
	free(c->rdx), free(c->rdxm), free(c->rdw), free(c->rdwm), free(c->rdb);
	free(c->rdbm);
}

TEST(dense_backward_matches_reference)
{
	struct backward_case c;

	backward_case_init(&c, 9, 31, 17, 7);
	/* grad_beta 0 must ignore whatever the gradient buffers held. */
	for (size_t i = 0; i < c.out * c.in; i++)
		c.dw[i] = NAN;
	for (size_t i = 0; i < c.out; i++)
		c.db[i] = NAN;
	ASSERT_EQ(0, engine_dense_backward(c.dy, c.x, c.w, c.batch, c.in, c.out,
					   0.0f, c.dx, c.dw, c.db));
	EXPECT_EQ(0, count_outside(c.dx, c.rdx, c.rdxm, c.batch * c.in, c.out + 1));
	EXPECT_EQ(0, count_outside(c.dw, c.rdw, c.rdwm, c.out * c.in, c.batch + 1));
	EXPECT_EQ(0, count_outside(c.db, c.rdb, c.rdbm, c.out, c.batch + 1));
	backward_case_free(&c);
}

TEST(dense_backward_accumulates_with_beta_one)
{
	struct backward_case c;
	double *twice_w, *twice_wm, *twice_b, *twice_bm;

	backward_case_init(&c, 6, 10, 5, 11);
	twice_w = calloc(c.out * c.in, sizeof(double));
	twice_wm = calloc(c.out * c.in, sizeof(double));
	twice_b = calloc(c.out, sizeof(double));
	twice_bm = calloc(c.out, sizeof(double));
	ASSERT_TRUE(twice_w && twice_wm && twice_b && twice_bm);
	for (size_t i = 0; i < c.out * c.in; i++)
		twice_w[i] = 2 * c.rdw[i], twice_wm[i] = 2 * c.rdwm[i];
	for (size_t i = 0; i < c.out; i++)
		twice_b[i] = 2 * c.rdb[i], twice_bm[i] = 2 * c.rdbm[i];

	/* Two micro-batches' worth of the same data: twice the gradient.
	 * dx and db may be skipped.
	 */
	ASSERT_EQ(0, engine_dense_backward(c.dy, c.x, c.w, c.batch, c.in, c.out,
					   0.0f, NULL, c.dw, c.db));
	ASSERT_EQ(0, engine_dense_backward(c.dy, c.x, c.w, c.batch, c.in, c.out,
					   1.0f, NULL, c.dw, c.db));
	EXPECT_EQ(0, count_outside(c.dw, twice_w, twice_wm, c.out * c.in,
				   2 * c.batch + 1));
	EXPECT_EQ(0, count_outside(c.db, twice_b, twice_bm, c.out, 2 * c.batch + 1));

	/* grad_beta 0.5 scales what was there: 0.5 * 2g + g = 2g again. */
	ASSERT_EQ(0, engine_dense_backward(c.dy, c.x, c.w, c.batch, c.in, c.out,
					   0.5f, NULL, c.dw, NULL));
	EXPECT_EQ(0, count_outside(c.dw, twice_w, twice_wm, c.out * c.in,
				   3 * c.batch + 2));
	free(twice_w), free(twice_wm), free(twice_b), free(twice_bm);
	backward_case_free(&c);
}

/*
 * Each case appears twice, so that it is met both by the 4-wide vector body
 * (elements 0..7) and by the scalar tail (8..11).
 */
TEST(relu_forward_and_backward)
{
	const float x[12] = { -2.0f, -0.0f, 0.0f, 1e-30f, 3.0f, NAN, -1e-30f, 7.0f,
			      NAN, -2.0f, 3.0f, 0.0f };
	float dy[12], y[12], dx[12];

	for (int i = 0; i < 12; i++)
		dy[i] = (float)(i + 1);
	ASSERT_EQ(0, engine_relu_forward(x, 12, y));
	for (int i = 0; i < 12; i++) {
		if (isnan(x[i])) {
			EXPECT_TRUE(isnan(y[i]));	/* divergence is not hidden */
		} else {
			EXPECT_TRUE(y[i] == (x[i] > 0.0f ? x[i] : 0.0f)) TH_LOG("x[%d]", i);
		}
	}
	/* Passes where the output is positive, masks zero and NaN. */
	ASSERT_EQ(0, engine_relu_backward(y, dy, 12, dx));
	for (int i = 0; i < 12; i++) {
		EXPECT_TRUE(dx[i] == (x[i] > 0.0f ? dy[i] : 0.0f)) TH_LOG("dx[%d]", i);
	}
	ASSERT_EQ(0, engine_relu_backward(y, dy, 12, dy));	/* in place */
	EXPECT_EQ(0, memcmp(dx, dy, sizeof(dx)));
	memcpy(y, x, sizeof(y));
	ASSERT_EQ(0, engine_relu_forward(y, 12, y));	/* in place */
	EXPECT_TRUE(y[7] == 7.0f && y[9] == 0.0f && isnan(y[8]));
	EXPECT_EQ(-EINVAL, engine_relu_backward(y, dy, 0, dx));
}

/* Mean cross-entropy and correct count, in double. */
static double ref_xent(const float *z, const uint8_t *labels, size_t batch,
		       size_t classes, size_t *correct, double *dz, size_t norm)
{
	double total = 0;

	*correct = 0;
	for (size_t i = 0; i < batch; i++) {
		const float *row = z + i * classes;
		double m = row[0], s = 0;
		size_t best = 0;

		for (size_t j = 1; j < classes; j++)
			if (row[j] > m)
				m = row[j], best = j;
		for (size_t j = 0; j < classes; j++)
			s += exp(row[j] - m);
		total += log(s) + m - row[labels[i]];
		*correct += best == labels[i];
		for (size_t j = 0; dz && j < classes; j++)
			dz[i * classes + j] = (exp(row[j] - m) / s -
					       (j == labels[i])) / (double)norm;
	}
	return total / (double)batch;
}

TEST(softmax_xent_matches_reference)
{
	enum { B = 12, C = 10 };
	struct engine_rng rng;
	float z[B * C], dz[B * C];
	double rdz[B * C], want;
	uint8_t labels[B];
	size_t correct, rcorrect;
	float loss;

	engine_rng_seed(&rng, 3);
	fill(&rng, z, B * C, -4.0f, 4.0f);
	for (int i = 0; i < B; i++)
		labels[i] = (uint8_t)(engine_rng_next(&rng) % C);
	/* Make a few rows correct for sure, and one row enormous. */
	z[0 * C + labels[0]] = 9.0f;
	z[1 * C + labels[1]] = 9.0f;
	for (int j = 0; j < C; j++)
		z[2 * C + j] = j == labels[2] ? 1000.0f : -1000.0f;

	ASSERT_EQ(0, engine_xent_forward(z, labels, B, C, &loss, &correct));
	want = ref_xent(z, labels, B, C, &rcorrect, rdz, 24);
	EXPECT_EQ(rcorrect, correct);
	EXPECT_GE(correct, 3);
	/* Per row: expf/logf to a few ulp on a value of magnitude ~10; the
	 * mean is summed in double. 1e-5 relative is ~100 ulp of slack.
	 */
	EXPECT_TRUE(isfinite(loss) && fabs(loss - want) <= 1e-5 * fabs(want))
		TH_LOG("loss %.9g, reference %.9g", loss, want);

	/* norm 24: as if this batch were half of a batch of 24. */
	ASSERT_EQ(0, engine_xent_backward(z, labels, B, C, 24, dz));
	for (int i = 0; i < B; i++) {
		double rowsum = 0;

		for (int j = 0; j < C; j++) {
			/* probabilities in [0, 1] to a few ulp, over 24 */
			EXPECT_TRUE(fabs(dz[i * C + j] - rdz[i * C + j]) <= 1e-6 / 24)
				TH_LOG("dz[%d][%d] %.9g, reference %.9g", i, j,
				       dz[i * C + j], rdz[i * C + j]);
			rowsum += dz[i * C + j];
		}
		EXPECT_TRUE(fabs(rowsum) <= 1e-6);	/* softmax sums to 1 */
	}
}

TEST(softmax_xent_rejects_bad_labels)
{
	float z[2 * 3] = { 1, 2, 3, 4, 5, 6 };
	float dz[2 * 3] = { 7, 7, 7, 7, 7, 7 };
	uint8_t labels[2] = { 2, 3 };	/* 3 is not a class of 3 */
	float loss = 42.0f;
	size_t correct = 42;

	EXPECT_EQ(-EDOM, engine_xent_forward(z, labels, 2, 3, &loss, &correct));
	EXPECT_EQ(-EDOM, engine_xent_backward(z, labels, 2, 3, 2, dz));
	/* Nothing was written. */
	EXPECT_TRUE(loss == 42.0f);
	EXPECT_EQ(42, correct);
	for (int i = 0; i < 6; i++) {
		EXPECT_TRUE(dz[i] == 7.0f);
	}
	labels[1] = 255;
	EXPECT_EQ(-EDOM, engine_xent_forward(z, labels, 2, 3, &loss, &correct));
	labels[1] = 0;
	EXPECT_EQ(0, engine_xent_forward(z, labels, 2, 3, &loss, &correct));
	EXPECT_EQ(-EINVAL, engine_xent_forward(z, labels, 2, 0, &loss, &correct));
	EXPECT_EQ(-EINVAL, engine_xent_forward(z, labels, 1, 257, &loss, &correct));
	EXPECT_EQ(-EINVAL, engine_xent_backward(z, labels, 2, 3, 0, dz));
	EXPECT_STRNE(engine_strerror(-EDOM), engine_strerror(-EINVAL));
}

TEST(argmax_takes_first_of_ties)
{
	const float z[3 * 4] = {
		0, 5, 5, 1,
		-1, -2, -3, -0.5f,
		2, 2, 2, 2,
	};
	uint8_t pred[3];

	ASSERT_EQ(0, engine_argmax(z, 3, 4, pred));
	EXPECT_EQ(1, pred[0]);
	EXPECT_EQ(3, pred[1]);
	EXPECT_EQ(0, pred[2]);
}

/*
 * Finite differences: a 2-layer net x -> dense+ReLU -> dense -> softmax
 * cross-entropy, its loss evaluated in double by plain loops, differentiated
 * by central differences (step 1e-4: truncation ~1e-8, rounding ~1e-12), and
 * compared with the gradients the engine's kernels produce in fp32. A step
 * across a ReLU kink would make the difference meaningless, so such
 * coordinates are skipped (and counted: there must be few).
 */
enum { FB = 4, FI = 6, FH = 5, FC = 3 };

struct fd_net {
	double x[FB * FI], w1[FH * FI], b1[FH], w2[FC * FH], b2[FC];
};

static double fd_loss(const struct fd_net *n, const uint8_t *labels,
		      unsigned int *relu_pattern)
{
	double total = 0;
	unsigned int pattern = 0, bit = 0;

	for (int i = 0; i < FB; i++) {
		double h[FH], z[FC], m, s = 0;

		for (int j = 0; j < FH; j++) {
			double a = n->b1[j];

			for (int k = 0; k < FI; k++)
				a += n->x[i * FI + k] * n->w1[j * FI + k];
			pattern ^= (unsigned int)(a > 0) << (bit++ % 32);
			h[j] = a > 0 ? a : 0;
		}
		for (int c = 0; c < FC; c++) {
			z[c] = n->b2[c];
			for (int j = 0; j < FH; j++)
				z[c] += h[j] * n->w2[c * FH + j];
		}
		m = fmax(z[0], fmax(z[1], z[2]));
		for (int c = 0; c < FC; c++)
			s += exp(z[c] - m);
		total += log(s) + m - z[labels[i]];
	}
	*relu_pattern = pattern;
	return total / FB;
}

static void fd_check(struct __test_metadata *_metadata, struct fd_net *n,
		     const uint8_t *labels, double *param, const float *grad,
		     size_t count, const char *name, size_t *skipped)
{
	const double h = 1e-4;

	for (size_t i = 0; i < count; i++) {
		double keep = param[i], up, down, fd;
		unsigned int pu, pd, p0;

		fd_loss(n, labels, &p0);
		param[i] = keep + h;
		up = fd_loss(n, labels, &pu);
		param[i] = keep - h;
		down = fd_loss(n, labels, &pd);
		param[i] = keep;
		if (pu != p0 || pd != p0) {
			(*skipped)++;
			continue;
		}
		fd = (up - down) / (2 * h);
		/* fp32 gradients of O(1) values: ~1e-6; allow 1e-4 abs and
		 * 1e-3 relative.
		 */
		EXPECT_TRUE(fabs(grad[i] - fd) <= 1e-4 + 1e-3 * fabs(fd))
			TH_LOG("%s[%zu]: engine %.7g, finite difference %.7g",
			       name, i, grad[i], fd);
	}
}

TEST(gradients_match_finite_differences)
{
	struct engine_rng rng;
	struct fd_net n;
	float x[FB * FI], w1[FH * FI], b1[FH], w2[FC * FH], b2[FC];
	float h[FB * FH], z[FB * FC], dz[FB * FC], dh[FB * FH], dx[FB * FI];
	float dw1[FH * FI], db1[FH], dw2[FC * FH], db2[FC];
	const uint8_t labels[FB] = { 0, 2, 1, 2 };
	size_t skipped = 0, checked = FB * FI + FH * FI + FH + FC * FH + FC;

	engine_rng_seed(&rng, 2024);
	fill(&rng, x, FB * FI, 0.0f, 1.0f);
	fill(&rng, w1, FH * FI, -1.0f, 1.0f);
	fill(&rng, b1, FH, -0.5f, 0.5f);
	fill(&rng, w2, FC * FH, -1.0f, 1.0f);
	fill(&rng, b2, FC, -0.5f, 0.5f);

	/* The engine: forward, loss gradient, backward through both layers. */
	ASSERT_EQ(0, engine_dense_forward(x, w1, b1, FB, FI, FH, true, h));
	ASSERT_EQ(0, engine_dense_forward(h, w2, b2, FB, FH, FC, false, z));
	ASSERT_EQ(0, engine_xent_backward(z, labels, FB, FC, FB, dz));
	ASSERT_EQ(0, engine_dense_backward(dz, h, w2, FB, FH, FC, 0.0f, dh, dw2,
					   db2));
	ASSERT_EQ(0, engine_relu_backward(h, dh, FB * FH, dh));
	ASSERT_EQ(0, engine_dense_backward(dh, x, w1, FB, FI, FH, 0.0f, dx, dw1,
					   db1));

	for (int i = 0; i < FB * FI; i++)
		n.x[i] = x[i];
	for (int i = 0; i < FH * FI; i++)
		n.w1[i] = w1[i];
	for (int i = 0; i < FH; i++)
		n.b1[i] = b1[i];
	for (int i = 0; i < FC * FH; i++)
		n.w2[i] = w2[i];
	for (int i = 0; i < FC; i++)
		n.b2[i] = b2[i];
	fd_check(_metadata, &n, labels, n.x, dx, FB * FI, "dx", &skipped);
	fd_check(_metadata, &n, labels, n.w1, dw1, FH * FI, "dw1", &skipped);
	fd_check(_metadata, &n, labels, n.b1, db1, FH, "db1", &skipped);
	fd_check(_metadata, &n, labels, n.w2, dw2, FC * FH, "dw2", &skipped);
	fd_check(_metadata, &n, labels, n.b2, db2, FC, "db2", &skipped);
	EXPECT_LE(skipped, checked / 20);

	/* The hidden layer must really have both active and dead units, or
	 * the ReLU's gradient was not exercised.
	 */
	size_t dead = 0;

	for (int i = 0; i < FB * FH; i++)
		dead += h[i] == 0.0f;
	EXPECT_GT(dead, 0);
	EXPECT_LT(dead, FB * FH);
}

/*
 * Optimizer steps worked out by hand (each value is exactly representable
 * or within an ulp of the float shown).
 */
static bool near(float got, double want)
{
	return fabs(got - want) <= 2 * FLT_EPSILON * fabs(want);
}

TEST(sgd_step_by_hand)
{
	struct engine_optim opt;
	float w[2] = { 1.0f, -2.0f }, g[2] = { 0.5f, -1.0f };

	engine_optim_defaults(&opt, ENGINE_SGD, 0.1f);
	/* w - lr g: 1 - 0.05 = 0.95; -2 + 0.1 = -1.9 */
	ASSERT_EQ(0, engine_optim_step(&opt, 1, w, g, NULL, NULL, 2));
	EXPECT_TRUE(near(w[0], 0.95) && near(w[1], -1.9))
		TH_LOG("%.9g %.9g", w[0], w[1]);

	/* Weight decay 0.01: g' = 0.5 + 0.01 * 0.95 = 0.5095,
	 * w = 0.95 - 0.1 * 0.5095 = 0.89905.
	 */
	opt.weight_decay = 0.01;
	ASSERT_EQ(0, engine_optim_step(&opt, 2, w, g, NULL, NULL, 1));
	EXPECT_TRUE(near(w[0], 0.89905)) TH_LOG("%.9g", w[0]);
}

TEST(momentum_step_by_hand)
{
	struct engine_optim opt;
	float w = 1.0f, v = 0.0f;
	const float g[3] = { 1.0f, 1.0f, 0.5f };
	/* mu 0.9, lr 0.1:
	 *   v = 1                    w = 1 - 0.1           = 0.9
	 *   v = 0.9 + 1 = 1.9        w = 0.9 - 0.19        = 0.71
	 *   v = 1.71 + 0.5 = 2.21    w = 0.71 - 0.221      = 0.489
	 */
	const double want_v[3] = { 1.0, 1.9, 2.21 }, want_w[3] = { 0.9, 0.71, 0.489 };

	engine_optim_defaults(&opt, ENGINE_MOMENTUM, 0.1f);
	EXPECT_TRUE(opt.momentum == 0.9);
	for (int t = 0; t < 3; t++) {
		ASSERT_EQ(0, engine_optim_step(&opt, t + 1, &w, &g[t], &v, NULL, 1));
		EXPECT_TRUE(near(v, want_v[t]) && fabs(w - want_w[t]) <= 4e-7)
			TH_LOG("step %d: v %.9g w %.9g", t + 1, v, w);
	}
	EXPECT_EQ(-EINVAL, engine_optim_step(&opt, 4, &w, g, NULL, NULL, 1));
}

TEST(adam_step_by_hand)
{
	struct engine_optim opt;
	float w = 1.0f, m = 0.0f, v = 0.0f;
	const float g[2] = { 2.0f, -1.0f };

	engine_optim_defaults(&opt, ENGINE_ADAM, 0.001f);
	/* Step 1, g = 2: m = 0.1 * 2 = 0.2, v = 0.001 * 4 = 0.004; corrected
	 * m^ = 0.2 / 0.1 = 2, v^ = 0.004 / 0.001 = 4, so
	 * w = 1 - 0.001 * 2 / (2 + 1e-8) = 0.999 (to 5e-12).
	 */
	ASSERT_EQ(0, engine_optim_step(&opt, 1, &w, &g[0], &m, &v, 1));
	EXPECT_TRUE(near(m, 0.2) && near(v, 0.004) && near(w, 0.999))
		TH_LOG("m %.9g v %.9g w %.9g", m, v, w);
	/* Step 2, g = -1: m = 0.18 - 0.1 = 0.08, v = 0.003996 + 0.001 =
	 * 0.004996; bias corrections 1 - 0.81 = 0.19 and 1 - 0.998001 =
	 * 0.001999; m^ = 0.42105263, sqrt(v^) = sqrt(2.4992496) = 1.5809015;
	 * w = 0.999 - 0.001 * 0.42105263 / 1.5809015 = 0.99873366.
	 */
	ASSERT_EQ(0, engine_optim_step(&opt, 2, &w, &g[1], &m, &v, 1));
	EXPECT_TRUE(near(m, 0.08) && near(v, 0.004996) &&
		    fabs(w - 0.99873366) <= 2e-7)
		TH_LOG("m %.9g v %.9g w %.9g", m, v, w);
}

/*
 * The vector body and the scalar tail of each optimizer must compute the
 * same thing: equal parameters and gradients give equal results in all 11
 * elements (8 in vector lanes, 3 in the tail) and equal a 1-element run.
 */
TEST(optimizer_lanes_agree)
{
	const enum engine_optim_kind kinds[] = { ENGINE_SGD, ENGINE_MOMENTUM,
						 ENGINE_ADAM };

	for (int k = 0; k < 3; k++) {
		struct engine_optim opt;
		float w[11], s0[11] = { 0 }, s1[11] = { 0 }, g[11];
		float w1 = 0.3f, s01 = 0, s11 = 0;

		engine_optim_defaults(&opt, kinds[k], 0.05);
		opt.weight_decay = 0.01;
		for (uint64_t t = 1; t <= 3; t++) {
			float g1 = 0.7f / (float)t;

			for (int i = 0; i < 11; i++) {
				if (t == 1)
					w[i] = 0.3f;
				g[i] = g1;
			}
			ASSERT_EQ(0, engine_optim_step(&opt, t, w, g, s0, s1, 11));
			ASSERT_EQ(0, engine_optim_step(&opt, t, &w1, &g1, &s01, &s11, 1));
		}
		for (int i = 0; i < 11; i++) {
			EXPECT_TRUE(w[i] == w1 && s0[i] == s01 && s1[i] == s11)
				TH_LOG("optimizer %d, element %d: %.9g vs %.9g", k, i,
				       w[i], w1);
		}
	}
}

/*
 * Adam's loop is vectorized by the compiler, one copy per ISA level (up to
 * 16 lanes): over lengths that cover whole vectors and a tail, from an
 * unaligned start, with varied values, it must give the bits of the scalar
 * formula written out here.
 */
TEST(adam_vector_copies_match_scalar)
{
	enum { N = 16 * 5 + 7 };
	float w[N + 1], m[N + 1], v[N + 1], g[N + 1];
	float rw[N + 1], rm[N + 1], rv[N + 1];
	struct engine_optim opt;
	struct engine_rng rng;

	engine_optim_defaults(&opt, ENGINE_ADAM, 1e-3);
	opt.weight_decay = 0.01;
	engine_rng_seed(&rng, 7);
	for (int i = 0; i <= N; i++) {
		rw[i] = w[i] = engine_rng_uniform(&rng) - 0.5f;
		rm[i] = m[i] = 0.0f;
		rv[i] = v[i] = 0.0f;
	}
	for (uint64_t t = 1; t <= 4; t++) {
		double bc1 = 1.0 - pow(opt.beta1, (double)t), bc2 = 1.0 - pow(opt.beta2, (double)t);
		float step = (float)(opt.lr / bc1), bc2_sqrt = (float)sqrt(bc2);
		float b1 = (float)opt.beta1, b2 = (float)opt.beta2;
		float one_b1 = (float)(1.0 - opt.beta1), one_b2 = (float)(1.0 - opt.beta2);
		float wd = (float)opt.weight_decay, eps = (float)opt.eps;

		for (int i = 0; i <= N; i++)
			g[i] = (engine_rng_uniform(&rng) - 0.5f) * (i % 3 ? 1e-3f : 10.0f);
		ASSERT_EQ(0, engine_optim_step(&opt, t, w + 1, g + 1, m + 1, v + 1, N));
		for (int i = 1; i <= N; i++) {
			float gi = g[i] + wd * rw[i];

			rm[i] = b1 * rm[i] + one_b1 * gi;
			rv[i] = b2 * rv[i] + one_b2 * gi * gi;
			rw[i] -= step * (rm[i] / (sqrtf(rv[i]) / bc2_sqrt + eps));
		}
	}
	for (int i = 0; i <= N; i++) {
		EXPECT_TRUE(w[i] == rw[i] && m[i] == rm[i] && v[i] == rv[i])
			TH_LOG("element %d: w %.9g, scalar %.9g", i, w[i], rw[i]);
	}
}

TEST(optimizer_rejects_bad_hyperparameters)
{
	struct engine_optim opt;
	float w = 1, g = 1, s0 = 0, s1 = 0;

	engine_optim_defaults(&opt, ENGINE_SGD, -0.1f);
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_SGD, NAN);
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_MOMENTUM, 0.1f);
	opt.momentum = 1.0;
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_ADAM, 0.1f);
	opt.eps = 0.0;
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_ADAM, 0.1f);
	opt.beta2 = -0.5;
	EXPECT_EQ(-EINVAL, engine_optim_step(&opt, 1, &w, &g, &s0, &s1, 1));
	engine_optim_defaults(&opt, ENGINE_ADAM, 0.1f);
	opt.weight_decay = -1.0;
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_SGD, 1e39);	/* not a float */
	EXPECT_EQ(-EINVAL, engine_optim_check(&opt));
	engine_optim_defaults(&opt, ENGINE_ADAM, 0.1f);
	EXPECT_EQ(-EINVAL, engine_optim_step(&opt, 0, &w, &g, &s0, &s1, 1));
	EXPECT_TRUE(w == 1.0f);	/* nothing applied */
	EXPECT_EQ(0, engine_optim_state_arrays(ENGINE_SGD));
	EXPECT_EQ(1, engine_optim_state_arrays(ENGINE_MOMENTUM));
	EXPECT_EQ(2, engine_optim_state_arrays(ENGINE_ADAM));
}

TEST(rng_is_splitmix64)
{
	struct engine_rng a, b;

	/* The published first output of splitmix64 from state 0. */
	engine_rng_seed(&a, 0);
	EXPECT_EQ(0xe220a8397b1dcdafull, engine_rng_next(&a));
	engine_rng_seed(&a, 99);
	engine_rng_seed(&b, 99);
	for (int i = 0; i < 1000; i++) {
		float u = engine_rng_uniform(&a);

		EXPECT_TRUE(u >= 0.0f && u < 1.0f);
		EXPECT_TRUE(u == engine_rng_uniform(&b));
	}
}

TEST(thread_count_is_settable)
{
	int before = engine_threads();

	EXPECT_GE(before, 1);
	EXPECT_EQ(1, engine_set_threads(1));
	EXPECT_EQ(1, engine_threads());
	EXPECT_EQ(-EINVAL, engine_set_threads(0));
	engine_set_threads(before);
	EXPECT_NE(NULL, engine_blas_config());
	TH_LOG("OpenBLAS %s, %s", engine_blas_config(), engine_blas_threading());
}

static uint32_t bits_of(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof(u));
	return u;
}

static float float_of(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/*
 * bfloat16 is the top half of a float: every pattern widens and narrows back
 * unchanged, and narrowing picks the nearer neighbour (ties to even),
 * checked in double with the value above the largest finite bf16 taken as
 * 2^128, as IEEE rounding with an unbounded exponent has it.
 */
TEST(bf16_round_trips_and_rounds_to_nearest_even)
{
	struct engine_rng rng;
	uint16_t h, back;
	float f;

	for (uint32_t p = 0; p < 65536; p++) {
		h = (uint16_t)p;
		ASSERT_EQ(0, engine_bf16_to_f32(&h, 1, &f));
		ASSERT_EQ(0, engine_f32_to_bf16(&f, 1, &back));
		if (isnan(f)) {
			EXPECT_TRUE((back & 0x7fff) > 0x7f80) TH_LOG("NaN %04x", h);
		} else {
			EXPECT_EQ(h, back);
		}
	}
	engine_rng_seed(&rng, 16);
	for (int i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)engine_rng_next(&rng);
		float x = float_of(u);
		uint16_t lo = (uint16_t)(u >> 16), want;
		double dlo, dhi, vlo, vhi;

		if (!isfinite(x))
			continue;
		/* u with the low half cleared is toward zero; one more step
		 * in the pattern is the next value away from zero.
		 */
		vlo = float_of((uint32_t)lo << 16);
		vhi = (lo & 0x7fff) == 0x7f7f ? copysign(0x1p128, x)
					     : float_of((uint32_t)(lo + 1) << 16);
		dlo = fabs(x - vlo), dhi = fabs(x - vhi);
		want = dlo < dhi || (dlo == dhi && !(lo & 1)) ? lo : (uint16_t)(lo + 1);
		ASSERT_EQ(0, engine_f32_to_bf16(&x, 1, &h));
		EXPECT_EQ(want, h) TH_LOG("x %a", x);
	}
	f = 1.0f + 0x1p-8f;	/* halfway between 1 and 1 + 2^-7: even is 1 */
	ASSERT_EQ(0, engine_f32_to_bf16(&f, 1, &h));
	EXPECT_EQ(0x3f80, h);
	f = FLT_MAX;
	ASSERT_EQ(0, engine_f32_to_bf16(&f, 1, &h));
	EXPECT_EQ(0x7f80, h);	/* rounds up into infinity */
	f = float_of(0x7f800001);	/* NaN with only a low payload bit */
	ASSERT_EQ(0, engine_f32_to_bf16(&f, 1, &h));
	EXPECT_TRUE((h & 0x7fff) > 0x7f80);
	EXPECT_EQ(-EINVAL, engine_f32_to_bf16(NULL, 1, &h));
}

/*
 * binary16 against GCC's _Float16 (libgcc's soft-float conversions, an
 * independent implementation): every pattern widened, every pattern's exact
 * halfway points (ties) narrowed, and random floats over the whole range.
 */
static uint16_t gcc_f16(float x)
{
	_Float16 h = (_Float16)x;
	uint16_t u;

	memcpy(&u, &h, sizeof(u));
	return u;
}

static void expect_f16_of(struct __test_metadata *_metadata, float x)
{
	uint16_t got, want = gcc_f16(x);

	ASSERT_EQ(0, engine_f32_to_f16(&x, 1, &got));
	if (isnan(x)) {
		EXPECT_TRUE((got & 0x7fff) > 0x7c00) TH_LOG("NaN %a -> %04x", x, got);
	} else {
		EXPECT_EQ(want, got) TH_LOG("x %a", x);
	}
}

TEST(f16_matches_the_compiler)
{
	struct engine_rng rng;

	for (uint32_t p = 0; p < 65536; p++) {
		uint16_t h = (uint16_t)p;
		_Float16 ref;
		float f;

		memcpy(&ref, &h, sizeof(ref));
		ASSERT_EQ(0, engine_f16_to_f32(&h, 1, &f));
		if (isnan((float)ref)) {
			EXPECT_TRUE(isnan(f));
			continue;
		}
		EXPECT_EQ(bits_of((float)ref), bits_of(f)) TH_LOG("pattern %04x", h);
		expect_f16_of(_metadata, f);	/* narrows back to itself */
		/* Halfway to the next pattern up in magnitude. */
		if ((h & 0x7fff) < 0x7c00) {
			uint16_t next = (uint16_t)(h + 1);
			float g;

			ASSERT_EQ(0, engine_f16_to_f32(&next, 1, &g));
			if (isfinite(g))
				expect_f16_of(_metadata, (float)(((double)f + g) / 2));
			else	/* 65504 + 16 = 65520, the overflow threshold */
				expect_f16_of(_metadata, copysignf(65520.0f, f));
		}
	}
	engine_rng_seed(&rng, 17);
	for (int i = 0; i < 200000; i++)
		expect_f16_of(_metadata, float_of((uint32_t)engine_rng_next(&rng)));
	/* Concentrated where binary16 lives: exponents -25 .. 16. */
	for (int i = 0; i < 200000; i++) {
		uint32_t u = (uint32_t)engine_rng_next(&rng);
		uint32_t e = 127 - 25 + (uint32_t)(engine_rng_next(&rng) % 42);

		expect_f16_of(_metadata, float_of((u & 0x807fffffu) | (e << 23)));
	}
}

TEST(blas_reexec_respects_a_chosen_core)
{
	static const char nowhere[] = "/nonexistent/wse-engine-test";
	char *argv[] = { (char *)nowhere, NULL };
	const char *better = engine_blas_better_core();

	ASSERT_NE(NULL, engine_blas_core());
	TH_LOG("kernels %s, better: %s", engine_blas_core(), better ? better : "none");
	/* With the variable set there is nothing to do, whatever the CPU:
	 * no exec (the path does not exist, exec would fail with -ENOENT).
	 */
	ASSERT_EQ(0, setenv("OPENBLAS_CORETYPE", engine_blas_core(), 1));
	EXPECT_EQ(0, engine_blas_reexec(nowhere, argv));
	/* Without it, exec is tried exactly when there is a better core. */
	ASSERT_EQ(0, unsetenv("OPENBLAS_CORETYPE"));
	EXPECT_EQ(better ? -ENOENT : 0, engine_blas_reexec(nowhere, argv));
	EXPECT_NULL(getenv("OPENBLAS_CORETYPE"));
}

TEST_HARNESS_MAIN
