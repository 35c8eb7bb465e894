// SPDX-License-Identifier: GPL-2.0-only
/*
 * wsefwd logging. One line per event on stderr:
 *   2026-11-22T00:01:02.345Z wsefwd[123] info: text
 * (the appliance's processes name themselves: wse-memoryx[124] ...).
 * Each line goes out in one write so lines from concurrent processes (the
 * test runs several daemons) do not interleave.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fwd_log.h"

static enum fwd_log_level log_level = FWD_LOG_INFO;
static const char *log_name = "wsefwd";

static const char *const level_names[] = {
	[FWD_LOG_ERROR] = "error",
	[FWD_LOG_WARN] = "warn",
	[FWD_LOG_INFO] = "info",
	[FWD_LOG_DEBUG] = "debug",
};

int fwd_log_parse_level(const char *name)
{
	for (int i = FWD_LOG_ERROR; i <= FWD_LOG_DEBUG; i++)
		if (!strcmp(name, level_names[i]))
			return i;
	return -1;
}

void fwd_log_set_name(const char *name)
{
	log_name = name;
}

void fwd_log_set_level(enum fwd_log_level level)
{
	log_level = level;
}

int fwd_log_enabled(enum fwd_log_level level)
{
	return level <= log_level;
}

void fwd_log(enum fwd_log_level level, const char *fmt, ...)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	size_t n;
	va_list ap;

	if (!fwd_log_enabled(level))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ldZ %s[%d] %s: ",
			      ts.tv_nsec / 1000000, log_name, (int)getpid(), level_names[level]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	n = strlen(line);
	if (n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
