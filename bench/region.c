/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cost of a named region's begin/end pair (lwm2_region_begin and
 * lwm2_region_end of lwm2.h, lwm2_view(3)), run with and without
 * liblwm2.so preloaded (without it the header's calls return at once:
 * that is the baseline):
 *
 *   region time N ROUNDS   per round a block of N pairs of one name, then
 *                          a block of N pairs whose name is snprintf'd
 *                          into a buffer at another address each call;
 *                          prints "region CASE ns X measured 0|1", the
 *                          median over the rounds of ns per pair
 *   region icount CASE N   N pairs of CASE (fixed or moving) inside
 *                          run_pairs, for callgrind's --toggle-collect
 *
 * "measured" says liblwm2.so took the calls (lwm2_region_self counted
 * them), so a run that was meant to be measured and was not shows.
 */
#include <lwm2.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

/* The moving name's buffers: more of them than the library keeps
 * addresses per thread, so that every begin finds its name by hash. */
#define BUFS     64
#define BUF_SIZE 64
static char bufs[BUFS][BUF_SIZE];

enum pair_case { FIXED, MOVING };

/* noinline: callgrind's --toggle-collect=run_pairs counts this alone. */
__attribute__((noinline)) static void run_pairs(enum pair_case c, int n)
{
	if (c == FIXED) {
		for (int i = 0; i < n; i++) {
			lwm2_region_begin("solver");
			lwm2_region_end();
		}
		return;
	}
	for (int i = 0; i < n; i++) {
		char *name = bufs[i % BUFS];

		/* four names, each at many addresses */
		snprintf(name, BUF_SIZE, "level %d", i % 4);
		lwm2_region_begin(name);
		lwm2_region_end();
	}
}

/* The library counted the calls made so far: 1, else 0. */
static int counted(const char *name, double want)
{
	double seconds, calls;

	return lwm2_region_self(name, &seconds, &calls) == LWM2_OK && calls >= want;
}

static int usage(void)
{
	fprintf(stderr, "usage: region time N ROUNDS | region icount fixed|moving N\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *names[] = {"fixed", "moving"};
	int n, rounds;
	double *ns[2], t;

	if (argc != 4)
		return usage();
	n = atoi(argv[2]);
	if (n < 1)
		return usage();
	/* the header's first call looks the library up: not part of a pair */
	run_pairs(FIXED, 1);
	run_pairs(MOVING, 4);
	if (strcmp(argv[1], "icount") == 0) {
		enum pair_case c = strcmp(argv[3], "moving") == 0 ? MOVING : FIXED;

		run_pairs(c, n);
		printf("region %s pairs %d measured %d\n", names[c], n,
		       counted(c == FIXED ? "solver" : "level 0", c == FIXED ? n : n / 4));
		return 0;
	}
	if (strcmp(argv[1], "time") != 0 || (rounds = atoi(argv[3])) < 1)
		return usage();
	ns[FIXED] = calloc((size_t)rounds, sizeof(double));
	ns[MOVING] = calloc((size_t)rounds, sizeof(double));
	if (!ns[FIXED] || !ns[MOVING]) {
		free(ns[FIXED]);
		free(ns[MOVING]);
		return 1;
	}
	for (int k = 0; k < rounds; k++) {
		for (int c = FIXED; c <= MOVING; c++) {
			t = bench_now_ns();
			run_pairs((enum pair_case)c, n);
			ns[c][k] = (bench_now_ns() - t) / n;
		}
	}
	for (int c = FIXED; c <= MOVING; c++)
		printf("region %s ns %.2f measured %d\n", names[c],
		       bench_median(ns[c], (size_t)rounds),
		       counted(c == FIXED ? "solver" : "level 0",
		               c == FIXED ? (double)n * rounds : (double)n * rounds / 4));
	free(ns[FIXED]);
	free(ns[MOVING]);
	return 0;
}
