// SPDX-License-Identifier: GPL-2.0-only
/*
 * Layer-pipelined: the program runs on one system and its weights and
 * optimizer state stay on the wafer. Checkpoints read the parameters back
 * with PARAMS_READ and resume writes them with PARAMS_WRITE; weight
 * streaming on an appliance does the same, MemoryX answering
 * (mode_streaming.c).
 */
#include <stdlib.h>

#include "mode.h"

struct device_params {
	struct train_system *sys;	/* the one device */
};

int train_mode_device_open(struct train_job *j, void **state)
{
	struct device_params *d = calloc(1, sizeof(*d));

	if (!d)
		return train_fail("out of memory");
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

const struct train_mode train_mode_pipelined = {
	.update_name = "bookkeeping",
	.open = train_mode_device_open,
	.close = train_mode_device_close,
	.capture = train_mode_device_capture,
	.restore = train_mode_device_restore,
};
