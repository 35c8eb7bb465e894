// SPDX-License-Identifier: GPL-2.0-only
/*
 * The optimizers beyond plain SGD, momentum and Adam (which
 * engine_kernels_test checks by hand): SGD with dampening and Nesterov,
 * AdamW, and the learning-rate schedules, each against the update rules
 * of torch.optim's documentation written out in double here, over several
 * steps and with weight decay; and the hyperparameter checks.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wse/engine.h"

#define N 7

static void grads(double t, float *g)
{
	for (int i = 0; i < N; i++)
		g[i] = (float)(sin(1.3 * i + 0.7 * t) * (i + 1) * 0.3);
}

static void init(float *w, double *wd)
{
	for (int i = 0; i < N; i++)
		wd[i] = w[i] = (float)(0.5 - 0.17 * i);
}

static void near(struct __test_metadata *_metadata, const float *w, const double *ref)
{
	for (int i = 0; i < N; i++)
		ASSERT_LT(fabs(w[i] - ref[i]), 1e-6 * (1.0 + fabs(ref[i])));
}

TEST(sgd_nesterov_and_dampening_follow_torch)
{
	for (int variant = 0; variant < 2; variant++) {
		struct engine_optim o;
		float w[N], v[N] = { 0 }, g[N];
		double wd[N], vd[N] = { 0 };

		engine_optim_defaults(&o, ENGINE_MOMENTUM, 0.05);
		o.momentum = 0.9;
		o.weight_decay = 0.01;
		if (variant == 0)
			o.nesterov = true;
		else
			o.dampening = 0.3;
		ASSERT_EQ(0, engine_optim_check(&o));
		init(w, wd);
		for (uint64_t t = 1; t <= 6; t++) {
			grads((double)t, g);
			ASSERT_EQ(0, engine_optim_step(&o, t, w, g, v, NULL, N));
			/* torch.optim.SGD: d_p = g + wd p; buf = d_p at the first
			 * step, else mu buf + (1 - dampening) d_p; Nesterov steps
			 * along d_p + mu buf.
			 */
			for (int i = 0; i < N; i++) {
				double d = g[i] + o.weight_decay * wd[i];

				vd[i] = t == 1 ? d : o.momentum * vd[i] + (1.0 - o.dampening) * d;
				wd[i] -= o.lr * (o.nesterov ? d + o.momentum * vd[i] : vd[i]);
			}
			near(_metadata, w, wd);
		}
	}
}

TEST(adamw_decouples_weight_decay_as_torch)
{
	struct engine_optim o;
	float w[N], m[N] = { 0 }, v[N] = { 0 }, g[N];
	double wd[N], md[N] = { 0 }, vd[N] = { 0 };

	engine_optim_defaults(&o, ENGINE_ADAMW, 0.01);
	EXPECT_EQ(0.01, o.weight_decay);	/* PyTorch's AdamW default */
	o.weight_decay = 0.1;
	init(w, wd);
	for (uint64_t t = 1; t <= 8; t++) {
		grads((double)t, g);
		ASSERT_EQ(0, engine_optim_step(&o, t, w, g, m, v, N));
		/* torch.optim.AdamW: p *= 1 - lr wd; then Adam on the raw gradient. */
		for (int i = 0; i < N; i++) {
			double bc1 = 1 - pow(o.beta1, (double)t), bc2 = 1 - pow(o.beta2, (double)t);

			wd[i] *= 1 - o.lr * o.weight_decay;
			md[i] = o.beta1 * md[i] + (1 - o.beta1) * g[i];
			vd[i] = o.beta2 * vd[i] + (1 - o.beta2) * (double)g[i] * g[i];
			wd[i] -= o.lr / bc1 * md[i] / (sqrt(vd[i]) / sqrt(bc2) + o.eps);
		}
		near(_metadata, w, wd);
	}
	/* Adam with the same decay is a different (L2) update. */
	float wa[N], ma[N] = { 0 }, va[N] = { 0 };
	double unused[N];

	init(wa, unused);
	o.kind = ENGINE_ADAM;
	grads(1.0, g);
	ASSERT_EQ(0, engine_optim_step(&o, 1, wa, g, ma, va, N));
	init(w, unused);
	memset(m, 0, sizeof(m));
	memset(v, 0, sizeof(v));
	o.kind = ENGINE_ADAMW;
	ASSERT_EQ(0, engine_optim_step(&o, 1, w, g, m, v, N));
	EXPECT_NE(0, memcmp(w, wa, sizeof(w)));
	EXPECT_EQ(2, engine_optim_state_arrays(ENGINE_ADAMW));
}

TEST(hyperparameters_are_checked)
{
	struct engine_optim o;

	engine_optim_defaults(&o, ENGINE_MOMENTUM, 0.1);
	o.nesterov = true;
	EXPECT_EQ(0, engine_optim_check(&o));
	o.dampening = 0.1;	/* PyTorch: Nesterov needs zero dampening */
	EXPECT_EQ(-EINVAL, engine_optim_check(&o));
	o.dampening = 0.0;
	o.momentum = 0.0;	/* ... and a momentum */
	EXPECT_EQ(-EINVAL, engine_optim_check(&o));
	o.nesterov = false;
	o.dampening = 1.0;
	EXPECT_EQ(-EINVAL, engine_optim_check(&o));
	engine_optim_defaults(&o, ENGINE_ADAMW, 0.1);
	o.beta2 = 1.0;
	EXPECT_EQ(-EINVAL, engine_optim_check(&o));
}

TEST(warmup_cosine_schedule)
{
	struct engine_lr_schedule s = { ENGINE_LR_WARMUP_COSINE, 10, 110, 1e-4 };
	struct engine_lr_schedule c = { ENGINE_LR_CONSTANT, 0, 0, 0 };
	const double lr = 3e-3;

	ASSERT_EQ(0, engine_lr_check(&s));
	EXPECT_EQ(lr, engine_lr_at(&c, lr, 57));
	EXPECT_LT(fabs(engine_lr_at(&s, lr, 1) - lr / 10), 1e-15);
	EXPECT_LT(fabs(engine_lr_at(&s, lr, 10) - lr), 1e-15);
	/* Half-way through the decay: the mean of lr and the floor. */
	EXPECT_LT(fabs(engine_lr_at(&s, lr, 60) - (lr + 1e-4) / 2), 1e-15);
	EXPECT_LT(fabs(engine_lr_at(&s, lr, 35) -
		       (1e-4 + (lr - 1e-4) * 0.5 * (1 + cos(M_PI * 0.25)))), 1e-15);
	EXPECT_EQ(1e-4, engine_lr_at(&s, lr, 110));
	EXPECT_EQ(1e-4, engine_lr_at(&s, lr, 1000));
	for (uint64_t t = 11; t < 110; t++)
		ASSERT_LT(engine_lr_at(&s, lr, t + 1), engine_lr_at(&s, lr, t));
	s.warmup = 110;
	EXPECT_EQ(-EINVAL, engine_lr_check(&s));
}

TEST_HARNESS_MAIN
