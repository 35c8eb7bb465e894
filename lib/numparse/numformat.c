// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Numbers with units for people to read (wse/numformat.h): the largest
 * unit the value reaches, whole when it is whole, else three significant
 * digits.
 */
#include <stdio.h>
#include <string.h>

#include "wse/numformat.h"

/* @v in units of @base^k from @names, the largest with v >= base^k. */
static char *format_scaled(uint64_t v, unsigned int base, const char *const *names,
			   unsigned int count, char *buf, size_t len)
{
	uint64_t unit = 1;
	unsigned int k = 0;

	while (k + 1 < count && v / unit >= base) {
		unit *= base;
		k++;
	}
	if (v % unit == 0) {
		snprintf(buf, len, "%llu %s", (unsigned long long)(v / unit), names[k]);
	} else {
		double d = (double)v / (double)unit;
		/* Three significant digits, no trailing zeros: 1.5, 34.1, 850. */
		int decimals = d < 10 ? 2 : d < 100 ? 1 : 0;
		char num[WSE_NUMFORMAT_MAX];
		size_t end;

		snprintf(num, sizeof(num), "%.*f", decimals, d);
		end = strlen(num);
		while (decimals && num[end - 1] == '0')
			end--;
		if (num[end - 1] == '.')
			end--;
		num[end] = 0;
		snprintf(buf, len, "%s %s", num, names[k]);
	}
	return buf;
}

char *wse_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

	return format_scaled(bytes, 1024, names, sizeof(names) / sizeof(names[0]), buf, len);
}

char *wse_format_hz(uint64_t hz, char *buf, size_t len)
{
	static const char *const names[] = { "Hz", "kHz", "MHz", "GHz", "THz" };

	return format_scaled(hz, 1000, names, sizeof(names) / sizeof(names[0]), buf, len);
}
