// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * MemoryX (wse/memoryx.h). The update is the firmware engine's
 * engine_optim_step(), called for W and for b separately exactly as the
 * device calls it for a resident layer, which is what keeps the two
 * execution modes bit-identical. A graph program's unit is one range of
 * floats (its parameter tensors one after another), updated at the
 * program's learning-rate schedule like the device's resident units.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "wse/memoryx.h"
#include "wse/engine_wsep.h"

struct wse_memoryx {
	uint32_t layers;
	uint64_t floats;
	uint64_t offset[ENGINE_MAX_LAYERS];	/* layer k's W, in floats */
	uint32_t in[ENGINE_MAX_LAYERS], out[ENGINE_MAX_LAYERS];
	uint64_t n[ENGINE_MAX_LAYERS];		/* its floats */
	bool unit[ENGINE_MAX_LAYERS];		/* a graph's unit: one range, no W and b */
	unsigned int arrays;			/* optimizer state arrays */
	struct engine_optim opt;
	struct engine_lr_schedule sched;
	float *w, *g, *state[2];		/* each @floats long */
};

int wse_memoryx_create(const struct wsep_program *p, struct wse_memoryx **out)
{
	struct engine_optim opt;
	struct wse_memoryx *mx;

	*out = NULL;
	if (!p->num_layers || p->num_layers > ENGINE_MAX_LAYERS ||
	    engine_optim_from_wsep(&p->opt, &opt) || engine_optim_check(&opt) ||
	    (p->graph && (!p->weights || p->num_weights != wsep_total_params(p->layers, p->num_layers))))
		return -EINVAL;
	mx = calloc(1, sizeof(*mx));
	if (!mx)
		return -ENOMEM;
	mx->layers = p->num_layers;
	mx->floats = wsep_total_params(p->layers, p->num_layers);
	for (uint32_t k = 0; k < p->num_layers; k++) {
		const struct wsep_layer *l = &p->layers[k];

		if ((l->kind != WSEP_LAYER_DENSE && l->kind != WSEP_LAYER_UNIT) ||
		    l->weight_offset + wsep_layer_params(l) > mx->floats) {
			free(mx);
			return -EINVAL;
		}
		mx->offset[k] = l->weight_offset;
		mx->in[k] = l->in;
		mx->out[k] = l->out;
		mx->n[k] = wsep_layer_params(l);
		mx->unit[k] = l->kind == WSEP_LAYER_UNIT;
	}
	if (engine_lr_from_wsep(&p->opt, &mx->sched)) {
		free(mx);
		return -EINVAL;
	}
	mx->opt = opt;
	mx->arrays = engine_optim_state_arrays(opt.kind);
	mx->w = calloc(mx->floats, sizeof(float));
	mx->g = calloc(mx->floats, sizeof(float));
	for (unsigned int s = 0; s < mx->arrays; s++)
		mx->state[s] = calloc(mx->floats, sizeof(float));
	if (!mx->w || !mx->g || (mx->arrays > 0 && !mx->state[0]) ||
	    (mx->arrays > 1 && !mx->state[1])) {
		wse_memoryx_destroy(mx);
		return -ENOMEM;
	}
	/* The image's weights, or those wsecc would have put in it. */
	if (p->weights && p->num_weights == mx->floats)
		memcpy(mx->w, p->weights, mx->floats * sizeof(float));
	else
		for (uint32_t k = 0; k < mx->layers; k++)
			wsep_init_layer(p->seed, mx->offset[k], mx->in[k], mx->out[k],
					mx->w + mx->offset[k],
					mx->w + mx->offset[k] + (size_t)mx->in[k] * mx->out[k]);
	*out = mx;
	return 0;
}

void wse_memoryx_destroy(struct wse_memoryx *mx)
{
	if (!mx)
		return;
	free(mx->w);
	free(mx->g);
	free(mx->state[0]);
	free(mx->state[1]);
	free(mx);
}

uint64_t wse_memoryx_floats(const struct wse_memoryx *mx)
{
	return mx->floats;
}

unsigned int wse_memoryx_state_arrays(const struct wse_memoryx *mx)
{
	return mx->arrays;
}

const float *wse_memoryx_weights(const struct wse_memoryx *mx)
{
	return mx->w;
}

const float *wse_memoryx_layer(const struct wse_memoryx *mx, uint32_t k, size_t *n)
{
	if (k >= mx->layers)
		return NULL;
	*n = (size_t)mx->n[k];
	return mx->w + mx->offset[k];
}

float *wse_memoryx_grad(struct wse_memoryx *mx, uint32_t k)
{
	return k < mx->layers ? mx->g + mx->offset[k] : NULL;
}

/* engine_optim_step() on floats [at, at + n) of every array. */
static int step_range(struct wse_memoryx *mx, uint64_t t, size_t at, size_t n)
{
	float *s[2] = { NULL, NULL };
	struct engine_optim o = engine_optim_at(&mx->opt, &mx->sched, t);

	if (!n)
		return 0;
	for (unsigned int i = 0; i < mx->arrays; i++)
		s[i] = mx->state[i] + at;
	return engine_optim_step(&o, t, mx->w + at, mx->g + at, s[0], s[1], n);
}

int wse_memoryx_update_slice(struct wse_memoryx *mx, uint32_t k, uint64_t t, size_t first,
			     size_t count)
{
	size_t wn, end, w_end;
	int err;

	if (k >= mx->layers || !t)
		return -EINVAL;
	end = first + count;
	if (end < first || end > mx->n[k])
		return -EINVAL;
	if (mx->unit[k])
		return step_range(mx, t, mx->offset[k] + first, count);
	wn = (size_t)mx->in[k] * mx->out[k];
	/* W and b separately, as the device updates a resident layer. */
	w_end = end < wn ? end : wn;
	err = first < w_end ? step_range(mx, t, mx->offset[k] + first, w_end - first) : 0;
	if (!err && end > wn) {
		size_t b0 = first > wn ? first : wn;

		err = step_range(mx, t, mx->offset[k] + b0, end - b0);
	}
	return err;
}

int wse_memoryx_update(struct wse_memoryx *mx, uint32_t k, uint64_t t)
{
	if (k >= mx->layers)
		return -EINVAL;
	return wse_memoryx_update_slice(mx, k, t, 0, (size_t)mx->n[k]);
}

void wse_memoryx_get(const struct wse_memoryx *mx, float *weights, float *state)
{
	memcpy(weights, mx->w, mx->floats * sizeof(float));
	for (unsigned int i = 0; i < mx->arrays; i++)
		memcpy(state + i * mx->floats, mx->state[i], mx->floats * sizeof(float));
}

int wse_memoryx_set(struct wse_memoryx *mx, const float *weights, const float *state)
{
	uint64_t n = mx->floats * (1 + mx->arrays);

	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(i < mx->floats ? weights[i] : state[i - mx->floats]))
			return -EINVAL;
	memcpy(mx->w, weights, mx->floats * sizeof(float));
	for (unsigned int i = 0; i < mx->arrays; i++)
		memcpy(mx->state[i], state + i * mx->floats, mx->floats * sizeof(float));
	return 0;
}
