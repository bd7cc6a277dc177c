/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics of the grid's rules (grid_internal.h).
 *
 * Why robust statistics: a job's slices are few (tens to hundreds), its
 * own phases differ, and the nodes are shared with other work.  A median
 * and the median absolute deviation (MAD) of the job's own rates are not
 * moved by the slow slices they are meant to find.
 */
#include "grid_internal.h"

#include <math.h>
#include <stdlib.h>

int grid_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double grid_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), grid_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double grid_quantile(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)h;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* The chance of holding the slowest rank that often when every node of
 * each job were alike. */
double grid_tail(const double *p, size_t n, size_t k)
{
	double *d = calloc(n + 2, sizeof(*d)), t = 0;

	if (!d)
		return 1;
	d[0] = 1;
	for (size_t j = 0; j < n; j++) {
		for (size_t x = j + 1; x > 0; x--)
			d[x] = d[x] * (1 - p[j]) + d[x - 1] * p[j];
		d[0] *= 1 - p[j];
	}
	for (size_t x = k; x <= n; x++)
		t += d[x];
	free(d);
	return t;
}
