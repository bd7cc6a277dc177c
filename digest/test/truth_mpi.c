/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * MPI programs whose digest lines are known (digest/test/truth.sh):
 *   truth_mpi barrier        five barriers and nothing else
 *   truth_mpi nonblocking    32 KiB messages each way, posted with
 *                            Irecv/Isend and completed by polling MPI_Test,
 *                            so calls far outnumber messages
 *   truth_mpi poll SECONDS   rank 0 busy-polls MPI_Iprobe for a message
 *                            rank 1 sends after SECONDS
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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "barrier";
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (!strcmp(mode, "barrier")) {
		for (int i = 0; i < 5; i++)
			MPI_Barrier(MPI_COMM_WORLD);
	} else if (!strcmp(mode, "nonblocking")) {
		static char out[32768], in[32768];
		int peer = rank ^ 1;

		for (int i = 0; i < 200 && peer < size; i++) {
			MPI_Request rq[2];
			int done = 0;

			MPI_Irecv(in, sizeof in, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(out, sizeof out, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[1]);
			while (!done)
				MPI_Testall(2, rq, &done, MPI_STATUSES_IGNORE);
		}
	} else if (!strcmp(mode, "poll")) {
		double secs = argc > 2 ? atof(argv[2]) : 2;
		int x = 0, flag = 0;

		if (rank == 0) {
			while (!flag)
				MPI_Iprobe(1, 2, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
			MPI_Recv(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			double t0 = now();
			volatile double y = 0;

			while (now() - t0 < secs)
				y += 1;
			MPI_Send(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
