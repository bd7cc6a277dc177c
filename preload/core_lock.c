/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The core's one lock (lwm2_p.lock; what it guards: core_int.h), from
 * normal context and from a signal handler.
 */
#include "core_int.h"

#include <time.h>

void lwm2_lock(void)
{
	pthread_mutex_lock(&lwm2_p.lock);
}

void lwm2_unlock(void)
{
	pthread_mutex_unlock(&lwm2_p.lock);
}

/* pthread_mutex_trylock, which an old glibc's process without
 * libpthread.so.0 lacks (glibc_compat.h).  Such a process has one thread,
 * and libc's lock and unlock do nothing there either; one that loads
 * libpthread.so.0 later (dlopen) may start threads, and the function is
 * looked up then (lwm2_real: memory reads, safe in a handler). */
bool lwm2_trylock(void)
{
	static int (*_Atomic late)(pthread_mutex_t *);
	int (*f)(pthread_mutex_t *);

	if (LWM2_HAVE_PTHREAD)
		return pthread_mutex_trylock(&lwm2_p.lock) == 0;
	f = atomic_load_explicit(&late, memory_order_relaxed);
	if (!f && (*(void **)&f = lwm2_real("pthread_mutex_trylock")))
		atomic_store_explicit(&late, f, memory_order_relaxed);
	return f ? f(&lwm2_p.lock) == 0 : true;
}

bool lwm2_lock_sig(void)
{
	/* The holder is another thread (the heartbeat blocks all signals, so
	 * it is never interrupted holding it): wait a little, never forever. */
	if (lwm2_in_core)
		return false;
	for (int i = 0; i < 2000; i++) {
		struct timespec ts = {0, 100000};

		if (lwm2_trylock())
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

/*
 * A copy of the process made without fork's handlers (a clone system call
 * of its own: bubblewrap starts its sandbox so, and the sandbox's first
 * process forks the command) has the library's locks as they were at the
 * copy, and one may be held there by a thread the copy does not have,
 * which nobody would ever free: the copy's fork would wait for it forever
 * (seen: one sandboxed step in about 70 hung, the copy made while the
 * heartbeat held the core's lock).  Such a copy is told by its process id:
 * the library notes the id at its start and at every fork (both ends), so
 * a process whose id is another is a copy, and every lock held there is
 * held by a thread it does not have.  glibc's record of the holder is no
 * help: it is empty for a moment while a holder takes or frees the lock.
 */
static _Atomic pid_t known_pid;

void lwm2_lock_known_pid(pid_t pid)
{
	atomic_store_explicit(&known_pid, pid, memory_order_relaxed);
}

void lwm2_lock_reclaim(pthread_mutex_t *m)
{
	pid_t known = atomic_load_explicit(&known_pid, memory_order_relaxed);

	if (known && lwm2_raw_getpid() != known)
		*m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
}
