/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-thread storage: a pool of struct lwm2_thread in mmap'd chunks (no
 * malloc, so attaching is safe wherever a wrapper runs), the registry of
 * live threads, the pthread_create trampoline and the end of a thread.
 *
 * A thread ends through a pthread key destructor, which runs on return
 * from the start routine, pthread_exit and cancellation alike.  It folds
 * both buffers into the process storage and gives the storage back; a
 * thread that never ends is folded by the final write instead.
 */
#include "core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

__thread struct lwm2_thread *lwm2_self __attribute__((tls_model("initial-exec")));

/* Chunks of the pool; at most this many threads are measured at once, the
 * memory budget (about 1.4 KiB per thread, touched only when used). */
#define POOL_CHUNK      64
#define POOL_MAX_CHUNKS 64

static struct lwm2_thread *chunks[POOL_MAX_CHUNKS] LWM2_HOT_STATE;
static unsigned nchunks LWM2_HOT_STATE;
static unsigned chunk_used LWM2_HOT_STATE; /* elements of the newest chunk handed out */
static struct lwm2_thread *free_list LWM2_HOT_STATE;
static pthread_key_t end_key LWM2_HOT_STATE;
static bool key_ok LWM2_HOT_STATE;

int (*lwm2_real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                void *) LWM2_HOT_STATE;

static void thread_end(void *arg);

void lwm2_threads_init(void)
{
	key_ok = LWM2_HAVE_PTHREAD && pthread_key_create(&end_key, thread_end) == 0;
}

/* Under the lock.  A freed element first, else the newest chunk's next
 * unused one: nothing else of a chunk is touched, so a process pays the
 * page faults of the threads it has, not of the chunk (a one-thread
 * process touched all 64 elements, 23 pages, when the chunk was linked
 * into the free list at once). */
static struct lwm2_thread *pool_get(void)
{
	struct lwm2_thread *t = free_list;

	if (t) {
		free_list = t->next;
		return t;
	}
	if (!nchunks || chunk_used == POOL_CHUNK) {
		void *p;

		if (nchunks == POOL_MAX_CHUNKS)
			return NULL;
		p = lwm2_raw_mmap(NULL, POOL_CHUNK * sizeof(*t), PROT_READ | PROT_WRITE,
		                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		chunks[nchunks++] = p;
		chunk_used = 0;
	}
	return &chunks[nchunks - 1][chunk_used++];
}

static void pool_put(struct lwm2_thread *t)
{
	t->next = free_list;
	free_list = t;
}

struct lwm2_thread *lwm2_thread_attach(bool is_main)
{
	struct lwm2_thread *t;

	lwm2_lock();
	t = pool_get();
	if (!t) {
		lwm2_p.img->flags |= LWM2_F_PARTIAL;
		lwm2_unlock();
		lwm2_no_attach = 1; /* do not try again on every call */
		return NULL;
	}
	memset(t, 0, sizeof(*t));
	/* The main thread's id is the pid (known): one system call less. */
	t->tid = is_main && lwm2_p.pid ? lwm2_p.pid : lwm2_raw_gettid();
	t->is_main = is_main;
	t->next = lwm2_p.threads;
	lwm2_p.threads = t;
	lwm2_p.threads_total++;
	if (++lwm2_p.nlive > lwm2_p.threads_max)
		lwm2_p.threads_max = lwm2_p.nlive;
	lwm2_self = t;
	/* Under the lock: a back-off (the application took the sampling
	 * signal) stops every timer it can see, and must see this one. */
	lwm2_sampling_thread_start(t);
	lwm2_unlock();

	if (key_ok)
		pthread_setspecific(end_key, t);
	lwm2_for_each_module(m) if (m->thread_start) m->thread_start(t);
	return t;
}

struct lwm2_thread *lwm2_thread_attach_slow(void)
{
	struct lwm2_thread *t;

	/* Not while the core runs in this thread (a wrapper in a signal
	 * handler that interrupted it), not in the heartbeat or a thread past
	 * its end, not after the final write, not in a vfork child. */
	if (lwm2_in_core || lwm2_no_attach || !atomic_load(&lwm2_on) || !lwm2_here())
		return NULL;
	lwm2_in_core++;
	t = lwm2_thread_attach(false);
	lwm2_in_core--;
	return t;
}

static void thread_end(void *arg)
{
	struct lwm2_thread *t = arg;

	if (!t || t != lwm2_self)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_sampling_thread_end(t);
	lwm2_unlock();
	lwm2_for_each_module(m) if (m->thread_end) m->thread_end(t);
	/* Later key destructors of other libraries may still call wrappers:
	 * they are not counted and must not attach this thread again. */
	lwm2_no_attach = 1;
	lwm2_self = NULL;
	atomic_signal_fence(memory_order_seq_cst);

	lwm2_lock();
	if (!t->exited) {
		struct lwm2_thread **pp;

		lwm2_fold_thread(t, 2);
		lwm2_slice_add(lwm2_slice_now());
		lwm2_thread_scope_ended(t);
		lwm2_view_thread_ended(t);
		for (int e = 0; e < LWM2_NEARMARKS; e++) {
			uint64_t s = atomic_load_explicit(&t->samples[e], memory_order_relaxed);

			lwm2_p.dead_samples[e] += s;
			if (t->is_main)
				lwm2_p.dead_samples_main += s;
		}
		for (pp = &lwm2_p.threads; *pp; pp = &(*pp)->next)
			if (*pp == t) {
				*pp = t->next;
				break;
			}
		lwm2_p.nlive--;
		pool_put(t);
	}
	lwm2_unlock();
	lwm2_in_core--;
}

/* In the fork child only the calling thread exists: the others' storage
 * goes back to the pool (their counts stay the parent's). */
void lwm2_threads_fork_child(void)
{
	struct lwm2_thread *self = lwm2_self, *t, *next;

	for (t = lwm2_p.threads; t; t = next) {
		next = t->next;
		if (t != self)
			pool_put(t);
	}
	lwm2_p.threads = NULL;
	lwm2_p.nlive = 0;
	lwm2_p.threads_total = 0;
	lwm2_p.threads_max = 0;
	lwm2_thread_scope_fork_child();
	if (self) {
		struct lwm2_thread keep = *self;

		/* The parent's counts in this thread stay the parent's. */
		memset(self, 0, sizeof(*self));
		atomic_store(&self->earmark, atomic_load(&keep.earmark));
		self->tid = lwm2_p.pid; /* the only thread: its id is the new pid */
		self->is_main = true;   /* the only thread of the new process */
		self->next = NULL;
		lwm2_p.threads = self;
		lwm2_p.nlive = lwm2_p.threads_total = lwm2_p.threads_max = 1;
	}
}

#ifndef LWM2_NO_INTERPOSE
struct trampoline {
	void *(*fn)(void *);
	void *arg;
};

static void *trampoline(void *p)
{
	struct trampoline tr = *(struct trampoline *)p;

	free(p);
	if (!lwm2_self && atomic_load(&lwm2_on) && !lwm2_no_attach) {
		lwm2_in_core++;
		lwm2_thread_attach(false);
		lwm2_in_core--;
	}
	return tr.fn(tr.arg);
}

LWM2_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
                               void *arg)
{
	struct trampoline *tr;
	int rc;

	if (!lwm2_real_pthread_create) {
		lwm2_real_pthread_create = lwm2_real("pthread_create");
		if (!lwm2_real_pthread_create)
			return EAGAIN;
	}
	if (!atomic_load_explicit(&lwm2_on, memory_order_relaxed))
		return lwm2_real_pthread_create(th, attr, fn, arg);
	tr = malloc(sizeof(*tr));
	if (!tr) /* measure it lazily then */
		return lwm2_real_pthread_create(th, attr, fn, arg);
	tr->fn = fn;
	tr->arg = arg;
	rc = lwm2_real_pthread_create(th, attr, trampoline, tr);
	if (rc != 0)
		free(tr);
	else /* a multithreaded process is folded thread by thread */
		lwm2_heartbeat_want();
	return rc;
}
#endif
