/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the weights live, for checkpoints (mode_pipelined.c,
 * mode_streaming.c). Every mode's step is the same from here: samples in,
 * RUN, losses and predictions out (steps.c). Layer pipelined, the weights
 * live on the system; weight streaming, in the appliance's MemoryX, which
 * updates them as SwarmX sums the systems' gradients: neither crosses the
 * user node. Both answer PARAMS_READ and PARAMS_WRITE in the same layout.
 */
#ifndef WSETRAIN_MODE_H
#define WSETRAIN_MODE_H

#include "train.h"

struct train_mode {
	/* What the host does after a training step, for the summary. */
	const char *update_name;
	/* Sets the mode up for @j (its program loaded). */
	int (*open)(struct train_job *j, void **state);
	void (*close)(void *state);
	/*
	 * The weights, optimizer state and step count into @p (its arrays
	 * sized by the program), and back; for checkpoints.
	 */
	int (*capture)(void *state, struct wse_params *p);
	int (*restore)(void *state, const struct wse_params *p);
};

extern const struct train_mode train_mode_pipelined;
extern const struct train_mode train_mode_streaming;

/* mode_pipelined.c: PARAMS_READ / PARAMS_WRITE of the device, for both modes. */
int train_mode_device_open(struct train_job *j, void **state);
void train_mode_device_close(void *state);
int train_mode_device_capture(void *state, struct wse_params *p);
int train_mode_device_restore(void *state, const struct wse_params *p);

#endif /* WSETRAIN_MODE_H */
