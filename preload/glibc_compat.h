/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The oldest glibc liblwm2.so and liblwm2cuda.so load with: 2.17 (CentOS 7).
 *
 * Both are preloaded into the programs of any container image, whose glibc
 * may be far older than the build host's.  The link binds every import to
 * its default version on the build host (Debian 12: GLIBC_2.33 for stat and
 * fstat, GLIBC_2.34 for the pthread, dl and timer functions that moved into
 * libc.so.6), and the loader refuses a library that needs a version its
 * libc lacks: "version `GLIBC_2.33' not found (required by liblwm2.so)",
 * and the program does not start at all.  So this header, forced into every
 * file of both libraries (and of the digest code liblwm2.so links:
 * digest/Makefile.am's *_preload libraries) with -include before anything
 * else, binds:
 *
 *  - each function of libpthread.so.0 and libdl.so.2 that moved into
 *    libc.so.6 (2.32 to 2.34) to its version of glibc 2.17 (the table
 *    below, from `objdump -T libc.so.6`: the newest version not after
 *    GLIBC_2.17; the older ones there are older interfaces).  The loader
 *    matches a version by its name, not by the file that defined it: on an
 *    old glibc pthread_join@GLIBC_2.2.5 resolves in libpthread.so.0, which
 *    therefore stays loaded with the library (NEEDED, preload/Makefile.am),
 *    and on a new one in libc.so.6, the same function.  The functions
 *    lwm2 defines itself (pthread_create, pthread_sigmask: interposers) are
 *    not in it: .symver would version the definition.  Those of librt.so.1
 *    (timer_*, aio_*, shm_*) are not in it either: the library does not
 *    load librt.so.1, which would cost every process start its pages;
 *  - the functions glibc 2.17 has under no name lwm2 can import to lwm2's
 *    own definitions (glibc_compat.c), by an assembler name: stat and
 *    fstat (2.33; before, inline calls of __xstat and __fxstat, which later
 *    glibc keeps as compatibility symbols only) and the timer_* calls on
 *    the thread CPU clock (librt's), as the system calls themselves, and
 *    glibc 2.33's copy of CPUID (__x86_get_cpuid_feature_leaf, looked up
 *    at run time).
 *
 * test/glibc_versions.sh fails naming every import newer than GLIBC_2.17
 * and every NEEDED library a minimal image lacks.  A new import it names
 * goes into the table (a libpthread or libdl function), or gets a
 * definition in glibc_compat.c.  glibc on x86_64 only: elsewhere the base
 * version differs (aarch64 starts at 2.17).  No #include here: a system
 * header would fix the feature macros before the file defines _GNU_SOURCE.
 */
#ifndef LWM2_GLIBC_COMPAT_H
#define LWM2_GLIBC_COMPAT_H

#if defined(__x86_64__) && defined(__linux__) && defined(__has_include)
#if __has_include(<gnu/libc-version.h>)
#define LWM2_GLIBC_COMPAT 1
#endif
#endif

#ifdef LWM2_GLIBC_COMPAT

/* Function, its version in glibc 2.17 (x86_64). */
#define LWM2_GLIBC_217_VERSIONS(X)                                                                 \
	X(__pthread_cleanup_routine, "GLIBC_2.3.3")                                                \
	X(__pthread_key_create, "GLIBC_2.2.5")                                                     \
	X(__pthread_register_cancel, "GLIBC_2.3.3")                                                \
	X(__pthread_register_cancel_defer, "GLIBC_2.3.3")                                          \
	X(__pthread_unregister_cancel, "GLIBC_2.3.3")                                              \
	X(__pthread_unregister_cancel_restore, "GLIBC_2.3.3")                                      \
	X(__pthread_unwind_next, "GLIBC_2.3.3")                                                    \
	X(_pthread_cleanup_pop, "GLIBC_2.2.5")                                                     \
	X(_pthread_cleanup_push, "GLIBC_2.2.5")                                                    \
	X(dladdr, "GLIBC_2.2.5")                                                                   \
	X(dladdr1, "GLIBC_2.3.3")                                                                  \
	X(dlclose, "GLIBC_2.2.5")                                                                  \
	X(dlerror, "GLIBC_2.2.5")                                                                  \
	X(dlinfo, "GLIBC_2.3.3")                                                                   \
	X(dlmopen, "GLIBC_2.3.4")                                                                  \
	X(dlopen, "GLIBC_2.2.5")                                                                   \
	X(dlsym, "GLIBC_2.2.5")                                                                    \
	X(dlvsym, "GLIBC_2.2.5")                                                                   \
	X(pthread_attr_getaffinity_np, "GLIBC_2.3.4")                                              \
	X(pthread_attr_getguardsize, "GLIBC_2.2.5")                                                \
	X(pthread_attr_getstack, "GLIBC_2.2.5")                                                    \
	X(pthread_attr_getstackaddr, "GLIBC_2.2.5")                                                \
	X(pthread_attr_getstacksize, "GLIBC_2.2.5")                                                \
	X(pthread_attr_setaffinity_np, "GLIBC_2.3.4")                                              \
	X(pthread_attr_setguardsize, "GLIBC_2.2.5")                                                \
	X(pthread_attr_setstack, "GLIBC_2.2.5")                                                    \
	X(pthread_attr_setstackaddr, "GLIBC_2.2.5")                                                \
	X(pthread_attr_setstacksize, "GLIBC_2.2.5")                                                \
	X(pthread_barrier_destroy, "GLIBC_2.2.5")                                                  \
	X(pthread_barrier_init, "GLIBC_2.2.5")                                                     \
	X(pthread_barrier_wait, "GLIBC_2.2.5")                                                     \
	X(pthread_barrierattr_destroy, "GLIBC_2.2.5")                                              \
	X(pthread_barrierattr_getpshared, "GLIBC_2.3.3")                                           \
	X(pthread_barrierattr_init, "GLIBC_2.2.5")                                                 \
	X(pthread_barrierattr_setpshared, "GLIBC_2.2.5")                                           \
	X(pthread_cancel, "GLIBC_2.2.5")                                                           \
	X(pthread_condattr_getclock, "GLIBC_2.3.3")                                                \
	X(pthread_condattr_getpshared, "GLIBC_2.2.5")                                              \
	X(pthread_condattr_setclock, "GLIBC_2.3.3")                                                \
	X(pthread_condattr_setpshared, "GLIBC_2.2.5")                                              \
	X(pthread_detach, "GLIBC_2.2.5")                                                           \
	X(pthread_getaffinity_np, "GLIBC_2.3.4")                                                   \
	X(pthread_getattr_np, "GLIBC_2.2.5")                                                       \
	X(pthread_getconcurrency, "GLIBC_2.2.5")                                                   \
	X(pthread_getcpuclockid, "GLIBC_2.2.5")                                                    \
	X(pthread_getname_np, "GLIBC_2.12")                                                        \
	X(pthread_getspecific, "GLIBC_2.2.5")                                                      \
	X(pthread_join, "GLIBC_2.2.5")                                                             \
	X(pthread_key_create, "GLIBC_2.2.5")                                                       \
	X(pthread_key_delete, "GLIBC_2.2.5")                                                       \
	X(pthread_kill, "GLIBC_2.2.5")                                                             \
	X(pthread_mutex_consistent, "GLIBC_2.12")                                                  \
	X(pthread_mutex_getprioceiling, "GLIBC_2.4")                                               \
	X(pthread_mutex_setprioceiling, "GLIBC_2.4")                                               \
	X(pthread_mutex_timedlock, "GLIBC_2.2.5")                                                  \
	X(pthread_mutex_trylock, "GLIBC_2.2.5")                                                    \
	X(pthread_mutexattr_destroy, "GLIBC_2.2.5")                                                \
	X(pthread_mutexattr_getprioceiling, "GLIBC_2.4")                                           \
	X(pthread_mutexattr_getprotocol, "GLIBC_2.4")                                              \
	X(pthread_mutexattr_getpshared, "GLIBC_2.2.5")                                             \
	X(pthread_mutexattr_getrobust, "GLIBC_2.12")                                               \
	X(pthread_mutexattr_gettype, "GLIBC_2.2.5")                                                \
	X(pthread_mutexattr_init, "GLIBC_2.2.5")                                                   \
	X(pthread_mutexattr_setprioceiling, "GLIBC_2.4")                                           \
	X(pthread_mutexattr_setprotocol, "GLIBC_2.4")                                              \
	X(pthread_mutexattr_setpshared, "GLIBC_2.2.5")                                             \
	X(pthread_mutexattr_setrobust, "GLIBC_2.12")                                               \
	X(pthread_mutexattr_settype, "GLIBC_2.2.5")                                                \
	X(pthread_once, "GLIBC_2.2.5")                                                             \
	X(pthread_rwlock_destroy, "GLIBC_2.2.5")                                                   \
	X(pthread_rwlock_init, "GLIBC_2.2.5")                                                      \
	X(pthread_rwlock_rdlock, "GLIBC_2.2.5")                                                    \
	X(pthread_rwlock_timedrdlock, "GLIBC_2.2.5")                                               \
	X(pthread_rwlock_timedwrlock, "GLIBC_2.2.5")                                               \
	X(pthread_rwlock_tryrdlock, "GLIBC_2.2.5")                                                 \
	X(pthread_rwlock_trywrlock, "GLIBC_2.2.5")                                                 \
	X(pthread_rwlock_unlock, "GLIBC_2.2.5")                                                    \
	X(pthread_rwlock_wrlock, "GLIBC_2.2.5")                                                    \
	X(pthread_rwlockattr_destroy, "GLIBC_2.2.5")                                               \
	X(pthread_rwlockattr_getkind_np, "GLIBC_2.2.5")                                            \
	X(pthread_rwlockattr_getpshared, "GLIBC_2.2.5")                                            \
	X(pthread_rwlockattr_init, "GLIBC_2.2.5")                                                  \
	X(pthread_rwlockattr_setkind_np, "GLIBC_2.2.5")                                            \
	X(pthread_rwlockattr_setpshared, "GLIBC_2.2.5")                                            \
	X(pthread_setaffinity_np, "GLIBC_2.3.4")                                                   \
	X(pthread_setconcurrency, "GLIBC_2.2.5")                                                   \
	X(pthread_setname_np, "GLIBC_2.12")                                                        \
	X(pthread_setschedprio, "GLIBC_2.3.4")                                                     \
	X(pthread_setspecific, "GLIBC_2.2.5")                                                      \
	X(pthread_sigqueue, "GLIBC_2.11")                                                          \
	X(pthread_spin_destroy, "GLIBC_2.2.5")                                                     \
	X(pthread_spin_init, "GLIBC_2.2.5")                                                        \
	X(pthread_spin_lock, "GLIBC_2.2.5")                                                        \
	X(pthread_spin_trylock, "GLIBC_2.2.5")                                                     \
	X(pthread_spin_unlock, "GLIBC_2.2.5")                                                      \
	X(pthread_testcancel, "GLIBC_2.2.5")                                                       \
	X(pthread_timedjoin_np, "GLIBC_2.3.3")                                                     \
	X(pthread_tryjoin_np, "GLIBC_2.3.3")                                                       \
	X(sem_close, "GLIBC_2.2.5")                                                                \
	X(sem_destroy, "GLIBC_2.2.5")                                                              \
	X(sem_getvalue, "GLIBC_2.2.5")                                                             \
	X(sem_init, "GLIBC_2.2.5")                                                                 \
	X(sem_open, "GLIBC_2.2.5")                                                                 \
	X(sem_post, "GLIBC_2.2.5")                                                                 \
	X(sem_timedwait, "GLIBC_2.2.5")                                                            \
	X(sem_trywait, "GLIBC_2.2.5")                                                              \
	X(sem_unlink, "GLIBC_2.2.5")                                                               \
	X(sem_wait, "GLIBC_2.2.5")

/* A reference to NAME becomes one to NAME@VERSION; a name the file does
 * not use makes no reference at all. */
#define LWM2_SYMVER(name, version) __asm__(".symver " #name ", " #name "@" version);
LWM2_GLIBC_217_VERSIONS(LWM2_SYMVER)
#undef LWM2_SYMVER

/*
 * The functions lwm2 calls that an old libc.so.6 lacks (before 2.34 they
 * were libpthread.so.0's and libdl.so.2's alone; `objdump -T` of Debian
 * 11's libc.so.6).  They are weak references, and liblwm2.so does not load
 * those two libraries itself: on glibc 2.34 and later they are empty
 * stubs, and opening and mapping them cost every process start 18 system
 * calls and about 25,000 instructions (bench/run.sh, callgrind of the
 * trivial program).  On an old glibc a program that uses threads or
 * dlopen has loaded them, and the references resolve there; in one that
 * has not, they are null, and lwm2 does without: no heartbeat thread (the
 * CPU-time timer's checkpoints keep the record), no thread-end hook (the
 * process has one thread), no MPI found outside the global scope, no
 * PAPI.  Each call site asks LWM2_HAVE_PTHREAD or LWM2_HAVE_DL first;
 * lwm2_core.h declares them weak after the system headers (a #pragma weak
 * here, before any declaration, is what clang warns of in a file that
 * never declares one).
 */
#define LWM2_OLD_LIBC_LACKS(X)                                                                     \
	X(dladdr)                                                                                  \
	X(dlclose)                                                                                 \
	X(dlopen)                                                                                  \
	X(dlsym)                                                                                   \
	X(pthread_attr_setstacksize)                                                               \
	X(pthread_detach)                                                                          \
	X(pthread_join)                                                                            \
	X(pthread_key_create)                                                                      \
	X(pthread_mutex_trylock)                                                                   \
	X(pthread_setspecific)
/* Whether weak import FN resolved (a function of LWM2_OLD_LIBC_LACKS).  Its
 * address is bound when the library loads, where a call is bound at its
 * first run: so one function of each library stands for all of its own
 * (LWM2_HAVE_PTHREAD, LWM2_HAVE_DL), and the start binds two, not ten. */
#define LWM2_IMPORTED(fn) ((void *)(fn) != (void *)0)

/* lwm2's own definitions (glibc_compat.c), under names of their own: the
 * types as glibc declares them (clockid_t is int, timer_t void *), which
 * its headers then declare again. */
struct stat;
struct sigevent;
struct itimerspec;
struct cpuid_feature;
#define LWM2_COMPAT_FN(name) __asm__("lwm2_compat_" #name) __attribute__((visibility("hidden")))
extern int stat(const char *__restrict, struct stat *__restrict) LWM2_COMPAT_FN(stat);
extern int fstat(int, struct stat *) LWM2_COMPAT_FN(fstat);
extern int timer_create(int, struct sigevent *__restrict, void **__restrict)
    LWM2_COMPAT_FN(timer_create);
extern int timer_settime(void *, int, const struct itimerspec *__restrict,
                         struct itimerspec *__restrict) LWM2_COMPAT_FN(timer_settime);
extern int timer_delete(void *) LWM2_COMPAT_FN(timer_delete);
extern const struct cpuid_feature *__x86_get_cpuid_feature_leaf(unsigned int)
    LWM2_COMPAT_FN(x86_get_cpuid_feature_leaf);
#undef LWM2_COMPAT_FN

#endif /* LWM2_GLIBC_COMPAT */
#endif
