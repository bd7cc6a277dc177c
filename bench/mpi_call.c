/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-call cost of liblwm2's MPI wrappers, 2 ranks:
 *
 *   mpi_call N ROUNDS
 *
 * Per round: a block of N 0-byte ping-pongs (MPI_Send + MPI_Recv on each
 * rank: 2 calls per rank per iteration) and a block of N 8-byte
 * MPI_Allreduce calls, each through MPI_ (the wrapper when liblwm2 is
 * preloaded) and through PMPI_ (the MPI library itself, never wrapped),
 * alternating.  Rank 0 prints the median ns per call of each and the
 * median of the per-round differences.  Run without LD_PRELOAD too: then
 * both sides are the library's and the difference reads ~0; run.sh also
 * compares the MPI_ columns of both runs.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

static int rank;

static double pingpong(long n, int pmpi)
{
	char b = 0;
	double t0;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			if (pmpi) {
				PMPI_Send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				PMPI_Recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			} else {
				MPI_Send(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
				MPI_Recv(&b, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		} else {
			if (pmpi) {
				PMPI_Recv(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				PMPI_Send(&b, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
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
			PMPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		else
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	return (bench_now_ns() - t0) / (double)n;
}

static void measure(const char *name, double (*fn)(long, int), long n, int rounds)
{
	double *w = calloc((size_t)rounds, sizeof(double)), *p = calloc((size_t)rounds, sizeof(double));
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

		printf("%s mpi %.1f pmpi %.1f added %.1f iqr %.1f\n", name,
		       bench_median(w, (size_t)rounds), bench_median(p, (size_t)rounds), md,
		       bench_iqr(d, (size_t)rounds));
	}
	free(w);
	free(p);
	free(d);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 100000;
	int rounds = argc > 2 ? atoi(argv[2]) : 9;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	measure("pingpong0", pingpong, n, rounds);
	measure("allreduce8", allreduce, n, rounds);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
