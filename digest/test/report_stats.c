/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The statistics and SVG helpers of `lwm2 report`: quartiles (R's type 7,
 * the values numpy.percentile gives), whiskers and 1.5 IQR outliers on
 * table-driven cases, the colour scale's ends, escaping, and path data.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "tap.h"

struct box_case {
	const char *name;
	double v[16];
	size_t n;
	double q1, median, q3, lo_w, hi_w;
	size_t nlow, nhigh;
};

/* Expected values checked with numpy.percentile(v, [25, 50, 75]). */
static const struct box_case cases[] = {
    {"one value", {5}, 1, 5, 5, 5, 5, 5, 0, 0},
    {"two values", {1, 3}, 2, 1.5, 2, 2.5, 1, 3, 0, 0},
    {"1..5", {1, 2, 3, 4, 5}, 5, 2, 3, 4, 1, 5, 0, 0},
    {"unsorted input, 1..8", {8, 1, 7, 2, 6, 3, 5, 4}, 8, 2.75, 4.5, 6.25, 1, 8, 0, 0},
    {"one high outlier (a rank that waits)",
     {10, 11, 10, 12, 11, 10, 11, 90},
     8,
     10,
     11,
     11.25,
     10,
     12,
     0,
     1},
    {"one low and one high", {-50, 5, 5, 6, 6, 7, 7, 60}, 8, 5, 6, 7, 5, 7, 1, 1},
    {"all equal: no outliers", {3, 3, 3, 3, 3, 3}, 6, 3, 3, 3, 3, 3, 0, 0},
    {"value on the fence is not an outlier", {0, 10, 10, 20, 35}, 5, 10, 10, 20, 0, 35, 0, 0},
};

int main(void)
{
	const size_t nc = sizeof(cases) / sizeof(cases[0]);
	double v[16];
	struct rp_box b;
	char col[8];

	tap_plan((int)(nc * 3 + 12));
	for (size_t i = 0; i < nc; i++) {
		const struct box_case *c = &cases[i];
		memcpy(v, c->v, c->n * sizeof(double));
		rp_sort(v, c->n);
		ok(rp_box_stats(v, c->n, &b) == 0 && fabs(b.q1 - c->q1) < 1e-9 &&
		       fabs(b.median - c->median) < 1e-9 && fabs(b.q3 - c->q3) < 1e-9,
		   "%s: quartiles %g %g %g (want %g %g %g)", c->name, b.q1, b.median, b.q3, c->q1,
		   c->median, c->q3);
		ok(fabs(b.lo_whisker - c->lo_w) < 1e-9 && fabs(b.hi_whisker - c->hi_w) < 1e-9,
		   "%s: whiskers %g..%g (want %g..%g)", c->name, b.lo_whisker, b.hi_whisker,
		   c->lo_w, c->hi_w);
		ok(b.nlow == c->nlow && b.nhigh == c->nhigh, "%s: outliers %zu low, %zu high",
		   c->name, b.nlow, b.nhigh);
	}
	ok(rp_box_stats(v, 0, &b) == -1, "no values: no box");
	ok(isnan(rp_quantile(v, 0, 0.5)), "quantile of nothing is NaN");
	{
		double s[] = {10, 11, 10, 12, 11, 10, 11, 90};
		rp_sort(s, 8);
		rp_box_stats(s, 8, &b);
		ok(rp_is_outlier(&b, 90) && !rp_is_outlier(&b, 12) && !rp_is_outlier(&b, 10),
		   "outlier test: 90 is, 12 and 10 are not (fences %g, %g)", b.lo_fence,
		   b.hi_fence);
	}
	rp_color(0, col);
	ok(!strcmp(col, "#ffffd9"), "colour scale starts light (%s)", col);
	rp_color(1, col);
	ok(!strcmp(col, "#0c2c84"), "colour scale ends dark (%s)", col);
	rp_color(NAN, col);
	ok(!strcmp(col, "#ffffd9"), "NaN takes the lowest colour (%s)", col);
	rp_color(7, col);
	ok(!strcmp(col, "#0c2c84"), "above 1 is clamped (%s)", col);
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		rp_esc(f, "<a href=\"x\">&'</a>");
		fclose(f);
		ok(!strcmp(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"), "escaping: %s",
		   buf);
		free(buf);
	}
	{
		struct rp_path p = {0};
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		rp_path_emit(f, &p, "#000", NULL);
		fflush(f);
		ok(len == 0, "an empty path is not written");
		rp_path_rect(&p, 1, 2, 3.5, 4);
		rp_path_rect(&p, 10, 0, 1, 1);
		ok(p.buf && !strcmp(p.buf, "M1 2h3.5v4h-3.5zM10 0h1v1h-1z"), "path data: %s",
		   p.buf ? p.buf : "(null)");
		for (int i = 0; i < 100000; i++)
			rp_path_rect(&p, i, i, 1, 1);
		ok(p.len > 1000000 && strlen(p.buf) == p.len, "path data grows (%zu bytes)", p.len);
		rp_path_emit(f, &p, "#000", "cell");
		fclose(f);
		ok(len > p.len && !strncmp(buf, "<path d=\"M1 2h", 14), "path element written");
		rp_path_free(&p);
		free(buf);
	}
	return tap_failed ? 1 : 0;
}
