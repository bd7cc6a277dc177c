/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Threads as a scope: each thread's CPU time, where its samples fell
 * (earmarks) and a few of its counters, in the rank record (its threads[]
 * table), so that the digest and the report drill down from a rank to its
 * threads (PerfMiner's process-to-thread drill-down).
 *
 * Bounded: a record keeps LWM2_THREADS_MAX threads, the main thread first
 * and then the busiest by CPU time, live or ended; the others are folded
 * (counted, their CPU time summed).  Threads that ended are kept here in a
 * table of the same size with the same rule, taken at their end (a thread
 * pool that starts and ends thousands of threads costs no more memory).
 *
 * All under the core's lock (thread_end, the record's write), without
 * allocation: a final write may run in a signal handler.  A live thread's
 * CPU time is read from its per-thread CPU clock, which the kernel gives
 * any thread of the process (one system call a thread and a write; the
 * heartbeat writes once a slice).
 */
#include "core_int.h"
#include "lwm2_sums.h"

#include <time.h>

static struct lwm2_thread_entry ended[LWM2_THREADS_MAX];
static uint32_t nended, ended_folded;
static uint64_t ended_other_cpu_ns;

/* The CPU clock of thread tid of this process (the kernel's
 * MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
static uint64_t thread_cpu_ns(int tid)
{
	clockid_t clk = (clockid_t)((~(unsigned)tid << 3) | 6u);
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t sum_of(const struct lwm2_thread *t, const enum lwm2_counter *ids, size_t n)
{
	uint64_t s = 0;

	for (size_t k = 0; k < n; k++)
		s += lwm2_thread_counter(t, ids[k]);
	return s;
}

#define SUM_OF(t, ids) sum_of(t, ids, sizeof(ids) / sizeof(ids[0]))

/* The entry of thread t; little stack (it may run in the sampling
 * handler's checkpoint): the counters are read where they are. */
static void entry_of(const struct lwm2_thread *t, uint64_t cpu_ns, uint32_t flags,
                     struct lwm2_thread_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->tid = t->tid;
	e->flags = flags | (t->is_main ? LWM2_TH_MAIN : 0);
	e->cpu_ns = cpu_ns;
	for (int k = 0; k < LWM2_NEARMARKS; k++)
		e->samples[k] = atomic_load_explicit(&t->samples[k], memory_order_relaxed);
	e->counters[LWM2_TC_mpi_ns] = lwm2_ticks_to_ns(SUM_OF(t, lwm2_mpi_time_ids));
	e->counters[LWM2_TC_io_ns] = lwm2_ticks_to_ns(SUM_OF(t, lwm2_posix_io_time_ids));
	e->counters[LWM2_TC_io_bytes] =
	    SUM_OF(t, lwm2_read_bytes_ids) + SUM_OF(t, lwm2_write_bytes_ids);
	e->counters[LWM2_TC_cycles] = lwm2_thread_counter(t, LWM2_C_hwc_cycles);
	e->counters[LWM2_TC_instructions] = lwm2_thread_counter(t, LWM2_C_hwc_instructions);
}

/* e into the table t of *n entries (at most LWM2_THREADS_MAX), the main
 * thread's entry at 0 never displaced: the least busy of the others is
 * folded when it is full. */
static void keep_busiest(struct lwm2_thread_entry *t, uint32_t *n, uint32_t *folded,
                         uint64_t *other_cpu, const struct lwm2_thread_entry *e)
{
	uint32_t least = UINT32_MAX;

	if (*n < LWM2_THREADS_MAX) {
		t[(*n)++] = *e;
		return;
	}
	for (uint32_t i = 0; i < *n; i++)
		if (!(t[i].flags & LWM2_TH_MAIN) &&
		    (least == UINT32_MAX || t[i].cpu_ns < t[least].cpu_ns))
			least = i;
	(*folded)++;
	if (least == UINT32_MAX || (t[least].cpu_ns >= e->cpu_ns && !(e->flags & LWM2_TH_MAIN))) {
		*other_cpu += e->cpu_ns;
		return;
	}
	*other_cpu += t[least].cpu_ns;
	t[least] = *e;
}

/* Thread t ends (thread_end, in t itself, under the lock). */
void lwm2_thread_scope_ended(const struct lwm2_thread *t)
{
	struct lwm2_thread_entry e;
	struct timespec ts;
	uint64_t cpu = 0;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	entry_of(t, cpu, LWM2_TH_ENDED, &e);
	keep_busiest(ended, &nended, &ended_folded, &ended_other_cpu_ns, &e);
}

void lwm2_thread_scope_fill(struct lwm2_rank_record *r)
{
	struct lwm2_thread_entry e;

	r->threads_n = 0;
	r->threads_folded = ended_folded;
	r->threads_other_cpu_ns = ended_other_cpu_ns;
	memset(r->threads, 0, sizeof(r->threads));
	/* the main thread first, when it lives */
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		if (t->is_main) {
			entry_of(t, thread_cpu_ns(t->tid), 0, &r->threads[0]);
			r->threads_n = 1;
			break;
		}
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next) {
		if (t->is_main)
			continue;
		entry_of(t, thread_cpu_ns(t->tid), 0, &e);
		keep_busiest(r->threads, &r->threads_n, &r->threads_folded,
		             &r->threads_other_cpu_ns, &e);
	}
	for (uint32_t i = 0; i < nended; i++)
		keep_busiest(r->threads, &r->threads_n, &r->threads_folded,
		             &r->threads_other_cpu_ns, &ended[i]);
}

/* The child of fork has one thread, its counts at zero: no thread ended
 * in it yet. */
void lwm2_thread_scope_fork_child(void)
{
	nended = ended_folded = 0;
	ended_other_cpu_ns = 0;
}
