/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start-plus-exit cost and resident memory of a process with and without
 * liblwm2.so:
 *
 *   spawn N ROUNDS LIB PROG [ARG...]
 *
 * Each round starts PROG N times with LD_PRELOAD=LIB and N times without
 * (posix_spawn + wait4, one at a time; the order alternates by round), and
 * takes the mean wall time per process of each block.  Prints the medians
 * over rounds, the median of the per-round differences and its spread, the
 * median peak RSS (ru_maxrss from wait4) of each kind of child and its
 * page faults (ru_minflt + ru_majflt, a large part of what a start costs
 * on a virtual machine).
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "bench_util.h"

extern char **environ;

static char **env_with(const char *lib)
{
	size_t n = 0, k = 0;
	char **e;

	while (environ[n])
		n++;
	if (!(e = calloc(n + 2, sizeof(*e))))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			e[k++] = environ[i];
	if (lib) {
		size_t len = strlen(lib) + 12;

		if (!(e[k] = malloc(len)))
			return NULL;
		snprintf(e[k++], len, "LD_PRELOAD=%s", lib);
	}
	e[k] = NULL;
	return e;
}

/* Mean ns per process over n runs; *rss gets the largest ru_maxrss (KiB),
 * *flt the mean page faults (ru_minflt + ru_majflt) per process. */
static double block(char **argv, char **envp, long n, double *rss, double *flt)
{
	double t0 = bench_now_ns();
	long maxrss = 0, faults = 0;

	for (long i = 0; i < n; i++) {
		struct rusage ru;
		int status;
		pid_t pid;

		if (posix_spawn(&pid, argv[0], NULL, NULL, argv, envp) != 0 ||
		    wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "spawn: %s failed\n", argv[0]);
			exit(2);
		}
		if (ru.ru_maxrss > maxrss)
			maxrss = ru.ru_maxrss;
		faults += ru.ru_minflt + ru.ru_majflt;
	}
	*rss = (double)maxrss;
	*flt = (double)faults / (double)n;
	return (bench_now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: spawn N ROUNDS LIB PROG [ARG...]\n");
		return 2;
	}
	long n = atol(argv[1]);
	int rounds = atoi(argv[2]);
	char **with = env_with(argv[3]), **without = env_with(NULL);
	double *w = calloc((size_t)rounds, sizeof(double)),
	       *b = calloc((size_t)rounds, sizeof(double));
	double *d = calloc((size_t)rounds, sizeof(double));
	double *rw = calloc((size_t)rounds, sizeof(double)),
	       *rb = calloc((size_t)rounds, sizeof(double));
	double *fw = calloc((size_t)rounds, sizeof(double)),
	       *fb = calloc((size_t)rounds, sizeof(double));

	if (n < 1 || rounds < 1 || !with || !without || !w || !b || !d || !rw || !rb || !fw || !fb)
		return 2;
	block(argv + 4, with, 1, &rw[0], &fw[0]); /* warm the page cache for both */
	block(argv + 4, without, 1, &rb[0], &fb[0]);
	for (int i = 0; i < rounds; i++) {
		if (i & 1) {
			b[i] = block(argv + 4, without, n, &rb[i], &fb[i]);
			w[i] = block(argv + 4, with, n, &rw[i], &fw[i]);
		} else {
			w[i] = block(argv + 4, with, n, &rw[i], &fw[i]);
			b[i] = block(argv + 4, without, n, &rb[i], &fb[i]);
		}
		d[i] = w[i] - b[i];
	}
	double md = bench_median(d, (size_t)rounds);
	printf("lwm2_us %.1f base_us %.1f added_us %.1f iqr_us %.1f lwm2_rss_kib %.0f "
	       "base_rss_kib %.0f lwm2_faults %.1f base_faults %.1f\n",
	       bench_median(w, (size_t)rounds) / 1e3, bench_median(b, (size_t)rounds) / 1e3,
	       md / 1e3, bench_iqr(d, (size_t)rounds) / 1e3, bench_median(rw, (size_t)rounds),
	       bench_median(rb, (size_t)rounds), bench_median(fw, (size_t)rounds),
	       bench_median(fb, (size_t)rounds));
	return 0;
}
