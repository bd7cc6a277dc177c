/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The application's view of its own counters (include/lwm2.h, lwm2_view(3)):
 * lwm2_view_read_self, the one library function the header looks up.
 *
 * What it reads: the calling thread's two counter buffers, whose sum is
 * every add the thread ever made (counters only grow; the heartbeat's folds
 * read them and never reset them), so the values are exact and live, not
 * up to the last fold.  Only the owner writes them: the read takes no lock
 * (the core's lock is the heartbeat's) and makes no system call but the
 * clocks.  Other threads of the process are not included: the thread that
 * queries is the one that calls MPI, as in a rank that is one thread or
 * calls MPI from its main thread; the rank record sums all threads, so the
 * digest shows the same values for such a rank.  Hardware counters are
 * added to the buffers at slice ends (papi.c): their values lag by up to
 * one slice.
 *
 * The view's own collectives are counted by the MPI wrappers like any call
 * (the record keeps them), and kept apart here: op 1 and op 2 bracket them,
 * the difference of the thread's counters between the two is remembered,
 * and every read leaves it out (LWM2_VIEW_TIME is their time).
 *
 * The process counts its queries too, for its rank record and so the
 * digest (view_queries, view_ns): each op 2 that ends an op 1 adds one
 * query and its ticks to two process-wide atomics, no lock.
 */
#include "core_int.h"
#include "lwm2_sums.h"

#include <string.h>
#include <time.h>

#include "include/lwm2.h"

LWM2_EXPORT int lwm2_view_read_self(double *out, int n, int op);

/* Per thread: only the calling thread reads and writes them. */
static __thread uint64_t view_apart[LWM2_NCOUNTERS] __attribute__((tls_model("initial-exec")));
static __thread uint64_t view_mark[LWM2_NCOUNTERS] __attribute__((tls_model("initial-exec")));
/* One declarator each: the attribute binds to its own (view_ticks had the
 * library's default model, a __tls_get_addr call bound lazily in every
 * fork child). */
static __thread uint64_t view_ticks __attribute__((tls_model("initial-exec")));
static __thread uint64_t view_mark_ticks __attribute__((tls_model("initial-exec")));
static __thread int view_open __attribute__((tls_model("initial-exec")));

/* Per process: every thread's queries, read by the record writer, and
 * what every thread's queries' collectives counted (kept apart from an
 * all-threads view). */
static _Atomic uint64_t proc_queries, proc_ticks;
static _Atomic uint64_t proc_apart[LWM2_NCOUNTERS];
/* The counters of the threads that ended, raw (ticks for times), for an
 * all-threads view: under the core's lock. */
static uint64_t ended_sum[LWM2_NCOUNTERS];

/* The op's bits beyond the operation (include/lwm2.h's reader): every
 * thread of the process rather than the calling one; hardware counters
 * read now rather than at the last slice end. */
#define OP_MASK        7
#define OP_ALL_THREADS 8
#define OP_HWC_NOW     16

void lwm2_view_totals(uint32_t *queries, uint64_t *ns)
{
	uint64_t q = atomic_load_explicit(&proc_queries, memory_order_relaxed);

	*queries = q > UINT32_MAX ? UINT32_MAX : (uint32_t)q;
	*ns = lwm2_ticks_to_ns(atomic_load_explicit(&proc_ticks, memory_order_relaxed));
}

void lwm2_view_fork_child(void)
{
	/* the forking thread's counters start again at zero: so do its
	 * queries' and what it keeps apart */
	atomic_store_explicit(&proc_queries, 0, memory_order_relaxed);
	atomic_store_explicit(&proc_ticks, 0, memory_order_relaxed);
	for (int i = 0; i < LWM2_NCOUNTERS; i++)
		atomic_store_explicit(&proc_apart[i], 0, memory_order_relaxed);
	memset(ended_sum, 0, sizeof(ended_sum));
	memset(view_apart, 0, sizeof(view_apart));
	view_ticks = 0;
	view_open = 0;
}

static void thread_raw(const struct lwm2_thread *t, uint64_t *c)
{
	for (int i = 0; i < LWM2_NCOUNTERS; i++)
		c[i] = t ? lwm2_thread_counter(t, i) : 0;
}

void lwm2_view_thread_ended(const struct lwm2_thread *t)
{
	uint64_t c[LWM2_NCOUNTERS];

	thread_raw(t, c);
	for (int i = 0; i < LWM2_NCOUNTERS; i++)
		ended_sum[i] += c[i];
}

/* Every thread's counters, those that ended included. */
static void process_raw(uint64_t *c)
{
	uint64_t t[LWM2_NCOUNTERS];

	lwm2_in_core++;
	lwm2_lock();
	memcpy(c, ended_sum, sizeof(ended_sum));
	for (const struct lwm2_thread *th = lwm2_p.threads; th; th = th->next) {
		thread_raw(th, t);
		for (int i = 0; i < LWM2_NCOUNTERS; i++)
			c[i] += t[i];
	}
	lwm2_unlock();
	lwm2_in_core--;
}

static double sec(uint64_t ticks)
{
	return (double)lwm2_ticks_to_ns_fresh(ticks) / 1e9;
}

LWM2_EXPORT int lwm2_view_read_self(double *out, int n, int op)
{
	struct lwm2_thread *t = lwm2_self;
	uint64_t c[LWM2_NCOUNTERS];
	double v[LWM2_VIEW_NMETRICS];
	struct timespec ts;
	uint64_t now;
	double mpi, io;

	bool all = op & OP_ALL_THREADS;

	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed) || n < 0)
		return -1;
	if (n > 0 && (op & OP_HWC_NOW))
		lwm2_for_each_module(m) if (m->read_now) m->read_now();
	op &= OP_MASK;
	thread_raw(t, c);
	if (op == 1) {
		memcpy(view_mark, c, sizeof(c));
		view_mark_ticks = lwm2_ticks();
		view_open = 1;
		return 0;
	}
	if (op == 2) {
		uint64_t d;

		if (!view_open)
			return 0;
		view_open = 0;
		d = lwm2_ticks() - view_mark_ticks;
		for (int i = 0; i < LWM2_NCOUNTERS; i++) {
			view_apart[i] += c[i] - view_mark[i];
			atomic_fetch_add_explicit(&proc_apart[i], c[i] - view_mark[i],
			                          memory_order_relaxed);
		}
		view_ticks += d;
		atomic_fetch_add_explicit(&proc_queries, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&proc_ticks, d, memory_order_relaxed);
		return 0;
	}
	if (n == 0)
		return 0;
	if (all) {
		/* the CPU time stands in for the compute time (below) */
		process_raw(c);
		op = 0;
		for (int i = 0; i < LWM2_NCOUNTERS; i++)
			c[i] -= atomic_load_explicit(&proc_apart[i], memory_order_relaxed);
	} else {
		for (int i = 0; i < LWM2_NCOUNTERS; i++)
			c[i] -= view_apart[i];
	}
	now = lwm2_now_ns();
	v[LWM2_WALL_TIME] = now > lwm2_p.start_ns ? (double)(now - lwm2_p.start_ns) / 1e9 : 0;
	/* The digest's definitions (lwm2_sums.h) */
	mpi = sec(LWM2_SUM(c, lwm2_mpi_time_ids));
	io = sec(LWM2_SUM(c, lwm2_posix_io_time_ids));
	v[LWM2_MPI_TIME] = mpi;
	v[LWM2_IO_TIME] = io;
	v[LWM2_MPI_INIT_TIME] = sec(c[LWM2_C_mpi_init_ns]);
	v[LWM2_VIEW_TIME] =
	    sec(all ? atomic_load_explicit(&proc_ticks, memory_order_relaxed) : view_ticks);
	v[LWM2_IO_READ_BYTES] = (double)LWM2_SUM(c, lwm2_read_bytes_ids);
	v[LWM2_IO_WRITE_BYTES] = (double)LWM2_SUM(c, lwm2_write_bytes_ids);
	v[LWM2_MPI_BYTES] = (double)(c[LWM2_C_mpi_p2p_bytes_sent] + c[LWM2_C_mpi_p2p_bytes_recv] +
	                             c[LWM2_C_mpi_coll_bytes_sent] + c[LWM2_C_mpi_coll_bytes_recv]);
	v[LWM2_MPI_CALLS] = (double)(c[LWM2_C_mpi_p2p_calls] + c[LWM2_C_mpi_coll_calls] +
	                             c[LWM2_C_mpiio_read_calls] + c[LWM2_C_mpiio_write_calls] +
	                             c[LWM2_C_mpiio_meta_calls] + c[LWM2_C_mpi_other_calls]);
	v[LWM2_IO_CALLS] = (double)(c[LWM2_C_posix_read_calls] + c[LWM2_C_posix_write_calls] +
	                            c[LWM2_C_posix_meta_calls]);
	/* the vDSO does not serve this clock: one system call (about half the
	 * read's cost), made only when the caller wants it (op 0, not 3) */
	if (op != 3 && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		v[LWM2_CPU_TIME] = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	else
		v[LWM2_CPU_TIME] = 0;
	/* A thread's compute time is its wall time outside MPI, I/O and the
	 * view's queries; the threads of a process overlap in wall time, so
	 * theirs together is the CPU time they spent outside those (the time
	 * they waited in MPI and I/O may have been on a CPU too: at least 0). */
	v[LWM2_COMPUTE_TIME] = (all ? v[LWM2_CPU_TIME] : v[LWM2_WALL_TIME]) - mpi - io -
	                       v[LWM2_MPI_INIT_TIME] - v[LWM2_VIEW_TIME];
	if (v[LWM2_COMPUTE_TIME] < 0)
		v[LWM2_COMPUTE_TIME] = 0;
	v[LWM2_HWC_CYCLES] = (double)c[LWM2_C_hwc_cycles];
	v[LWM2_HWC_INSTRUCTIONS] = (double)c[LWM2_C_hwc_instructions];
	v[LWM2_HWC_FP_OPS] = (double)c[LWM2_C_hwc_fp_ops];
	v[LWM2_HWC_LLC_MISSES] = (double)c[LWM2_C_hwc_llc_misses];
	if (n > LWM2_VIEW_NMETRICS)
		n = LWM2_VIEW_NMETRICS;
	memcpy(out, v, (size_t)n * sizeof(double));
	return n;
}
