/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Box-plot statistics for the per-rank view: quartiles, whiskers at the
 * furthest values within 1.5 IQR (Tukey), and the outliers beyond them,
 * which the report names by rank and node as TOPAS's topasview did.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>

#include "jsonutil.h"

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

static int cmp_stepnode(const void *a, const void *b)
{
	const struct rp_stepnode *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

void rp_stepnode_sort(struct rp_stepnode *t, size_t n)
{
	qsort(t, n, sizeof(*t), cmp_stepnode);
}

size_t rp_stepnode_count(const struct rp_stepnode *t, size_t n, int64_t step, long node)
{
	struct rp_stepnode k = {step, node};
	size_t lo = 0, hi = n, c = 0;

	/* the lower bound, then the equal keys */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_stepnode(&t[mid], &k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + c < n && !cmp_stepnode(&t[lo + c], &k))
		c++;
	return c;
}

double rp_series_at(json_object *c, const char *name, int64_t k)
{
	json_object *a = ju_get(c, name, json_type_array);

	if (!a || k < 0 || (size_t)k >= json_object_array_length(a))
		return 0;
	return json_object_get_double(json_object_array_get_idx(a, (size_t)k));
}

double rp_series_sum(json_object *c, const char *const *names, size_t n, int64_t k)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += rp_series_at(c, names[i], k);
	return s;
}
