/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tools' one style of usage error:
 *   TOOL: MESSAGE
 *   Try 'TOOL --help' for more information.
 * and exit status 2.
 */
#ifndef WSE_USAGE_H
#define WSE_USAGE_H

#include <stdint.h>

#include "wse/numparse.h"

#define WSE_EXIT_USAGE 2

/* Print the two lines; returns WSE_EXIT_USAGE. */
int wse_usage_error(const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Only the hint, after a line that said what was wrong; returns WSE_EXIT_USAGE. */
int wse_usage_hint(const char *tool);

/*
 * The message for what getopt_long refused (with opterr = 0): an unknown
 * option or one missing its value. @argv and @optind as getopt left them.
 */
int wse_usage_bad_option(const char *tool, char *const argv[], int optind, int optopt);

/*
 * A number on the command line: the value @s of option @opt of program
 * @prog (lib/cli/opt_number.c). On failure they print "PROG: OPT 'S': why"
 * and what the option takes on stderr and return the error (-EINVAL,
 * -ERANGE).
 */
int wse_opt_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		enum wse_num_units units, uint64_t *out);
int wse_opt_double(const char *prog, const char *opt, const char *s, double min, double max,
		   double *out);

#endif
