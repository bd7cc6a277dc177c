/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test program of the named regions (include/lwm2.h, lwm2_view(3)): it
 * times its own regions with CLOCK_MONOTONIC and prints "own NAME SECONDS
 * CALLS" for each, what lwm2_region_self says as "self NAME SECONDS
 * CALLS", and TAP lines of its own for the return codes (test/regions.sh
 * renumbers them and checks the rank record against the "own" lines).
 *
 *   regions expect-off   without lwm2: every call is LWM2_NOT_MEASURED
 *   regions run          under liblwm2.so: nesting, recursion, 2 threads,
 *                        300 names more than the record keeps, a fork,
 *                        20 short threads more (threads as a scope: the
 *                        two workers print their CPU time, "thread TID S")
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lwm2.h"

static int failures, tests;

static void ok(int cond, const char *what)
{
	tests++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tests, what);
	failures += !cond;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		;
}

/* Own figures of a region: time from before its begin to after its end. */
struct own {
	const char *name;
	double seconds;
	int calls;
};

static struct own outer = {"outer", 0, 0}, inner = {"inner", 0, 0}, rec = {"rec", 0, 0},
                  work = {"work", 0, 0};
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;

/* every call's own time, the nested ones' included: what a region
 * entered again would add up to if each call counted its time */
static double rec_sum;

static void recurse(int depth)
{
	double t0 = now();

	lwm2_region_begin("rec");
	rec.calls++;
	spin(0.01);
	if (depth > 0)
		recurse(depth - 1);
	lwm2_region_end();
	rec_sum += now() - t0;
}

/* Its own CPU time at its end, as "thread TID SECONDS". */
static void print_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	printf("thread %ld %.6f\n", (long)syscall(SYS_gettid),
	       (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void *short_thread(void *arg)
{
	(void)arg;
	spin(0.001);
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		double t0 = now(), t1;

		lwm2_region_begin("work");
		spin(0.06);
		lwm2_region_end();
		t1 = now();
		pthread_mutex_lock(&work_lock);
		work.seconds += t1 - t0;
		work.calls++;
		pthread_mutex_unlock(&work_lock);
	}
	pthread_mutex_lock(&work_lock);
	print_thread_cpu();
	pthread_mutex_unlock(&work_lock);
	return NULL;
}

static void print_own(const struct own *o)
{
	double s = -1, c = -1;

	printf("own %s %.6f %d\n", o->name, o->seconds, o->calls);
	lwm2_region_self(o->name, &s, &c);
	printf("self %s %.6f %.0f\n", o->name, s, c);
}

static int expect_off(void)
{
	double s = 1, c = 1;

	ok(lwm2_region_begin("solver") == LWM2_NOT_MEASURED, "begin: not measured");
	ok(lwm2_region_end() == LWM2_NOT_MEASURED, "end: not measured");
	ok(lwm2_region_self("solver", &s, &c) == LWM2_NOT_MEASURED && s == 0 && c == 0,
	   "self: not measured, zeros");
	ok(lwm2_region_begin(NULL) == LWM2_ERR_ARG, "begin(NULL): a bad argument");
	printf("1..%d\n", tests);
	return failures != 0;
}

static int run(void)
{
	pthread_t th[2];
	char name[16];
	pid_t pid;
	int status;
	double s = -1, c = -1;

	ok(lwm2_region_end() == LWM2_ERR_ARG, "end with none open: a bad argument");
	ok(lwm2_region_begin("") == LWM2_ERR_ARG, "begin(\"\"): a bad argument");
	for (int i = 0; i < 3; i++) {
		double t0 = now(), t1, t2;

		ok(lwm2_region_begin("outer") == LWM2_OK, "begin outer");
		spin(0.1);
		t1 = now();
		lwm2_region_begin("inner");
		spin(0.05);
		lwm2_region_end();
		t2 = now();
		ok(lwm2_region_end() == LWM2_OK, "end outer");
		outer.seconds += now() - t0;
		outer.calls++;
		inner.seconds += t2 - t1;
		inner.calls++;
	}
	{
		double t0 = now();

		recurse(3);
		rec.seconds = now() - t0;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	/* more threads than a record keeps (16): 20 short ones */
	for (int i = 0; i < 20; i++) {
		pthread_t t;

		pthread_create(&t, NULL, short_thread, NULL);
		pthread_join(t, NULL);
	}
	/* more names than the process keeps apart (256) */
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "n%03d", i);
		lwm2_region_begin(name);
		lwm2_region_end();
	}
	ok(lwm2_region_self("never", &s, &c) == LWM2_OK && s == 0 && c == 0,
	   "self of a name never entered: zeros");
	/* a fork child's counts start at zero, its names stay */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		lwm2_region_self("outer", &s, &c);
		_exit(s == 0 && c == 0 ? 0 : 1);
	}
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0,
	   "a fork child's counts start at zero");
	print_own(&outer);
	print_own(&inner);
	print_own(&rec);
	print_own(&work);
	printf("nested rec %.6f\n", rec_sum);
	printf("1..%d\n", tests);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "expect-off") == 0)
		return expect_off();
	if (argc == 2 && strcmp(argv[1], "run") == 0)
		return run();
	fprintf(stderr, "usage: regions expect-off|run\n");
	return 2;
}
