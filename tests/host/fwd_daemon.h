/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the host tests that run the real daemon and the tools as programs:
 * which wsefwd (and wse-appliance) to run, and running a command for its
 * output (run_cmd.h).
 */
#ifndef FWD_DAEMON_H
#define FWD_DAEMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_cmd.h"

/*
 * The daemon for the test at @self (argv[0]): $WSE_FWD if set (another
 * build, to compare), else the sanitizer build for a -san test.
 */
static inline const char *fwd_binary(const char *self)
{
	const char *env = getenv("WSE_FWD");

	if (env && *env)
		return env;
	if (self && strstr(self, "host-tests-san"))
		return "build/san-bin/wsefwd";
	return "build/bin/wsefwd";
}

/* The appliance for the test at @self, which starts the wsefwd beside it. */
static inline const char *appliance_binary(const char *self)
{
	if (self && strstr(self, "host-tests-san"))
		return "build/san-bin/wse-appliance";
	return "build/bin/wse-appliance";
}

#endif
