/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The contract between the core of liblwm2.so and its modules (posix, mpi,
 * papi, cuda).  Modules count into the calling thread's storage with the
 * inline functions below: no lock, no allocation, no system call.
 *
 * Per-thread storage and the slice protocol
 * -----------------------------------------
 * Each thread owns a struct lwm2_thread with two counter buffers.  Only the
 * owning thread ever writes them (single writer), with a relaxed load and a
 * relaxed store: the adds need no lock prefix and no fence.  Counters only
 * grow.  `active` names the buffer wrappers write to.
 *
 * At a slice boundary the heartbeat thread flips `active`, then folds the
 * other ("full") buffer: for every counter it reads the current value and
 * adds value - folded[buffer][counter] to the slice series, remembering the
 * value in `folded`, which only the heartbeat touches.  A wrapper that read
 * `active` just before the flip may still add to the full buffer after it
 * was folded; that add is not lost: it is a difference the next fold of that
 * buffer (one slice later) finds.  Nothing is counted twice because each
 * fold only takes the difference to what the previous fold took.  The sum
 * over all folds of a counter therefore equals the sum of every add, exactly,
 * whatever the interleaving; at most an add straddling a boundary lands in
 * the following slice.  The final fold at exit (or at thread end) takes
 * both buffers.  Correctness needs no flip at all: any fold of either
 * buffer at any time is exact as long as one folder at a time holds the
 * core's lock (checkpoints before exec or on a fatal signal fold both); the
 * flip only keeps the heartbeat off the cache lines the owner is writing.
 * preload/heartbeat.c has the heartbeat's side; preload/test/slices.c
 * proves it with 16 threads across hundreds of 2 ms slices, also under
 * ThreadSanitizer.
 *
 * Cost per process
 * ----------------
 * Batch scripts start thousands of processes that live milliseconds, and
 * every system call costs ~1.3 us on the VMs jobs run in, a thread start
 * tens of us, a file on the node's tmpfs a page and a read at step end.
 * So a process earns its heartbeat and record file by living long enough:
 *  - the first measured process of a tree (a task, a program started by
 *    an unmeasured parent: the application) starts its heartbeat at once,
 *    as hardware counters need it; the library exports LWM2_PARENT=<pid>
 *    so that its children (a batch script's commands) know their parent
 *    is measured, and for them:
 *  - the constructor starts no thread; the heartbeat starts at the first
 *    fork or posix_spawn (the caller waits for children, maybe without CPU
 *    time, and must keep a record that survives SIGKILL), thread creation
 *    or MPI_Init (lwm2_heartbeat_want); before that the sampling handler
 *    writes the record at slice boundaries from signal context, so a
 *    process that only computes is written every slice too;
 *  - a fork child that execs having counted nothing leaves nothing (the
 *    next image is the process; rusage carries the CPU time over);
 *  - an image that ends before LWM2_SHORT_MS (default 1 s), not a task
 *    (LWM2_ROOT_PPID), MPI rank or multithreaded, adds itself with atomic
 *    adds to its executable's slot of the step's fixed-size summary file
 *    (preload/summary.c, layout in lwm2_record.h), and its slices'
 *    counters to the summary's slices of the same times, instead of
 *    writing a record file: bounded files however many commands a step
 *    runs, and the node merge still counts every process, its CPU time,
 *    I/O and exit status class, the top executables, and puts its counters
 *    in the node series (the grid, the export) where they happened;
 *  - the constructor installs each signal handler and reads the old one in
 *    one call, and the main thread's id is its pid.
 *  - each real function is looked up on its first call, in the GNU hash
 *    tables of the objects loaded after the library, not by dlsym
 *    (lwm2_real, elf_sym.c): ~200 instructions a name instead of ~900, and
 *    only for the functions the process calls (the descriptor functions a
 *    signal handler may call were all looked up at every start, some 78,
 *    15,800 instructions); the sanitizer check looks only at the
 *    program's and sanitizer-named objects' hash tables;
 *  - the library maps its own files by the mmap system call, not through
 *    its exported mmap wrapper (which would stat the file).
 *  - memory the library writes is memory every fork copies and every new
 *    image faults in (a page fault costs microseconds on a virtual
 *    machine, more than most system calls): the thread pool hands out a
 *    chunk's elements one by one, and the hardware-counter module walks
 *    only the slots its threads have used, so a process touches the
 *    storage of the threads it has (a one-thread process touched 23 pages
 *    of thread storage, and each fork child of a shell 20 of counter slots,
 *    before that); the summary's pages are first touched by a store (a
 *    load first maps a page read-only and the store faults again), the
 *    counter module's default plan is made by its setup, and no printf
 *    runs at start or end (its code is pages of libc nothing else runs);
 *  - an image bound for the summary skips finding its language, runtimes
 *    and identity (the program's symbol table, every object's headers),
 *    which the summary does not keep; a record file the summary refuses
 *    finds them after all (rank_file.c).  The idle child of a shell that
 *    execs skips its record's work the same way (process.c);
 *  - the library exports only its wrappers and the CUDA bridge and binds
 *    its calls of its own functions at link time (-Bsymbolic-functions):
 *    the loader looks up 76 symbols for it at each start, not 118.
 * What a short process still pays: loading the library (mapping it and
 * binding its imports: the larger part of the instructions lwm2 adds),
 * the real functions' lookup, one CPU-time timer, the handler installs,
 * getrusage and the summary's open, fstat, mmap and close, and the page
 * faults of the library's code and data it runs through.  Measured on
 * bench/trivial (bench/run.sh, section process): 130,000 instructions
 * without lwm2, 207,600 with the library loaded but off, 254,300 as the
 * child of a measured parent (load, the constructor and the exit); page
 * faults 51, 62 and 81; bench/README.md has the timings.  A measured
 * shell's fork is also the slower fork of a multithreaded process (its
 * heartbeat thread): glibc's fork handlers and the kernel's TLB flushes.
 * doc/liblwm2.7 ("Cost per process") says the same for users.
 */
#ifndef LWM2_CORE_H
#define LWM2_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lwm2_record.h"

/* The functions of glibc_compat.h's LWM2_OLD_LIBC_LACKS are weak imports
 * (every file that calls one includes this header: test/glibc_versions.sh
 * finds a strong one in the built library), and LWM2_HAVE_PTHREAD and
 * LWM2_HAVE_DL say whether they resolved in this process.  Where that
 * header is not in force, each is an ordinary import that the loader has
 * resolved. */
#if defined(LWM2_OLD_LIBC_LACKS) && defined(_GNU_SOURCE)
#include <dlfcn.h>
#include <pthread.h>
#define LWM2_WEAK_IMPORT(fn) extern __typeof__(fn) fn __attribute__((weak));
LWM2_OLD_LIBC_LACKS(LWM2_WEAK_IMPORT)
#undef LWM2_WEAK_IMPORT
#endif
#ifndef LWM2_IMPORTED
#define LWM2_IMPORTED(fn) 1
#endif
/* The thread functions (libpthread.so.0's before glibc 2.34) and the
 * dynamic-loading ones (libdl.so.2's), each library asked for by one of its
 * functions: where it is loaded, it has them all. */
#define LWM2_HAVE_PTHREAD LWM2_IMPORTED(pthread_key_create)
#define LWM2_HAVE_DL      LWM2_IMPORTED(dlsym)

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define LWM2_EXPORT      __attribute__((visibility("default")))
#define LWM2_HIDDEN      __attribute__((visibility("hidden")))
#define LWM2_LIKELY(x)   __builtin_expect(!!(x), 1)
#define LWM2_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LWM2_CACHELINE   64
/*
 * For a wrapper of a variadic function: the value of expr, which reads the
 * arguments after the parameter last through ap (va_start before it,
 * va_end after it).  Used in the variadic function itself, with
 * <stdarg.h>.
 */
#define LWM2_WITH_VA(ap, last, expr)                                                               \
	__extension__({                                                                            \
		va_list ap;                                                                        \
		va_start(ap, last);                                                                \
		__typeof__(expr) lwm2_va_result_ = (expr);                                         \
		va_end(ap);                                                                        \
		lwm2_va_result_;                                                                   \
	})
/*
 * Small state a process writes at its start, at its end or in a fork
 * child, gathered in one section (placed by the linker beside .data) so
 * it shares a few pages: each page a process first writes is a page
 * fault, 3-5 us on a virtual machine, in every short process and every
 * fork child (bench/run.sh, section process, counts them).  Large tables
 * stay out of it.
 */
#define LWM2_HOT_STATE __attribute__((section(".lwm2_hot")))

struct lwm2_thread {
	/* Hot: written by the owning thread only. */
	_Atomic uint32_t active;  /* buffer wrappers write to; flipped by the heartbeat */
	_Atomic uint32_t earmark; /* enum lwm2_earmark; read by the sampling handler */
	_Atomic uint64_t buf[2][LWM2_NCOUNTERS];
	_Atomic uint64_t samples[LWM2_NEARMARKS]; /* written by the signal handler in this thread */
	/* Of those, periods the kernel delivered as one signal's overrun (it
	 * merges expiries when it checks the timer late, on a loaded host):
	 * they all count at the earmark that signal found, so the shares are
	 * less certain than their number says. */
	_Atomic uint64_t samples_merged;
	/* The sampling grid on the thread's own CPU clock: where it starts
	 * (ns; -1 while the timer is stopped or the clock unreadable) and
	 * the periods counted on it.  A signal counts every period the clock
	 * has passed since the last count, and the thread counts the rest
	 * itself before its timer stops: on a loaded host the kernel checks a
	 * CPU timer late, merges expiries without saying so in si_overrun,
	 * and was seen to send no signal for 100 ms and more of a thread's
	 * time (kernel 6.18, two cores under load: a thread of 400 ms of CPU
	 * got 2 samples instead of 39). */
	int64_t sample_base_ns;
	_Atomic uint64_t samples_seen;
	/* Set when another thread restarted this thread's timer: its
	 * handler begins the grid anew at its next sample. */
	_Atomic uint32_t sample_rebase;

	/* Cold: owned by the core (registry lock), on cache lines of its own
	 * so the heartbeat's folds never touch a line the owner writes. */
	uint64_t folded[2][LWM2_NCOUNTERS] __attribute__((aligned(LWM2_CACHELINE)));
	uint64_t samples_folded[LWM2_NEARMARKS];
	struct lwm2_thread *next;
	void *module_state[4]; /* per-thread state of modules (PAPI event set, ...) */
	int tid;
	bool is_main;
	bool exited;
	bool timer_armed;
	bool timer_paused; /* stopped while the thread blocks the sampling signal */
	timer_t timer;
} __attribute__((aligned(LWM2_CACHELINE)));

/* Slot indices in module_state. */
enum { LWM2_MODSTATE_PAPI = 0, LWM2_MODSTATE_CUDA = 1 };

/* The calling thread's storage; NULL until attached. */
extern __thread struct lwm2_thread *lwm2_self __attribute__((tls_model("initial-exec")));

/* Nonzero while the library measures; 0 when lwm2 is off for the job, before
 * the constructor and after the final write: every wrapper then just calls
 * through.  The wrappers that count calls (I/O, MPI, CUDA) count only
 * under LWM2_ON_COUNTING: in light mode (LWM2_MODE=light) they call
 * through as when off, at the same cost, while the core still follows
 * threads and processes for their times and hardware counters. */
extern _Atomic int lwm2_on;
enum { LWM2_ON_COUNTING = 1, LWM2_ON_LIGHT = 2 };

/* Whether the wrappers count this call (see lwm2_on). */
static inline bool lwm2_counting(void)
{
	return atomic_load_explicit(&lwm2_on, memory_order_relaxed) == LWM2_ON_COUNTING;
}

/* Attach the calling thread (a thread that did not start through our
 * pthread_create wrapper).  May return NULL (budget exhausted, shutting
 * down): the caller then just does not count. */
struct lwm2_thread *lwm2_thread_attach_slow(void);

static inline struct lwm2_thread *lwm2_thread_get(void)
{
	struct lwm2_thread *t = lwm2_self;

	if (LWM2_UNLIKELY(!t))
		t = lwm2_thread_attach_slow();
	return t;
}

/* Storage for this call, or NULL if it must not be counted. */
static inline struct lwm2_thread *lwm2_enter(void)
{
	if (LWM2_UNLIKELY(!lwm2_counting()))
		return NULL;
	return lwm2_thread_get();
}

static inline _Atomic uint64_t *lwm2_buffer(struct lwm2_thread *t)
{
	return t->buf[atomic_load_explicit(&t->active, memory_order_relaxed) & 1];
}

static inline void lwm2_add(_Atomic uint64_t *buf, enum lwm2_counter c, uint64_t v)
{
	atomic_store_explicit(&buf[c], atomic_load_explicit(&buf[c], memory_order_relaxed) + v,
	                      memory_order_relaxed);
}

static inline void lwm2_count(struct lwm2_thread *t, enum lwm2_counter c, uint64_t v)
{
	lwm2_add(lwm2_buffer(t), c, v);
}

/* Count one call: calls += 1, bytes += bytes, time += ticks. */
static inline void lwm2_count_call(struct lwm2_thread *t, enum lwm2_counter calls,
                                   enum lwm2_counter bytes, uint64_t nbytes, enum lwm2_counter time,
                                   uint64_t ticks)
{
	_Atomic uint64_t *b = lwm2_buffer(t);

	lwm2_add(b, calls, 1);
	lwm2_add(b, bytes, nbytes);
	lwm2_add(b, time, ticks);
}

/* Earmarks nest: enter returns the previous one, leave restores it. */
static inline uint32_t lwm2_earmark_enter(struct lwm2_thread *t, enum lwm2_earmark m)
{
	uint32_t prev = atomic_load_explicit(&t->earmark, memory_order_relaxed);

	atomic_store_explicit(&t->earmark, m, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return prev;
}

static inline void lwm2_earmark_leave(struct lwm2_thread *t, uint32_t prev)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->earmark, prev, memory_order_relaxed);
}

/*
 * The wrapper clock.  Time counters hold clock ticks; the core converts
 * them to ns when it folds (lwm2_ticks_per_ns).  With an invariant TSC the
 * tick is one rdtsc (a few ns); otherwise a vDSO CLOCK_MONOTONIC read.
 */
extern int lwm2_clock_is_tsc;

/* The CLOCK_MONOTONIC tick, kept out of line: inlined, its timespec and
 * call would give every wrapper a stack frame and saved registers even
 * where the TSC is read. */
static __attribute__((noinline, cold, unused)) uint64_t lwm2_ticks_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t lwm2_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* Plain rdtsc, no lfence or rdtscp: the wrappers time calls of
	 * hundreds of ns and more, where a few instructions of reordering
	 * around the read do not show, and a fence would cost more than
	 * the read itself. */
	if (LWM2_LIKELY(lwm2_clock_is_tsc))
		return __rdtsc();
#endif
	return lwm2_ticks_monotonic();
}

/* Convert clock ticks to ns (calibrated once at start). */
uint64_t lwm2_ticks_to_ns(uint64_t ticks);

/*
 * Resolve the next definition of a symbol (RTLD_NEXT).  Safe to call before
 * the constructor and from inside dlsym's own allocations: it returns NULL
 * while a resolution is already running on this thread, and the caller then
 * falls back (a raw system call, or not counting).
 */
void *lwm2_real(const char *name);

/*
 * True when lwm2_real answers from the objects' own hash tables alone
 * (memory reads, no lock, no dlsym) for the objects loaded with the
 * program: a real function a signal handler may call can then be looked
 * up on its first call instead of at every process start.  False under
 * LWM2_DEBUG (every answer checked against dlsym) and where an object
 * lacks the tables, so the caller resolves at start as before.
 */
bool lwm2_real_signal_safe(void);

/*
 * In a fork's prepare handler, before it takes its lock m: m made free
 * in a copy of the process made by a clone system call, without fork's
 * handlers, where its holder may be a thread the copy does not have (see
 * core_lock.c).
 */
void lwm2_lock_reclaim(pthread_mutex_t *m);

/*
 * Mark a metric group as not measured, with a short reason that the record
 * and the digest show (e.g. "no hardware counters on this platform").
 */
void lwm2_group_missing(enum lwm2_group g, const char *reason);

/*
 * True when an image ending now goes to the step's summary (short, no
 * record file of its own), which keeps neither runtimes nor reasons: a
 * module's fini may leave out work that only feeds those.
 */
bool lwm2_goes_to_summary(void);

/* Record fields that modules fill in (under the core's lock, not hot). */
void lwm2_set_runtime(uint32_t runtime_flags);
void lwm2_set_mpi_identity(int rank, int size, int thread_provided, const char *library);
void lwm2_set_flag(uint32_t flag);
/* The event each hardware counter role counts with (the record's
 * hwc_events). */
void lwm2_set_hwc_events(const char *events);

/*
 * Module hooks.  Each module defines a struct lwm2_module and the core calls
 * its hooks: init in the constructor (after the environment is read),
 * thread_start/thread_end in the thread itself, slice_end in the heartbeat
 * thread for every live thread (e.g. to read hardware counters into the
 * thread's buffer... only from that thread: see papi.c), fini before the
 * final write.  Any hook may be NULL.
 *
 * setup is for work too costly for the constructor (loading a library):
 * the heartbeat calls it once, LWM2_SETUP_DELAY_MS after it started, NOT
 * holding the core's lock (setup may take its own locks, load libraries
 * and call lwm2_group_missing).  A process that ends sooner never pays for
 * it.  The heartbeat of a fork child calls it again in the child, so a
 * module must make a second call harmless.  read_now brings the counters
 * a module adds at slice ends up to date for a view query.
 */
#define LWM2_SETUP_DELAY_MS 150
struct lwm2_module {
	const char *name;
	void (*init)(void);
	void (*thread_start)(struct lwm2_thread *t);
	void (*thread_end)(struct lwm2_thread *t);
	void (*slice_end)(void);
	void (*fini)(void);
	void (*fork_child)(void);
	void (*setup)(void);
	/* the application's view asks for counters read now (lwm2_view(3)):
	 * from its thread, not holding the core's lock */
	void (*read_now)(void);
};

#endif /* LWM2_CORE_H */
