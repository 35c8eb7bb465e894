// SPDX-License-Identifier: GPL-2.0-only
/* One style of usage error for every tool (wse/usage.h). */
#include <stdarg.h>
#include <stdio.h>

#include "wse/usage.h"

int wse_usage_error(const char *tool, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return wse_usage_hint(tool);
}

int wse_usage_hint(const char *tool)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", tool);
	return WSE_EXIT_USAGE;
}

int wse_usage_bad_option(const char *tool, char *const argv[], int optind, int optopt)
{
	/* getopt_long has stepped past the offending word. */
	const char *word = optind > 0 ? argv[optind - 1] : "";

	/* getopt cannot tell us which: an unknown word and a missing value look alike. */
	if (word[0] == '-' && word[1] == '-')
		return wse_usage_error(tool, "unknown option, or one missing its value: '%s'", word);
	if (optopt)
		return wse_usage_error(tool, "unknown option, or one missing its value: '-%c'", optopt);
	return wse_usage_error(tool, "unknown option '%s'", word);
}
