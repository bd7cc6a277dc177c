/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The functions glibc 2.17 has under no name lwm2 can import, as lwm2's
 * own: glibc_compat.h names them (lwm2_compat_stat, ...) wherever the
 * library calls stat, fstat, timer_create, timer_settime, timer_delete or
 * reads glibc's copy of CPUID, so the library loads with every glibc from
 * 2.17 on and behaves the same on all.
 */
#include "core_int.h"

#include "config.h"

#ifdef LWM2_GLIBC_COMPAT

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * stat and fstat are functions of libc.so.6 from 2.33 on; before, they were
 * inline calls of __xstat and __fxstat, which libc.so.6 keeps only as
 * compatibility symbols since (a sanitizer runtime that defines __xstat
 * itself then makes the link bind a call to nowhere).  So they are the
 * system calls, as glibc makes them on x86_64, where struct stat is the
 * kernel's.
 */
int stat(const char *restrict path, struct stat *restrict st)
{
	return (int)syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
}

int fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

/*
 * The sampling timers (sampling.c: CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID)
 * are the system calls themselves, as glibc makes them for every
 * notification but SIGEV_THREAD, which needs glibc's helper thread and
 * which lwm2 does not use: glibc's timer_t is then the kernel's timer id.
 * timer_* were librt's before 2.34 (GLIBC_2.3.3), and loading librt.so.1
 * would cost every process start several pages.
 */
int timer_create(clockid_t clock, struct sigevent *restrict sev, timer_t *restrict timer)
{
	int id;

	if (sev && sev->sigev_notify == SIGEV_THREAD) {
		errno = ENOTSUP;
		return -1;
	}
	if (syscall(SYS_timer_create, clock, sev, &id) != 0)
		return -1;
	*timer = (timer_t)(intptr_t)id;
	return 0;
}

int timer_settime(timer_t timer, int flags, const struct itimerspec *restrict value,
                  struct itimerspec *restrict old)
{
	return (int)syscall(SYS_timer_settime, (int)(intptr_t)timer, flags, value, old);
}

int timer_delete(timer_t timer)
{
	return (int)syscall(SYS_timer_delete, (int)(intptr_t)timer);
}

#ifdef HAVE_SYS_PLATFORM_X86_H
#include <cpuid.h>
#include <sys/platform/x86.h>

/*
 * glibc 2.33's copy of CPUID (digest/format/cpu_features.h says why lwm2
 * reads it rather than execute the instruction), looked up at run time:
 * the first call is lwm2_clock_init's, at the start of the process.  An
 * older glibc has none: then the two leaves lwm2 asks about (1: SSE 4.2;
 * 0x80000007: the invariant TSC) are read with CPUID once, as
 * cpu_features.h does where the build host lacks the header, and every
 * other leaf reads as no feature at all.
 */
typedef const struct cpuid_feature *(*feature_leaf_fn)(unsigned int);

static _Atomic(feature_leaf_fn) glibc_leaf;
static _Atomic int leaf_state; /* 0 not looked up, 1 glibc's, 2 lwm2's own */
static struct cpuid_feature own_leaf[2], no_leaf;

static void own_leaf_read(struct cpuid_feature *f, unsigned int leaf)
{
	unsigned int r[4];

	if (!__get_cpuid(leaf, &r[0], &r[1], &r[2], &r[3]))
		return;
	for (int k = 0; k < 4; k++) {
		__atomic_store_n(&f->cpuid_array[k], r[k], __ATOMIC_RELAXED);
		__atomic_store_n(&f->active_array[k], r[k], __ATOMIC_RELAXED);
	}
}

const struct cpuid_feature *__x86_get_cpuid_feature_leaf(unsigned int index)
{
	int state = atomic_load_explicit(&leaf_state, memory_order_acquire);

	if (!state) {
		/* Two first callers at once both look, and find the same. */
		feature_leaf_fn f = (feature_leaf_fn)lwm2_real("__x86_get_cpuid_feature_leaf");

		if (f) {
			atomic_store_explicit(&glibc_leaf, f, memory_order_relaxed);
		} else {
			own_leaf_read(&own_leaf[0], 1);
			own_leaf_read(&own_leaf[1], 0x80000007);
		}
		state = f ? 1 : 2;
		atomic_store_explicit(&leaf_state, state, memory_order_release);
	}
	if (state == 1)
		return atomic_load_explicit(&glibc_leaf, memory_order_relaxed)(index);
	if (index == CPUID_INDEX_1)
		return &own_leaf[0];
	if (index == CPUID_INDEX_80000007)
		return &own_leaf[1];
	return &no_leaf;
}
#endif /* HAVE_SYS_PLATFORM_X86_H */

#endif /* LWM2_GLIBC_COMPAT */
