// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The layer stack's workspace and its per-layer entry points. All memory is
 * allocated by engine_workspace_create; a step only computes.
 *
 * The workspace tracks where a step is (layers forwarded, loss taken, layers
 * carried back) so that calls out of order fail with -EINVAL instead of
 * computing with stale activations.
 *
 * Threads: the caller orders the calls on one workspace, except that layer
 * k's engine_backward_input() and engine_backward_params() may run at the
 * same time, and then layer k - 1's mask with the latter; so the field
 * engine_backward_params() checks is atomic, and it writes none.
 */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "wse/engine.h"

struct engine_workspace {
	struct engine_shape shape;
	size_t max_batch;
	size_t batch;		/* of the loaded input; 0 before the first load */
	size_t forwarded;	/* layers 0 .. forwarded-1 are computed */
	size_t pending;		/* backward of layer pending-1 comes next; 0 when none */
	/* Layers masked .. layers-1 have their output gradient masked (ready for
	 * input and params); layers when none.
	 */
	atomic_size_t masked;
	float *act[ENGINE_MAX_LAYERS + 1];	/* [max_batch][width[k]] */
	float *delta[ENGINE_MAX_LAYERS + 1];	/* gradient of act[k], k >= 1 */
};

void engine_workspace_destroy(struct engine_workspace *ws)
{
	if (!ws)
		return;
	for (size_t k = 0; k <= ws->shape.layers; k++) {
		free(ws->act[k]);
		free(ws->delta[k]);
	}
	free(ws);
}

int engine_workspace_create(const struct engine_shape *shape, size_t max_batch,
			    struct engine_workspace **out)
{
	struct engine_workspace *ws;
	int err = engine_shape_check(shape);

	if (err)
		return err;
	if (!out || !max_batch)
		return -EINVAL;
	if (max_batch > INT_MAX)
		return -EOVERFLOW;
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return -ENOMEM;
	ws->shape = *shape;
	ws->max_batch = max_batch;
	for (size_t k = 0; k <= shape->layers; k++) {
		size_t n = max_batch * shape->width[k];

		ws->act[k] = engine_alloc_floats(n);
		/* The input needs no gradient: layer 0 computes no dx. */
		ws->delta[k] = k ? engine_alloc_floats(n) : NULL;
		if (!ws->act[k] || (k && !ws->delta[k])) {
			engine_workspace_destroy(ws);
			return -ENOMEM;
		}
	}
	*out = ws;
	return 0;
}

static int start_step(struct engine_workspace *ws, size_t batch)
{
	if (!ws || !batch || batch > ws->max_batch)
		return -EINVAL;
	ws->batch = batch;
	ws->forwarded = 0;
	ws->pending = 0;
	atomic_store_explicit(&ws->masked, ws->shape.layers, memory_order_relaxed);
	return 0;
}

int engine_load_pixels(struct engine_workspace *ws, const uint8_t *px,
		       size_t batch)
{
	int err;

	if (!ws || !px || !batch || batch > ws->max_batch)
		return -EINVAL;
	err = engine_pixels_to_f32(px, batch * ws->shape.width[0], ws->act[0]);
	return err ? err : start_step(ws, batch);
}

int engine_load_input(struct engine_workspace *ws, const float *x, size_t batch)
{
	if (!ws || !x || !batch || batch > ws->max_batch)
		return -EINVAL;
	memmove(ws->act[0], x, batch * ws->shape.width[0] * sizeof(float));
	return start_step(ws, batch);
}

const struct engine_shape *engine_workspace_shape(const struct engine_workspace *ws)
{
	return ws ? &ws->shape : NULL;
}

size_t engine_batch(const struct engine_workspace *ws)
{
	return ws ? ws->batch : 0;
}

const float *engine_activation(const struct engine_workspace *ws, size_t k)
{
	if (!ws || k > ws->shape.layers)
		return NULL;
	return ws->act[k];
}

int engine_forward_layer(struct engine_workspace *ws, size_t k, const float *w,
			 const float *b)
{
	int err;

	if (!ws || !ws->batch || k != ws->forwarded || k >= ws->shape.layers)
		return -EINVAL;
	err = engine_dense_forward(ws->act[k], w, b, ws->batch,
				   ws->shape.width[k], ws->shape.width[k + 1],
				   ws->shape.relu[k], ws->act[k + 1]);
	if (err)
		return err;
	ws->forwarded = k + 1;
	ws->pending = 0;
	atomic_store_explicit(&ws->masked, ws->shape.layers, memory_order_relaxed);
	return 0;
}

int engine_loss(struct engine_workspace *ws, const uint8_t *labels, size_t norm,
		struct engine_loss_result *res)
{
	size_t layers, classes;
	struct engine_loss_result r;
	int err;

	if (!ws || !res || !ws->batch || ws->forwarded != ws->shape.layers)
		return -EINVAL;
	layers = ws->shape.layers;
	classes = ws->shape.width[layers];
	err = engine_xent_forward(ws->act[layers], labels, ws->batch, classes,
				  &r.loss, &r.correct);
	if (err)
		return err;
	err = engine_xent_backward(ws->act[layers], labels, ws->batch, classes,
				   norm, ws->delta[layers]);
	if (err)
		return err;
	*res = r;
	ws->pending = layers;
	atomic_store_explicit(&ws->masked, layers, memory_order_relaxed);
	return 0;
}

int engine_loss_scaled(struct engine_workspace *ws, const uint8_t *labels, size_t norm,
		       float scale, struct engine_loss_result *res)
{
	int err;

	if (!(scale > 0.0f) || !isfinite(scale))
		return -EINVAL;
	err = engine_loss(ws, labels, norm, res);
	if (err || scale == 1.0f)
		return err;
	for (size_t i = 0; i < ws->batch * ws->shape.width[ws->shape.layers]; i++)
		ws->delta[ws->shape.layers][i] *= scale;
	return 0;
}

int engine_backward_mask(struct engine_workspace *ws, size_t k)
{
	size_t out;

	if (!ws || !ws->pending || k + 1 != ws->pending ||
	    atomic_load_explicit(&ws->masked, memory_order_relaxed) != k + 1)
		return -EINVAL;
	out = ws->shape.width[k + 1];
	if (ws->shape.relu[k])
		engine_relu_backward(ws->act[k + 1], ws->delta[k + 1], ws->batch * out,
				     ws->delta[k + 1]);
	atomic_store_explicit(&ws->masked, k, memory_order_relaxed);
	return 0;
}

int engine_backward_input(struct engine_workspace *ws, size_t k, const float *w)
{
	int err;

	if (!ws || !w || !k || k + 1 != ws->pending ||
	    atomic_load_explicit(&ws->masked, memory_order_relaxed) != k)
		return -EINVAL;
	err = engine_dense_backward_input(ws->delta[k + 1], w, ws->batch, ws->shape.width[k],
					  ws->shape.width[k + 1], ws->delta[k]);
	if (err)
		return err;
	ws->pending = k;
	return 0;
}

int engine_backward_params(const struct engine_workspace *ws, size_t k,
			   float grad_beta, float *dw, float *db)
{
	/* Masked, and not yet overwritten by a new step (which resets masked). */
	if (!ws || !dw || k >= ws->shape.layers ||
	    atomic_load_explicit(&ws->masked, memory_order_relaxed) > k)
		return -EINVAL;
	return engine_dense_backward_params(ws->delta[k + 1], ws->act[k], ws->batch,
					    ws->shape.width[k], ws->shape.width[k + 1],
					    grad_beta, dw, db);
}

int engine_backward_layer(struct engine_workspace *ws, size_t k,
			  const float *w, float grad_beta, float *dw, float *db)
{
	int err;

	if (!ws || !ws->pending || k + 1 != ws->pending)
		return -EINVAL;
	if (!w || !dw)
		return -EINVAL;
	err = engine_backward_mask(ws, k);
	if (!err && k)
		err = engine_backward_input(ws, k, w);
	if (!err)
		err = engine_backward_params(ws, k, grad_beta, dw, db);
	if (!err && !k)
		ws->pending = 0;
	return err;
}
