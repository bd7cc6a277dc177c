/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-call cost the POSIX module adds, in one process:
 *
 *   LD_PRELOAD=preload/.libs/liblwm2.so LWM2_DIR=/tmp/x preload/posix_bench [N]
 *
 * Each case calls the function once through the interposed symbol
 * (liblwm2's wrapper: the first definition in search order) and once
 * through libc's own definition (dlsym on libc's handle), in bursts of
 * 200 calls timed with the TSC, alternating, N calls each in all; the cost
 * per call is the 10th percentile of the bursts, which leaves out the
 * bursts a preemption or an interrupt hit on a busy machine.
 * Without LD_PRELOAD both pointers are libc's and the added cost reads ~0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef size_t (*stdio_fn)(void *, size_t, size_t, FILE *);

static void *libc;
static long n = 1000000;

#define BURST 200
#define MAXB  100000

static double ns_per_tick;
static double bursts_w[MAXB], bursts_r[MAXB];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void calibrate(void)
{
	double t0 = now();
	uint64_t c0 = __rdtsc();

	while (now() - t0 < 2e7)
		;
	ns_per_tick = (now() - t0) / (double)(__rdtsc() - c0);
}

static double time_rw(rw_fn f, int fd, char *buf)
{
	uint64_t c0 = __rdtsc();

	for (int i = 0; i < BURST; i++)
		f(fd, buf, 1);
	return (double)(__rdtsc() - c0) * ns_per_tick / BURST;
}

static double time_stdio(stdio_fn f, FILE *fp, char *buf)
{
	uint64_t c0 = __rdtsc();

	for (int i = 0; i < BURST; i++)
		f(buf, 1, 1, fp);
	return (double)(__rdtsc() - c0) * ns_per_tick / BURST;
}

/* What one clock read costs here: two of them are the floor of a counted
 * call. */
static double time_clock(void)
{
	volatile uint64_t sink = 0;
	uint64_t c0 = __rdtsc();

	for (int i = 0; i < BURST; i++)
		sink += __rdtsc();
	(void)sink;
	return (double)(__rdtsc() - c0) * ns_per_tick / BURST;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double p10(double *v, long k)
{
	qsort(v, (size_t)k, sizeof *v, cmp);
	return v[k / 10];
}

static long nbursts(void)
{
	long k = n / BURST;

	return k < 10 ? 10 : k > MAXB ? MAXB : k;
}

static void report(const char *what, double wrapped, double real)
{
	printf("%-28s libc %7.2f ns  wrapped %7.2f ns  added %6.2f ns\n", what, real, wrapped,
	       wrapped - real);
}

static void bench_rw(const char *what, const char *name, int fd, int rewind_fd)
{
	rw_fn w = (rw_fn)dlsym(RTLD_DEFAULT, name), r = (rw_fn)dlsym(libc, name);
	long k = nbursts();
	char buf[8] = "x";

	for (long i = 0; i < k; i++) {
		bursts_w[i] = time_rw(w, fd, buf);
		bursts_r[i] = time_rw(r, fd, buf);
		if (rewind_fd && i % 1000 == 999)
			lseek(fd, 0, SEEK_SET);
	}
	report(what, p10(bursts_w, k), p10(bursts_r, k));
}

static void bench_stdio(const char *what, const char *name, FILE *fp, int rewind_fp)
{
	stdio_fn w = (stdio_fn)dlsym(RTLD_DEFAULT, name), r = (stdio_fn)dlsym(libc, name);
	long k = nbursts();
	char buf[8] = "x";

	for (long i = 0; i < k; i++) {
		bursts_w[i] = time_stdio(w, fp, buf);
		bursts_r[i] = time_stdio(r, fp, buf);
		if (rewind_fp && i % 1000 == 999)
			rewind(fp);
	}
	report(what, p10(bursts_w, k), p10(bursts_r, k));
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/lwm2-posix-bench.XXXXXX";
	int null, zero, file;
	FILE *fp;

	if (argc > 1)
		n = atol(argv[1]);
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	file = mkstemp(tmpl);
	null = open("/dev/null", O_WRONLY);
	zero = open("/dev/zero", O_RDONLY);
	if (!libc || file < 0 || null < 0 || zero < 0)
		return 1;
	unlink(tmpl);
	{
		/* A file long enough for n one-byte reads. */
		static char block[65536];

		for (long done = 0; done < 1000 * BURST * 2; done += (long)sizeof block)
			if (write(file, block, sizeof block) != (ssize_t)sizeof block)
				return 1;
		lseek(file, 0, SEEK_SET);
	}
	calibrate();
	printf("%ld bursts of %d calls each way, 10th percentile per call\n", nbursts(), BURST);
	{
		long k = nbursts();

		for (long i = 0; i < k; i++)
			bursts_w[i] = time_clock();
		printf("%-28s %7.2f ns\n", "one rdtsc", p10(bursts_w, k));
	}
	bench_rw("write 1 B to /dev/null", "write", null, 0);
	bench_rw("read 1 B from /dev/zero", "read", zero, 0);
	bench_rw("write 1 B to a file", "write", file, 1);
	bench_rw("read 1 B from a file", "read", file, 1);
	fp = fdopen(file, "r+");
	bench_stdio("fwrite 1 B to a file", "fwrite", fp, 1);
	bench_stdio("fread 1 B from a file", "fread", fp, 1);
	fclose(fp);
	fp = fopen("/dev/null", "w");
	bench_stdio("fwrite 1 B to /dev/null", "fwrite", fp, 0);
	fclose(fp);
	return 0;
}
