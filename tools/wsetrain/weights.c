// SPDX-License-Identifier: GPL-2.0-only
/*
 * Where the weights live, for checkpoints. Layer pipelined, the program
 * runs on one system and its weights and optimizer state stay on the
 * wafer; weight streaming, they are in the appliance's MemoryX, which
 * updates them as SwarmX sums the systems' gradients. Both answer
 * PARAMS_READ and PARAMS_WRITE in the same layout, so capture and restore
 * are one. Only a system keeps a snapshot at a checkpoint's step while
 * training goes on (saver.c); MemoryX does not.
 */
#include <errno.h>

#include "train.h"
#include "wse/engine_wsep.h"

int train_weights_capture(const struct train_job *j, struct wse_params *p)
{
	int ret = wse_params_read(j->sys[0].out, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: reading the weights and optimizer state: %s", j->sys[0].name,
				  wse_strerror(ret));
	return 0;
}

int train_weights_restore(const struct train_job *j, const struct wse_params *p)
{
	int ret = wse_params_write(j->sys[0].in, TRAIN_SLOT, p);

	if (ret)
		return train_fail("%s: writing the weights and optimizer state: %s", j->sys[0].name,
				  wse_strerror(ret));
	return 0;
}

bool train_weights_snapshots(const struct train_job *j)
{
	return !j->streaming;
}

/* Snapshots: the errno alone, for the checkpoint writer to say what it does about it. */
int train_weights_snapshot_at(struct wse_ring *ring, uint64_t step)
{
	return wse_params_snapshot_at(ring, TRAIN_SLOT, step);
}

int train_weights_read_snapshot(struct wse_ring *ring, struct wse_params *p, uint32_t *crc)
{
	return wse_params_read_snapshot(ring, TRAIN_SLOT, p, crc);
}

int train_weights_store_snapshot(const struct train_job *j, struct wse_ring *ring, uint64_t step,
				 uint64_t offset, const char *name, uint32_t *crc)
{
	const struct wsep_program *p = j->p;
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
