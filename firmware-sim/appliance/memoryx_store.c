// SPDX-License-Identifier: GPL-2.0-only
/* MemoryX's store (memoryx_store.h). */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memoryx_store.h"
#include "wse/engine_wsep.h"

uint64_t mx_store_bytes(const struct wsep_program *p)
{
	struct engine_optim opt;

	if (!p->num_layers || p->num_layers > ENGINE_MAX_LAYERS ||
	    engine_optim_from_wsep(&p->opt, &opt) || engine_optim_check(&opt) ||
	    (p->graph && (!p->weights ||
			  p->num_weights != wsep_total_params(p->layers, p->num_layers))))
		return 0;
	return wsep_total_params(p->layers, p->num_layers) * sizeof(float) *
	       (1 + engine_optim_state_arrays(opt.kind));
}

int mx_store_create(struct mx_store *st, const struct wsep_program *p,
		    const struct mx_spill *spill, char *text, size_t len)
{
	uint64_t weights, ram;
	int ret;

	memset(st, 0, sizeof(*st));
	if (!mx_store_bytes(p)) {
		snprintf(text, len, "MemoryX cannot serve %s: its layers or optimizer are beyond the engine",
			 p->model_name);
		return -EINVAL;
	}
	engine_optim_from_wsep(&p->opt, &st->opt);
	if (engine_lr_from_wsep(&p->opt, &st->sched)) {
		snprintf(text, len, "MemoryX cannot serve %s: its learning-rate schedule is beyond the engine",
			 p->model_name);
		return -EINVAL;
	}
	st->layers = p->num_layers;
	st->floats = wsep_total_params(p->layers, p->num_layers);
	st->arrays = engine_optim_state_arrays(st->opt.kind);
	for (uint32_t k = 0; k < p->num_layers; k++) {
		const struct wsep_layer *l = &p->layers[k];

		if ((l->kind != WSEP_LAYER_DENSE && l->kind != WSEP_LAYER_UNIT) ||
		    l->weight_offset + wsep_layer_params(l) > st->floats) {
			snprintf(text, len, "MemoryX streams dense layers and graph units; layer %u of %s is neither",
				 k, p->model_name);
			return -EINVAL;
		}
		st->offset[k] = l->weight_offset;
		st->in[k] = l->in;
		st->out[k] = l->out;
		st->n[k] = wsep_layer_params(l);
		st->unit[k] = l->kind == WSEP_LAYER_UNIT;
	}
	weights = st->floats * sizeof(float);
	st->state_bytes = st->arrays * weights;
	ram = spill ? spill->ram : UINT64_MAX;
	if (weights > ram) {
		snprintf(text, len,
			 "%s's weights take %llu bytes; MemoryX keeps them in shared memory for the systems and its RAM budget is %llu (wse-appliance --memoryx-ram)",
			 p->model_name, (unsigned long long)weights, (unsigned long long)ram);
		return -ENOSPC;
	}
	ret = wse_link_region_create(&st->region, "mx", weights, text, len);
	if (ret)
		return ret;
	st->w = (float *)(st->region.base + WSE_LINK_REGION_HEADER);
	if (spill) {
		st->state = mx_spill_map(spill, st->state_bytes, ram - weights, &st->spilled,
					 text, len);
	} else {
		st->state = mx_spill_map(&(struct mx_spill){ .fd = -1 }, st->state_bytes,
					 UINT64_MAX, &st->spilled, text, len);
	}
	if (!st->state) {
		mx_store_destroy(st);
		return -ENOSPC;
	}
	if (p->weights && p->num_weights == st->floats)
		memcpy(st->w, p->weights, st->floats * sizeof(float));
	else
		for (uint32_t k = 0; k < st->layers; k++)
			wsep_init_layer(p->seed, st->offset[k], st->in[k], st->out[k],
					st->w + st->offset[k],
					st->w + st->offset[k] + (size_t)st->in[k] * st->out[k]);
	return 0;
}

void mx_store_destroy(struct mx_store *st)
{
	struct mx_helper *h = &st->helper;

	if (h->started) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_broadcast(&h->cond);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		pthread_cond_destroy(&h->cond);
		pthread_mutex_destroy(&h->lock);
	}
	wse_link_region_destroy(&st->region);
	mx_spill_unmap(st->state, st->state_bytes);
	memset(st, 0, sizeof(*st));
}

uint64_t mx_store_layer_at(const struct mx_store *st, uint32_t k, size_t *floats)
{
	*floats = (size_t)st->n[k];
	return WSE_LINK_REGION_HEADER + st->offset[k] * sizeof(float);
}

/* engine_optim_step() on floats [at, at + n) of the weights and every state array. */
static int step_range(struct mx_store *st, uint64_t t, size_t at, size_t n, const float *g)
{
	float *s[2] = { NULL, NULL };
	struct engine_optim o = engine_optim_at(&st->opt, &st->sched, t);

	for (unsigned int i = 0; i < st->arrays; i++)
		s[i] = st->state + i * st->floats + at;
	return engine_optim_step(&o, t, st->w + at, g, s[0], s[1], n);
}

static void *helper_main(void *arg)
{
	struct mx_store *st = arg;
	struct mx_helper *h = &st->helper;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->busy && !h->stop)
			pthread_cond_wait(&h->cond, &h->lock);
		if (h->stop)
			break;
		pthread_mutex_unlock(&h->lock);
		h->err = step_range(st, h->t, h->at, h->n, h->g);
		pthread_mutex_lock(&h->lock);
		h->busy = false;
		pthread_cond_broadcast(&h->cond);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

/* Below this many floats a second thread costs more than it saves. */
#define SPLIT_MIN	(64 * 1024)

/* step_range() of [at, at + n), the upper part on the helper when it is large. */
static int step_split(struct mx_store *st, uint64_t t, size_t at, size_t n, const float *g)
{
	struct mx_helper *h = &st->helper;
	size_t lower = n / 2 & ~(size_t)63;
	int err;

	if (n < SPLIT_MIN)
		return step_range(st, t, at, n, g);
	if (!h->started) {
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->cond, NULL);
		h->started = !pthread_create(&h->thread, NULL, helper_main, st);
		if (!h->started) {
			pthread_cond_destroy(&h->cond);
			pthread_mutex_destroy(&h->lock);
			return step_range(st, t, at, n, g);
		}
	}
	pthread_mutex_lock(&h->lock);
	h->t = t;
	h->at = at + lower;
	h->n = n - lower;
	h->g = g + lower;
	h->busy = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	err = step_range(st, t, at, lower, g);
	pthread_mutex_lock(&h->lock);
	while (h->busy)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	return err ? err : h->err;
}

int mx_store_update(struct mx_store *st, uint32_t k, uint64_t t, const float *g)
{
	size_t wn;
	int err;

	if (k >= st->layers || !t)
		return -EINVAL;
	if (st->unit[k]) {
		err = step_split(st, t, st->offset[k], st->n[k], g);
	} else {
		wn = (size_t)st->in[k] * st->out[k];
		/* W and b separately, as the device updates a resident layer. */
		err = step_split(st, t, st->offset[k], wn, g);
		if (!err)
			err = step_range(st, t, st->offset[k] + wn, st->out[k], g + wn);
	}
	if (!err) {
		st->step = t;
		st->updates++;
	}
	return err;
}

int mx_store_hold(struct mx_store *st, uint32_t k, float *g, float scale)
{
	if (k >= st->layers)
		return -EINVAL;
	st->held[k] = g;
	return engine_unscale(g, st->n[k], scale);
}

int mx_store_commit(struct mx_store *st, uint64_t t, bool apply)
{
	int err = 0;

	if (!t)
		return -EINVAL;
	/* All or none: a step with a layer not held applies nothing. */
	for (uint32_t k = 0; k < st->layers && apply && !err; k++)
		if (!st->held[k])
			err = -EINVAL;
	if (err) {
		memset(st->held, 0, sizeof(st->held));
		return err;
	}
	for (uint32_t k = 0; k < st->layers; k++) {
		if (apply && !err)
			err = mx_store_update(st, k, t, st->held[k]);
		st->held[k] = NULL;
	}
	if (!err)
		st->step = t;
	return err;
}

int mx_store_params(struct mx_store *st, uint32_t which, uint64_t offset, uint32_t len,
		    void *buf, bool write, char *text, size_t textlen)
{
	uint64_t n = st->floats * sizeof(float), size, states, le;
	uint8_t count[8];

	if (which == WSE_LINK_PARAMS_WEIGHTS)
		size = n;
	else if (which == WSE_LINK_PARAMS_OPT_STATE)
		size = st->arrays * n + 8;
	else {
		snprintf(text, textlen, "params kind %u is not weights (1) or optimizer state (2)",
			 which);
		return -EINVAL;
	}
	if (offset % 4 || len % 4 || offset > size || len > size - offset) {
		snprintf(text, textlen,
			 "params range of %u bytes at offset %llu is not whole floats inside the %llu bytes of %s",
			 len, (unsigned long long)offset, (unsigned long long)size,
			 which == WSE_LINK_PARAMS_WEIGHTS ? "weights" : "optimizer state");
		return -EINVAL;
	}
	if (which == WSE_LINK_PARAMS_WEIGHTS) {
		for (uint32_t i = 0; write && i < len; i += 4) {
			float v;

			memcpy(&v, (uint8_t *)buf + i, 4);
			if (!isfinite(v)) {
				snprintf(text, textlen, "float %u of the data (offset %llu) is not finite",
					 i / 4, (unsigned long long)(offset + i));
				return -EINVAL;
			}
		}
		if (write)
			memcpy((uint8_t *)st->w + offset, buf, len);
		else
			memcpy(buf, (uint8_t *)st->w + offset, len);
		return 0;
	}
	/* The state arrays, then the step count (little-endian). */
	states = st->arrays * n;
	if (offset < states) {
		uint64_t part = len < states - offset ? len : states - offset;

		if (write)
			memcpy((uint8_t *)st->state + offset, buf, part);
		else
			memcpy(buf, (uint8_t *)st->state + offset, part);
	}
	if (offset + len > states) {
		uint64_t from = offset > states ? offset : states;
		uint8_t *b = (uint8_t *)buf + (from - offset);

		le = htole64(st->step);
		memcpy(count, &le, 8);
		if (write) {
			memcpy(count + (from - states), b, offset + len - from);
			memcpy(&le, count, 8);
			st->step = le64toh(le);
		} else {
			memcpy(b, count + (from - states), offset + len - from);
		}
	}
	return 0;
}
