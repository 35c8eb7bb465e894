// SPDX-License-Identifier: GPL-2.0-only
/*
 * Weight streaming over N systems, with MemoryX and SwarmX in this
 * process (libwse): the user node's side of the appliance. In every step
 * each system is sent every layer's weights from MemoryX, in layer order
 * for the forward pass and again in reverse for the backward pass
 * (SwarmX's broadcast: the same buffers go to all of them), and gives
 * each layer's gradient back (the gather). SwarmX sums the gradients
 * weighted by the systems' shares of the batch, and MemoryX applies the
 * update before the next step. This is the file the appliance replaces
 * (mode.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mode.h"
#include "wse/memoryx.h"

struct streaming {
	const struct train_job *j;
	uint32_t layers;
	struct wse_memoryx *mx;
	struct wse_swarmx *sx;
	float *grad[TRAIN_MAX_SYSTEMS][WSEP_MAX_LAYERS];	/* each system's, per layer */
	const double *shares;		/* the step being applied */
	uint64_t step;			/* optimizer steps applied (Adam's t) */
};

static void streaming_close(void *state)
{
	struct streaming *st = state;

	if (!st)
		return;
	for (unsigned int m = 0; m < TRAIN_MAX_SYSTEMS; m++)
		for (uint32_t k = 0; k < WSEP_MAX_LAYERS; k++)
			free(st->grad[m][k]);
	wse_swarmx_destroy(st->sx);
	wse_memoryx_destroy(st->mx);
	free(st);
}

static int streaming_open(struct train_job *j, void **state)
{
	struct streaming *st = calloc(1, sizeof(*st));
	int ret;

	if (!st)
		return train_fail("out of memory");
	st->j = j;
	st->layers = j->p->num_layers;
	ret = wse_memoryx_create(j->p, &st->mx);
	if (ret) {
		streaming_close(st);
		return train_fail("MemoryX cannot hold %s: %s", j->p->model_name, strerror(-ret));
	}
	ret = wse_swarmx_create(j->n, &st->sx);
	if (ret) {
		streaming_close(st);
		return train_fail("SwarmX: %s", strerror(-ret));
	}
	for (unsigned int m = 0; m < j->n; m++) {
		for (uint32_t k = 0; k < st->layers; k++) {
			st->grad[m][k] = malloc(wsep_layer_params(&j->p->layers[k]) * 4);
			if (!st->grad[m][k]) {
				streaming_close(st);
				return train_fail("out of memory");
			}
		}
	}
	*state = st;
	return 0;
}

static int streaming_each(void *state, int (*fn)(unsigned int m, void *arg), void *arg)
{
	struct streaming *st = state;

	return wse_swarmx_each(st->sx, fn, arg);
}

static unsigned int streaming_buffers(void *state, unsigned int m, bool out, struct iovec *iov)
{
	struct streaming *st = state;

	if (!out) {
		iov[0] = (struct iovec){ (void *)wse_memoryx_weights(st->mx),
					 wse_memoryx_floats(st->mx) * 4 };
		return 1;
	}
	for (uint32_t k = 0; k < st->layers; k++)
		iov[k] = (struct iovec){ st->grad[m][k],
					 wsep_layer_params(&st->j->p->layers[k]) * 4 };
	return st->layers;
}

static unsigned int streaming_step_io(void *state, unsigned int m, uint32_t kind,
				      struct wse_stream_io *io)
{
	struct streaming *st = state;
	const struct train_streams *ids = &st->j->ids;
	uint32_t L = st->layers;
	unsigned int n = 0;
	size_t floats;

	/* The broadcast: forward in layer order, then (training) backward in reverse. */
	for (uint32_t i = 0; i < (kind == WSE_RUN_TRAIN ? 2 * L : L); i++) {
		uint32_t k = i < L ? i : 2 * L - 1 - i;
		const float *w = wse_memoryx_layer(st->mx, k, &floats);

		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_WRITE, (uint32_t)ids->weights[k],
						  4, (void *)w, floats * 4 };
	}
	/* The gather: the gradients come back last layer first. */
	for (uint32_t k = L; kind == WSE_RUN_TRAIN && k-- > 0;) {
		wse_memoryx_layer(st->mx, k, &floats);
		io[n++] = (struct wse_stream_io){ DRM_WSE_OP_STREAM_READ, (uint32_t)ids->grads[k], 4,
						  st->grad[m][k], floats * 4 };
	}
	return n;
}

/*
 * SwarmX's reduction and MemoryX's update. Both work element by element,
 * so every system's thread takes a slice of every layer: the same bits as
 * one thread doing it all, in a fraction of the time.
 */
static int reduce_and_update(unsigned int m, void *arg)
{
	struct streaming *st = arg;
	unsigned int n = st->j->n;
	float *part[TRAIN_MAX_SYSTEMS];

	for (uint32_t k = 0; k < st->layers; k++) {
		size_t floats, first, count;

		wse_memoryx_layer(st->mx, k, &floats);
		first = floats * m / n;
		count = floats * (m + 1) / n - first;
		for (unsigned int i = 0; i < n; i++)
			part[i] = st->grad[i][k] + first;
		wse_swarmx_reduce(st->sx, wse_memoryx_grad(st->mx, k) + first, part, st->shares,
				  count);
		if (wse_memoryx_update_slice(st->mx, k, st->step + 1, first, count))
			return train_fail("MemoryX: the update of layer %u failed", k);
	}
	return 0;
}

static int streaming_after_step(void *state, const double *shares)
{
	struct streaming *st = state;

	st->shares = shares;
	if (wse_swarmx_each(st->sx, reduce_and_update, st))
		return -1;
	st->step++;
	return 0;
}

static int streaming_capture(void *state, struct wse_params *p)
{
	struct streaming *st = state;

	wse_memoryx_get(st->mx, p->weights, p->state);
	p->step = st->step;
	return 0;
}

static int streaming_restore(void *state, const struct wse_params *p)
{
	struct streaming *st = state;

	if (wse_memoryx_set(st->mx, p->weights, p->state))
		return train_fail("--resume: the checkpoint holds non-finite values");
	st->step = p->step;
	return 0;
}

const struct train_mode train_mode_streaming = {
	.update_name = "MemoryX updates",
	.open = streaming_open,
	.close = streaming_close,
	.each = streaming_each,
	.buffers = streaming_buffers,
	.step_io = streaming_step_io,
	.after_step = streaming_after_step,
	.capture = streaming_capture,
	.restore = streaming_restore,
};
