// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A number on a tool's command line (wse/usage.h): parsed by libwsenum,
 * which only says what is wrong; printing it for the tool is this
 * library's part.
 */
#include <errno.h>
#include <stdio.h>

#include "wse/numparse.h"
#include "wse/usage.h"

#define MESSAGE_MAX	256

int wse_opt_u64(const char *prog, const char *opt, const char *s, uint64_t min, uint64_t max,
		enum wse_num_units units, uint64_t *out)
{
	char why[MESSAGE_MAX];
	int ret = wse_parse_u64(s, min, max, units, out, why, sizeof(why));

	if (ret == -EINVAL)
		fprintf(stderr, "%s: %s %s; give a whole number %llu..%llu%s\n", prog, opt, why,
			(unsigned long long)min, (unsigned long long)max,
			units == WSE_NUM_BINARY ? " (K, M, G, T: x 1024)" :
			units == WSE_NUM_DECIMAL ? " (K, M, G, T: x 1000)" : "");
	else if (ret)
		fprintf(stderr, "%s: %s %s\n", prog, opt, why);
	return ret;
}

int wse_opt_double(const char *prog, const char *opt, const char *s, double min, double max,
		   double *out)
{
	char why[MESSAGE_MAX];
	int ret = wse_parse_double(s, min, max, out, why, sizeof(why));

	if (ret == -EINVAL)
		fprintf(stderr, "%s: %s %s; give a number %g..%g\n", prog, opt, why, min, max);
	else if (ret)
		fprintf(stderr, "%s: %s %s\n", prog, opt, why);
	return ret;
}
