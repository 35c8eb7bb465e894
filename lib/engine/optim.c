// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Optimizer steps in torch.optim's conventions (SGD with dampening 0 and no
 * Nesterov; Adam with L2 weight decay, not AdamW), so that hyperparameters
 * carry over from PyTorch unchanged.
 */
#include <errno.h>
#include <float.h>
#include <math.h>

#include "wse/engine.h"
#include "vec.h"

void engine_optim_defaults(struct engine_optim *opt, enum engine_optim_kind kind,
			   double lr)
{
	*opt = (struct engine_optim){
		.kind = kind,
		.lr = lr,
		.momentum = kind == ENGINE_MOMENTUM ? 0.9 : 0.0,
		.beta1 = 0.9,
		.beta2 = 0.999,
		.eps = 1e-8,
		.weight_decay = 0.0,
	};
}

static bool in_unit_interval(double x)	/* [0, 1) */
{
	return x >= 0.0 && x < 1.0;
}

int engine_optim_check(const struct engine_optim *opt)
{
	if (!opt)
		return -EINVAL;
	/* Every value must survive the rounding to float. */
	if (!(opt->lr >= 0.0 && opt->lr <= FLT_MAX))
		return -EINVAL;
	if (!(opt->weight_decay >= 0.0 && opt->weight_decay <= FLT_MAX))
		return -EINVAL;
	switch (opt->kind) {
	case ENGINE_SGD:
		return 0;
	case ENGINE_MOMENTUM:
		return in_unit_interval(opt->momentum) ? 0 : -EINVAL;
	case ENGINE_ADAM:
		if (!in_unit_interval(opt->beta1) || !in_unit_interval(opt->beta2))
			return -EINVAL;
		return opt->eps >= FLT_MIN && opt->eps <= FLT_MAX ? 0 : -EINVAL;
	}
	return -EINVAL;
}

unsigned int engine_optim_state_arrays(enum engine_optim_kind kind)
{
	switch (kind) {
	case ENGINE_MOMENTUM:
		return 1;
	case ENGINE_ADAM:
		return 2;
	default:
		return 0;
	}
}

static void sgd(const struct engine_optim *opt, float *w, const float *grad,
		size_t n)
{
	const float lr = (float)opt->lr, wd = (float)opt->weight_decay;
	size_t i = 0;

	for (; i + VLEN <= n; i += VLEN) {
		vfloat g = vload(grad + i) + vsplat(wd) * vload(w + i);

		vstore(w + i, vload(w + i) - vsplat(lr) * g);
	}
	for (; i < n; i++) {
		float g = grad[i] + wd * w[i];

		w[i] -= lr * g;
	}
}

static void momentum(const struct engine_optim *opt, float *w,
		     const float *grad, float *v, size_t n)
{
	const float lr = (float)opt->lr, wd = (float)opt->weight_decay;
	const float mu = (float)opt->momentum;
	size_t i = 0;

	/* From v = 0 the first step gives v = g exactly, as PyTorch's
	 * "buf = grad.clone()" does.
	 */
	for (; i + VLEN <= n; i += VLEN) {
		vfloat g = vload(grad + i) + vsplat(wd) * vload(w + i);
		vfloat vel = vsplat(mu) * vload(v + i) + g;

		vstore(v + i, vel);
		vstore(w + i, vload(w + i) - vsplat(lr) * vel);
	}
	for (; i < n; i++) {
		float g = grad[i] + wd * w[i];

		v[i] = mu * v[i] + g;
		w[i] -= lr * v[i];
	}
}

ENGINE_VECTOR_CLONES
static void adam(const struct engine_optim *opt, uint64_t t, float *w,
		 const float *grad, float *m, float *v, size_t n)
{
	const float wd = (float)opt->weight_decay, eps = (float)opt->eps;
	const float b1 = (float)opt->beta1, one_b1 = (float)(1.0 - opt->beta1);
	const float b2 = (float)opt->beta2, one_b2 = (float)(1.0 - opt->beta2);
	/* Like torch.optim.Adam: the bias corrections in double, then the
	 * step size and sqrt(correction2) as scalars.
	 */
	const double bc1 = 1.0 - pow(opt->beta1, (double)t);
	const double bc2 = 1.0 - pow(opt->beta2, (double)t);
	const float step = (float)(opt->lr / bc1);
	const float bc2_sqrt = (float)sqrt(bc2);

	for (size_t i = 0; i < n; i++) {
		float g = grad[i] + wd * w[i];

		m[i] = b1 * m[i] + one_b1 * g;
		v[i] = b2 * v[i] + one_b2 * g * g;
		w[i] -= step * (m[i] / (sqrtf(v[i]) / bc2_sqrt + eps));
	}
}

int engine_optim_step(const struct engine_optim *opt, uint64_t t, float *w,
		      const float *grad, float *s0, float *s1, size_t n)
{
	int err = engine_optim_check(opt);

	if (err)
		return err;
	if (!w || !grad || !n || !t)
		return -EINVAL;
	switch (opt->kind) {
	case ENGINE_SGD:
		sgd(opt, w, grad, n);
		break;
	case ENGINE_MOMENTUM:
		if (!s0)
			return -EINVAL;
		momentum(opt, w, grad, s0, n);
		break;
	case ENGINE_ADAM:
		if (!s0 || !s1)
			return -EINVAL;
		adam(opt, t, w, grad, s0, s1, n);
		break;
	}
	return 0;
}
