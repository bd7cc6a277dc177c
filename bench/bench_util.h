/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Clock and statistics shared by the benchmark programs. */
#ifndef LWM2_BENCH_UTIL_H
#define LWM2_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Spread as the distance from the lower to the upper quartile (sorted v). */
static inline double bench_iqr(const double *v, size_t n)
{
	if (n < 4)
		return n ? v[n - 1] - v[0] : 0;
	return v[(3 * n) / 4] - v[n / 4];
}

#endif /* LWM2_BENCH_UTIL_H */
