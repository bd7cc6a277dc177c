/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The demo job: a small MPI program with a known shape, so its digest has
 * something to say.  Every rank computes, exchanges many small messages
 * around a ring, reduces, and writes a file; rank 0 computes twice as long
 * as the others, which then wait for it in a barrier (an imbalance the
 * digest's guidance points out).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double compute(long iterations)
{
	double x = 0.0;

	for (long i = 1; i <= iterations; i++)
		x += 1.0 / ((double)i * (double)i);
	return x;
}

int main(int argc, char **argv)
{
	int rank, size, right, left, token = 0;
	long base = argc > 1 ? atol(argv[1]) : 100000000L;
	char path[256], block[4096];
	double local, total;
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;

	local = compute(rank == 0 ? 2 * base : base);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Many small messages: latency-bound communication. */
	for (int i = 0; i < 300; i++)
		MPI_Sendrecv_replace(&token, 1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD,
		                     MPI_STATUS_IGNORE);
	MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

	/* 4 MiB per rank to a file in the working directory. */
	snprintf(path, sizeof(path), "lwm2-demo.%d.out", rank);
	memset(block, 'x', sizeof(block));
	f = fopen(path, "w");
	if (f) {
		for (int i = 0; i < 1024; i++)
			fwrite(block, 1, sizeof(block), f);
		fclose(f);
		unlink(path);
	}

	if (rank == 0)
		printf("lwm2-demo: %d ranks, sum %.6f\n", size, total);
	MPI_Finalize();
	return 0;
}
