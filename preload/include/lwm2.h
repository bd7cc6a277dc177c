/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2.h: the application's own view of its job (TAUg-style runtime views).
 *
 * A running MPI program asks lwm2 for what it measured in its own ranks
 * (compute, MPI and I/O time, bytes, calls, CPU time, hardware counters),
 * over the whole run or since the view's last query, and gathers the
 * values of the ranks of a communicator to one rank, to all, or sends one
 * rank's values to all.  Helpers give min/mean/max/stddev over gathered
 * values and the difference of two views.  Named regions (lwm2_region_begin
 * and lwm2_region_end) time parts of the program's work by name, and
 * lwm2_region_get gathers a region's time over the ranks.  doc/lwm2_view.3
 * has the details.
 *
 * Header only: nothing to link.  The values come from liblwm2.so, which the
 * lwm2 SPANK plugin preloads; the header finds its reader at run time with
 * dlsym(RTLD_DEFAULT, "lwm2_view_read_self").  Without lwm2 (not loaded,
 * or off for the job) every call returns LWM2_NOT_MEASURED at once and the
 * program runs unchanged.  Link with -ldl where glibc is older than 2.34.
 *
 * The collective calls (lwm2_view_get) are declared when <mpi.h> is
 * included before this header.  They use PMPI_ calls; lwm2 still counts
 * them as MPI calls in the rank's record (the digest shows them as the
 * application's collectives), but the values the view returns leave them
 * out: the library keeps the counters of its own collectives apart
 * (LWM2_VIEW_TIME is the time spent in view queries).
 */
#ifndef LWM2_H
#define LWM2_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
#define LWM2_OK           0
#define LWM2_NOT_MEASURED 1  /* lwm2 is not loaded, or not measuring this process */
#define LWM2_ERR_ARG      -1 /* a bad argument */
#define LWM2_ERR_MPI      -2 /* the collective failed */

/* Metrics of a view.  Times in seconds, the rest in counts; the numbering
 * is an ABI shared with liblwm2.so: new metrics are only appended. */
enum lwm2_view_metric {
	LWM2_WALL_TIME = 0,    /* since the process started */
	LWM2_COMPUTE_TIME,     /* wall - MPI (with init) - POSIX I/O - view queries */
	LWM2_MPI_TIME,         /* point-to-point, collective, MPI-IO and other MPI calls */
	LWM2_IO_TIME,          /* POSIX file I/O: read, write, metadata */
	LWM2_IO_READ_BYTES,    /* POSIX reads, aio included */
	LWM2_IO_WRITE_BYTES,   /* POSIX writes, aio included */
	LWM2_MPI_BYTES,        /* bytes sent and received, point-to-point and collective */
	LWM2_MPI_CALLS,        /* point-to-point, collective, MPI-IO and other calls */
	LWM2_IO_CALLS,         /* POSIX read, write and metadata calls */
	LWM2_CPU_TIME,         /* user + system CPU time of the process */
	LWM2_HWC_CYCLES,       /* hardware counters, up to the last slice end; 0: none */
	LWM2_HWC_INSTRUCTIONS, /* */
	LWM2_HWC_FP_OPS,       /* */
	LWM2_HWC_LLC_MISSES,   /* */
	LWM2_MPI_INIT_TIME,    /* MPI_Init and MPI_Finalize */
	LWM2_VIEW_TIME,        /* in the view's own queries (their collectives) */
	LWM2_VIEW_NMETRICS
};

/* Scope: the whole run, since this view's previous query (TAUg's decay),
 * or over its last k queries (a window: lwm2_view_set_window). */
enum lwm2_view_scope { LWM2_SCOPE_RUN = 0, LWM2_SCOPE_SINCE_LAST = 1, LWM2_SCOPE_WINDOW = 2 };

/* Whose counters a query reads (lwm2_view_set_threads): the calling
 * thread's, or every thread's of the process (those that ended too). */
enum lwm2_view_threads { LWM2_THREAD_SELF = 0, LWM2_THREADS_ALL = 1 };

/* The longest window, in queries. */
#define LWM2_VIEW_WINDOW_MAX 16

/* Where lwm2_view_get puts the values. */
enum lwm2_view_how {
	LWM2_GATHER_ONE = 0, /* every rank's values to root (all-to-one) */
	LWM2_GATHER_ALL = 1, /* every rank's values to every rank (all-to-all) */
	LWM2_SCATTER = 2     /* root's values to every rank (one-to-all) */
};

struct lwm2_view {
	int nmetrics;
	int metrics[LWM2_VIEW_NMETRICS];
	int scope;
	int have_last;
	double last[LWM2_VIEW_NMETRICS]; /* run values at the previous query */
	int threads;                     /* enum lwm2_view_threads */
	int window;                      /* k of LWM2_SCOPE_WINDOW */
	int nhist, hist_next;            /* run values of the last queries, a ring */
	double hist[LWM2_VIEW_WINDOW_MAX][LWM2_VIEW_NMETRICS];
};

/* liblwm2.so's reader: op 0 reads, 3 reads all but LWM2_CPU_TIME (left
 * 0: its clock is a system call), 1 and 2 bracket a view's own
 * collective; a read's op may add LWM2_VIEW_OP_ALL_THREADS (every
 * thread's counters; an older library reads the calling thread's) and
 * LWM2_VIEW_OP_HWC_NOW (hardware counters read now, not up to the last
 * slice end).  Returns the metrics filled, or -1 when not measuring. */
typedef int (*lwm2_view_read_fn)(double *out, int n, int op);
#define LWM2_VIEW_OP_ALL_THREADS 8
#define LWM2_VIEW_OP_HWC_NOW     16

/* Looked up once per translation unit; threads that race here find the
 * same address, and the atomics keep the race defined. */
static inline lwm2_view_read_fn lwm2_view__reader(void)
{
	static lwm2_view_read_fn fn;
	static int looked;

	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		union {
			void *p;
			lwm2_view_read_fn f;
		} u;

		u.p = dlsym(RTLD_DEFAULT, "lwm2_view_read_self");
		__atomic_store_n(&fn, u.f, __ATOMIC_RELAXED);
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(&fn, __ATOMIC_RELAXED);
}

/* LWM2_OK when lwm2 measures this process, else LWM2_NOT_MEASURED. */
static inline int lwm2_view_available(void)
{
	lwm2_view_read_fn f = lwm2_view__reader();
	double d[1];

	return f && f(d, 0, 0) >= 0 ? LWM2_OK : LWM2_NOT_MEASURED;
}

/* A view of n metrics (n <= LWM2_VIEW_NMETRICS) with the given scope. */
static inline int lwm2_view_init(struct lwm2_view *v, const int *metrics, int n, int scope)
{
	if (!v || !metrics || n < 1 || n > LWM2_VIEW_NMETRICS ||
	    (scope != LWM2_SCOPE_RUN && scope != LWM2_SCOPE_SINCE_LAST))
		return LWM2_ERR_ARG;
	memset(v, 0, sizeof(*v));
	for (int i = 0; i < n; i++) {
		if (metrics[i] < 0 || metrics[i] >= LWM2_VIEW_NMETRICS)
			return LWM2_ERR_ARG;
		v->metrics[i] = metrics[i];
	}
	v->nmetrics = n;
	v->scope = scope;
	return LWM2_OK;
}

/* The threads the view's next queries read, chosen per query: the calling
 * thread's (the default) or every thread's.  In an all-threads view the
 * times are summed over the threads, and LWM2_COMPUTE_TIME is the
 * process's CPU time outside MPI, I/O and the view's queries. */
static inline int lwm2_view_set_threads(struct lwm2_view *v, int threads)
{
	if (!v || (threads != LWM2_THREAD_SELF && threads != LWM2_THREADS_ALL))
		return LWM2_ERR_ARG;
	v->threads = threads;
	return LWM2_OK;
}

/* A window of the last k queries (1 <= k <= LWM2_VIEW_WINDOW_MAX): each
 * query's values are those since the k-th query before it (since the
 * start while fewer were made); k 1 is LWM2_SCOPE_SINCE_LAST. */
static inline int lwm2_view_set_window(struct lwm2_view *v, int k)
{
	if (!v || k < 1 || k > LWM2_VIEW_WINDOW_MAX)
		return LWM2_ERR_ARG;
	v->scope = LWM2_SCOPE_WINDOW;
	v->window = k;
	v->nhist = v->hist_next = 0;
	return LWM2_OK;
}

/* The calling rank's own values of the view (v->nmetrics doubles); a
 * since-last view moves its mark.  No MPI call, no lock, no file I/O. */
static inline int lwm2_view_self(struct lwm2_view *v, double *vals)
{
	lwm2_view_read_fn f = lwm2_view__reader();
	double all[LWM2_VIEW_NMETRICS];
	int op = 3;

	const double *base = NULL;

	if (!v || !vals || v->nmetrics < 1)
		return LWM2_ERR_ARG;
	for (int i = 0; i < v->nmetrics; i++) {
		int m = v->metrics[i];

		if (m == LWM2_CPU_TIME)
			op = 0;
		if (m >= LWM2_HWC_CYCLES && m <= LWM2_HWC_LLC_MISSES)
			op |= LWM2_VIEW_OP_HWC_NOW;
	}
	if (v->threads == LWM2_THREADS_ALL)
		op |= LWM2_VIEW_OP_ALL_THREADS;
	if (!f || f(all, LWM2_VIEW_NMETRICS, op) < LWM2_VIEW_NMETRICS) {
		for (int i = 0; i < v->nmetrics; i++)
			vals[i] = 0;
		return LWM2_NOT_MEASURED;
	}
	if (v->scope == LWM2_SCOPE_SINCE_LAST && v->have_last)
		base = v->last;
	else if (v->scope == LWM2_SCOPE_WINDOW && v->window >= 1 &&
	         v->window <= LWM2_VIEW_WINDOW_MAX && v->nhist >= v->window)
		/* the k-th query before this one */
		base = v->hist[(v->hist_next + LWM2_VIEW_WINDOW_MAX - v->window) %
		               LWM2_VIEW_WINDOW_MAX];
	for (int i = 0; i < v->nmetrics; i++) {
		int m = v->metrics[i];

		vals[i] = base ? all[m] - base[m] : all[m];
	}
	memcpy(v->last, all, sizeof(all));
	v->have_last = 1;
	if (v->scope == LWM2_SCOPE_WINDOW) {
		memcpy(v->hist[v->hist_next], all, sizeof(all));
		v->hist_next = (v->hist_next + 1) % LWM2_VIEW_WINDOW_MAX;
		if (v->nhist < LWM2_VIEW_WINDOW_MAX)
			v->nhist++;
	}
	return LWM2_OK;
}

/*
 * Named regions (TAUg's named events): lwm2_region_begin("solver") and
 * lwm2_region_end() bracket a part of the program's work, in any thread,
 * nested (the innermost open region ends).  The rank record keeps each
 * region's calls and time, summed over the process's threads, and the
 * digest their spread over the ranks.  A call counts when it ends.  Names
 * are cut to 47 bytes; a name's address may be reused for another.  Each
 * call is a few tens of ns; a program that never calls them pays nothing.
 */
typedef int (*lwm2_region_enter_fn)(const char *name);
typedef int (*lwm2_region_leave_fn)(void);
typedef int (*lwm2_region_read_fn)(const char *name, double *out, int n);

/* liblwm2.so's function of that name, looked up at the first call in each
 * translation unit (NULL without lwm2), as lwm2_view__reader. */
static inline void *lwm2__lookup(void **fn, int *looked, const char *name)
{
	if (!__atomic_load_n(looked, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(fn, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);
		__atomic_store_n(looked, 1, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(fn, __ATOMIC_RELAXED);
}

/* LWM2_OK; LWM2_NOT_MEASURED without lwm2; LWM2_ERR_ARG for a NULL or
 * empty name. */
static inline int lwm2_region_begin(const char *name)
{
	static void *fn;
	static int looked;
	union {
		void *p;
		lwm2_region_enter_fn f;
	} u;

	u.p = lwm2__lookup(&fn, &looked, "lwm2_region_enter");
	if (!u.p)
		return name && name[0] ? LWM2_NOT_MEASURED : LWM2_ERR_ARG;
	return u.f(name);
}

/* Ends the calling thread's innermost open region: LWM2_OK; LWM2_ERR_ARG
 * when none is open. */
static inline int lwm2_region_end(void)
{
	static void *fn;
	static int looked;
	union {
		void *p;
		lwm2_region_leave_fn f;
	} u;

	u.p = lwm2__lookup(&fn, &looked, "lwm2_region_leave");
	return u.p ? u.f() : LWM2_NOT_MEASURED;
}

/* The calling process's figures of a region so far: its time in seconds
 * (all threads) and its calls.  LWM2_OK, also for a name never entered
 * (zeros); LWM2_NOT_MEASURED without lwm2. */
static inline int lwm2_region_self(const char *name, double *seconds, double *calls)
{
	static void *fn;
	static int looked;
	union {
		void *p;
		lwm2_region_read_fn f;
	} u;
	double out[2] = {0, 0};
	int rc = LWM2_NOT_MEASURED;

	if (!name)
		return LWM2_ERR_ARG;
	u.p = lwm2__lookup(&fn, &looked, "lwm2_region_read");
	if (u.p && u.f(name, out, 2) >= 0)
		rc = LWM2_OK;
	if (seconds)
		*seconds = out[0];
	if (calls)
		*calls = out[1];
	return rc;
}

/* Statistics over gathered values: metric k of nranks rows of n values. */
struct lwm2_view_stats {
	double min, mean, max, stddev;
	int argmin, argmax; /* ranks (rows) of the min and the max */
};

static inline int lwm2_view_stats(const double *vals, int nranks, int n, int k,
                                  struct lwm2_view_stats *s)
{
	double sum = 0, sq = 0;

	if (!vals || !s || nranks < 1 || n < 1 || k < 0 || k >= n)
		return LWM2_ERR_ARG;
	s->min = s->max = vals[k];
	s->argmin = s->argmax = 0;
	for (int r = 0; r < nranks; r++) {
		double x = vals[(size_t)r * (size_t)n + (size_t)k];

		sum += x;
		if (x < s->min) {
			s->min = x;
			s->argmin = r;
		}
		if (x > s->max) {
			s->max = x;
			s->argmax = r;
		}
	}
	s->mean = sum / nranks;
	for (int r = 0; r < nranks; r++) {
		double d = vals[(size_t)r * (size_t)n + (size_t)k] - s->mean;

		sq += d * d;
	}
	s->stddev = sqrt(sq / nranks);
	return LWM2_OK;
}

/* out[i] = a[i] - b[i] for count values (two queries of one view). */
static inline void lwm2_view_diff(const double *a, const double *b, double *out, size_t count)
{
	for (size_t i = 0; i < count; i++)
		out[i] = a[i] - b[i];
}

#if defined(MPI_VERSION)
/*
 * One query of the view over comm, a collective call of all its ranks.
 * LWM2_GATHER_ONE: vals at root holds size * nmetrics values, rank r's at
 * vals[r * nmetrics]; other ranks' vals needs nmetrics values (their own).
 * LWM2_GATHER_ALL: every rank's vals holds size * nmetrics values.
 * LWM2_SCATTER: every rank's vals holds root's nmetrics values.
 * Without lwm2 it returns LWM2_NOT_MEASURED at once on every rank, with no
 * MPI call (lwm2 is loaded in all ranks of a job or in none).
 */
/* The n values mine of each rank placed as how says (lwm2_view_get),
 * the collective bracketed by the reader f's ops 1 and 2 so that its
 * counters are kept apart. */
static inline int lwm2__place(lwm2_view_read_fn f, const double *mine, int n, MPI_Comm comm,
                              int how, int root, double *vals)
{
	double dummy[1];
	int rc, me;

	f(dummy, 0, 1);
	if (PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
		f(dummy, 0, 2);
		return LWM2_ERR_MPI;
	}
	switch (how) {
	case LWM2_GATHER_ONE:
		rc = PMPI_Gather(mine, n, MPI_DOUBLE, vals, n, MPI_DOUBLE, root, comm);
		if (me != root)
			memcpy(vals, mine, (size_t)n * sizeof(double));
		break;
	case LWM2_GATHER_ALL:
		rc = PMPI_Allgather(mine, n, MPI_DOUBLE, vals, n, MPI_DOUBLE, comm);
		break;
	default:
		if (me == root)
			memcpy(vals, mine, (size_t)n * sizeof(double));
		rc = PMPI_Bcast(vals, n, MPI_DOUBLE, root, comm);
		break;
	}
	f(dummy, 0, 2);
	return rc == MPI_SUCCESS ? LWM2_OK : LWM2_ERR_MPI;
}

static inline int lwm2_view_get(struct lwm2_view *v, MPI_Comm comm, int how, int root, double *vals)
{
	lwm2_view_read_fn f = lwm2_view__reader();
	double mine[LWM2_VIEW_NMETRICS], dummy[1];
	int rc;

	if (!v || !vals || v->nmetrics < 1 || how < LWM2_GATHER_ONE || how > LWM2_SCATTER)
		return LWM2_ERR_ARG;
	if (!f || f(dummy, 0, 0) < 0)
		return LWM2_NOT_MEASURED;
	/* the values before this query's collective, which is kept apart */
	if ((rc = lwm2_view_self(v, mine)) != LWM2_OK)
		return rc;
	return lwm2__place(f, mine, v->nmetrics, comm, how, root, vals);
}

/*
 * A region's time (seconds, all the rank's threads) over comm, a
 * collective call of all its ranks, placed as lwm2_view_get places a
 * view of one metric: LWM2_GATHER_ONE gives root size values (rank r's at
 * vals[r]), LWM2_GATHER_ALL every rank, LWM2_SCATTER root's one value to
 * all.  lwm2_view_stats(vals, size, 1, 0, &s) gives min/mean/max/stddev.
 * The collective is kept apart from the view's figures, as a view's.
 */
static inline int lwm2_region_get(const char *name, MPI_Comm comm, int how, int root, double *vals)
{
	lwm2_view_read_fn f = lwm2_view__reader();
	double mine = 0, dummy[1];
	int rc;

	if (!name || !vals || how < LWM2_GATHER_ONE || how > LWM2_SCATTER)
		return LWM2_ERR_ARG;
	if (!f || f(dummy, 0, 0) < 0)
		return LWM2_NOT_MEASURED;
	if ((rc = lwm2_region_self(name, &mine, NULL)) != LWM2_OK)
		return rc;
	return lwm2__place(f, &mine, 1, comm, how, root, vals);
}
#endif /* MPI_VERSION */

#ifdef __cplusplus
}
#endif

#endif /* LWM2_H */
