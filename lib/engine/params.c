// SPDX-License-Identifier: LGPL-2.1-or-later
/* Parameters, gradients and optimizer state of a layer stack. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "wse/engine.h"

void engine_params_destroy(struct engine_params *params)
{
	if (!params)
		return;
	for (size_t k = 0; k < params->shape.layers; k++) {
		struct engine_layer *l = &params->layer[k];

		free(l->w);
		free(l->b);
		free(l->dw);
		free(l->db);
		for (int s = 0; s < 2; s++) {
			free(l->w_state[s]);
			free(l->b_state[s]);
		}
	}
	free(params);
}

int engine_params_create(const struct engine_shape *shape,
			 enum engine_optim_kind kind,
			 struct engine_params **params)
{
	struct engine_params *p;
	unsigned int states = engine_optim_state_arrays(kind);
	int err = engine_shape_check(shape);

	if (err)
		return err;
	if (!params || (kind != ENGINE_SGD && kind != ENGINE_MOMENTUM &&
			kind != ENGINE_ADAM))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->shape = *shape;
	p->kind = kind;
	for (size_t k = 0; k < shape->layers; k++) {
		struct engine_layer *l = &p->layer[k];

		l->in = shape->width[k];
		l->out = shape->width[k + 1];
		l->w = engine_alloc_floats(l->in * l->out);
		l->b = engine_alloc_floats(l->out);
		l->dw = engine_alloc_floats(l->in * l->out);
		l->db = engine_alloc_floats(l->out);
		if (!l->w || !l->b || !l->dw || !l->db)
			goto nomem;
		for (unsigned int s = 0; s < states; s++) {
			l->w_state[s] = engine_alloc_floats(l->in * l->out);
			l->b_state[s] = engine_alloc_floats(l->out);
			if (!l->w_state[s] || !l->b_state[s])
				goto nomem;
		}
	}
	*params = p;
	return 0;
nomem:
	engine_params_destroy(p);
	return -ENOMEM;
}

static void fill_uniform(struct engine_rng *rng, float *x, size_t n, float bound)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (2.0f * engine_rng_uniform(rng) - 1.0f) * bound;
}

void engine_params_init(struct engine_params *params, uint64_t seed)
{
	struct engine_rng rng;

	engine_rng_seed(&rng, seed);
	for (size_t k = 0; k < params->shape.layers; k++) {
		struct engine_layer *l = &params->layer[k];
		size_t n = l->in * l->out;
		/* kaiming_uniform_(a = sqrt(5)) and the bias rule both give
		 * 1/sqrt(fan_in).
		 */
		float bound = 1.0f / sqrtf((float)l->in);

		fill_uniform(&rng, l->w, n, bound);
		fill_uniform(&rng, l->b, l->out, bound);
		memset(l->dw, 0, n * sizeof(float));
		memset(l->db, 0, l->out * sizeof(float));
		for (int s = 0; s < 2; s++) {
			if (l->w_state[s])
				memset(l->w_state[s], 0, n * sizeof(float));
			if (l->b_state[s])
				memset(l->b_state[s], 0, l->out * sizeof(float));
		}
	}
}

int engine_params_update_layer(struct engine_params *params,
			       const struct engine_optim *opt, uint64_t t,
			       size_t k)
{
	struct engine_layer *l;
	int err;

	if (!params || !opt || k >= params->shape.layers ||
	    opt->kind != params->kind)
		return -EINVAL;
	l = &params->layer[k];
	err = engine_optim_step(opt, t, l->w, l->dw, l->w_state[0],
				l->w_state[1], l->in * l->out);
	if (err)
		return err;
	/* PyTorch decays every parameter it is given, biases included. */
	return engine_optim_step(opt, t, l->b, l->db, l->b_state[0],
				 l->b_state[1], l->out);
}
