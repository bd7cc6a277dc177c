/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program for the counter module's tests.  Modes:
 *   busy     waits until lwm2 counts it, then the main thread spins 900
 *            ms; after 300 ms two threads spin 400 ms each
 *   short    ends at once; prints whether libpapi was loaded into it
 *   sleep    sleeps 400 ms; prints whether libpapi was loaded into it
 *   wait     reads stdin to its end, then prints whether libpapi was loaded
 *   spin1    spins 1 s of CPU time (longer only until lwm2 counts it)
 *   fork     forks 200 children (each starts a thread and exits) while two
 *            threads start and end threads of their own
 *   rawexit  waits until lwm2 counts it, then a thread that lwm2 never
 *            attached (started by libc's own pthread_create) calls exit()
 *   papi     uses PAPI itself at once (a software event) and prints what it
 *            measured: it must work as without lwm2
 *   papi-late  the same once lwm2 counts it
 *   probe    what this host offers, one line each: "kernel task-clock: ok"
 *            or the error of perf_event_open, and "papi task-clock: ok" or
 *            why PAPI cannot count it ("perf_event component disabled:
 *            ..."); "papi pmus: A,B" the PMUs of PAPI's perf_event
 *            component (the test disables them to play a host without)
 * "lwm2 counts it": a perf_event descriptor is open in the process.  The
 * waits are for conditions, never for a time, so the modes mean the same
 * on a loaded machine; they give up after LWM2_TEST_WAIT_S seconds (20 by
 * default) and say so ("not counted"), so that a module which never counts
 * fails the test in seconds instead of hanging it.  Built twice: with libpapi, and with
 * -DLWM2_TEST_NO_PAPI (no papi modes) to see whether lwm2 itself loaded
 * libpapi.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef LWM2_TEST_NO_PAPI
#include <papi.h>
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile double sink;

static void spin(double seconds)
{
	double end = cpu_now() + seconds;
	double x = 0;

	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
	sink = x;
}

static void *worker(void *arg)
{
	(void)arg;
	spin(0.4);
	return NULL;
}

static void nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static int papi_loaded(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "libpapi"))
			found = 1;
	fclose(f);
	return found;
}

static bool counted(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char path[64], link[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			found = strstr(link, "perf_event") != NULL;
		}
	}
	closedir(d);
	return found;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* When a wait for lwm2 gives up: a bound only, so that a module that
 * never counts fails the test in seconds instead of hanging it. */
static double give_up_at(void)
{
	const char *s = getenv("LWM2_TEST_WAIT_S");
	double limit = s ? atof(s) : 20;

	return wall_now() + (limit > 0 ? limit : 20);
}

/* Counting has begun once perf_event descriptors stay open: while lwm2
 * sets up, PAPI and the probe open some for a moment and close them again,
 * so one sighting is not enough.  50 sightings in a row, 1 ms apart.
 * False (and "not counted" on stderr) when that never happens. */
static bool wait_counted(void)
{
	double end = give_up_at();
	int seen = 0;

	while (seen < 50 && wall_now() < end) {
		seen = counted() ? seen + 1 : 0;
		nap(1);
	}
	if (seen < 50)
		fprintf(stderr, "papi_busy: not counted\n");
	return seen >= 50;
}

static void *nothing(void *arg)
{
	return arg;
}

/* Threads that start and end (each takes the module's lock twice). */
static volatile int churn_stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!churn_stop) {
		pthread_t t;

		if (pthread_create(&t, NULL, nothing, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

static int forks(void)
{
	pthread_t th[2];
	int ok = 0;

	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, churn, NULL);
	for (int i = 0; i < 200; i++) {
		pid_t p = fork();
		int st;

		if (p == 0) {
			pthread_t t;

			if (pthread_create(&t, NULL, nothing, NULL) == 0)
				pthread_join(t, NULL);
			exit(0);
		}
		if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	churn_stop = 1;
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("forks: %d ok\n", ok);
	return ok == 200 ? 0 : 1;
}

static void *exit_now(void *arg)
{
	(void)arg;
	exit(0);
}

/* A thread lwm2 knows nothing of ends the process. */
static int raw_exit(void)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	pthread_t t;

	*(void **)&create = libc ? dlsym(libc, "pthread_create") : NULL;
	if (!create) {
		fprintf(stderr, "papi_busy: no libc pthread_create\n");
		return 2;
	}
	if (!wait_counted())
		return 4;
	if (create(&t, NULL, exit_now, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	return 3; /* not reached: the thread ends the process */
}

/*
 * What the host offers, checked the way lwm2 checks it: the kernel's
 * task clock through perf_event_open for this thread, and PAPI's view of
 * perf::TASK-CLOCK (the component's state first, then an event set).
 */
static int probe(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		printf("kernel task-clock: ok\n");
	} else {
		printf("kernel task-clock: perf_event_open: %s\n", strerror(errno));
	}
#ifndef LWM2_TEST_NO_PAPI
	{
		const PAPI_component_info_t *ci = NULL;
		int es = PAPI_NULL, cidx, rc;
		long long v;

		rc = PAPI_library_init(PAPI_VER_CURRENT);
		if (rc != PAPI_VER_CURRENT) {
			printf("papi task-clock: PAPI_library_init: %s\n", PAPI_strerror(rc));
			return 0;
		}
		cidx = PAPI_get_component_index("perf_event");
		if (cidx >= 0)
			ci = PAPI_get_component_info(cidx);
		if (ci) {
			printf("papi pmus: ");
			for (int i = 0, k = 0; i < PAPI_PMU_MAX && ci->pmu_names[i]; i++)
				if (strcmp(ci->pmu_names[i], "perf") != 0 &&
				    strcmp(ci->pmu_names[i], "perf_raw") != 0)
					printf("%s%s", k++ ? "," : "", ci->pmu_names[i]);
			printf("\n");
		}
		if (!ci)
			printf("papi task-clock: no perf_event component\n");
		else if (ci->disabled)
			printf("papi task-clock: perf_event component disabled: %s\n",
			       ci->disabled_reason);
		else if ((rc = PAPI_create_eventset(&es)) != PAPI_OK ||
		         (rc = PAPI_add_named_event(es, "perf::TASK-CLOCK")) != PAPI_OK ||
		         (rc = PAPI_start(es)) != PAPI_OK || (rc = PAPI_stop(es, &v)) != PAPI_OK)
			printf("papi task-clock: %s\n", PAPI_strerror(rc));
		else
			printf("papi task-clock: ok\n");
	}
#endif
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "busy";

	if (strcmp(mode, "spin1") == 0) {
		double end;

		spin(1.0);
		end = give_up_at();
		while (!counted() && wall_now() < end)
			spin(0.01);
		return 0;
	}
	if (strcmp(mode, "probe") == 0)
		return probe();
	if (strcmp(mode, "fork") == 0)
		return forks();
	if (strcmp(mode, "rawexit") == 0)
		return raw_exit();
	if (strcmp(mode, "wait") == 0) {
		char buf[64];

		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			;
		printf("libpapi loaded: %d\n", papi_loaded());
		return 0;
	}
	if (strcmp(mode, "busy") == 0) {
		pthread_t th[2];

		if (!wait_counted())
			return 4;

		spin(0.3);
		for (int i = 0; i < 2; i++)
			pthread_create(&th[i], NULL, worker, NULL);
		spin(0.6);
		for (int i = 0; i < 2; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	if (strcmp(mode, "short") == 0 || strcmp(mode, "sleep") == 0) {
		if (mode[1] == 'l')
			nap(400);
		printf("libpapi loaded: %d\n", papi_loaded());
		return 0;
	}
#ifndef LWM2_TEST_NO_PAPI
	if (strcmp(mode, "papi") == 0 || strcmp(mode, "papi-late") == 0) {
		int es = PAPI_NULL, rc;
		long long v = 0;

		if (mode[4] && !wait_counted())
			return 4;
		rc = PAPI_library_init(PAPI_VER_CURRENT);
		if (rc != PAPI_VER_CURRENT) {
			printf("PAPI_library_init: %d\n", rc);
			return 1;
		}
		if (PAPI_create_eventset(&es) != PAPI_OK ||
		    PAPI_add_named_event(es, "perf::TASK-CLOCK") != PAPI_OK ||
		    PAPI_start(es) != PAPI_OK) {
			printf("PAPI event set failed\n");
			return 1;
		}
		spin(0.2);
		if (PAPI_stop(es, &v) != PAPI_OK) {
			printf("PAPI_stop failed\n");
			return 1;
		}
		/* task-clock counts ns of this thread: about 0.2 s. */
		printf("app measured: %s\n",
		       v > 150000000LL && v < 400000000LL ? "plausible" : "wrong");
		return 0;
	}
#endif
	fprintf(stderr, "papi_busy: unknown mode %s\n", mode);
	return 2;
}
