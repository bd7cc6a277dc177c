/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of the preload core shared by its files (core.c, core_lock.c,
 * rawsys.c, elf_sym.c, env.c, sanitizer.c, clock.c, thread.c,
 * heartbeat.c, rank_file.c, summary.c, sampling.c, process.c, modules.c).
 * Modules use lwm2_core.h only.
 *
 * Locking: one mutex (lwm2_p.lock) guards the thread registry, the
 * process storage (the record image and its slice series) and the record
 * file.  It is taken by the heartbeat, at thread start and end, at fork,
 * exec and exit, never on a counting path.  A thread that holds it marks
 * itself (lwm2_in_core) so that a signal arriving meanwhile in that thread
 * neither attaches nor tries to take it again.
 */
#ifndef LWM2_CORE_INT_H
#define LWM2_CORE_INT_H

/* First include of every core file: RTLD_NEXT, SIGEV_THREAD_ID, gettid. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "lwm2_core.h"

#define LWM2_HIDDEN_FN __attribute__((visibility("hidden")))

/* Images that end sooner than this (ms) are summarized, not recorded (the
 * summary keeps their slices too, so the node series misses nothing);
 * LWM2_SHORT_MS=0 gives every image a record file of its own. */
#define LWM2_SHORT_MS_DEFAULT 1000

/* Why the process storage is being written. */
enum lwm2_end {
	LWM2_END_CHECKPOINT = 0, /* heartbeat or before a risky moment: record stays INCOMPLETE */
	LWM2_END_EXIT,           /* exit() or _exit(): status known */
	LWM2_END_SIGNAL,         /* about to die by a signal */
	LWM2_END_EXEC,           /* the image is about to be replaced */
};

struct lwm2_proc {
	pthread_mutex_t lock;

	/* configuration, from the environment */
	bool debug;
	bool print;
	bool have_dir; /* LWM2_DIR given: the step collects the records */
	char dir[512];
	uint64_t slice_ms; /* current slice length (grows when coarsened) */
	uint32_t max_slices;
	uint32_t sample_hz;
	int sample_sig;

	/* the process */
	pid_t pid;
	uint64_t start_ns; /* CLOCK_REALTIME */

	/* thread registry */
	struct lwm2_thread *threads; /* live, attached threads */
	uint32_t nlive;
	uint32_t threads_total;
	uint32_t threads_max;
	uint64_t dead_samples[LWM2_NEARMARKS]; /* samples of threads that ended */
	uint64_t dead_samples_main;

	/* process storage: the record image, slices follow it */
	struct lwm2_rank_record *img;
	size_t img_capacity;              /* bytes of img, = slot capacity of the file */
	uint64_t first_slice;             /* index of slice 0 in units of slice_ms */
	uint64_t pending[LWM2_NCOUNTERS]; /* folded, not yet in a slice (ticks for ns counters) */

	/* the record file: mapped MAP_SHARED, no descriptor kept */
	unsigned char *map;
	size_t map_size;
	size_t reserved;   /* bytes of each slot backed by allocated blocks */
	uint64_t ino;      /* the file's inode, to find it again to grow it */
	int last_slot;     /* slot of the newest record, -1: none */
	bool written_once; /* a final write made the file without mapping it */
	bool file_failed;
	char path[600];

	/* heartbeat, started lazily (see lwm2_heartbeat_want) */
	bool hb_running;
	uint64_t short_ns; /* LWM2_SHORT_MS: shorter images go to the step summary */
	bool root;         /* a task (LWM2_ROOT_PPID), or no measured parent: never summarized */
	_Atomic uint64_t next_ckpt_ns; /* without a heartbeat: the sampling handler's next write */
	_Atomic int hb_generation;     /* bumped at fork so a stale heartbeat stops */

	/* 0 until a final write (exit, signal, exec) begins; then
	 * LWM2_FIN_WRITING, with a termination signal that came meanwhile
	 * held above LWM2_FIN_SIG_SHIFT (lwm2_finish_defer), and
	 * LWM2_FIN_DONE once written. */
	_Atomic int finished;
	/* The final write's language, runtimes and identity are still to be
	 * found, should it make a record file (see before_final_write). */
	bool runtimes_pending;
	bool sampling_on;
	/* Groups whose reason for not being measured stands (a bit per
	 * enum lwm2_group): light mode's, over a module's later verdict. */
	uint32_t reasons_kept;
};

extern struct lwm2_proc lwm2_p LWM2_HIDDEN;
extern __thread int lwm2_in_core LWM2_HIDDEN __attribute__((tls_model("initial-exec")));
/* 1: this thread must not attach (heartbeat, a thread past its end). */
extern __thread int lwm2_no_attach LWM2_HIDDEN __attribute__((tls_model("initial-exec")));

/* core_lock.c: lock the core from normal context. */
void lwm2_lock(void) LWM2_HIDDEN_FN;
void lwm2_unlock(void) LWM2_HIDDEN_FN;
/* From a signal handler: bounded wait; false if it cannot be had safely. */
bool lwm2_lock_sig(void) LWM2_HIDDEN_FN;
/* Without waiting: true if this thread now holds it. */
bool lwm2_trylock(void) LWM2_HIDDEN_FN;
/* The process's id, noted at the start and at both ends of every fork:
 * another id means a copy made without fork's handlers (lwm2_lock_reclaim). */
void lwm2_lock_known_pid(pid_t pid) LWM2_HIDDEN_FN;

/* rawsys.c: diagnostics under LWM2_DEBUG, and system calls by number */
void lwm2_debug(const char *fmt, ...) LWM2_HIDDEN_FN __attribute__((format(printf, 1, 2)));
pid_t lwm2_raw_getpid(void) LWM2_HIDDEN_FN;
/* mmap by its system call: the library's own mappings must not go through
 * its exported mmap wrapper (which would stat the file, and could flag the
 * process for a shared writable mapping of its own record). */
void *lwm2_raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) LWM2_HIDDEN_FN;
pid_t lwm2_raw_gettid(void) LWM2_HIDDEN_FN;
/* True when the calling process is the one measured: false in the child
 * of vfork (shares our memory) or of a raw clone. */
bool lwm2_here(void) LWM2_HIDDEN_FN;

/* env.c: the environment, read at start-up (its variables: env.c) */
/* The configuration into lwm2_p (mode: LWM2_MODE, or NULL). */
/* The start's reads of the environment: one pass over environ, then
 * lwm2_getenv (getenv outside the start, or for other names). */
void lwm2_env_start_scan(void) LWM2_HIDDEN_FN;
void lwm2_env_start_done(void) LWM2_HIDDEN_FN;
const char *lwm2_getenv(const char *name) LWM2_HIDDEN_FN;
void lwm2_env_config(const char *mode) LWM2_HIDDEN_FN;
/* The identity Slurm gives the process (job, step, task, node), its pid,
 * parent, host and executable into the record image. */
void lwm2_env_identity(const char *exe) LWM2_HIDDEN_FN;
/* Whether a measured process started this one (LWM2_PARENT). */
bool lwm2_env_parent_measured(void) LWM2_HIDDEN_FN;
/* LWM2_PARENT for this process's children and later images. */
void lwm2_env_set_parent(bool measured_parent) LWM2_HIDDEN_FN;

/* sanitizer.c: the name of the sanitizer runtime the program was built
 * with, or NULL (the library then steps aside). */
const char *lwm2_sanitizer_runtime(void) LWM2_HIDDEN_FN;

/* Zero N bytes at P without calling libc: the fork child's resets run
 * before any call of memset through the library's own PLT entry that a
 * shell's parent side makes, so memset was bound lazily in every child (a
 * lookup, and the page faults of the loader's and libc's symbol tables,
 * in each process a script starts).  rep stosb is the fast string store
 * on every x86_64 of this century (ERMS). */
static inline void lwm2_zero(void *p, size_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("rep stosb" : "+D"(p), "+c"(n) : "a"(0) : "memory");
#else
	memset(p, 0, n);
#endif
}

/* v in decimal at out, unterminated; returns its length (at most 20).  By
 * hand, not snprintf: a start runs no printf, and the formatter's code is
 * pages of libc that a short process would fault in for one number. */
static inline size_t lwm2_put_decimal(char *out, uint64_t v)
{
	char digits[20];
	size_t n = 0, at = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	while (n)
		out[at++] = digits[--n];
	return at;
}

/* A string into dst[len], cut to fit and terminated; NULL gives "". */
static inline void lwm2_copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

/* clock.c */
uint64_t lwm2_now_ns(void) LWM2_HIDDEN_FN; /* CLOCK_REALTIME */
void lwm2_clock_init(void) LWM2_HIDDEN_FN;
void lwm2_clock_recalibrate(void) LWM2_HIDDEN_FN;
void lwm2_clock_describe(uint32_t *source, uint32_t *cost_ps) LWM2_HIDDEN_FN;
/* ticks to ns at the rate measured now; no lock, stores nothing */
uint64_t lwm2_ticks_to_ns_fresh(uint64_t ticks) LWM2_HIDDEN_FN;

/* Counter i of thread t: every add it made, its two buffers together
 * (they only grow; the heartbeat's folds read them, never reset them). */
static inline uint64_t lwm2_thread_counter(const struct lwm2_thread *t, int i)
{
	return atomic_load_explicit(&t->buf[0][i], memory_order_relaxed) +
	       atomic_load_explicit(&t->buf[1][i], memory_order_relaxed);
}

/* view.c: the process's view queries (lwm2_view(3)), for its record:
 * how many ended and their wall time in ns; atomics only, signal-safe */
void lwm2_view_totals(uint32_t *queries, uint64_t *ns) LWM2_HIDDEN_FN;
/* the child of fork starts with none (its counters start at zero) */
void lwm2_view_fork_child(void) LWM2_HIDDEN_FN;
/* thread t's counters into the ended threads' (all-threads views), under
 * the lock at its end */
void lwm2_view_thread_ended(const struct lwm2_thread *t) LWM2_HIDDEN_FN;

/* region.c: the program's named regions (lwm2_view(3)): whether it
 * named any, its record's regions (signal-safe), and the child of fork's
 * counts at zero */
bool lwm2_regions_used(void) LWM2_HIDDEN_FN;
void lwm2_regions_fill(struct lwm2_rank_record *r) LWM2_HIDDEN_FN;
void lwm2_regions_fork_child(void) LWM2_HIDDEN_FN;

/* thread_scope.c, under the lock: a thread's figures at its end (in the
 * thread), the record's threads, and none ended in the child of fork */
void lwm2_thread_scope_ended(const struct lwm2_thread *t) LWM2_HIDDEN_FN;
void lwm2_thread_scope_fill(struct lwm2_rank_record *r) LWM2_HIDDEN_FN;
void lwm2_thread_scope_fork_child(void) LWM2_HIDDEN_FN;

/* thread.c */
void lwm2_threads_init(void) LWM2_HIDDEN_FN;
struct lwm2_thread *lwm2_thread_attach(bool is_main) LWM2_HIDDEN_FN;
void lwm2_threads_fork_child(void) LWM2_HIDDEN_FN;
extern int (*lwm2_real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
                                       void *) LWM2_HIDDEN;

/* heartbeat.c: all under the lock */
int lwm2_storage_init(void) LWM2_HIDDEN_FN;
void lwm2_fold_thread(struct lwm2_thread *t, int which) LWM2_HIDDEN_FN; /* which: 0, 1, 2 = both */
void lwm2_slice_add(uint64_t slice) LWM2_HIDDEN_FN;
uint64_t lwm2_slice_now(void) LWM2_HIDDEN_FN;
void lwm2_record_write(enum lwm2_end how, int status, int sig, bool sigctx) LWM2_HIDDEN_FN;
/* Take back one count of c that the last write put into the record (an
 * exec counted as starting an unmeasured process that did not start). */
void lwm2_record_uncount(enum lwm2_counter c) LWM2_HIDDEN_FN;
void lwm2_storage_fork_child(void) LWM2_HIDDEN_FN;
int lwm2_heartbeat_start(void) LWM2_HIDDEN_FN;
bool lwm2_heartbeat_stop(void) LWM2_HIDDEN_FN;
void lwm2_heartbeat_fork_child(void) LWM2_HIDDEN_FN;
/* fork's handlers for the heartbeat's loader lock (see heartbeat.c):
 * prepare before the core's lock, parent after it, the child's first. */
void lwm2_heartbeat_fork_prepare(void) LWM2_HIDDEN_FN;
void lwm2_heartbeat_fork_parent(void) LWM2_HIDDEN_FN;
void lwm2_heartbeat_fork_child_locks(void) LWM2_HIDDEN_FN;
/* A process event (fork, posix_spawn, a new thread, MPI_Init) in normal
 * context: start the heartbeat now if it does not run.  Not under the lock. */
void lwm2_heartbeat_want(void) LWM2_HIDDEN_FN;
/* From the sampling handler while no heartbeat runs: write the record
 * once a slice boundary has passed (the heartbeat's job, signal-safe). */
void lwm2_checkpoint_from_handler(void) LWM2_HIDDEN_FN;
/* The end of the first slice from now, for next_ckpt_ns. */
uint64_t lwm2_next_slice_end_ns(void) LWM2_HIDDEN_FN;

/* rank_file.c: all under the lock */
/* Write the record image (its threads folded) to the rank record file,
 * the step summary, or nowhere (see rank_file.c). */
void lwm2_rank_file_write(enum lwm2_end how, int status, int sig) LWM2_HIDDEN_FN;
/* True for a fork child that has counted nothing and has no record yet (a
 * shell's child about to exec): its exec would write nothing. */
bool lwm2_rank_idle_fork_child(void) LWM2_HIDDEN_FN;
void lwm2_record_discard_mapping(void) LWM2_HIDDEN_FN;
/* After the final write of how (exit or exec), a termination signal held
 * meanwhile ends the process: the record (or the step summary) is made to
 * say it ended by sig, as a signal's own final write says. */
void lwm2_rank_file_signaled(enum lwm2_end how, int sig) LWM2_HIDDEN_FN;

/* summary.c: add this image to the step's summary of short processes;
 * 0 when done, -1 when the caller must write a record instead. */
int lwm2_summary_add(const struct lwm2_rank_record *r, enum lwm2_end how) LWM2_HIDDEN_FN;
/* The image r added by its final write of how (exit: exit_ok set where it
 * ended with status 0) ended by a signal after all: its slot says so. */
int lwm2_summary_signaled(const struct lwm2_rank_record *r, enum lwm2_end how,
                          bool exit_ok) LWM2_HIDDEN_FN;

/* sampling.c */
void lwm2_sampling_init(void) LWM2_HIDDEN_FN;
void lwm2_sampling_thread_start(struct lwm2_thread *t) LWM2_HIDDEN_FN;
void lwm2_sampling_thread_end(struct lwm2_thread *t) LWM2_HIDDEN_FN;
void lwm2_sampling_stop_all(void) LWM2_HIDDEN_FN; /* under the lock */
void lwm2_sampling_catch_up(void) LWM2_HIDDEN_FN; /* the calling thread, before its final record */
void lwm2_sampling_resume_all(void) LWM2_HIDDEN_FN; /* under the lock, after a failed exec */
void lwm2_sampling_drain(void) LWM2_HIDDEN_FN;      /* discard a pending sampling signal */
void lwm2_signals_init(void) LWM2_HIDDEN_FN;
int lwm2_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) LWM2_HIDDEN_FN;

/* process.c */
void lwm2_process_init(void) LWM2_HIDDEN_FN;

/* container.c: an exec's environment inside a container, and the step
 * directory reached from there. */
typedef int (*lwm2_exec_fn)(void *ctx, char *const envp[]);
int lwm2_exec_with_env(char *const envp[], lwm2_exec_fn exec_fn, void *ctx) LWM2_HIDDEN_FN;
void lwm2_container_note_root(void) LWM2_HIDDEN_FN;
/* The last part of the path p of len bytes (after its last '/'), its
 * length in *blen. */
const char *lwm2_path_base(const char *p, size_t len, size_t *blen) LWM2_HIDDEN_FN;
/* Inside a container: the step directory's descriptor is lost and its
 * path is not there, so a process started now cannot leave a record. */
bool lwm2_container_dir_lost(void) LWM2_HIDDEN_FN;

/* unmeasured.c: what an exec or posix_spawn starts that the library will
 * not measure.  The target: path (searched in PATH where search is set
 * and it has no '/'), relative to fd where fd >= 0, or fd itself where
 * path is NULL or empty (fexecve, execveat with AT_EMPTY_PATH). */
struct lwm2_exec_target {
	const char *path;
	int fd;
	bool search;
};
/* At the start, in the window of lwm2_getenv: whether LD_PRELOAD names
 * this library. */
void lwm2_unmeasured_init(void) LWM2_HIDDEN_FN;
/* The counter of the reason the image started with envp (the caller's own
 * environment caller_env, rewritten for a container) will not be
 * measured (LWM2_UNMEASURED_COUNTERS), or -1.  Signal-safe, no malloc: it
 * may run in the child of vfork. */
int lwm2_unmeasured_reason(const struct lwm2_exec_target *t, char *const caller_env[],
                           char *const envp[]) LWM2_HIDDEN_FN;
/* Inside a container, the step's descriptors kept through the
 * application's closes (container.c): lwm2_keep_on is set at the start
 * where there are any; lwm2_keep_move_off(fd) moves one of them off fd
 * before a close of fd; lwm2_keep_in_range puts those within
 * first..last, in ascending order, into ours and returns how many. */
extern bool lwm2_keep_on LWM2_HIDDEN;
void lwm2_container_keep_init(void) LWM2_HIDDEN_FN;
void lwm2_keep_move_off(int fd) LWM2_HIDDEN_FN;
int lwm2_keep_in_range(unsigned first, unsigned last, int ours[2]) LWM2_HIDDEN_FN;
int lwm2_stepdir_inherited(void) LWM2_HIDDEN_FN;
/* A file of the step directory by its path, else (inside a container)
 * through the inherited descriptor: open as openat(2), or unlink. */
int lwm2_stepdir_open(const char *name, int flags, mode_t mode) LWM2_HIDDEN_FN;
int lwm2_stepdir_unlink(const char *name) LWM2_HIDDEN_FN;
/* The image's language, runtimes and identity into the record image;
 * under the lock, never in a signal handler (it walks the loader's list). */
void lwm2_detect_runtimes(void) LWM2_HIDDEN_FN;
/* The application's identity (identity.c): taken once, never in a signal
 * handler nor at start-up (it walks the loader's list); applied to the
 * record image under the lock, signal-safe. */
void lwm2_identity_collect(void) LWM2_HIDDEN_FN;
void lwm2_identity_apply(struct lwm2_rank_record *r) LWM2_HIDDEN_FN;
/* At start-up, from lwm2_env_identity: the container of LWM2_CONTAINER into
 * the record image (one getenv, a bounded copy, no allocation). */
void lwm2_identity_container(struct lwm2_rank_record *r) LWM2_HIDDEN_FN;
/* The final write (or checkpoint) from any path; idempotent for the final. */
void lwm2_finish(enum lwm2_end how, int status, int sig, bool sigctx) LWM2_HIDDEN_FN;
#define LWM2_FIN_DONE      1
#define LWM2_FIN_WRITING   2
#define LWM2_FIN_SIG_SHIFT 2
/* From a termination signal's handler at SIG_DFL: true where a final write
 * is under way, which then ends the process by sig once written. */
bool lwm2_finish_defer(int sig) LWM2_HIDDEN_FN;

/* modules.c */
#define LWM2_NMODULES 4
extern const struct lwm2_module *const lwm2_module_table[LWM2_NMODULES] LWM2_HIDDEN;
#define lwm2_for_each_module(m)                                                                    \
	for (size_t lwm2__i = 0; lwm2__i < LWM2_NMODULES; lwm2__i++)                               \
		for (const struct lwm2_module *m = lwm2_module_table[lwm2__i]; m; m = NULL)
void lwm2_modules_fini_once(void) LWM2_HIDDEN_FN;

#endif /* LWM2_CORE_INT_H */
