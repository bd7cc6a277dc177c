/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Histogram buckets: the chosen width, values on the edges, one value,
 * all values equal, NaN and infinite values counted apart, the cap. */
#include "histbin.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	double min, max, want;
} widths[] = {
    {0, 100, 20}, {0, 99.9, 10}, {0, 7, 1},       {0, 0.7, 0.1},   {0, 12, 2},      {0, 25, 5},
    {0, 24, 2.5}, {0, 26, 5},    {0, 41, 5},      {-50, 50, 20},   {-49, 49, 10},   {3, 3, 0.5},
    {0, 0, 1},    {-4, -4, 0.5}, {1e9, 1e9, 1e8}, {0, 1e12, 2e11}, {0, 3e-6, 5e-7},
};

/* The bucket each value falls in at a width, as printed edges read. */
static const struct {
	double v, width;
	int64_t want;
} edges[] = {
    {0, 0.1, 0},    {0.3, 0.1, 3},   {0.29999, 0.1, 2}, {0.7, 0.1, 7},
    {1, 0.1, 10},   {-0.1, 0.1, -1}, {-0.05, 0.1, -1},  {10, 10, 1},
    {9.999, 10, 0}, {2.5, 2.5, 1},   {1e-300, 1, 0},    {-1e-300, 1, -1},
};

static int add_all(struct lwm2_histbin *h, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (lwm2_histbin_add(h, v[i], 1) < 0)
			return -1;
	return 0;
}

/* The buckets of h at a width, as lwm2_histbin_buckets gives them. */
struct drawn {
	int rc;
	int64_t first;
	size_t nb;
	uint64_t *c;
	double *w;
};

static struct drawn draw(const struct lwm2_histbin *h, double width)
{
	struct drawn d = {0};

	errno = 0;
	d.rc = lwm2_histbin_buckets(h, width, &d.first, &d.nb, &d.c, &d.w);
	return d;
}

static void drawn_free(struct drawn *d)
{
	free(d->c);
	free(d->w);
}

static void test_spread(void)
{
	struct lwm2_histbin h = {0};
	double v[] = {0, 0.05, 0.1, 0.3, 0.3, 0.99, 1.0};
	struct drawn d;

	ok(add_all(&h, v, sizeof(v) / sizeof(v[0])) == 0, "seven values added");
	d = draw(&h, 0.1);
	is_int(d.rc, 0, "buckets of 0.1");
	is_int(d.first, 0, "the first bucket opens at 0");
	is_int(d.nb, 11, "0 to 1.0: eleven buckets, 1.0 in [1.0, 1.1)");
	if (d.rc == 0 && d.nb == 11) {
		is_int(d.c[0], 2, "0 and 0.05 in [0, 0.1)");
		is_int(d.c[1], 1, "0.1 opens [0.1, 0.2)");
		is_int(d.c[2], 0, "[0.2, 0.3) empty");
		is_int(d.c[3], 2, "both 0.3 in [0.3, 0.4)");
		is_int(d.c[9], 1, "0.99 in [0.9, 1.0)");
		is_int(d.c[10], 1, "1.0 in [1.0, 1.1)");
	}
	drawn_free(&d);
	lwm2_histbin_free(&h);
}

static void test_one_and_equal(void)
{
	struct lwm2_histbin h = {0};
	double width = lwm2_histbin_width(42, 42);
	struct drawn d;

	lwm2_histbin_add(&h, 42, 3.5);
	d = draw(&h, width);
	ok(d.rc == 0 && d.nb == 1 && d.c[0] == 1 && d.w[0] == 3.5,
	   "one value: one bucket of its weight");
	ok(lwm2_histbin_edge(d.first, width) <= 42 && lwm2_histbin_edge(d.first + 1, width) > 42,
	   "which holds it");
	drawn_free(&d);
	lwm2_histbin_free(&h);
	for (int i = 0; i < 1000; i++)
		lwm2_histbin_add(&h, 7, 1);
	d = draw(&h, lwm2_histbin_width(h.min, h.max));
	ok(d.rc == 0 && d.nb == 1 && d.c[0] == 1000 && d.w[0] == 1000,
	   "1000 equal values: one bucket of all of them");
	drawn_free(&d);
	lwm2_histbin_free(&h);
}

static void test_absent_and_errors(void)
{
	struct lwm2_histbin h = {0};
	struct drawn d;

	lwm2_histbin_add(&h, NAN, 1);
	lwm2_histbin_add(&h, INFINITY, 1);
	lwm2_histbin_add(&h, -INFINITY, 1);
	is_int(h.absent, 3, "NaN and infinities counted as absent");
	is_int(h.n, 0, "and not binned");
	d = draw(&h, 1);
	ok(d.rc < 0 && errno == EINVAL, "no values: no buckets (EINVAL)");
	lwm2_histbin_add(&h, 1, 1);
	lwm2_histbin_add(&h, 5, 1);
	is_int(h.absent, 3, "a value after them is binned");
	d = draw(&h, 0);
	ok(d.rc < 0 && errno == EINVAL, "width 0 refused");
	d = draw(&h, NAN);
	ok(d.rc < 0 && errno == EINVAL, "width NaN refused");
	d = draw(&h, 0.001);
	ok(d.rc < 0 && errno == ERANGE && d.nb == 4001,
	   "1 to 5 at 0.001: 4001 buckets, over the cap (ERANGE, the number said)");
	d = draw(&h, 0.005);
	ok(d.rc == 0 && d.nb == 801, "at 0.005: 801 buckets");
	drawn_free(&d);
	lwm2_histbin_free(&h);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		double got = lwm2_histbin_width(widths[i].min, widths[i].max);

		if (!ok(fabs(got - widths[i].want) <= 1e-9 * widths[i].want,
		        "width over [%g, %g] is %g", widths[i].min, widths[i].max, widths[i].want))
			diag("  got %.17g", got);
	}
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		is_int(lwm2_histbin_index(edges[i].v, edges[i].width), edges[i].want,
		       "%g at width %g: bucket %lld", edges[i].v, edges[i].width,
		       (long long)edges[i].want);
	test_spread();
	test_one_and_equal();
	test_absent_and_errors();
	return done_testing();
}
