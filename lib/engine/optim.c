// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Optimizer steps in torch.optim's conventions (SGD with momentum,
 * dampening and Nesterov; Adam with L2 weight decay; AdamW with decoupled
 * weight decay) and learning-rate schedules, so that hyperparameters carry
 * over from PyTorch unchanged.
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
		.weight_decay = kind == ENGINE_ADAMW ? 0.01 : 0.0,
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
		if (!in_unit_interval(opt->momentum) || !in_unit_interval(opt->dampening))
			return -EINVAL;
		/* PyTorch's rule: Nesterov needs momentum and no dampening. */
		if (opt->nesterov && (opt->momentum == 0.0 || opt->dampening != 0.0))
			return -EINVAL;
		return 0;
	case ENGINE_ADAM:
	case ENGINE_ADAMW:
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
	case ENGINE_ADAMW:
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

/*
 * Momentum with dampening or Nesterov, PyTorch's general path: the first
 * step sets v = g (t = 1), later ones v = momentum * v + (1 - dampening) * g;
 * Nesterov steps along g + momentum * v. Kept apart from momentum() above,
 * whose results stay bit-identical to what they were.
 */
static void momentum_general(const struct engine_optim *opt, uint64_t t, float *w,
			     const float *grad, float *v, size_t n)
{
	const float lr = (float)opt->lr, wd = (float)opt->weight_decay;
	const float mu = (float)opt->momentum, keep = (float)(1.0 - opt->dampening);

	for (size_t i = 0; i < n; i++) {
		float g = grad[i] + wd * w[i];

		v[i] = t == 1 ? g : mu * v[i] + keep * g;
		w[i] -= lr * (opt->nesterov ? g + mu * v[i] : v[i]);
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

	/* AdamW decays the weights first, by 1 - lr * weight_decay, and
	 * leaves the gradient alone.
	 */
	const bool decoupled = opt->kind == ENGINE_ADAMW;
	const float decay = (float)(1.0 - opt->lr * opt->weight_decay);

	/* Two plain loops rather than one with a test inside, so that GCC
	 * vectorizes both (ENGINE_VECTOR_CLONES).
	 */
	if (decoupled) {
		for (size_t i = 0; i < n; i++) {
			float g = grad[i];

			w[i] *= decay;
			m[i] = b1 * m[i] + one_b1 * g;
			v[i] = b2 * v[i] + one_b2 * g * g;
			w[i] -= step * (m[i] / (sqrtf(v[i]) / bc2_sqrt + eps));
		}
		return;
	}
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
		if (opt->nesterov || opt->dampening != 0.0)
			momentum_general(opt, t, w, grad, s0, n);
		else
			momentum(opt, w, grad, s0, n);
		break;
	case ENGINE_ADAM:
	case ENGINE_ADAMW:
		if (!s0 || !s1)
			return -EINVAL;
		adam(opt, t, w, grad, s0, s1, n);
		break;
	}
	return 0;
}

int engine_lr_check(const struct engine_lr_schedule *s)
{
	if (!s)
		return -EINVAL;
	switch (s->kind) {
	case ENGINE_LR_CONSTANT:
		return 0;
	case ENGINE_LR_WARMUP_COSINE:
		return s->warmup < s->total && s->min_lr >= 0.0 && s->min_lr <= FLT_MAX ? 0 : -EINVAL;
	}
	return -EINVAL;
}

double engine_lr_at(const struct engine_lr_schedule *s, double lr, uint64_t t)
{
	double p;

	if (!s || s->kind == ENGINE_LR_CONSTANT || engine_lr_check(s))
		return lr;
	if (t <= s->warmup)
		return lr * (double)t / (double)s->warmup;
	if (t >= s->total)
		return s->min_lr;
	p = (double)(t - s->warmup) / (double)(s->total - s->warmup);
	return s->min_lr + (lr - s->min_lr) * 0.5 * (1.0 + cos(M_PI * p));
}
