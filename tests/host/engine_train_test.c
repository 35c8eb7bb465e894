// SPDX-License-Identifier: GPL-2.0-only
/*
 * The engine's layer stack: argument and call-order checks, one step
 * against a plain double-precision reference, learning on a synthetic
 * linearly separable problem, bit-for-bit determinism, and the equality of
 * layer pipelined and weight streamed execution.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/engine.h"

/*
 * Synthetic data: bytes x, labels from a random linear "teacher",
 * argmax_c T_c . (x / 255 - 0.5). A linear classifier separates it exactly,
 * so an MLP must learn it well.
 */
struct dataset {
	size_t n, features, classes;
	uint8_t *px, *labels;
};

static void dataset_make(struct dataset *d, size_t n, size_t features,
			 size_t classes, uint64_t seed)
{
	struct engine_rng rng;
	float *teacher = calloc(classes * features, sizeof(float));

	d->n = n, d->features = features, d->classes = classes;
	d->px = malloc(n * features);
	d->labels = malloc(n);
	if (!teacher || !d->px || !d->labels)
		abort();
	engine_rng_seed(&rng, seed);
	for (size_t i = 0; i < classes * features; i++)
		teacher[i] = 2.0f * engine_rng_uniform(&rng) - 1.0f;
	for (size_t i = 0; i < n; i++) {
		uint8_t *x = d->px + i * features;
		float best = -INFINITY;

		for (size_t j = 0; j < features; j++)
			x[j] = (uint8_t)(engine_rng_next(&rng) >> 56);
		for (size_t c = 0; c < classes; c++) {
			float s = 0;

			for (size_t j = 0; j < features; j++)
				s += teacher[c * features + j] * (x[j] / 255.0f - 0.5f);
			if (s > best)
				best = s, d->labels[i] = (uint8_t)c;
		}
	}
	free(teacher);
}

static void dataset_free(struct dataset *d)
{
	free(d->px);
	free(d->labels);
}

static const uint8_t *batch_px(const struct dataset *d, size_t first)
{
	return d->px + first * d->features;
}

TEST(shapes_and_sizes_are_validated)
{
	struct engine_shape s;
	struct engine_workspace *ws = NULL;
	struct engine_params *p = NULL;
	const size_t ok[] = { 8, 4, 3 }, zero[] = { 8, 0, 3 }, big[] = { 8, 4, 257 };

	EXPECT_EQ(-EINVAL, engine_shape_mlp(&s, zero, 2));
	EXPECT_EQ(-EINVAL, engine_shape_mlp(&s, big, 2));	/* byte labels */
	EXPECT_EQ(-EINVAL, engine_shape_mlp(&s, ok, 0));
	EXPECT_EQ(-EINVAL, engine_shape_mlp(&s, ok, ENGINE_MAX_LAYERS + 1));
	ASSERT_EQ(0, engine_shape_mlp(&s, ok, 2));
	EXPECT_TRUE(s.relu[0] && !s.relu[1]);
	EXPECT_EQ(-EINVAL, engine_workspace_create(&s, 0, &ws));
	EXPECT_EQ(-EINVAL, engine_params_create(&s, (enum engine_optim_kind)7, &p));
	EXPECT_NULL(ws);
	EXPECT_NULL(p);
}

TEST(calls_out_of_order_are_refused)
{
	struct engine_shape s;
	struct engine_workspace *ws;
	struct engine_params *p;
	struct engine_loss_result r;
	const size_t widths[] = { 4, 3, 2 };
	uint8_t px[2 * 4] = { 0 }, labels[2] = { 0, 1 };

	ASSERT_EQ(0, engine_shape_mlp(&s, widths, 2));
	ASSERT_EQ(0, engine_workspace_create(&s, 2, &ws));
	ASSERT_EQ(0, engine_params_create(&s, ENGINE_SGD, &p));
	engine_params_init(p, 1);
	struct engine_layer *l0 = &p->layer[0], *l1 = &p->layer[1];

	EXPECT_EQ(-EINVAL, engine_forward_layer(ws, 0, l0->w, l0->b)); /* no input */
	EXPECT_EQ(-EINVAL, engine_load_pixels(ws, px, 3));	/* > max batch */
	ASSERT_EQ(0, engine_load_pixels(ws, px, 2));
	EXPECT_EQ(2, engine_batch(ws));
	EXPECT_EQ(-EINVAL, engine_forward_layer(ws, 1, l1->w, l1->b));	/* skips 0 */
	EXPECT_EQ(-EINVAL, engine_loss(ws, labels, 2, &r));	/* not forwarded */
	ASSERT_EQ(0, engine_forward_layer(ws, 0, l0->w, l0->b));
	ASSERT_EQ(0, engine_forward_layer(ws, 1, l1->w, l1->b));
	EXPECT_EQ(-EINVAL, engine_forward_layer(ws, 2, l1->w, l1->b));	/* no layer 2 */
	EXPECT_EQ(-EINVAL, engine_backward_layer(ws, 1, l1->w, 0, l1->dw, l1->db));
	ASSERT_EQ(0, engine_loss(ws, labels, 2, &r));
	EXPECT_EQ(-EINVAL, engine_backward_layer(ws, 0, l0->w, 0, l0->dw, l0->db));
	ASSERT_EQ(0, engine_backward_layer(ws, 1, l1->w, 0, l1->dw, l1->db));
	ASSERT_EQ(0, engine_backward_layer(ws, 0, l0->w, 0, l0->dw, l0->db));
	EXPECT_EQ(-EINVAL, engine_backward_layer(ws, 0, l0->w, 0, l0->dw, l0->db));
	EXPECT_NULL(engine_activation(ws, 3));
	engine_params_destroy(p);
	engine_workspace_destroy(ws);
}

/*
 * One SGD step of a 5-4-3 MLP against plain loops in double: loss, and the
 * weights after the update. Tolerance: values are O(1) and pass through
 * sums of at most 6 fp32 terms, so 1e-5 absolute is ample while a wrong
 * gradient (O(1e-2) changes with lr 0.5) cannot pass.
 */
enum { RB = 6, RI = 5, RH = 4, RC = 3 };

TEST(one_step_matches_plain_reference)
{
	struct engine_shape s;
	struct engine_workspace *ws;
	struct engine_params *p;
	struct engine_optim opt;
	struct engine_loss_result r;
	const size_t widths[] = { RI, RH, RC };
	const uint8_t labels[RB] = { 0, 1, 2, 2, 1, 0 };
	uint8_t px[RB * RI];
	double x[RB * RI], w1[RH * RI], b1[RH], w2[RC * RH], b2[RC];
	double h[RB * RH], z[RB * RC], dz[RB * RC], dh[RB * RH], loss = 0;
	const double lr = 0.5;
	struct engine_rng rng;

	ASSERT_EQ(0, engine_shape_mlp(&s, widths, 2));
	ASSERT_EQ(0, engine_workspace_create(&s, RB, &ws));
	ASSERT_EQ(0, engine_params_create(&s, ENGINE_SGD, &p));
	engine_params_init(p, 5);
	engine_rng_seed(&rng, 6);
	for (int i = 0; i < RB * RI; i++) {
		px[i] = (uint8_t)(engine_rng_next(&rng) >> 56);
		x[i] = px[i] / 255.0;
	}
	for (int i = 0; i < RH * RI; i++)
		w1[i] = p->layer[0].w[i];
	for (int i = 0; i < RH; i++)
		b1[i] = p->layer[0].b[i];
	for (int i = 0; i < RC * RH; i++)
		w2[i] = p->layer[1].w[i];
	for (int i = 0; i < RC; i++)
		b2[i] = p->layer[1].b[i];

	/* The reference: forward, loss, backward, SGD. */
	for (int i = 0; i < RB; i++) {
		double m = -INFINITY, sum = 0;

		for (int j = 0; j < RH; j++) {
			double a = b1[j];

			for (int k = 0; k < RI; k++)
				a += x[i * RI + k] * w1[j * RI + k];
			h[i * RH + j] = a > 0 ? a : 0;
		}
		for (int c = 0; c < RC; c++) {
			z[i * RC + c] = b2[c];
			for (int j = 0; j < RH; j++)
				z[i * RC + c] += h[i * RH + j] * w2[c * RH + j];
			m = fmax(m, z[i * RC + c]);
		}
		for (int c = 0; c < RC; c++)
			sum += exp(z[i * RC + c] - m);
		loss += (log(sum) + m - z[i * RC + labels[i]]) / RB;
		for (int c = 0; c < RC; c++)
			dz[i * RC + c] = (exp(z[i * RC + c] - m) / sum -
					  (c == labels[i])) / RB;
		for (int j = 0; j < RH; j++) {
			dh[i * RH + j] = 0;
			for (int c = 0; c < RC; c++)
				dh[i * RH + j] += dz[i * RC + c] * w2[c * RH + j];
			if (h[i * RH + j] <= 0)
				dh[i * RH + j] = 0;
		}
	}
	for (int c = 0; c < RC; c++)
		for (int i = 0; i < RB; i++) {
			b2[c] -= lr * dz[i * RC + c];
			for (int j = 0; j < RH; j++)
				w2[c * RH + j] -= lr * dz[i * RC + c] * h[i * RH + j];
		}
	for (int j = 0; j < RH; j++)
		for (int i = 0; i < RB; i++) {
			b1[j] -= lr * dh[i * RH + j];
			for (int k = 0; k < RI; k++)
				w1[j * RI + k] -= lr * dh[i * RH + j] * x[i * RI + k];
		}

	engine_optim_defaults(&opt, ENGINE_SGD, lr);
	ASSERT_EQ(0, engine_train_step(ws, p, &opt, 1, px, labels, RB, &r));
	EXPECT_TRUE(fabs(r.loss - loss) <= 1e-5) TH_LOG("%.7g vs %.7g", r.loss, loss);
	for (int i = 0; i < RH * RI; i++) {
		EXPECT_TRUE(fabs(p->layer[0].w[i] - w1[i]) <= 1e-5)
			TH_LOG("w1[%d] %.7g vs %.7g", i, p->layer[0].w[i], w1[i]);
	}
	for (int i = 0; i < RH; i++) {
		EXPECT_TRUE(fabs(p->layer[0].b[i] - b1[i]) <= 1e-5);
	}
	for (int i = 0; i < RC * RH; i++) {
		EXPECT_TRUE(fabs(p->layer[1].w[i] - w2[i]) <= 1e-5)
			TH_LOG("w2[%d] %.7g vs %.7g", i, p->layer[1].w[i], w2[i]);
	}
	for (int i = 0; i < RC; i++) {
		EXPECT_TRUE(fabs(p->layer[1].b[i] - b2[i]) <= 1e-5);
	}
	engine_params_destroy(p);
	engine_workspace_destroy(ws);
}

/* An MLP on the synthetic problem: samples for training and held out. */
enum { TRAIN_N = 8192, TEST_N = 1024, STEPS = 1500 };

struct run {
	struct engine_shape shape;
	struct engine_workspace *ws;
	struct engine_params *params;
	struct engine_optim opt;
	struct dataset train, test;
	size_t batch;
};

static void run_init(struct run *r, const size_t *widths, size_t layers,
		     size_t batch, enum engine_optim_kind kind, double lr)
{
	if (engine_shape_mlp(&r->shape, widths, layers) ||
	    engine_workspace_create(&r->shape, batch, &r->ws) ||
	    engine_params_create(&r->shape, kind, &r->params))
		abort();
	engine_params_init(r->params, 42);
	engine_optim_defaults(&r->opt, kind, lr);
	r->batch = batch;
	dataset_make(&r->train, TRAIN_N, widths[0], widths[layers], 7);
	/* Same teacher (same seed), fresh samples: skip past the training
	 * set by making a larger set and keeping its tail.
	 */
	dataset_make(&r->test, TRAIN_N + TEST_N, widths[0], widths[layers], 7);
	memmove(r->test.px, r->test.px + TRAIN_N * widths[0], TEST_N * widths[0]);
	memmove(r->test.labels, r->test.labels + TRAIN_N, TEST_N);
	r->test.n = TEST_N;
}

static void run_free(struct run *r)
{
	engine_params_destroy(r->params);
	engine_workspace_destroy(r->ws);
	dataset_free(&r->train);
	dataset_free(&r->test);
}

/* steps training steps; losses[] (may be NULL) gets each step's loss. */
static int run_train(struct run *r, size_t steps, float *losses)
{
	size_t per_epoch = r->train.n / r->batch;

	for (size_t t = 0; t < steps; t++) {
		size_t first = (t % per_epoch) * r->batch;
		struct engine_loss_result res;
		int err = engine_train_step(r->ws, r->params, &r->opt, t + 1,
					    batch_px(&r->train, first),
					    r->train.labels + first, r->batch,
					    &res);

		if (err)
			return err;
		if (losses)
			losses[t] = res.loss;
	}
	return 0;
}

/* Accuracy and mean loss on the held-out set. */
static int run_evaluate(struct run *r, double *accuracy, double *loss)
{
	size_t correct = 0;
	double total = 0;

	for (size_t first = 0; first < r->test.n; first += r->batch) {
		struct engine_loss_result res;
		uint8_t pred[256];
		size_t hits = 0;
		int err = engine_evaluate(r->ws, r->params, batch_px(&r->test, first),
					  r->test.labels + first, r->batch, &res,
					  pred);

		if (err)
			return err;
		for (size_t i = 0; i < r->batch; i++)
			hits += pred[i] == r->test.labels[first + i];
		if (hits != res.correct)
			return -EPROTO;	/* predictions disagree with the count */
		/* Plain inference (no labels) predicts the same. */
		uint8_t again[256];

		err = engine_evaluate(r->ws, r->params, batch_px(&r->test, first),
				      NULL, r->batch, NULL, again);
		if (err)
			return err;
		if (memcmp(pred, again, r->batch))
			return -EPROTO;
		correct += hits;
		total += res.loss * r->batch;
	}
	*accuracy = (double)correct / r->test.n;
	*loss = total / r->test.n;
	return 0;
}

TEST(learns_a_separable_problem)
{
	const size_t widths[] = { 32, 64, 4 };
	struct run r;
	double acc0, loss0, acc, loss;
	float losses[STEPS];

	run_init(&r, widths, 2, 32, ENGINE_MOMENTUM, 0.1);
	ASSERT_EQ(0, run_evaluate(&r, &acc0, &loss0));
	ASSERT_EQ(0, run_train(&r, STEPS, losses));
	ASSERT_EQ(0, run_evaluate(&r, &acc, &loss));
	TH_LOG("held-out: loss %.4f -> %.4f, accuracy %.3f -> %.3f; train loss %.4f -> %.4f",
	       loss0, loss, acc0, acc, losses[0], losses[STEPS - 1]);
	/* 4 classes: chance is 0.25 and the initial loss about ln 4 = 1.39. */
	EXPECT_TRUE(loss < 0.5 * loss0);
	EXPECT_TRUE(acc >= 0.85);
	EXPECT_TRUE(losses[STEPS - 1] < 0.5 * losses[0]);
	run_free(&r);
}

TEST(adam_learns_too)
{
	const size_t widths[] = { 32, 64, 4 };
	struct run r;
	double acc, loss;

	run_init(&r, widths, 2, 32, ENGINE_ADAM, 0.003);
	r.opt.weight_decay = 1e-4;
	ASSERT_EQ(0, run_train(&r, STEPS, NULL));
	ASSERT_EQ(0, run_evaluate(&r, &acc, &loss));
	TH_LOG("held-out: loss %.4f, accuracy %.3f", loss, acc);
	EXPECT_TRUE(acc >= 0.85);
	run_free(&r);
}

/* Every parameter and optimizer state array, compared bit for bit. */
static bool params_identical(const struct engine_params *a,
			     const struct engine_params *b)
{
	for (size_t k = 0; k < a->shape.layers; k++) {
		const struct engine_layer *x = &a->layer[k], *y = &b->layer[k];
		size_t n = x->in * x->out * sizeof(float), m = x->out * sizeof(float);

		if (memcmp(x->w, y->w, n) || memcmp(x->b, y->b, m))
			return false;
		for (int s = 0; s < 2; s++)
			if (x->w_state[s] && (memcmp(x->w_state[s], y->w_state[s], n) ||
					      memcmp(x->b_state[s], y->b_state[s], m)))
				return false;
	}
	return true;
}

/*
 * Two runs from the same seed at the same thread count are bit-identical.
 * The net is wide enough (64 * 128 * 64 > OpenBLAS' threading threshold)
 * that two threads really split the GEMMs.
 */
TEST(runs_are_bit_identical)
{
	const size_t widths[] = { 64, 128, 64, 4 };
	const int threads[] = { 1, 2 };
	int before = engine_threads();

	for (int i = 0; i < 2; i++) {
		struct run a, b;
		float la[40], lb[40];

		ASSERT_EQ(threads[i], engine_set_threads(threads[i]));
		run_init(&a, widths, 3, 64, ENGINE_ADAM, 0.001);
		run_init(&b, widths, 3, 64, ENGINE_ADAM, 0.001);
		ASSERT_EQ(0, run_train(&a, 40, la));
		ASSERT_EQ(0, run_train(&b, 40, lb));
		EXPECT_EQ(0, memcmp(la, lb, sizeof(la)));
		EXPECT_TRUE(params_identical(a.params, b.params))
			TH_LOG("%d threads: the runs differ", threads[i]);
		EXPECT_TRUE(la[39] < la[0]);
		run_free(&a);
		run_free(&b);
	}
	engine_set_threads(before);
}

/*
 * Weight streaming, simulated: the host keeps the parameters (an
 * engine_params of its own); for each layer it sends a copy of the weights
 * (a buffer the device did not have before), the device computes, and
 * gradients come back in separate buffers; the host then runs the same
 * optimizer code. The result must equal engine_train_step's bit for bit.
 */
static int streamed_step(struct engine_workspace *ws, struct engine_params *host,
			 const struct engine_optim *opt, uint64_t t,
			 const uint8_t *px, const uint8_t *labels, size_t batch,
			 float *link_w, float *link_b, float *link_dw,
			 float *link_db, struct engine_loss_result *res)
{
	size_t layers = host->shape.layers;
	int err = engine_load_pixels(ws, px, batch);

	for (size_t k = 0; !err && k < layers; k++) {
		struct engine_layer *l = &host->layer[k];

		memcpy(link_w, l->w, l->in * l->out * sizeof(float));
		memcpy(link_b, l->b, l->out * sizeof(float));
		err = engine_forward_layer(ws, k, link_w, link_b);
	}
	if (!err)
		err = engine_loss(ws, labels, batch, res);
	for (size_t k = layers; !err && k-- > 0;) {
		struct engine_layer *l = &host->layer[k];

		memset(link_w, 0xff, l->in * l->out * sizeof(float));
		memcpy(link_w, l->w, l->in * l->out * sizeof(float));
		err = engine_backward_layer(ws, k, link_w, 0.0f, link_dw, link_db);
		if (err)
			break;
		memcpy(l->dw, link_dw, l->in * l->out * sizeof(float));
		memcpy(l->db, link_db, l->out * sizeof(float));
	}
	/* The host updates only once every gradient has arrived: the order
	 * of updates must not matter.
	 */
	for (size_t k = 0; !err && k < layers; k++)
		err = engine_params_update_layer(host, opt, t, k);
	return err;
}

TEST(pipelined_and_streamed_steps_are_bit_identical)
{
	const size_t widths[] = { 64, 128, 64, 4 };
	const enum engine_optim_kind kinds[] = { ENGINE_SGD, ENGINE_MOMENTUM,
						 ENGINE_ADAM };
	const double lrs[] = { 0.1, 0.05, 0.002 };

	for (int i = 0; i < 3; i++) {
		struct run pipe, stream;
		float *lw = malloc(128 * 64 * sizeof(float));
		float *lb = malloc(128 * sizeof(float));
		float *ldw = malloc(128 * 64 * sizeof(float));
		float *ldb = malloc(128 * sizeof(float));

		ASSERT_TRUE(lw && lb && ldw && ldb);
		run_init(&pipe, widths, 3, 32, kinds[i], lrs[i]);
		run_init(&stream, widths, 3, 32, kinds[i], lrs[i]);
		pipe.opt.weight_decay = stream.opt.weight_decay = 5e-4;
		for (uint64_t t = 1; t <= 8; t++) {
			size_t first = (t - 1) * 32;
			struct engine_loss_result rp, rs;

			ASSERT_EQ(0, engine_train_step(pipe.ws, pipe.params,
						       &pipe.opt, t,
						       batch_px(&pipe.train, first),
						       pipe.train.labels + first,
						       32, &rp));
			ASSERT_EQ(0, streamed_step(stream.ws, stream.params,
						   &stream.opt, t,
						   batch_px(&stream.train, first),
						   stream.train.labels + first, 32,
						   lw, lb, ldw, ldb, &rs));
			EXPECT_TRUE(memcmp(&rp.loss, &rs.loss, sizeof(float)) == 0);
			EXPECT_EQ(rp.correct, rs.correct);
		}
		EXPECT_TRUE(params_identical(pipe.params, stream.params))
			TH_LOG("optimizer %d: pipelined and streamed differ", i);
		run_free(&pipe);
		run_free(&stream);
		free(lw), free(lb), free(ldw), free(ldb);
	}
}

/* engine_backward_params() on its own thread, beside engine_backward_input(). */
struct params_job {
	struct engine_workspace *ws;
	size_t k;
	float beta, *dw, *db;
	int err;
};

static void *params_thread(void *arg)
{
	struct params_job *j = arg;

	j->err = engine_backward_params(j->ws, j->k, j->beta, j->dw, j->db);
	return NULL;
}

/*
 * The backward pass in parts, each layer's weight gradient computed on a
 * second thread while the first carries the input gradient down, gives
 * the bits of engine_backward_layer (two micro-batches, the second
 * accumulating); and the parts refuse to run out of order.
 */
TEST(backward_in_parts_matches_whole_layers)
{
	const size_t widths[] = { 64, 128, 64, 4 };
	struct run whole, parts;
	struct engine_loss_result res;

	run_init(&whole, widths, 3, 16, ENGINE_SGD, 0.1);
	run_init(&parts, widths, 3, 16, ENGINE_SGD, 0.1);
	for (size_t m = 0; m < 2; m++) {
		const uint8_t *px = batch_px(&whole.train, 16 * m);
		const uint8_t *labels = whole.train.labels + 16 * m;
		float beta = m ? 1.0f : 0.0f;

		ASSERT_EQ(0, engine_load_pixels(whole.ws, px, 16));
		ASSERT_EQ(0, engine_load_pixels(parts.ws, px, 16));
		for (size_t k = 0; k < 3; k++) {
			ASSERT_EQ(0, engine_forward_layer(whole.ws, k, whole.params->layer[k].w,
							  whole.params->layer[k].b));
			ASSERT_EQ(0, engine_forward_layer(parts.ws, k, parts.params->layer[k].w,
							  parts.params->layer[k].b));
		}
		ASSERT_EQ(0, engine_loss(whole.ws, labels, 32, &res));
		ASSERT_EQ(0, engine_loss(parts.ws, labels, 32, &res));
		EXPECT_EQ(-EINVAL, engine_backward_params(parts.ws, 2, beta, parts.params->layer[2].dw,
							  NULL));	/* not masked yet */
		EXPECT_EQ(-EINVAL, engine_backward_input(parts.ws, 2, parts.params->layer[2].w));
		EXPECT_EQ(-EINVAL, engine_backward_mask(parts.ws, 1));	/* layer 2 first */
		for (size_t k = 3; k-- > 0;) {
			struct engine_layer *l = &parts.params->layer[k];
			struct params_job job = { parts.ws, k, beta, l->dw, l->db, -1 };
			pthread_t th;

			ASSERT_EQ(0, engine_backward_layer(whole.ws, k, whole.params->layer[k].w, beta,
							   whole.params->layer[k].dw,
							   whole.params->layer[k].db));
			ASSERT_EQ(0, engine_backward_mask(parts.ws, k));
			EXPECT_EQ(-EINVAL, engine_backward_mask(parts.ws, k));	/* once */
			ASSERT_EQ(0, pthread_create(&th, NULL, params_thread, &job));
			EXPECT_EQ(k ? 0 : -EINVAL, engine_backward_input(parts.ws, k, l->w));
			pthread_join(th, NULL);
			EXPECT_EQ(0, job.err);
		}
	}
	for (size_t k = 0; k < 3; k++) {
		const struct engine_layer *a = &whole.params->layer[k], *b = &parts.params->layer[k];

		EXPECT_EQ(0, memcmp(a->dw, b->dw, a->in * a->out * sizeof(float))) TH_LOG("dw%zu", k);
		EXPECT_EQ(0, memcmp(a->db, b->db, a->out * sizeof(float))) TH_LOG("db%zu", k);
	}
	run_free(&whole);
	run_free(&parts);
}

/*
 * Two micro-batches of 16, the second accumulating (grad_beta 1) and both
 * normalised by 32, give the gradient of the batch of 32 up to rounding:
 * the sums over the batch are merely split in two.
 */
TEST(micro_batches_accumulate_to_the_full_batch)
{
	const size_t widths[] = { 32, 64, 4 };
	struct run r;
	struct engine_loss_result res;
	float *full_dw[2], *full_db[2];

	run_init(&r, widths, 2, 32, ENGINE_SGD, 0.1);
	/* The full batch, gradients kept aside. */
	ASSERT_EQ(0, engine_load_pixels(r.ws, r.train.px, 32));
	for (size_t k = 0; k < 2; k++) {
		ASSERT_EQ(0, engine_forward_layer(r.ws, k, r.params->layer[k].w,
						  r.params->layer[k].b));
	}
	ASSERT_EQ(0, engine_loss(r.ws, r.train.labels, 32, &res));
	for (size_t k = 2; k-- > 0;) {
		struct engine_layer *l = &r.params->layer[k];

		full_dw[k] = malloc(l->in * l->out * sizeof(float));
		full_db[k] = malloc(l->out * sizeof(float));
		ASSERT_TRUE(full_dw[k] && full_db[k]);
		ASSERT_EQ(0, engine_backward_layer(r.ws, k, l->w, 0.0f,
						   full_dw[k], full_db[k]));
	}
	/* Two halves into the parameters' own gradient arrays. */
	for (size_t half = 0; half < 2; half++) {
		ASSERT_EQ(0, engine_load_pixels(r.ws, batch_px(&r.train, 16 * half), 16));
		for (size_t k = 0; k < 2; k++) {
			ASSERT_EQ(0, engine_forward_layer(r.ws, k, r.params->layer[k].w,
							  r.params->layer[k].b));
		}
		ASSERT_EQ(0, engine_loss(r.ws, r.train.labels + 16 * half, 32, &res));
		for (size_t k = 2; k-- > 0;) {
			struct engine_layer *l = &r.params->layer[k];

			ASSERT_EQ(0, engine_backward_layer(r.ws, k, l->w,
							   half ? 1.0f : 0.0f,
							   l->dw, l->db));
		}
	}
	for (size_t k = 0; k < 2; k++) {
		struct engine_layer *l = &r.params->layer[k];
		double worst = 0, scale = 0;

		for (size_t i = 0; i < l->in * l->out; i++) {
			worst = fmax(worst, fabs(l->dw[i] - full_dw[k][i]));
			scale = fmax(scale, fabs(full_dw[k][i]));
		}
		for (size_t i = 0; i < l->out; i++)
			worst = fmax(worst, fabs(l->db[i] - full_db[k][i]));
		/* Sums of 32 terms regrouped: a few ulp of the largest. */
		EXPECT_TRUE(scale > 0 && worst <= 1e-5 * scale)
			TH_LOG("layer %zu: differs by %.3g (largest %.3g)", k, worst, scale);
		free(full_dw[k]);
		free(full_db[k]);
	}
	run_free(&r);
}

TEST(bad_label_changes_nothing)
{
	const size_t widths[] = { 32, 64, 4 };
	struct run r;
	struct engine_params *copy;
	struct engine_loss_result res = { .loss = -1, .correct = 99 };
	uint8_t labels[32];

	run_init(&r, widths, 2, 32, ENGINE_MOMENTUM, 0.1);
	ASSERT_EQ(0, run_train(&r, 3, NULL));
	ASSERT_EQ(0, engine_params_create(&r.shape, ENGINE_MOMENTUM, &copy));
	for (size_t k = 0; k < 2; k++) {
		struct engine_layer *s = &r.params->layer[k], *d = &copy->layer[k];

		memcpy(d->w, s->w, s->in * s->out * sizeof(float));
		memcpy(d->b, s->b, s->out * sizeof(float));
		memcpy(d->w_state[0], s->w_state[0], s->in * s->out * sizeof(float));
		memcpy(d->b_state[0], s->b_state[0], s->out * sizeof(float));
	}
	memcpy(labels, r.train.labels, 32);
	labels[17] = 4;	/* classes are 0..3 */
	EXPECT_EQ(-EDOM, engine_train_step(r.ws, r.params, &r.opt, 4, r.train.px,
					   labels, 32, &res));
	EXPECT_TRUE(params_identical(r.params, copy));
	EXPECT_TRUE(res.loss == -1 && res.correct == 99);
	EXPECT_EQ(-EDOM, engine_evaluate(r.ws, r.params, r.train.px, labels, 32,
					 &res, NULL));
	EXPECT_TRUE(res.loss == -1 && res.correct == 99);
	/* Neither labels nor predictions: nothing to compute. */
	EXPECT_EQ(-EINVAL, engine_evaluate(r.ws, r.params, r.train.px, NULL, 32,
					   &res, NULL));
	/* A mismatched optimizer or step number is refused, too. */
	r.opt.kind = ENGINE_ADAM;
	EXPECT_EQ(-EINVAL, engine_train_step(r.ws, r.params, &r.opt, 4, r.train.px,
					     r.train.labels, 32, &res));
	r.opt.kind = ENGINE_MOMENTUM;
	EXPECT_EQ(-EINVAL, engine_train_step(r.ws, r.params, &r.opt, 0, r.train.px,
					     r.train.labels, 32, &res));
	EXPECT_TRUE(params_identical(r.params, copy));
	engine_params_destroy(copy);
	run_free(&r);
}

TEST(initialisation_is_seeded_and_bounded)
{
	const size_t widths[] = { 100, 10, 3 };
	struct engine_shape s;
	struct engine_params *a, *b;
	bool differs = false;

	ASSERT_EQ(0, engine_shape_mlp(&s, widths, 2));
	ASSERT_EQ(0, engine_params_create(&s, ENGINE_ADAM, &a));
	ASSERT_EQ(0, engine_params_create(&s, ENGINE_ADAM, &b));
	engine_params_init(a, 9);
	engine_params_init(b, 9);
	EXPECT_TRUE(params_identical(a, b));
	for (size_t i = 0; i < 100 * 10; i++) {
		/* PyTorch's bound for fan_in 100 is 0.1. */
		EXPECT_TRUE(fabsf(a->layer[0].w[i]) <= 0.1f);
	}
	engine_params_init(b, 10);
	for (size_t i = 0; i < 100 * 10; i++)
		differs |= a->layer[0].w[i] != b->layer[0].w[i];
	EXPECT_TRUE(differs);
	engine_params_destroy(a);
	engine_params_destroy(b);
}

TEST_HARNESS_MAIN
