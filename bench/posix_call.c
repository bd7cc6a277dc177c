/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-call cost of liblwm2's POSIX I/O wrappers.
 *
 *   posix_call inproc N ROUNDS     in one process (run with LD_PRELOAD):
 *       each case N calls through the interposed symbol (the wrapper, first
 *       in search order), then N through libc's own definition (dlsym on
 *       libc's handle, which the interposer cannot shadow), alternating,
 *       ROUNDS rounds; prints the median ns/call of each and the median of
 *       the per-round differences, so drift between rounds cancels.
 *   posix_call loop N ROUNDS       the plain program: N calls per case
 *       through the ordinary symbols; median ns/call over ROUNDS.  run.sh
 *       runs it with and without LD_PRELOAD, interleaved.
 *   posix_call icount CASE N wrapped|libc
 *       N calls of one case in run_loop() only, for callgrind's
 *       --toggle-collect=run_loop: instructions per call, free of noise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

typedef ssize_t (*rw_fn)(int, void *, size_t);
typedef ssize_t (*prw_fn)(int, void *, size_t, off_t);
typedef size_t (*stdio_fn)(void *, size_t, size_t, FILE *);

enum kind { RW, PRW, STDIO };

struct bcase {
	const char *name; /* row name in the output */
	const char *sym;  /* the libc function */
	enum kind kind;
	int which;  /* 0: /dev/null, 1: /dev/zero, 2: the file */
	int rewind; /* the file position must go back after a block */
};

static const struct bcase cases[] = {
    {"write_devnull", "write", RW, 0, 0},   {"read_devzero", "read", RW, 1, 0},
    {"write_file", "write", RW, 2, 1},      {"read_file", "read", RW, 2, 1},
    {"pwrite_file", "pwrite", PRW, 2, 0},   {"pread_file", "pread", PRW, 2, 0},
    {"fwrite_file", "fwrite", STDIO, 2, 1}, {"fread_file", "fread", STDIO, 2, 1},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int fds[3];
static FILE *fp;
static void *libc;

/* The block of N calls; noinline so callgrind can count exactly it. */
__attribute__((noinline)) static void run_loop(const struct bcase *c, void *fn, long n)
{
	static char buf[8] = "x";

	switch (c->kind) {
	case RW:
		for (long i = 0; i < n; i++)
			((rw_fn)fn)(fds[c->which], buf, 1);
		if (c->rewind)
			lseek(fds[c->which], 0, SEEK_SET);
		break;
	case PRW:
		for (long i = 0; i < n; i++)
			((prw_fn)fn)(fds[c->which], buf, 1, (off_t)(i & 4095));
		break;
	case STDIO:
		for (long i = 0; i < n; i++)
			((stdio_fn)fn)(buf, 1, 1, fp);
		if (c->rewind)
			rewind(fp);
		break;
	}
}

static double block_ns(const struct bcase *c, void *fn, long n)
{
	double t0 = bench_now_ns();

	run_loop(c, fn, n);
	return (bench_now_ns() - t0) / (double)n;
}

/* The wrapper when one is preloaded; in the plain program libc's. */
static void *wrapped(const struct bcase *c)
{
	return dlsym(RTLD_DEFAULT, c->sym);
}

static void *real(const struct bcase *c)
{
	return dlsym(libc, c->sym);
}

static int setup(long n)
{
	char tmpl[] = "/tmp/lwm2-bench-posix.XXXXXX";
	static char block[65536];

	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	fds[0] = open("/dev/null", O_WRONLY);
	fds[1] = open("/dev/zero", O_RDONLY);
	fds[2] = mkstemp(tmpl);
	if (!libc || fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
		return -1;
	unlink(tmpl);
	/* Long enough for a block of one-byte reads (stdio reads ahead). */
	for (long done = 0; done < n + (long)sizeof(block); done += (long)sizeof(block))
		if (write(fds[2], block, sizeof(block)) != (ssize_t)sizeof(block))
			return -1;
	lseek(fds[2], 0, SEEK_SET);
	fp = fdopen(dup(fds[2]), "r+");
	return fp ? 0 : -1;
}

static int inproc(long n, int rounds)
{
	double *w = calloc((size_t)rounds, sizeof(double));
	double *r = calloc((size_t)rounds, sizeof(double));
	double *d = calloc((size_t)rounds, sizeof(double));

	if (!w || !r || !d)
		return 1;
	for (size_t k = 0; k < NCASES; k++) {
		const struct bcase *c = &cases[k];
		void *fw = wrapped(c), *fr = real(c);

		if (!fw || !fr)
			return 1;
		run_loop(c, fr, n / 10); /* warm the page cache and stdio buffer */
		for (int i = 0; i < rounds; i++) {
			/* Alternate the order too, so neither side always runs first. */
			if (i & 1) {
				r[i] = block_ns(c, fr, n);
				w[i] = block_ns(c, fw, n);
			} else {
				w[i] = block_ns(c, fw, n);
				r[i] = block_ns(c, fr, n);
			}
			d[i] = w[i] - r[i];
		}
		double md = bench_median(d, (size_t)rounds);
		printf("%s wrapped %.2f libc %.2f added %.2f iqr %.2f interposed %d\n", c->name,
		       bench_median(w, (size_t)rounds), bench_median(r, (size_t)rounds), md,
		       bench_iqr(d, (size_t)rounds), fw != fr);
	}
	return 0;
}

static int loop(long n, int rounds)
{
	double *v = calloc((size_t)rounds, sizeof(double));

	if (!v)
		return 1;
	for (size_t k = 0; k < NCASES; k++) {
		const struct bcase *c = &cases[k];
		void *fw = wrapped(c);

		run_loop(c, fw, n / 10);
		for (int i = 0; i < rounds; i++)
			v[i] = block_ns(c, fw, n);
		printf("%s ns %.2f\n", c->name, bench_median(v, (size_t)rounds));
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "inproc";

	if (strcmp(mode, "icount") == 0) {
		long n = argc > 3 ? atol(argv[3]) : 10000;

		if (argc < 5 || setup(n) < 0)
			return 2;
		for (size_t k = 0; k < NCASES; k++)
			if (strcmp(cases[k].name, argv[2]) == 0) {
				void *fn = strcmp(argv[4], "libc") == 0 ? real(&cases[k])
				                                        : wrapped(&cases[k]);
				run_loop(&cases[k], fn, n);
				return 0;
			}
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 200000;
	int rounds = argc > 3 ? atoi(argv[3]) : 11;

	if (n < 1 || rounds < 1 || setup(n) < 0) {
		fprintf(stderr, "posix_call: couldn't set up\n");
		return 2;
	}
	if (strcmp(mode, "loop") == 0)
		return loop(n, rounds);
	return inproc(n, rounds);
}
