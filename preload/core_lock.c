/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The core's one lock (lwm2_p.lock; what it guards: core_int.h), from
 * normal context and from a signal handler.
 */
#include "core_int.h"

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
 * Before a fork takes one of our locks.  A process made as a copy of ours
 * without fork's handlers (a clone system call of its own: bubblewrap
 * starts its sandbox so, and the sandbox's first process forks the
 * command) has our locks as they were at the copy, and one may be held
 * there by a thread this process does not have, which nobody would ever
 * free: the fork would wait forever (seen: one sandboxed step in about 70
 * hung, the copy made while the heartbeat held the core's lock).  glibc
 * keeps the holder's thread id in the mutex; when no thread of this
 * process has that id, the lock is made free.  A lock held by a thread of
 * ours is waited for as always.
 */
void lwm2_lock_reclaim(pthread_mutex_t *m)
{
#ifdef __GLIBC__
	int owner = __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
	int saved = errno;
	bool gone;

	if (owner == 0)
		return;
	gone = syscall(SYS_tgkill, lwm2_raw_getpid(), owner, 0) != 0 && errno == ESRCH;
	errno = saved;
	if (gone)
		*m = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
#else
	(void)m;
#endif
}
