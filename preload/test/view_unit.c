/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test helper for test/view.sh: the view API of include/lwm2.h without
 * MPI.  "expect-off": lwm2 is not loaded, every call says not measured;
 * "expect-on": under liblwm2.so, the values are there and move; a window of
 * the last queries; a view of every thread against one of the calling
 * thread.  Also the helpers (statistics, difference).  Prints TAP lines
 * without a plan.
 */
#include <lwm2.h>

#include <fcntl.h>
#include <pthread.h>
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

static int out_fd = -1;

static void write_bytes(size_t len)
{
	static const char buf[64];

	if (out_fd >= 0 && write(out_fd, buf, len) != (ssize_t)len)
		perror("write");
}

/* 7 writes of 10 bytes in a thread of its own, which then ends. */
static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 7; i++)
		write_bytes(10);
	return NULL;
}

/* A window of 2 queries, and a view of every thread. */
static void windows_and_threads(int on)
{
	const int wb[] = {LWM2_IO_WRITE_BYTES};
	struct lwm2_view win, self, all;
	double q[4], s0, a0, s1, a1;
	pthread_t t;

	lwm2_view_init(&win, wb, 1, LWM2_SCOPE_RUN);
	ok(lwm2_view_set_window(&win, 0) == LWM2_ERR_ARG &&
	       lwm2_view_set_window(&win, LWM2_VIEW_WINDOW_MAX + 1) == LWM2_ERR_ARG,
	   "a window of 0 or more than LWM2_VIEW_WINDOW_MAX queries: bad argument");
	ok(lwm2_view_set_window(&win, 2) == LWM2_OK, "a window of 2 queries");
	ok(lwm2_view_set_threads(&win, 2) == LWM2_ERR_ARG, "threads 2: bad argument");
	lwm2_view_self(&win, &q[0]);
	write_bytes(10);
	lwm2_view_self(&win, &q[1]);
	write_bytes(20);
	lwm2_view_self(&win, &q[2]);
	write_bytes(40);
	lwm2_view_self(&win, &q[3]);
	if (on)
		ok(q[2] == 30 && q[3] == 60,
		   "window of 2: the bytes since the query before the last (30, 60)");
	lwm2_view_init(&self, wb, 1, LWM2_SCOPE_SINCE_LAST);
	lwm2_view_init(&all, wb, 1, LWM2_SCOPE_SINCE_LAST);
	ok(lwm2_view_set_threads(&all, LWM2_THREADS_ALL) == LWM2_OK, "a view of every thread");
	lwm2_view_self(&self, &s0);
	lwm2_view_self(&all, &a0);
	if (pthread_create(&t, NULL, writer, NULL) == 0)
		pthread_join(t, NULL);
	write_bytes(5);
	lwm2_view_self(&self, &s1);
	lwm2_view_self(&all, &a1);
	if (on)
		ok(s1 == 5 && a1 == 75,
		   "since last: the calling thread's 5 bytes; every thread's 75, the 70 of "
		   "one that ended included");
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
	{
		char t2[] = "/tmp/lwm2-view-XXXXXX";

		if ((out_fd = mkstemp(t2)) >= 0)
			unlink(t2);
		windows_and_threads(on);
		close(out_fd);
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
