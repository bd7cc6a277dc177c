/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-call cost of liblwm2's MPI wrappers, 2 ranks:
 *
 *   mpi_call N ROUNDS
 *
 * Per round: a block of N 0-byte ping-pongs (MPI_Send + MPI_Recv on each
 * rank: 2 calls per rank per iteration) and a block of N 8-byte
 * MPI_Allreduce calls, each through MPI_ (the wrapper when liblwm2 is
 * preloaded) and through the MPI library's own PMPI_ functions, alternating.
 * liblwm2 wraps PMPI_ too (for tools and applications that call it), so
 * the library's functions are taken from its own handle: the loaded object
 * named libmpi*.so* (dl_iterate_phdr, dlopen RTLD_NOLOAD, dlsym).  Rank 0 prints the median ns per
 * call of each and the median of the per-round differences.
 *
 *   mpi_call icount N
 *
 * N allreduces and N ping-pongs through MPI_ only, inside loop_icount(),
 * for callgrind --toggle-collect=loop_icount: the wrapper's own
 * instructions are its inclusive count less that of the library function
 * it calls (run.sh reads both from callgrind_annotate).  Run without LD_PRELOAD too: then
 * both sides are the library's and the difference reads ~0; run.sh also
 * compares the MPI_ columns of both runs.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static int rank;

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
static send_fn lib_send;
static recv_fn lib_recv;
static allreduce_fn lib_allreduce;

static int find_libmpi(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (strstr(info->dlpi_name, "/libmpi.so") || strstr(info->dlpi_name, "/libmpich.so")) {
		*(void **)arg = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
		return 1;
	}
	return 0;
}

static int resolve(void)
{
	void *h = NULL;

	dl_iterate_phdr(find_libmpi, &h);
	if (!h)
		return -1;
	lib_send = (send_fn)dlsym(h, "PMPI_Send");
	lib_recv = (recv_fn)dlsym(h, "PMPI_Recv");
	lib_allreduce = (allreduce_fn)dlsym(h, "PMPI_Allreduce");
	return lib_send && lib_recv && lib_allreduce ? 0 : -1;
}

static double pingpong(long n, int pmpi)
{
	char b = 0;
	double t0;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			if (pmpi) {
				lib_send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				lib_recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		} else {
			if (pmpi) {
				lib_recv(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				lib_send(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			} else {
				MPI_Recv(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				MPI_Send(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
			}
		}
	}
	/* per MPI call: two per iteration */
	return (bench_now_ns() - t0) / (double)n / 2;
}

static double allreduce(long n, int pmpi)
{
	double in = 1, out;
	double t0;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (pmpi)
			lib_allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		else
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	return (bench_now_ns() - t0) / (double)n;
}

static void measure(const char *name, double (*fn)(long, int), long n, int rounds)
{
	double *w = calloc((size_t)rounds, sizeof(double)),
	       *p = calloc((size_t)rounds, sizeof(double));
	double *d = calloc((size_t)rounds, sizeof(double));

	fn(n / 10, 0);
	fn(n / 10, 1);
	for (int i = 0; i < rounds; i++) {
		if (i & 1) {
			p[i] = fn(n, 1);
			w[i] = fn(n, 0);
		} else {
			w[i] = fn(n, 0);
			p[i] = fn(n, 1);
		}
		d[i] = w[i] - p[i];
	}
	if (rank == 0) {
		double md = bench_median(d, (size_t)rounds);

		printf("%s mpi %.1f lib %.1f added %.1f iqr %.1f\n", name,
		       bench_median(w, (size_t)rounds), bench_median(p, (size_t)rounds), md,
		       bench_iqr(d, (size_t)rounds));
	}
	free(w);
	free(p);
	free(d);
}

__attribute__((noinline)) static void loop_icount(long n)
{
	pingpong(n, 0);
	allreduce(n, 0);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (resolve() < 0) {
		fprintf(stderr, "mpi_call: couldn't find the MPI library's PMPI_ functions\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (argc > 2 && strcmp(argv[1], "icount") == 0) {
		/* first calls resolve symbols: keep them out of the count */
		pingpong(10, 0);
		allreduce(10, 0);
		loop_icount(atol(argv[2]));
		MPI_Finalize();
		return 0;
	}
	measure("pingpong0", pingpong, n, rounds);
	measure("allreduce8", allreduce, n, rounds);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
