/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixed amount of compute on 2 threads (no system calls in the loop), for
 * the cost of sampling: compute ITERATIONS prints the wall seconds of the
 * work (thread start to join) and the process's CPU seconds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "bench_util.h"

static long iterations = 200000000;
static volatile double sink;

static void *work(void *arg)
{
	double x = 1.0 + (double)(long)arg * 1e-9;

	for (long i = 0; i < iterations; i++)
		x = x * 1.0000000001 + 1e-12;
	sink = x;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	struct rusage ru;

	if (argc > 1)
		iterations = atol(argv[1]);
	double t0 = bench_now_ns();

	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	double wall = (bench_now_ns() - t0) / 1e9;

	getrusage(RUSAGE_SELF, &ru);
	printf("wall_s %.4f cpu_s %.4f\n", wall,
	       (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
	return 0;
}
