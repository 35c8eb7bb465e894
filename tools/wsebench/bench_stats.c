// SPDX-License-Identifier: GPL-2.0-only
/* wsebench: the clock, medians and percentiles. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wsebench.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bench_percentile(const double *v, size_t n, double p)
{
	double *s, r;
	size_t rank;

	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	/* Nearest rank: the smallest value with at least p% at or below it. */
	rank = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	r = s[rank - 1];
	free(s);
	return r;
}

double bench_median(const double *v, size_t n)
{
	return bench_percentile(v, n, 50);
}
