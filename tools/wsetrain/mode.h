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
	/*
	 * Optional, for checkpoints off the training path: the state at the
	 * end of step @step kept aside on the device, and read from there,
	 * both on @ring, another thread's, while training goes on (*@crc:
	 * CRC32C of the weights and state). NULL where capture() is quick.
	 */
	int (*snapshot_at)(void *state, struct wse_ring *ring, uint64_t step);
	int (*read_snapshot)(void *state, struct wse_ring *ring, struct wse_params *p,
			     uint32_t *crc);
	/*
	 * Optional too: the device saves that snapshot itself into @name of
	 * the storage it shares with this host, the weights at byte @offset
	 * (*@crc as above); -EINVAL when it shares none or cannot see the file.
	 */
	int (*store_snapshot)(void *state, struct wse_ring *ring, uint64_t step, uint64_t offset,
			      const char *name, uint32_t *crc);
};

extern const struct train_mode train_mode_pipelined;
extern const struct train_mode train_mode_streaming;

/* mode_pipelined.c: PARAMS_READ / PARAMS_WRITE of the device, for both modes. */
int train_mode_device_open(struct train_job *j, void **state);
void train_mode_device_close(void *state);
int train_mode_device_capture(void *state, struct wse_params *p);
int train_mode_device_restore(void *state, const struct wse_params *p);

#endif /* WSETRAIN_MODE_H */
