// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer-pipelined: the program runs on one system and its weights and
 * optimizer state stay on the wafer. Checkpoints read the parameters back
 * with PARAMS_READ, or from a snapshot the system keeps at the
 * checkpoint's step while training goes on (saver.c), and resume writes
 * them with PARAMS_WRITE; weight streaming on an appliance does the same
 * but for the snapshots, MemoryX answering (mode_streaming.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "mode.h"
#include "wse/engine_wsep.h"

struct device_params {
	const struct train_job *j;
	struct train_system *sys;	/* the one device */
};

int train_mode_device_open(struct train_job *j, void **state)
{
	struct device_params *d = calloc(1, sizeof(*d));

	if (!d)
		return train_fail("out of memory");
	d->j = j;
	d->sys = &j->sys[0];
	*state = d;
	return 0;
}

void train_mode_device_close(void *state)
{
	free(state);
}

int train_mode_device_capture(void *state, struct wse_params *p)
{
	struct device_params *d = state;
	int ret = wse_params_read(d->sys->out, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: reading the weights and optimizer state: %s", d->sys->name,
				  wse_strerror(ret));
	return 0;
}

int train_mode_device_restore(void *state, const struct wse_params *p)
{
	struct device_params *d = state;
	int ret = wse_params_write(d->sys->in, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: writing the weights and optimizer state: %s", d->sys->name,
				  wse_strerror(ret));
	return 0;
}

/* Snapshots: the errno alone, for the checkpoint writer to say what it does about it. */
static int pipelined_snapshot_at(void *state, struct wse_ring *ring, uint64_t step)
{
	(void)state;
	return wse_params_snapshot_at(ring, TRAIN_SLOT, step);
}

static int pipelined_read_snapshot(void *state, struct wse_ring *ring, struct wse_params *p,
				   uint32_t *crc)
{
	(void)state;
	return wse_params_read_snapshot(ring, TRAIN_SLOT, p, crc);
}

static int pipelined_store_snapshot(void *state, struct wse_ring *ring, uint64_t step,
				    uint64_t offset, const char *name, uint32_t *crc)
{
	struct device_params *d = state;
	const struct wsep_program *p = d->j->p;
	uint64_t floats = wsep_total_params(p->layers, p->num_layers), at;
	struct engine_optim opt;
	int ret;

	ret = engine_optim_from_wsep(&p->opt, &opt);
	if (!ret)
		ret = wse_params_snapshot_store(ring, TRAIN_SLOT, step, offset, name);
	if (!ret)
		ret = wse_params_snapshot_sum(ring, TRAIN_SLOT, floats,
					      engine_optim_state_arrays(opt.kind), &at, crc);
	if (!ret && at != step)
		ret = -EPROTO;
	return ret;
}

const struct train_mode train_mode_pipelined = {
	.update_name = "bookkeeping",
	.open = train_mode_device_open,
	.close = train_mode_device_close,
	.capture = train_mode_device_capture,
	.restore = train_mode_device_restore,
	.snapshot_at = pipelined_snapshot_at,
	.read_snapshot = pipelined_read_snapshot,
	.store_snapshot = pipelined_store_snapshot,
};
