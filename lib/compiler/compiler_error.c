// SPDX-License-Identifier: LGPL-2.1-or-later
/* Compiler errors: file, position and a message; and how they print. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compiler_internal.h"

int wsecc_fail(struct wsecc_error *e, const char *file, unsigned line, unsigned col,
	       const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -EINVAL;
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void wsecc_error_format(const struct wsecc_error *e, char *buf, size_t len)
{
	if (e->line)
		snprintf(buf, len, "%s:%u:%u: %s", e->file, e->line, e->col, e->msg);
	else if (e->file[0])
		snprintf(buf, len, "%s: %s", e->file, e->msg);
	else
		snprintf(buf, len, "%s", e->msg);
}

void wsecc_bytes(char *buf, size_t len, double bytes)
{
	if (bytes >= 1e9)
		snprintf(buf, len, "%.2f GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(buf, len, "%.2f MB", bytes / 1e6);
	else if (bytes >= 1e3)
		snprintf(buf, len, "%.1f kB", bytes / 1e3);
	else
		snprintf(buf, len, "%.0f B", bytes);
}
