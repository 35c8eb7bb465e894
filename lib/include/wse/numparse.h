/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wse/numparse.h - the one number parser of the tools and libraries
 * (libwsenum, which every program links; the installed libwse carries it).
 * It never prints: wse_opt_u64() and wse_opt_double() (wse/usage.h,
 * libwsecli) print a tool's refused option.
 *
 * The rules, everywhere: a whole number is decimal digits, or hexadecimal
 * digits after 0x ("010" is ten, not eight); no sign, no blanks, and
 * nothing after it but, where a value has units, one unit letter. A value
 * outside its range is refused, never clamped or wrapped.
 *
 * Functions return 0 or a negative errno (-EINVAL: not such a number,
 * -ERANGE: outside the range) and put a sentence in @err on failure,
 * following the userspace error convention (Documentation/conventions.rst).
 */
#ifndef WSE_NUMPARSE_H
#define WSE_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Unit letters a number may end in. */
enum wse_num_units {
	WSE_NUM_PLAIN,		/* none */
	WSE_NUM_BINARY,		/* K, M, G, T (either case): x 1024, 1024^2, ... (sizes) */
	WSE_NUM_DECIMAL,	/* K, M, G, T (either case): x 1000, 1000^2, ... (rates, clocks) */
};

/* wse_parse_u64() - all of @s as a whole number in [@min, @max]. */
int wse_parse_u64(const char *s, uint64_t min, uint64_t max, enum wse_num_units units,
		  uint64_t *out, char *err, size_t errlen);

/*
 * wse_parse_u64_at() - the whole number at *@p, for values inside a
 * larger spec ("64x48:48K"); *@p is left after it and its unit letter.
 * Decimal only: in a spec, "0x10" is 0, then "x10".
 */
int wse_parse_u64_at(const char **p, uint64_t min, uint64_t max, enum wse_num_units units,
		     uint64_t *out, char *err, size_t errlen);

/* wse_parse_double() - all of @s as a finite decimal number in [@min, @max]. */
int wse_parse_double(const char *s, double min, double max, double *out, char *err,
		     size_t errlen);

#endif /* WSE_NUMPARSE_H */
