/* SPDX-License-Identifier: GPL-2.0-only */
/* Setting up the timing model from the command line and the parameter file. */
#ifndef FWD_TIMING_SETUP_H
#define FWD_TIMING_SETUP_H

#include "fwd_config.h"
#include "timing/timing.h"

/*
 * Loads the parameters (--timing, else the default file), takes the
 * wafer's per-PE figures from lib/wafer and this device's geometry, and
 * sets the clock (--clock-mhz, else the file's; cfg->clock_khz follows).
 * Returns 0, or -1 after logging why.
 */
int fwd_timing_setup(struct fwd_config *cfg, struct fwd_timing *t);

#endif /* FWD_TIMING_SETUP_H */
