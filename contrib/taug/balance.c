/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * TAUg's load-balancing example on lwm2's view API (lwm2_view(3)).
 *
 * The ranks share a fixed number of work units per time step; the first
 * half of the ranks is SLOW times slower per unit (a slower node, a harder
 * part of the domain).  Each step every rank computes its share, the step
 * ends in an MPI_Allreduce, and the program asks lwm2 for every rank's
 * compute time of the last step (LWM2_SCOPE_SINCE_LAST, gathered to all).
 * With rebalancing on, each rank's next share is proportional to its
 * measured speed (units per second of compute).  Without lwm2 the query
 * says "not measured" and the shares stay as they are.
 *
 *   mpicc -O2 -I$(includedir) -o balance balance.c -lm
 *   srun --lwm2 -n2 ./balance [-n] [-s SLOW] [-t STEPS] [-u UNITS] [-w ITERS]
 *     -n  no rebalancing
 *
 * At the end each rank prints its whole-run view as one line,
 *   view rank R pid P compute C mpi M mpi_calls K view_time V queries Q
 * and rank 0 prints "elapsed S rebalance 0|1 measured 0|1 shares A:B job=ID".
 */
#include <mpi.h>
#include <lwm2.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile double sink;

/* One work unit: cost times a fixed number of dependent floating-point
 * operations. */
static void work(long units, int cost, long iters)
{
	double x = 1.0;

	for (long u = 0; u < units * cost; u++)
		for (long i = 0; i < iters; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
}

int main(int argc, char **argv)
{
	int rebalance = 1, slow = 3, steps = 40, me, size, opt, measured, queries = 0;
	long units = 400, iters = 20000, *share;
	const int metrics[] = {LWM2_COMPUTE_TIME};
	const int final_metrics[] = {LWM2_COMPUTE_TIME, LWM2_MPI_TIME, LWM2_MPI_CALLS,
	                             LWM2_VIEW_TIME};
	struct lwm2_view step_view, run_view;
	double *vals, t0, t1, fin[4];

	while ((opt = getopt(argc, argv, "ns:t:u:w:")) != -1) {
		switch (opt) {
		case 'n':
			rebalance = 0;
			break;
		case 's':
			slow = atoi(optarg);
			break;
		case 't':
			steps = atoi(optarg);
			break;
		case 'u':
			units = atol(optarg);
			break;
		case 'w':
			iters = atol(optarg);
			break;
		default:
			fprintf(stderr,
			        "usage: balance [-n] [-s SLOW] [-t STEPS] [-u UNITS] [-w ITERS]\n");
			return 2;
		}
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	share = calloc((size_t)size, sizeof(*share));
	vals = calloc((size_t)size, sizeof(*vals));
	if (!share || !vals)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int r = 0; r < size; r++)
		share[r] = units / size + (r < units % size);
	lwm2_view_init(&step_view, metrics, 1, LWM2_SCOPE_SINCE_LAST);
	lwm2_view_init(&run_view, final_metrics, 4, LWM2_SCOPE_RUN);
	/* the first mark: the first step's compute time starts here */
	measured = lwm2_view_get(&step_view, MPI_COMM_WORLD, LWM2_GATHER_ALL, 0, vals) == LWM2_OK;
	queries += measured;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int s = 0; s < steps; s++) {
		double in = (double)share[me], out;

		work(share[me], me < (size + 1) / 2 ? slow : 1, iters);
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (lwm2_view_get(&step_view, MPI_COMM_WORLD, LWM2_GATHER_ALL, 0, vals) != LWM2_OK)
			continue;
		queries++;
		if (!rebalance)
			continue;
		/* next share proportional to the measured speed: units per second */
		double speed_sum = 0;
		long given = 0;

		for (int r = 0; r < size; r++)
			speed_sum += (double)share[r] / (vals[r] > 1e-6 ? vals[r] : 1e-6);
		for (int r = 1; r < size; r++) {
			double sp = (double)share[r] / (vals[r] > 1e-6 ? vals[r] : 1e-6);

			share[r] = (long)((double)units * sp / speed_sum + 0.5);
			if (share[r] < 1)
				share[r] = 1;
			given += share[r];
		}
		share[0] = units - given > 1 ? units - given : 1;
	}
	t1 = MPI_Wtime();

	if (lwm2_view_self(&run_view, fin) == LWM2_OK)
		printf("view rank %d pid %d compute %.6f mpi %.6f mpi_calls %.0f view_time %.6f "
		       "queries %d\n",
		       me, (int)getpid(), fin[0], fin[1], fin[2], fin[3], queries);
	if (me == 0)
		printf("elapsed %.3f rebalance %d measured %d shares %ld:%ld job=%s\n", t1 - t0,
		       rebalance, measured, share[0], share[size - 1],
		       getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "-");
	fflush(stdout);
	free(share);
	free(vals);
	MPI_Finalize();
	return 0;
}
