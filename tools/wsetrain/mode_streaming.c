// SPDX-License-Identifier: GPL-2.0-only
/*
 * Weight streaming, on an appliance (wse-appliance): one device whose
 * coordinator spreads each batch over the job's systems, whose MemoryX
 * holds the weights and the optimizer state and applies the update, and
 * whose SwarmX broadcasts the weights to the systems and sums their
 * gradients. Nothing of that crosses the user node: a step is samples
 * in, RUN, losses out, as layer pipelined; checkpoints are MemoryX's
 * PARAMS_READ and PARAMS_WRITE (mode.h).
 */
#include "mode.h"

const struct train_mode train_mode_streaming = {
	.update_name = "bookkeeping (MemoryX updates in the appliance)",
	.open = train_mode_device_open,
	.close = train_mode_device_close,
	.capture = train_mode_device_capture,
	.restore = train_mode_device_restore,
};
