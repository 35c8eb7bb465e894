// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The number parser (wse/numparse.h). Digits are read by hand rather than
 * with strtoull(), which skips blanks, takes a sign, reads "010" as octal
 * with base 0 and stops quietly at "150abc".
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wse/numparse.h"

#define REASON_MAX	128

static int digit(char c, unsigned int base)
{
	int d = c >= '0' && c <= '9' ? c - '0' :
		c >= 'a' && c <= 'f' ? c - 'a' + 10 :
		c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;

	return (unsigned int)d < base ? d : -1;
}

/* The power of a unit letter (1 for K, 2 for M, ...), or 0. */
static unsigned int unit_power(char c)
{
	switch (c) {
	case 'K': case 'k': return 1;
	case 'M': case 'm': return 2;
	case 'G': case 'g': return 3;
	case 'T': case 't': return 4;
	}
	return 0;
}

/*
 * The number at *@p: 0 with *@p after it, or a negative errno with the
 * reason (a phrase, without the value) in @why.
 */
static int parse(const char **p, bool hex, uint64_t min, uint64_t max, enum wse_num_units units,
		 uint64_t *out, char *why)
{
	const char *s = *p;
	unsigned int base = 10, power;
	uint64_t v = 0, scale;
	int d, digits = 0;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; (d = digit(*s, base)) >= 0; s++, digits++) {
		if (v > (UINT64_MAX - (uint64_t)d) / base) {
			snprintf(why, REASON_MAX, "too large (at most %llu)",
				 (unsigned long long)max);
			return -ERANGE;
		}
		v = v * base + (uint64_t)d;
	}
	if (!digits) {
		snprintf(why, REASON_MAX, hex ? "not a whole number (decimal digits, or hex after 0x)" :
						"not a whole number (decimal digits)");
		return -EINVAL;
	}
	power = units == WSE_NUM_PLAIN ? 0 : unit_power(*s);
	if (power) {
		for (scale = 1; power--;)
			scale *= units == WSE_NUM_BINARY ? 1024 : 1000;
		if (v > UINT64_MAX / scale) {
			snprintf(why, REASON_MAX, "too large (at most %llu)",
				 (unsigned long long)max);
			return -ERANGE;
		}
		v *= scale;
		s++;
	}
	if (v < min || v > max) {
		snprintf(why, REASON_MAX, "outside %llu..%llu", (unsigned long long)min,
			 (unsigned long long)max);
		return -ERANGE;
	}
	*out = v;
	*p = s;
	return 0;
}

/* All of @s: nothing may follow the number. */
static int parse_all(const char *s, uint64_t min, uint64_t max, enum wse_num_units units,
		     uint64_t *out, char *why)
{
	const char *p = s;
	uint64_t v;
	int ret;

	if (!s || !*s) {
		snprintf(why, REASON_MAX, "empty: a number is needed");
		return -EINVAL;
	}
	ret = parse(&p, true, min, max, units, &v, why);
	if (!ret && *p) {
		snprintf(why, REASON_MAX, "not a whole number: '%.40s' follows the digits%s", p,
			 units == WSE_NUM_PLAIN ? "" : " (a unit is one of K, M, G, T)");
		ret = -EINVAL;
	}
	if (!ret)
		*out = v;
	return ret;
}

int wse_parse_u64(const char *s, uint64_t min, uint64_t max, enum wse_num_units units,
		  uint64_t *out, char *err, size_t errlen)
{
	char why[REASON_MAX];
	int ret = parse_all(s, min, max, units, out, why);

	if (ret)
		snprintf(err, errlen, "'%.60s': %s", s ? s : "", why);
	return ret;
}

int wse_parse_u64_at(const char **p, uint64_t min, uint64_t max, enum wse_num_units units,
		     uint64_t *out, char *err, size_t errlen)
{
	char why[REASON_MAX];
	int ret = parse(p, false, min, max, units, out, why);

	if (ret)
		snprintf(err, errlen, "at '%.40s': %s", *p, why);
	return ret;
}

static int parse_double(const char *s, double min, double max, double *out, char *why)
{
	char *end;
	double v;

	if (!s || !*s) {
		snprintf(why, REASON_MAX, "empty: a number is needed");
		return -EINVAL;
	}
	/* strtod() also takes blanks, a '+', hex floats, "inf" and "nan": not here. */
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || strpbrk(s, "xXpP") ||
	    !(isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '.')) {
		snprintf(why, REASON_MAX, "not a decimal number");
		return -EINVAL;
	}
	if (errno == ERANGE || v < min || v > max) {
		snprintf(why, REASON_MAX, "outside %g..%g", min, max);
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int wse_parse_double(const char *s, double min, double max, double *out, char *err,
		     size_t errlen)
{
	char why[REASON_MAX];
	int ret = parse_double(s, min, max, out, why);

	if (ret)
		snprintf(err, errlen, "'%.60s': %s", s ? s : "", why);
	return ret;
}
