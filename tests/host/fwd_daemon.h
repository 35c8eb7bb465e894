/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the host tests that run the real daemon and the tools as programs:
 * which wsefwd (and wse-appliance) to run, and running a command for its
 * output.
 */
#ifndef FWD_DAEMON_H
#define FWD_DAEMON_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* The daemon for the test at @self (argv[0]): the sanitizer build for a -san test. */
static inline const char *fwd_binary(const char *self)
{
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

/* Runs @cmd, keeps its output in @out; returns its exit status or -1. */
static inline int run_cmd(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	while (n + 1 < cap && fgets(out + n, (int)(cap - n), p))
		n += strlen(out + n);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif
