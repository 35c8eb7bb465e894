/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the host tests that run the project's programs as a user would: a
 * shell command's exit status and what it printed.
 */
#ifndef WSE_TEST_RUN_CMD_H
#define WSE_TEST_RUN_CMD_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/*
 * Runs @cmd; what it wrote to stdout in @out (at most @cap - 1 bytes, NUL
 * ended). Its exit status, or -1 if it could not run or was killed.
 */
static inline int run_cmd(const char *cmd, char *out, size_t cap)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	while (n + 1 < cap) {
		size_t got = fread(out + n, 1, cap - 1 - n, p);

		if (!got)
			break;
		n += got;
	}
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* As run_cmd(), with stderr in @out too: for tests of a tool's messages. */
static inline int run_cmd_all(const char *cmd, char *out, size_t cap)
{
	char full[8192];

	if ((size_t)snprintf(full, sizeof(full), "%s 2>&1", cmd) >= sizeof(full))
		return -1;
	return run_cmd(full, out, cap);
}

#endif
