/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Box-plot statistics for the per-rank view: quartiles, whiskers at the
 * furthest values within 1.5 IQR (Tukey), and the outliers beyond them,
 * which the report names by rank and node as TOPAS's topasview did.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void rp_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

double rp_quantile(const double *sorted, size_t n, double q)
{
	double h, lo;
	size_t i;

	if (!n)
		return NAN;
	if (q <= 0)
		return sorted[0];
	if (q >= 1)
		return sorted[n - 1];
	/* R's type 7 (numpy's default): h = (n - 1) q, interpolated */
	h = (double)(n - 1) * q;
	lo = floor(h);
	i = (size_t)lo;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (h - lo) * (sorted[i + 1] - sorted[i]);
}

int rp_box_stats(const double *sorted, size_t n, struct rp_box *b)
{
	double iqr;

	if (!n)
		return -1;
	b->n = n;
	b->min = sorted[0];
	b->max = sorted[n - 1];
	b->q1 = rp_quantile(sorted, n, 0.25);
	b->median = rp_quantile(sorted, n, 0.5);
	b->q3 = rp_quantile(sorted, n, 0.75);
	iqr = b->q3 - b->q1;
	b->lo_fence = b->q1 - 1.5 * iqr;
	b->hi_fence = b->q3 + 1.5 * iqr;
	b->nlow = b->nhigh = 0;
	b->lo_whisker = b->q1;
	b->hi_whisker = b->q3;
	for (size_t i = 0; i < n; i++) {
		if (sorted[i] < b->lo_fence)
			b->nlow++;
		else if (sorted[i] < b->lo_whisker)
			b->lo_whisker = sorted[i];
		if (sorted[i] > b->hi_fence)
			b->nhigh++;
		else if (sorted[i] > b->hi_whisker)
			b->hi_whisker = sorted[i];
	}
	return 0;
}

bool rp_is_outlier(const struct rp_box *b, double v)
{
	return v < b->lo_fence || v > b->hi_fence;
}
