/* SPDX-License-Identifier: GPL-2.0-only */
/* The simulated CS system: configuration, identity, device memory, execution. */
#ifndef FWD_DEVICE_H
#define FWD_DEVICE_H

#include "fwd_config.h"
#include "fwd_exec.h"
#include "fwd_memory.h"

struct fwd_device {
	const struct fwd_config *cfg;
	struct fwd_memory mem;
	uint32_t caps;		/* WSE_LINK_CAP_* offered */
	struct fwd_exec exec;
};

#endif /* FWD_DEVICE_H */
