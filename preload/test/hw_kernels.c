/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Programs of known character for checking the counter module against
 * perf stat on a real PMU: each kernel stresses one of the digest's
 * counter metrics, so a wrong event choice or a lost thread shows as a
 * figure far from the reference.
 *
 *   kernels MODE  [THREADS [SCALE]]
 *
 *   compute  independent integer multiply-adds in registers: low CPI,
 *            almost no memory traffic
 *   chase    a pointer chase through 256 MiB, page by page in a random
 *            order: high CPI, about one last-level miss per step
 *   fp       a vectorisable multiply-add over L1-resident arrays: a high
 *            floating-point share of the instructions
 *   stream   a copy between two 128 MiB arrays: bandwidth bound, many
 *            last-level misses per instruction
 *
 * THREADS runs the kernel in that many threads at once (the counters of
 * every thread must be summed); SCALE multiplies the work (1 is about a
 * second per thread on a 3 GHz core; the suite's no-PMU form uses less).
 * Prints "MODE done CHECKSUM": the same with and without lwm2.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct job {
	const char *mode;
	double scale;
	uint64_t result;
};

static uint64_t kernel_compute(double scale)
{
	uint64_t a = 1, b = 2, c = 3, d = 4;
	uint64_t n = (uint64_t)(4e8 * scale);

	for (uint64_t i = 0; i < n; i++) {
		a = a * 6364136223846793005ull + 1;
		b = b * 6364136223846793005ull + 3;
		c = c * 6364136223846793005ull + 5;
		d = d * 6364136223846793005ull + 7;
	}
	return a ^ b ^ c ^ d;
}

static uint64_t kernel_chase(double scale)
{
	/* One element per cache line; the cycle visits the pages in a random
	 * order, one line of each page per round, so neither the prefetchers
	 * nor the TLB can follow it and the setup stays linear. */
	enum { LINE = 64 / sizeof(size_t), LINES_PER_PAGE = 4096 / 64 };
	size_t npages = (256u << 20) / 4096;
	size_t *next = malloc(npages * 4096), *order = malloc(npages * sizeof(size_t));
	uint64_t steps = (uint64_t)(5e6 * scale), x = 88172645463325252ull;
	size_t p = 0;

	if (!next || !order) {
		free(next);
		free(order);
		return 0;
	}
	for (size_t i = 0; i < npages; i++)
		order[i] = i;
	for (size_t i = npages - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t j = (size_t)(x % (i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (size_t slot = 0; slot < LINES_PER_PAGE; slot++)
		for (size_t i = 0; i < npages; i++) {
			size_t cur = (order[i] * LINES_PER_PAGE + slot) * LINE;
			size_t nxt =
			    i + 1 < npages
			        ? (order[i + 1] * LINES_PER_PAGE + slot) * LINE
			        : (order[0] * LINES_PER_PAGE + (slot + 1) % LINES_PER_PAGE) * LINE;

			next[cur] = nxt;
		}
	p = order[0] * LINES_PER_PAGE * LINE;
	for (uint64_t s = 0; s < steps; s++)
		p = next[p];
	free(next);
	free(order);
	return p;
}

static uint64_t kernel_fp(double scale)
{
	enum { N = 2048 };
	static _Thread_local double a[N], b[N], c[N];
	uint64_t reps = (uint64_t)(1e6 * scale);
	double sum = 0;

	for (int i = 0; i < N; i++) {
		a[i] = 1.0 + i * 1e-6;
		b[i] = 0.999999;
		c[i] = 1e-7;
	}
	for (uint64_t r = 0; r < reps; r++)
		for (int i = 0; i < N; i++)
			a[i] = a[i] * b[i] + c[i];
	for (int i = 0; i < N; i++)
		sum += a[i];
	return (uint64_t)(sum * 1e3);
}

static uint64_t kernel_stream(double scale)
{
	size_t n = (128u << 20) / sizeof(double);
	double *src = malloc(n * sizeof(double)), *dst = malloc(n * sizeof(double));
	uint64_t reps = (uint64_t)(20 * scale) + 1, sum = 0;

	if (!src || !dst) {
		free(src);
		free(dst);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		src[i] = (double)i;
	for (uint64_t r = 0; r < reps; r++) {
		memcpy(dst, src, n * sizeof(double));
		src[r % n] += 1;
	}
	for (size_t i = 0; i < n; i += 4096)
		sum += (uint64_t)dst[i];
	free(src);
	free(dst);
	return sum;
}

static void *run(void *arg)
{
	struct job *j = arg;

	if (strcmp(j->mode, "compute") == 0)
		j->result = kernel_compute(j->scale);
	else if (strcmp(j->mode, "chase") == 0)
		j->result = kernel_chase(j->scale);
	else if (strcmp(j->mode, "fp") == 0)
		j->result = kernel_fp(j->scale);
	else
		j->result = kernel_stream(j->scale);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = {"compute", "chase", "fp", "stream"};
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	double scale = argc > 3 ? atof(argv[3]) : 1.0;
	int known = 0;

	for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++)
		known |= strcmp(argv[1], modes[i]) == 0;
	if (!known || threads < 1 || threads > 256 || !(scale > 0 && scale <= 100)) {
		fprintf(stderr, "usage: hw_kernels compute|chase|fp|stream [THREADS [SCALE]]\n");
		return 2;
	}

	struct job jobs[256];
	pthread_t tid[256];
	uint64_t sum = 0;

	for (int t = 0; t < threads; t++) {
		jobs[t] = (struct job){.mode = argv[1], .scale = scale};
		if (t > 0 && pthread_create(&tid[t], NULL, run, &jobs[t]) != 0) {
			fprintf(stderr, "kernels: cannot start thread %d\n", t);
			return 1;
		}
	}
	run(&jobs[0]);
	for (int t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
	for (int t = 0; t < threads; t++)
		sum += jobs[t].result;
	printf("%s done %" PRIu64 "\n", argv[1], sum);
	return 0;
}
