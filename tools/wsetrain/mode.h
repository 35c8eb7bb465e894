/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the execution mode adds to the steps, and where the weights live
 * (mode_pipelined.c, mode_streaming.c). steps.c runs every mode's steps
 * the same way: samples in, RUN, losses and predictions out; a mode adds
 * its own transfers to each system's step and its own work after it.
 *
 * Layer-pipelined, the weights live on the one system and the mode adds
 * nothing. Weight streaming, they live here in MemoryX: each step
 * broadcasts every layer's weights to the systems and gathers their
 * gradients, which SwarmX sums and MemoryX applies. When MemoryX and
 * SwarmX move into the appliance (Documentation/architecture.rst), only
 * mode_streaming.c changes: the appliance is then one device whose mode
 * adds nothing, like the pipelined one.
 */
#ifndef WSETRAIN_MODE_H
#define WSETRAIN_MODE_H

#include <sys/uio.h>

#include "train.h"

/* Most transfers a mode adds to one system's step: a layer's weights twice, its gradients. */
#define TRAIN_MODE_MAX_IO	(3 * WSEP_MAX_LAYERS)

struct train_mode {
	/* What the host does after a training step, for the summary. */
	const char *update_name;
	/* Sets the mode up for @j (its program loaded on every system). */
	int (*open)(struct train_job *j, void **state);
	void (*close)(void *state);
	/* Calls @fn(m, @arg) for every system m at once; 0 or the first failure. */
	int (*each)(void *state, int (*fn)(unsigned int m, void *arg), void *arg);
	/* Buffers of system @m's @out (or input) ring the mode moves, for registration. */
	unsigned int (*buffers)(void *state, unsigned int m, bool out, struct iovec *iov);
	/* Adds system @m's own transfers of a step of @kind to @io; returns how many. */
	unsigned int (*step_io)(void *state, unsigned int m, uint32_t kind,
				struct wse_stream_io *io);
	/* After a training step: system m's share of the batch is @shares[m]. */
	int (*after_step)(void *state, const double *shares);
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

#endif /* WSETRAIN_MODE_H */
