/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time slices and the heartbeat thread; the rank record file they write is
 * rank_file.c's.
 *
 * The slice protocol (see lwm2_core.h for the writer's side)
 * ------------------------------------------------------------
 * Slice k of length L covers [kL, (k+1)L) of CLOCK_REALTIME, so the slices
 * of every process on every node line up.  The heartbeat sleeps until the
 * end of the slice it went to sleep in, then, under the core lock:
 *
 *   1. calls each module's slice_end hook;
 *   2. for every live thread flips `active` and folds the buffer that was
 *      active: per counter it loads the value v and adds v - folded[b][c]
 *      to the pending sums, then sets folded[b][c] = v.  Only the lock
 *      holder touches `folded`, and the owner only ever raises buf, so each
 *      add is taken exactly once: by the first fold of its buffer that
 *      reads a value including it.  An add that lands in the old buffer
 *      after the flip is found by a later fold of that buffer; nothing is
 *      lost or counted twice, whatever the interleaving (test/slices.c
 *      proves it under ThreadSanitizer);
 *   3. converts the pending clock ticks of time counters to ns, adds the
 *      pending sums to slice k and to the whole-run counters;
 *   4. has rank_file.c rewrite the older slot of the record file (the one
 *      with the lower generation), sealed with a higher generation and a
 *      checksum.
 *
 * Once, LWM2_SETUP_DELAY_MS after it started, the heartbeat calls the
 * modules' setup hooks without holding the lock (see lwm2_core.h).
 *
 * A thread that ends, and the final write, fold both buffers (a fold needs
 * no flip: the flip only keeps the heartbeat off the cache lines the owner
 * is writing).  Because each write goes to the slot not holding the newest
 * record, a SIGKILL at any point leaves a valid record at most one slice
 * old, flagged INCOMPLETE until the final write clears the flag.
 *
 * When the series would exceed LWM2_MAX_SLICES it is coarsened: pairs of
 * slices aligned to 2L are merged and L doubles, so slices stay aligned to
 * the clock across processes that coarsened equally often.
 */
#include "core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static struct lwm2_slice *slices(void)
{
	return (struct lwm2_slice *)(void *)(lwm2_p.img + 1);
}

int lwm2_storage_init(void)
{
	void *p;

	lwm2_p.img_capacity = lwm2_slot_capacity(lwm2_p.max_slices);
	p = lwm2_raw_mmap(NULL, lwm2_p.img_capacity, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	lwm2_p.img = p;
	lwm2_p.first_slice = lwm2_slice_now();
	return 0;
}

uint64_t lwm2_slice_now(void)
{
	return lwm2_now_ns() / 1000000u / lwm2_p.slice_ms;
}

void lwm2_fold_thread(struct lwm2_thread *t, int which)
{
	for (int b = 0; b < 2; b++) {
		if (which != 2 && which != b)
			continue;
		for (int c = 0; c < LWM2_NCOUNTERS; c++) {
			uint64_t v = atomic_load_explicit(&t->buf[b][c], memory_order_relaxed);

			lwm2_p.pending[c] += v - t->folded[b][c];
			t->folded[b][c] = v;
		}
	}
}

static const bool is_time[LWM2_NCOUNTERS] = {
#define X_TIME(name, unit, desc)                                                                   \
	[LWM2_C_##name] = (sizeof(unit) == 3 && unit[0] == 'n' && unit[1 % sizeof(unit)] == 's'),
    LWM2_COUNTERS(X_TIME)
#undef X_TIME
};

/* Merge pairs of slices aligned to 2L; L doubles. */
static void coarsen(void)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct lwm2_slice *s = slices();
	uint64_t first = lwm2_p.first_slice, nfirst = first / 2;
	uint32_t n = r->nslices, nn = 0;

	if (n)
		nn = (uint32_t)((first + n - 1) / 2 - nfirst + 1);
	/* New slice j takes old absolute slices 2(nfirst+j) and +1; both sit
	 * at old positions >= j, so ascending in place is safe. */
	for (uint32_t j = 0; j < nn; j++) {
		uint64_t lo = 2 * (nfirst + j);
		struct lwm2_slice sum;

		memset(&sum, 0, sizeof(sum));
		for (uint64_t k = lo; k < lo + 2; k++)
			if (k >= first && k < first + n)
				for (int c = 0; c < LWM2_NCOUNTERS; c++)
					sum.counters[c] += s[k - first].counters[c];
		s[j] = sum;
	}
	memset(&s[nn], 0, (size_t)(n - nn) * sizeof(*s));
	r->nslices = nn;
	lwm2_p.first_slice = nfirst;
	lwm2_p.slice_ms *= 2;
	r->flags |= LWM2_F_COARSENED;
}

/* The slice the last lwm2_slice_add added to (under the lock). */
static uint32_t last_slice;

void lwm2_record_uncount(enum lwm2_counter c)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct lwm2_slice *s = slices();

	if (!r->counters[c] || last_slice >= r->nslices || !s[last_slice].counters[c])
		return;
	r->counters[c]--;
	s[last_slice].counters[c]--;
}

/* Move the pending sums into slice k (in units of the current L). */
void lwm2_slice_add(uint64_t k)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	struct lwm2_slice *s;
	uint64_t idx;
	uint64_t L = lwm2_p.slice_ms;

	lwm2_clock_recalibrate();
	if (k < lwm2_p.first_slice) /* the clock went back: keep it in the first slice */
		k = lwm2_p.first_slice;
	while (k - lwm2_p.first_slice >= lwm2_p.max_slices) {
		coarsen();
		/* k in units of the new L */
		k = k * L / lwm2_p.slice_ms;
		L = lwm2_p.slice_ms;
		if (k < lwm2_p.first_slice)
			k = lwm2_p.first_slice;
	}
	idx = k - lwm2_p.first_slice;
	last_slice = (uint32_t)idx;
	s = slices();
	if (idx >= r->nslices) {
		memset(&s[r->nslices], 0, (size_t)(idx + 1 - r->nslices) * sizeof(*s));
		r->nslices = (uint32_t)idx + 1;
	}
	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		uint64_t v = lwm2_p.pending[c];

		if (!v)
			continue;
		if (is_time[c])
			v = lwm2_ticks_to_ns(v);
		s[idx].counters[c] += v;
		r->counters[c] += v;
		lwm2_p.pending[c] = 0;
	}
}

void lwm2_record_write(enum lwm2_end how, int status, int sig, bool sigctx)
{
	(void)sigctx;
	for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next)
		lwm2_fold_thread(t, 2);
	lwm2_slice_add(lwm2_slice_now());
	lwm2_rank_file_write(how, status, sig);
}

void lwm2_storage_fork_child(void)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	uint32_t keep_flags = r->flags & (LWM2_F_SAMPLING_OFF | LWM2_F_MPI | LWM2_F_MPI_FINALIZED);

	lwm2_record_discard_mapping();
	memset(lwm2_p.pending, 0, sizeof(lwm2_p.pending));
	memset(lwm2_p.dead_samples, 0, sizeof(lwm2_p.dead_samples));
	lwm2_p.dead_samples_main = 0;
	memset(r->counters, 0, sizeof(r->counters));
	lwm2_zero(slices(), (size_t)r->nslices * sizeof(struct lwm2_slice));
	r->nslices = 0;
	r->generation = 0;
	r->flags = keep_flags | LWM2_F_FORK_CHILD;
	memset(r->samples, 0, sizeof(r->samples));
	r->samples_main = 0;
	lwm2_p.first_slice = lwm2_slice_now();
}

/* Written in every fork child: LWM2_HOT_STATE. */
static pthread_cond_t hb_cond LWM2_HOT_STATE = PTHREAD_COND_INITIALIZER;
static pthread_t hb_thread LWM2_HOT_STATE;
static _Atomic pid_t hb_tid LWM2_HOT_STATE;
static bool hb_stop LWM2_HOT_STATE;
static bool hb_setup_done LWM2_HOT_STATE; /* modules' setup hooks called (under the lock) */
/* Held by the heartbeat while its setup may hold the loader's locks
 * (loading PAPI, reading the list of loaded objects), and by fork's
 * prepare handler: a child must never inherit a loader lock held by the
 * heartbeat, a thread it does not have, or its exit waits for it forever
 * (dl_iterate_phdr in a module's end).  Taken before the core's lock. */
static pthread_mutex_t hb_loader_lock LWM2_HOT_STATE = PTHREAD_MUTEX_INITIALIZER;

/* The heartbeat waits on a condition variable rather than sleeping, so
 * that lwm2_heartbeat_stop() can end it at once. */
static void *heartbeat(void *arg)
{
	int gen = (int)(intptr_t)arg;
	/* From the start of the process: a heartbeat started late (it is
	 * started lazily) sets the modules up at once. */
	uint64_t setup_ns = lwm2_p.start_ns + LWM2_SETUP_DELAY_MS * 1000000ull;

	lwm2_no_attach = 1;
	atomic_store(&hb_tid, lwm2_raw_gettid());
	lwm2_lock();
	for (;;) {
		uint64_t L = lwm2_p.slice_ms, k = lwm2_slice_now();
		uint64_t wake_ns = (k + 1) * L * 1000000u;
		/* The modules' setup comes first when it is due before the slice
		 * ends (short jobs are then counted from early on). */
		bool setup_due = !hb_setup_done && setup_ns < wake_ns;

		if (setup_due)
			wake_ns = setup_ns;
		struct timespec ts = {.tv_sec = (time_t)(wake_ns / 1000000000u),
		                      .tv_nsec = (long)(wake_ns % 1000000000u)};

		while (!hb_stop && lwm2_now_ns() < wake_ns)
			pthread_cond_timedwait(&hb_cond, &lwm2_p.lock, &ts);
		if (hb_stop) { /* lwm2_heartbeat_stop() joins it */
			lwm2_unlock();
			return NULL;
		}
		if (atomic_load(&lwm2_p.hb_generation) != gen || atomic_load(&lwm2_p.finished)) {
			/* Ending on its own: nobody will join it. */
			lwm2_p.hb_running = false;
			pthread_detach(pthread_self());
			lwm2_unlock();
			return NULL;
		}
		if (setup_due) {
			/* Without the lock: setup may load libraries (the loader's
			 * lock must never be waited for under ours) and report to
			 * the core. */
			hb_setup_done = true;
			lwm2_unlock();
			pthread_mutex_lock(&hb_loader_lock);
			lwm2_for_each_module(m) if (m->setup) m->setup();
			/* The identity, once, so that a process killed later
			 * still names its build in the checkpoints. */
			lwm2_identity_collect();
			pthread_mutex_unlock(&hb_loader_lock);
			lwm2_lock();
			lwm2_identity_apply(lwm2_p.img);
			continue;
		}
		lwm2_for_each_module(m) if (m->slice_end) m->slice_end();
		for (struct lwm2_thread *t = lwm2_p.threads; t; t = t->next) {
			uint32_t a = atomic_load_explicit(&t->active, memory_order_relaxed) & 1;

			atomic_store_explicit(&t->active, a ^ 1, memory_order_relaxed);
			lwm2_fold_thread(t, (int)a);
		}
		/* Slice k in units of the L it was measured with. */
		lwm2_slice_add(L == lwm2_p.slice_ms ? k : k * L / lwm2_p.slice_ms);
		lwm2_rank_file_write(LWM2_END_CHECKPOINT, 0, 0);
	}
}

/* The heartbeat blocks every signal (it must never run an application's
 * handler nor take a sample).  exit() ends it with the process; nothing
 * waits for it except lwm2_heartbeat_stop(). */
int lwm2_heartbeat_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	/* An old glibc's process without libpthread.so.0 has none of these
	 * (glibc_compat.h): it keeps its record by the timer's checkpoints. */
	if (!lwm2_real_pthread_create || !LWM2_HAVE_PTHREAD)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	hb_stop = false;
	rc = lwm2_real_pthread_create(&hb_thread, &attr, heartbeat,
	                              (void *)(intptr_t)atomic_load(&lwm2_p.hb_generation));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		lwm2_debug("lwm2: start: couldn't start the heartbeat: %s", strerror(rc));
		return -1;
	}
	lwm2_p.hb_running = true;
	return 0;
}

void lwm2_heartbeat_want(void)
{
	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed) ||
	    __atomic_load_n(&lwm2_p.hb_running, __ATOMIC_RELAXED) || !lwm2_here())
		return;
	lwm2_in_core++;
	lwm2_lock();
	/* Under the lock: two threads wanting it at once start one. */
	if (!lwm2_p.hb_running && !atomic_load(&lwm2_p.finished))
		lwm2_heartbeat_start();
	lwm2_unlock();
	lwm2_in_core--;
}

uint64_t lwm2_next_slice_end_ns(void)
{
	return (lwm2_slice_now() + 1) * lwm2_p.slice_ms * 1000000u;
}

void lwm2_checkpoint_from_handler(void)
{
	if (lwm2_now_ns() < atomic_load_explicit(&lwm2_p.next_ckpt_ns, memory_order_relaxed) ||
	    lwm2_in_core || !lwm2_here())
		return;
	/* Never wait in a handler: the holder may be this very thread. */
	if (!lwm2_trylock())
		return;
	lwm2_in_core++;
	if (!lwm2_p.hb_running && !atomic_load(&lwm2_p.finished)) {
		lwm2_record_write(LWM2_END_CHECKPOINT, 0, 0, true);
		atomic_store_explicit(&lwm2_p.next_ckpt_ns, lwm2_next_slice_end_ns(),
		                      memory_order_relaxed);
	}
	lwm2_in_core--;
	lwm2_unlock();
}

void lwm2_heartbeat_fork_prepare(void)
{
	lwm2_lock_reclaim(&hb_loader_lock);
	pthread_mutex_lock(&hb_loader_lock);
}

void lwm2_heartbeat_fork_parent(void)
{
	pthread_mutex_unlock(&hb_loader_lock);
}

void lwm2_heartbeat_fork_child_locks(void)
{
	hb_loader_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}

/* In the fork child: the parent's heartbeat does not exist there. */
void lwm2_heartbeat_fork_child(void)
{
	hb_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	lwm2_p.hb_running = false;
	hb_stop = false;
	hb_setup_done = false; /* the child's modules may still need it */
	atomic_store(&hb_tid, 0);
}

/*
 * End the heartbeat and wait until the kernel has let go of it, so that
 * the process is single-threaded again if the application is (unshare()
 * and setns() of some namespaces refuse multithreaded callers).  Returns
 * true when it was running.  Not under the lock.
 */
static void wait_gone(pid_t tid)
{
	for (int i = 0; tid > 0 && i < 2000; i++) {
		struct timespec ts = {0, 50000};

		if (syscall(SYS_tgkill, lwm2_raw_getpid(), tid, 0) != 0 && errno == ESRCH)
			break;
		nanosleep(&ts, NULL);
	}
}

bool lwm2_heartbeat_stop(void)
{
	pid_t tid;

	/* The child of a raw clone (bubblewrap and other container runtimes
	 * start their namespaces so): no fork handler ran, the heartbeat is
	 * the parent's, and joining it would wait forever. */
	if (!lwm2_here())
		return false;
	lwm2_lock();
	if (!lwm2_p.hb_running) {
		/* A heartbeat that saw the process finished ended on its own
		 * (detached) and may still be on its way out: wait until it is
		 * gone, so that its thread-local storage is freed before exit
		 * (a leak checker would find it "possibly lost"). */
		tid = atomic_exchange(&hb_tid, 0);
		lwm2_unlock();
		wait_gone(tid);
		return false;
	}
	hb_stop = true;
	pthread_cond_broadcast(&hb_cond);
	lwm2_unlock();
	pthread_join(hb_thread, NULL);
	/* pthread_join returns when the thread's tid is cleared, a little
	 * before the kernel removes it from the thread group. */
	wait_gone(atomic_exchange(&hb_tid, 0));
	lwm2_lock();
	lwm2_p.hb_running = false;
	hb_stop = false;
	lwm2_unlock();
	return true;
}
