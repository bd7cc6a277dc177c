/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program for the counter module's tests.  Modes:
 *   busy     the main thread spins 900 ms; after 300 ms two threads spin
 *            400 ms each (started after the module set up its counters)
 *   short    ends at once; prints whether libpapi was loaded into it
 *   sleep    sleeps 400 ms; prints whether libpapi was loaded into it
 *   papi     after 300 ms uses PAPI itself (a software event) and prints
 *            what it measured: it must work as without lwm2
 * Built twice: with libpapi, and with -DLWM2_TEST_NO_PAPI (no papi mode)
 * to see whether lwm2 itself loaded libpapi.
 */
#define _GNU_SOURCE
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "busy";

	if (strcmp(mode, "busy") == 0) {
		pthread_t th[2];

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
	if (strcmp(mode, "papi") == 0) {
		int es = PAPI_NULL, rc;
		long long v = 0;

		spin(0.3);
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
		printf("app measured: %s\n", v > 150000000LL && v < 400000000LL ? "plausible" : "wrong");
		return 0;
	}
#endif
	fprintf(stderr, "papi_busy: unknown mode %s\n", mode);
	return 2;
}
