/* SPDX-License-Identifier: GPL-2.0-only */
/* One step's stream transfers on one system (stepio.c). */
#ifndef WSETRAIN_STEPIO_H
#define WSETRAIN_STEPIO_H

#include "train.h"

#define IO_MAX_CMDS	(4 + 3 * WSEP_MAX_LAYERS)
#define IO_WAIT_MS	180000	/* beyond the commands' own timeouts */

struct io_cmd {
	uint32_t op;		/* DRM_WSE_OP_STREAM_WRITE or _READ */
	uint32_t stream;
	uint32_t unit;		/* the stream's record size */
	void *buf;
	uint32_t len;
};

/* Carries out @cmds; 0 or the first failure's negative errno. */
int io_run(struct train_system *s, const struct io_cmd *cmds, unsigned int n);

#endif /* WSETRAIN_STEPIO_H */
