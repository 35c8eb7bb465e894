// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer-pipelined: the program runs on one system and its weights and
 * optimizer state stay on the wafer. A step is the samples in and the
 * results out; nothing more. Checkpoints read the parameters back with
 * PARAMS_READ, or from a snapshot the device took at the checkpoint's step
 * while training goes on; resume writes them with PARAMS_WRITE.
 */
#include <errno.h>
#include <stdlib.h>

#include "mode.h"
#include "wse/engine_wsep.h"

struct pipelined {
	const struct train_job *j;
	struct train_system *sys;	/* the one system */
};

static int pipelined_open(struct train_job *j, void **state)
{
	/* One system: train_job_open() refuses more. */
	struct pipelined *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return train_fail("out of memory");
	pl->j = j;
	pl->sys = &j->sys[0];
	*state = pl;
	return 0;
}

static void pipelined_close(void *state)
{
	free(state);
}

static int pipelined_each(void *state, int (*fn)(unsigned int m, void *arg), void *arg)
{
	(void)state;
	return fn(0, arg);
}

static unsigned int pipelined_buffers(void *state, unsigned int m, bool out, struct iovec *iov)
{
	(void)state, (void)m, (void)out, (void)iov;
	return 0;
}

static unsigned int pipelined_step_io(void *state, unsigned int m, uint32_t kind,
				      struct wse_stream_io *io)
{
	(void)state, (void)m, (void)kind, (void)io;
	return 0;
}

static int pipelined_after_step(void *state, const double *shares)
{
	(void)state, (void)shares;
	return 0;
}

static int pipelined_capture(void *state, struct wse_params *p)
{
	struct pipelined *pl = state;
	int ret = wse_params_read(pl->sys->out, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: reading the weights and optimizer state: %s", pl->sys->name,
				  wse_strerror(ret));
	return 0;
}

static int pipelined_restore(void *state, const struct wse_params *p)
{
	struct pipelined *pl = state;
	int ret = wse_params_write(pl->sys->in, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: writing the weights and optimizer state: %s", pl->sys->name,
				  wse_strerror(ret));
	return 0;
}

static int pipelined_snapshot_at(void *state, struct wse_ring *ring, uint64_t step)
{
	struct pipelined *pl = state;
	int ret = wse_params_snapshot_at(ring, TRAIN_SLOT, step);

	if (ret)
		return train_fail("%s: asking for a snapshot at step %llu: %s", pl->sys->name,
				  (unsigned long long)step, wse_strerror(ret));
	return 0;
}

static int pipelined_read_snapshot(void *state, struct wse_ring *ring, struct wse_params *p,
				   uint32_t *crc)
{
	struct pipelined *pl = state;
	int ret = wse_params_read_snapshot(ring, TRAIN_SLOT, p, crc);

	if (ret)
		return train_fail("%s: reading the snapshot of the weights: %s", pl->sys->name,
				  wse_strerror(ret));
	return 0;
}

static int pipelined_store_snapshot(void *state, struct wse_ring *ring, uint64_t step,
				    uint64_t offset, const char *name, uint32_t *crc)
{
	struct pipelined *pl = state;
	const struct wsep_program *p = pl->j->p;
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
	return ret;	/* the caller says what it does about it */
}

const struct train_mode train_mode_pipelined = {
	.update_name = "bookkeeping",
	.open = pipelined_open,
	.close = pipelined_close,
	.each = pipelined_each,
	.buffers = pipelined_buffers,
	.step_io = pipelined_step_io,
	.after_step = pipelined_after_step,
	.capture = pipelined_capture,
	.restore = pipelined_restore,
	.snapshot_at = pipelined_snapshot_at,
	.read_snapshot = pipelined_read_snapshot,
	.store_snapshot = pipelined_store_snapshot,
};
