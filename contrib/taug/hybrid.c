/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A hybrid MPI + OpenMP load-balancing example on lwm2's named regions
 * (lwm2_region_begin/end and lwm2_region_get of lwm2_view(3)).
 *
 * The ranks share a fixed number of work units per step; the first half of
 * the ranks is SLOW times slower per unit (a slower node, a harder part of
 * the domain).  Each rank splits its share over its OpenMP threads, and the
 * units of the upper half of a share cost half as much again, so the
 * threads of a rank are uneven too.  A step is
 *
 *   "compute"      the rank's compute part, begun and ended by the master
 *                  thread around the parallel loop: the rank's wall time
 *   "thread_work"  each thread's part of the loop, inside "compute": the
 *                  region's time is the sum over the rank's threads
 *
 * then an MPI_Allreduce.  Every K steps all ranks gather every rank's
 * "compute" time with lwm2_region_get(..., LWM2_GATHER_ALL, ...), take the
 * time of the last K steps, and move work from the slowest rank to the
 * fastest (lwm2_view_stats' argmax and argmin) so that the two would take
 * the same time at the speeds measured; with more ranks the moves repeat
 * pair by pair.  Without lwm2 (not loaded, or --lwm2=off) the query says
 * LWM2_NOT_MEASURED and the program rebalances from its own clock, the
 * same figures gathered with MPI_Allgather ("timing self").
 *
 *   mpicc -fopenmp -O2 -I$(includedir) -o hybrid hybrid.c -lm
 *   OMP_NUM_THREADS=2 srun --lwm2 -n2 -c2 ./hybrid [-n] [-k K] [-s SLOW]
 *                                   [-t STEPS] [-u UNITS] [-w ITERS]
 *     -n  no rebalancing
 *
 * At the end each rank prints its own measurement of the regions (the wall
 * clock around each begin/end, summed), what lwm2 says of them where it
 * measures, and each thread's time:
 *   own compute rank R calls C seconds S
 *   own thread_work rank R calls C seconds S
 *   lwm2 compute rank R calls C seconds S        (under lwm2 only)
 *   lwm2 thread_work rank R calls C seconds S    (under lwm2 only)
 *   thread rank R thread T units U seconds S
 *   threadcpu rank R tid TID seconds S     (each OpenMP thread's CPU time)
 * and rank 0
 *   elapsed S rebalance 0|1 timing lwm2|self moves M shares A:B job=ID
 * (shares: the first and last rank's units per step at the end).
 */
#include <mpi.h>
#include <lwm2.h>
#include <omp.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A rank that differs from the fastest by less than this share of its
 * time is balanced: no move. */
#define BALANCED_WITHIN 0.03

static volatile double sink;

/* One work unit: cost times a fixed number of dependent floating-point
 * operations. */
static double unit_work(long cost)
{
	double x = 1.0;

	for (long i = 0; i < cost; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

struct step_clock {
	long compute_calls, thread_calls;
	double compute_s, thread_s; /* own wall clock, summed */
	double *per_thread_s;
	long *per_thread_units;
};

/*
 * One step's compute part: share units, each of base iterations, those of
 * the upper half of the share half as costly again.  Each region is timed
 * by the program too, around its begin and end.
 */
static void compute(long share, long base, struct step_clock *c)
{
	double t0 = omp_get_wtime(), thread_sum = 0, acc = 0;
	long thread_calls = 0;

	lwm2_region_begin("compute");
#pragma omp parallel reduction(+ : thread_sum, acc, thread_calls)
	{
		int tid = omp_get_thread_num();
		double t1 = omp_get_wtime();
		long done = 0;

		lwm2_region_begin("thread_work");
#pragma omp for schedule(static) nowait
		for (long u = 0; u < share; u++) {
			acc += unit_work(2 * u >= share ? base + base / 2 : base);
			done++;
		}
		lwm2_region_end();
		t1 = omp_get_wtime() - t1;
		thread_sum += t1;
		thread_calls++;
		c->per_thread_s[tid] += t1;
		c->per_thread_units[tid] += done;
	}
	lwm2_region_end();
	sink = acc;
	c->compute_s += omp_get_wtime() - t0;
	c->compute_calls++;
	c->thread_s += thread_sum;
	c->thread_calls += thread_calls;
}

/*
 * Every rank's "compute" time so far into all[]: from lwm2, or where lwm2
 * does not measure, the program's own clock gathered.  Returns 1 when lwm2
 * gave it.
 */
static int gather_compute_time(const struct step_clock *c, double *all)
{
	if (lwm2_region_get("compute", MPI_COMM_WORLD, LWM2_GATHER_ALL, 0, all) == LWM2_OK)
		return 1;
	MPI_Allgather(&c->compute_s, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
	return 0;
}

/*
 * The window's time of each rank (now - before) at the shares it ran;
 * moves work from the slowest rank to the fastest so that both would take
 * the same time, repeated over the remaining ranks while they differ.
 * Every rank computes the same moves from the same gathered values.
 * Returns the number of moves.
 */
static int rebalance(long *share, const double *now, double *before, int size)
{
	double *t = malloc((size_t)size * sizeof(*t));
	int moves = 0;

	if (!t) {
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 0;
	}
	for (int r = 0; r < size; r++) {
		t[r] = now[r] - before[r] > 1e-6 ? now[r] - before[r] : 1e-6;
		before[r] = now[r];
	}
	for (int pass = 0; pass < size / 2; pass++) {
		struct lwm2_view_stats s;
		long pair;
		double speed_slow, speed_fast;

		if (lwm2_view_stats(t, size, 1, 0, &s) != LWM2_OK || s.argmax == s.argmin ||
		    s.max - s.min < BALANCED_WITHIN * s.max)
			break;
		/* units per second at the shares the window ran */
		speed_slow = (double)share[s.argmax] / s.max;
		speed_fast = (double)share[s.argmin] / s.min;
		pair = share[s.argmax] + share[s.argmin];
		share[s.argmax] =
		    (long)((double)pair * speed_slow / (speed_slow + speed_fast) + 0.5);
		if (share[s.argmax] < 1)
			share[s.argmax] = 1;
		if (share[s.argmax] > pair - 1)
			share[s.argmax] = pair - 1;
		share[s.argmin] = pair - share[s.argmax];
		/* both now expected at their mean: out of the next pass */
		t[s.argmax] = t[s.argmin] = (s.max + s.min) / 2;
		moves++;
	}
	free(t);
	return moves;
}

static void usage(void)
{
	fprintf(stderr, "usage: hybrid [-n] [-k K] [-s SLOW] [-t STEPS] [-u UNITS] [-w ITERS]\n");
}

int main(int argc, char **argv)
{
	int rebalancing = 1, every = 5, slow = 3, steps = 40, me, size, opt, by_lwm2 = 0, moves = 0,
	    nthreads = omp_get_max_threads();
	long units = 400, iters = 20000, *share;
	double *now, *before, t0, t1, lwm2_s, lwm2_calls;
	struct step_clock clock = {0};

	while ((opt = getopt(argc, argv, "nk:s:t:u:w:")) != -1) {
		switch (opt) {
		case 'n':
			rebalancing = 0;
			break;
		case 'k':
			every = atoi(optarg);
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
			usage();
			return 2;
		}
	}
	if (every < 1 || slow < 1 || steps < 1 || iters < 1) {
		usage();
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (units < size) {
		if (me == 0)
			fprintf(stderr, "hybrid: fewer units (%ld) than ranks (%d)\n", units, size);
		MPI_Finalize();
		return 2;
	}
	share = calloc((size_t)size, sizeof(*share));
	now = calloc((size_t)size, sizeof(*now));
	before = calloc((size_t)size, sizeof(*before));
	clock.per_thread_s = calloc((size_t)nthreads, sizeof(*clock.per_thread_s));
	clock.per_thread_units = calloc((size_t)nthreads, sizeof(*clock.per_thread_units));
	if (!share || !now || !before || !clock.per_thread_s || !clock.per_thread_units) {
		free(share);
		free(now);
		free(before);
		free(clock.per_thread_s);
		free(clock.per_thread_units);
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	for (int r = 0; r < size; r++)
		share[r] = units / size + (r < units % size);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int s = 1; s <= steps; s++) {
		double in = (double)share[me], out;

		compute(share[me], me < (size + 1) / 2 ? slow * iters : iters, &clock);
		MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		if (rebalancing && s % every == 0 && s < steps) {
			by_lwm2 = gather_compute_time(&clock, now);
			moves += rebalance(share, now, before, size);
		}
	}
	t1 = MPI_Wtime();
	if (!rebalancing)
		by_lwm2 = lwm2_view_available() == LWM2_OK;

	printf("own compute rank %d calls %ld seconds %.6f\n", me, clock.compute_calls,
	       clock.compute_s);
	printf("own thread_work rank %d calls %ld seconds %.6f\n", me, clock.thread_calls,
	       clock.thread_s);
	if (lwm2_region_self("compute", &lwm2_s, &lwm2_calls) == LWM2_OK) {
		printf("lwm2 compute rank %d calls %.0f seconds %.6f\n", me, lwm2_calls, lwm2_s);
		lwm2_region_self("thread_work", &lwm2_s, &lwm2_calls);
		printf("lwm2 thread_work rank %d calls %.0f seconds %.6f\n", me, lwm2_calls,
		       lwm2_s);
	}
	for (int t = 0; t < nthreads; t++)
		printf("thread rank %d thread %d units %ld seconds %.6f\n", me, t,
		       clock.per_thread_units[t], clock.per_thread_s[t]);
		/* each OpenMP thread's CPU time so far, by its kernel id: what the
		 * digest's drill-down to threads shows of it */
#pragma omp parallel
	{
		struct timespec ts;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#pragma omp critical
		printf("threadcpu rank %d tid %ld seconds %.6f\n", me, (long)syscall(SYS_gettid),
		       (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	}
	if (me == 0)
		printf("elapsed %.3f rebalance %d timing %s moves %d shares %ld:%ld job=%s\n",
		       t1 - t0, rebalancing, by_lwm2 ? "lwm2" : "self", moves, share[0],
		       share[size - 1], getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "-");
	fflush(stdout);
	free(share);
	free(now);
	free(before);
	free(clock.per_thread_s);
	free(clock.per_thread_units);
	MPI_Finalize();
	return 0;
}
