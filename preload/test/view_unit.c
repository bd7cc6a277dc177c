/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test helper for test/view.sh: the view API of include/lwm2.h without
 * MPI.  "expect-off": lwm2 is not loaded, every call says not measured;
 * "expect-on": under liblwm2.so, the values are there and move.  Also the
 * helpers (statistics, difference).  Prints TAP lines without a plan.
 */
#include <lwm2.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int n;
static volatile double sink;

static void ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++n, what);
}

int main(int argc, char **argv)
{
	const int m[] = {LWM2_WALL_TIME, LWM2_COMPUTE_TIME, LWM2_IO_WRITE_BYTES, LWM2_IO_CALLS};
	struct lwm2_view run, last;
	double a[4], b[4], d[4];
	int on = argc > 1 && strcmp(argv[1], "expect-on") == 0;
	const double rows[] = {1, 10, 2, 20, 6, 30};
	struct lwm2_view_stats s;
	char tmpl[] = "/tmp/lwm2-view-XXXXXX";
	int fd, rc;

	ok(lwm2_view_init(&run, m, 4, LWM2_SCOPE_RUN) == LWM2_OK, "a view of 4 metrics");
	ok(lwm2_view_init(&last, m, 0, LWM2_SCOPE_RUN) == LWM2_ERR_ARG, "no metric: bad argument");
	ok(lwm2_view_init(&last, (const int[]){LWM2_VIEW_NMETRICS}, 1, LWM2_SCOPE_RUN) ==
	       LWM2_ERR_ARG,
	   "an unknown metric: bad argument");
	ok(lwm2_view_init(&last, m, 4, LWM2_SCOPE_SINCE_LAST) == LWM2_OK, "a since-last view");
	ok(lwm2_view_available() == (on ? LWM2_OK : LWM2_NOT_MEASURED),
	   on ? "available under liblwm2.so" : "not measured without liblwm2.so");
	rc = lwm2_view_self(&run, a);
	ok(rc == (on ? LWM2_OK : LWM2_NOT_MEASURED), "run view: its return code");
	lwm2_view_self(&last, b);
	for (int i = 0; i < 20000000; i++)
		sink += 1e-9;
	if ((fd = mkstemp(tmpl)) >= 0) {
		unlink(tmpl);
		for (int i = 0; i < 10; i++)
			if (write(fd, "0123456789", 10) != 10)
				break;
		close(fd);
	}
	lwm2_view_self(&run, d);
	rc = lwm2_view_self(&last, b);
	if (on) {
		ok(a[0] > 0 && d[0] > a[0], "wall time grows");
		ok(d[1] > a[1] && d[1] <= d[0], "compute time grows and stays within wall");
		ok(b[1] > 0.001 && b[1] <= d[0] - a[0] + 0.001,
		   "since last: the loop's compute time");
		ok(b[2] == 100 && b[3] >= 11,
		   "since last: 100 bytes written in 10 writes and a close");
		ok(d[2] - a[2] == 100, "run view: 100 more bytes written");
	} else {
		ok(rc == LWM2_NOT_MEASURED && b[0] == 0 && b[1] == 0, "not measured: zeros");
	}
	lwm2_view_stats(rows, 3, 2, 0, &s);
	ok(s.min == 1 && s.max == 6 && s.mean == 3 && s.argmin == 0 && s.argmax == 2,
	   "statistics: min, mean, max and their ranks");
	ok(s.stddev > 2.16 && s.stddev < 2.17, "statistics: standard deviation");
	ok(lwm2_view_stats(rows, 3, 2, 2, &s) == LWM2_ERR_ARG, "statistics: a bad metric index");
	lwm2_view_diff(rows + 2, rows, d, 2);
	ok(d[0] == 1 && d[1] == 10, "difference of two views");
	return 0;
}
