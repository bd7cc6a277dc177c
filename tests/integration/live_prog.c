/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MPI programs for t-live.sh:
 *   live_prog deadlock      every rank waits in MPI_Recv for a message that
 *                           never comes (until killed)
 *   live_prog busy SECONDS  computes and reduces every few milliseconds
 *   live_prog work N        N rounds of fixed work; rank 0 prints the
 *                           seconds it took ("elapsed=S")
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* About a millisecond of arithmetic the compiler cannot drop. */
static double chunk(double x)
{
	for (int i = 0; i < 200000; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

int main(int argc, char **argv)
{
	int rank, size;
	double x = 1, t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1 && !strcmp(argv[1], "deadlock")) {
		int v;
		/* from the next rank, which waits for its own next */
		MPI_Recv(&v, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else if (argc > 2 && !strcmp(argv[1], "busy")) {
		double end = now() + atof(argv[2]);
		int go = 1;
		while (go) {
			double y;
			x = chunk(x);
			go = now() < end;
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(MPI_IN_PLACE, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
		}
	} else if (argc > 2 && !strcmp(argv[1], "work")) {
		long n = atol(argv[2]);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now();
		for (long i = 0; i < n; i++) {
			double y;
			x = chunk(x);
			if (i % 10 == 0)
				MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("elapsed=%.3f\n", now() - t0);
	}
	MPI_Finalize();
	return x == 0;
}
