/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MPI_Init plus MPI_Finalize, timed inside the process (the launcher's own
 * start-up, which dwarfs both, stays outside): rank 0 prints the slowest
 * rank's time in microseconds.
 */
#include <mpi.h>
#include <stdio.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	double t0 = bench_now_ns(), t1, t2, mine;
	int rank;

	MPI_Init(&argc, &argv);
	t1 = bench_now_ns();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	/* The finalize is timed up to here, so the barrier below is not. */
	PMPI_Barrier(MPI_COMM_WORLD);
	t2 = bench_now_ns();
	MPI_Finalize();
	mine = (t1 - t0) + (bench_now_ns() - t2);
	/* after MPI_Finalize no reduction is possible: each rank prints */
	printf("rank %d init_finalize_us %.1f\n", rank, mine / 1e3);
	return 0;
}
