/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Cost of one query of the view API (lwm2_view(3)) against the bare
 * collective it makes:
 *
 *   view N ROUNDS
 *
 * Per round: N lwm2_view_get calls (2 metrics, gathered to all ranks) and
 * N MPI_Allgather calls of 2 doubles, alternating blocks; then N
 * lwm2_view_self calls (the rank's read alone).  Rank 0 prints
 *   view NP query_ns Q bare_ns B read_ns R measured 0|1
 * the medians over the rounds of ns per call.
 */
#include <mpi.h>
#include <lwm2.h>

#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
	const int m[] = {LWM2_COMPUTE_TIME, LWM2_MPI_TIME};
	int n = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 5;
	int me, np, measured;
	double mine[2] = {1, 2}, *all, *q, *b, *r, t;
	struct lwm2_view v;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	if (n < 1 || rounds < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);
	all = calloc((size_t)np * 2, sizeof(double));
	q = calloc((size_t)rounds, sizeof(double));
	b = calloc((size_t)rounds, sizeof(double));
	r = calloc((size_t)rounds, sizeof(double));
	if (!all || !q || !b || !r)
		MPI_Abort(MPI_COMM_WORLD, 1);
	lwm2_view_init(&v, m, 2, LWM2_SCOPE_SINCE_LAST);
	measured = lwm2_view_get(&v, MPI_COMM_WORLD, LWM2_GATHER_ALL, 0, all) == LWM2_OK;
	for (int k = 0; k < rounds; k++) {
		MPI_Barrier(MPI_COMM_WORLD);
		t = bench_now_ns();
		for (int i = 0; i < n; i++)
			lwm2_view_get(&v, MPI_COMM_WORLD, LWM2_GATHER_ALL, 0, all);
		q[k] = (bench_now_ns() - t) / n;
		MPI_Barrier(MPI_COMM_WORLD);
		t = bench_now_ns();
		for (int i = 0; i < n; i++)
			MPI_Allgather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, MPI_COMM_WORLD);
		b[k] = (bench_now_ns() - t) / n;
		t = bench_now_ns();
		for (int i = 0; i < n; i++)
			lwm2_view_self(&v, mine);
		r[k] = (bench_now_ns() - t) / n;
	}
	if (me == 0)
		printf("view %d query_ns %.1f bare_ns %.1f read_ns %.1f measured %d\n", np,
		       bench_median(q, (size_t)rounds), bench_median(b, (size_t)rounds),
		       bench_median(r, (size_t)rounds), measured);
	free(all);
	free(q);
	free(b);
	free(r);
	MPI_Finalize();
	return 0;
}
