/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start and end of the preload core: the environment contract with the
 * SPANK plugin, the identity of the process, and the order of things at
 * exit.
 *
 * Order at exit(): the application's atexit handlers run first, then the
 * dynamic linker's _dl_fini runs library destructors (ours stops the
 * modules while the libraries they use still stand), and last the on_exit
 * hook registered in our constructor (registered before __libc_start_main
 * registers _dl_fini, so it runs after it) writes the final record with the
 * exit status.  stdio buffers are flushed after that by glibc's own
 * internal write calls, which no wrapper sees in any case.
 *
 * The environment (set by the SPANK plugin, or by hand):
 *   LWM2_MODE        on (default), off (fully inert), print (on, and print)
 *   LWM2_DIR         node-local step directory for rank records; without
 *                    it ${TMPDIR:-/tmp}/lwm2-<uid> (mode 0700), or no file
 *                    at all when the digest is printed
 *   LWM2_PRINT=1     print a one-process digest to stderr at the end
 *   LWM2_SLICE       slice length in s, 1..3600, default 60
 *   LWM2_SLICE_MS    for tests only: slice length in ms (the record then
 *                    shows 1 s slices without a meaningful position)
 *   LWM2_MAX_SLICES  slices kept before coarsening, 2..4096, default 256
 *   LWM2_PARENT      set by the library to the pid of each measured process
 *                    (its children read it: a measured parent means the
 *                    heartbeat may start lazily)
 *   LWM2_ROOT_PPID   the pid of the tasks' parent (set by the SPANK plugin
 *                    and `lwm2 run`): a process whose parent it is is a
 *                    task and always keeps a record of its own
 *   LWM2_SHORT_MS    images that end sooner go to the step's summary of
 *                    short processes instead of a record file each,
 *                    0..3600000, default 1000; 0: a record for every image
 *   LWM2_SAMPLE_HZ   CPU-time sampling rate per thread, 1..10000, default 100
 *   LWM2_SIGNAL      sampling signal, SIGRTMIN..SIGRTMAX, default SIGRTMIN+7
 *   LWM2_DEBUG=1     diagnostics on stderr (otherwise silent)
 *   LWM2_JOB_ID, LWM2_STEP_ID (else SLURM_JOB_ID, SLURM_STEP_ID),
 *   SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURMD_NODENAME
 * Invalid values fall back to the default (said so under LWM2_DEBUG).
 */
#include "core_int.h"
#include "lwm2_env.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

struct lwm2_proc lwm2_p = {.lock = PTHREAD_MUTEX_INITIALIZER, .last_slot = -1};
_Atomic int lwm2_on;
__thread int lwm2_in_core __attribute__((tls_model("initial-exec")));
__thread int lwm2_no_attach __attribute__((tls_model("initial-exec")));
static __thread int resolving __attribute__((tls_model("initial-exec")));

void lwm2_lock(void)
{
	pthread_mutex_lock(&lwm2_p.lock);
}

void lwm2_unlock(void)
{
	pthread_mutex_unlock(&lwm2_p.lock);
}

bool lwm2_lock_sig(void)
{
	/* The holder is another thread (the heartbeat blocks all signals, so
	 * it is never interrupted holding it): wait a little, never forever. */
	if (lwm2_in_core)
		return false;
	for (int i = 0; i < 2000; i++) {
		struct timespec ts = {0, 100000};

		if (pthread_mutex_trylock(&lwm2_p.lock) == 0)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void lwm2_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!lwm2_p.debug)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	syscall(SYS_write, 2, buf, (size_t)n);
}

uint64_t lwm2_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t lwm2_raw_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

pid_t lwm2_raw_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

bool lwm2_here(void)
{
	return lwm2_raw_getpid() == lwm2_p.pid;
}

void *lwm2_real(const char *name)
{
	void *p;

	if (resolving)
		return NULL;
	resolving = 1;
	p = dlsym(RTLD_NEXT, name);
	resolving = 0;
	return p;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void lwm2_group_missing(enum lwm2_group g, const char *reason)
{
	if ((unsigned)g >= LWM2_NGROUPS || !lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->missing |= 1u << g;
	copy_str(lwm2_p.img->missing_reason[g], LWM2_REASON_LEN, reason);
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_runtime(uint32_t runtime_flags)
{
	if (!lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->runtimes |= runtime_flags;
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_flag(uint32_t flag)
{
	if (!lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->flags |= flag;
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_mpi_identity(int rank, int size, int thread_provided, const char *library)
{
	if (!lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->mpi_rank = rank;
	lwm2_p.img->mpi_size = size;
	lwm2_p.img->mpi_thread_provided = thread_provided;
	if (library) {
		/* first line only */
		size_t n = strcspn(library, "\n");

		if (n >= sizeof(lwm2_p.img->mpi_library))
			n = sizeof(lwm2_p.img->mpi_library) - 1;
		memcpy(lwm2_p.img->mpi_library, library, n);
		lwm2_p.img->mpi_library[n] = '\0';
	}
	lwm2_unlock();
	lwm2_in_core--;
	/* An MPI rank is looked at slice by slice, from its start. */
	lwm2_heartbeat_want();
}

/* An integer from the environment within [lo, hi]; def when unset or
 * invalid (said so under LWM2_DEBUG). */
static unsigned long long env_num(const char *name, unsigned long long def, unsigned long long lo,
                                  unsigned long long hi)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		lwm2_debug(
		    "lwm2: start: couldn't use %s=%s: not a number in %llu..%llu, using %llu", name,
		    s, lo, hi, def);
		return def;
	}
	return v;
}

static const char *env2(const char *a, const char *b)
{
	const char *s = getenv(a);

	return s && *s ? s : getenv(b);
}

/* Slurm's own client commands inherit LD_PRELOAD in batch scripts; they are
 * not the application. */
static bool is_slurm_client(const char *exe)
{
	static const char *const names[] = {
	    "srun",   "sbatch",   "salloc",  "scontrol", "squeue",     "sacct",   "scancel",
	    "sinfo",  "sstat",    "sattach", "sbcast",   "sacctmgr",   "sreport", "sprio",
	    "sshare", "strigger", "sdiag",   "scrontab", "slurmstepd", "lwm2",
	};
	const char *base = strrchr(exe, '/');

	base = base ? base + 1 : exe;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(base, names[i]) == 0)
			return true;
	return false;
}

static uint32_t parse_step(const char *s)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0xfffffffeu; /* unknown (Slurm's NO_VAL) */
	if (strcmp(s, "batch") == 0)
		return 0xfffffffbu;
	if (strcmp(s, "extern") == 0)
		return 0xfffffffcu;
	if (strcmp(s, "interactive") == 0)
		return 0xfffffffau;
	v = strtoul(s, &end, 10);
	return *end ? 0xfffffffeu : (uint32_t)v;
}

static int32_t env_int(const char *name)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > INT32_MAX ? -1 : (int32_t)v;
}

static void fill_identity(const char *exe)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	const char *s;
	struct utsname u;

	s = env2(LWM2_ENV_JOB_ID, "SLURM_JOB_ID");
	r->job_id = s ? strtoull(s, NULL, 10) : 0;
	r->step_id = parse_step(env2(LWM2_ENV_STEP_ID, "SLURM_STEP_ID"));
	r->task_id = env_int("SLURM_PROCID");
	r->local_task_id = env_int("SLURM_LOCALID");
	r->node_id = env_int("SLURM_NODEID");
	r->mpi_rank = -1;
	r->mpi_size = 0;
	r->mpi_thread_provided = -1;
	r->pid = (int32_t)lwm2_p.pid;
	r->ppid = (int32_t)getppid();
	lwm2_p.root = env_int(LWM2_ENV_ROOT_PPID) == r->ppid;
	s = getenv("SLURMD_NODENAME");
	if ((!s || !*s) && uname(&u) == 0)
		s = u.nodename;
	copy_str(r->hostname, sizeof(r->hostname), s);
	copy_str(r->executable, sizeof(r->executable), exe);
	r->start_ns = (int64_t)lwm2_p.start_ns;
	r->term_signal = 0;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LWM2_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define LWM2_SANITIZED 1
#endif
#endif

/*
 * The sanitizer runtime a program was built with, if any.  Such a runtime
 * intercepts the very calls the library wraps and wants to come first:
 * the library steps aside and leaves the user's debugging tool alone (the
 * SPANK plugin turns off ASan's link-order check, which would end the
 * program before this runs).  A library built with a sanitizer itself
 * (the test suite's sanitizer builds) finds its own runtime: it measures.
 */
static const char *sanitizer_runtime(void)
{
#ifndef LWM2_SANITIZED
	static const char *const rt[][2] = {
	    {"__asan_init", "AddressSanitizer"},
	    {"__tsan_init", "ThreadSanitizer"},
	    {"__msan_init", "MemorySanitizer"},
	    {"__hwasan_init", "HWAddressSanitizer"},
	};

	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++)
		if (dlsym(RTLD_DEFAULT, rt[i][0]))
			return rt[i][1];
#endif
	return NULL;
}

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	/* Joined, so its stack and thread-local storage are freed: a leak
	 * checker run on a clean program finds nothing of ours. */
	lwm2_heartbeat_stop();
}

__attribute__((constructor)) static void lwm2_init(void)
{
	const char *mode = getenv(LWM2_ENV_MODE), *san;
	static char parent_env[32];
	char exe[256];
	bool measured_parent;
	ssize_t n;
	unsigned long long slice_ms;

	lwm2_p.debug = (getenv(LWM2_ENV_DEBUG) && strcmp(getenv(LWM2_ENV_DEBUG), "0") != 0);
	if (mode && strcmp(mode, "off") == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (is_slurm_client(exe))
		return;
	if ((san = sanitizer_runtime())) {
		lwm2_debug("lwm2: start: not measuring %s: it is built with %s", exe, san);
		return;
	}
	if (mode && *mode && strcmp(mode, "on") != 0 && strcmp(mode, "print") != 0)
		lwm2_debug("lwm2: start: couldn't use LWM2_MODE=%s: expected on, off or print; "
		           "measuring",
		           mode);

	lwm2_p.pid = lwm2_raw_getpid();
	lwm2_p.start_ns = lwm2_now_ns();
	lwm2_p.print = (mode && strcmp(mode, "print") == 0) ||
	               (getenv(LWM2_ENV_PRINT) && strcmp(getenv(LWM2_ENV_PRINT), "0") != 0);
	if (getenv(LWM2_ENV_DIR) && *getenv(LWM2_ENV_DIR)) {
		copy_str(lwm2_p.dir, sizeof(lwm2_p.dir), getenv(LWM2_ENV_DIR));
		lwm2_p.have_dir = true;
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(lwm2_p.dir, sizeof(lwm2_p.dir), "%s/lwm2-%u",
		         tmp && *tmp == '/' ? tmp : "/tmp", (unsigned)getuid());
	}
	slice_ms = env_num(LWM2_ENV_SLICE, 60, 1, 3600) * 1000;
	/* LWM2_SLICE_MS is for tests only (slices shorter than a second); the
	 * record then shows 1 s slices without a meaningful position. */
	slice_ms = env_num(LWM2_ENV_SLICE_MS, slice_ms, 1, 3600000);
	lwm2_p.slice_ms = slice_ms;
	lwm2_p.max_slices = (uint32_t)env_num(LWM2_ENV_MAX_SLICES, LWM2_MAX_SLICES_DEFAULT, 2,
	                                      LWM2_MAX_SLICES_LIMIT);
	lwm2_p.sample_hz = (uint32_t)env_num(LWM2_ENV_SAMPLE_HZ, 100, 1, 10000);
	lwm2_p.short_ns = env_num(LWM2_ENV_SHORT_MS, LWM2_SHORT_MS_DEFAULT, 0, 3600000) * 1000000u;
	lwm2_p.sample_sig =
	    (int)env_num(LWM2_ENV_SIGNAL, (unsigned long long)(SIGRTMIN + 7),
	                 (unsigned long long)SIGRTMIN, (unsigned long long)SIGRTMAX);

	lwm2_clock_init();
	if (lwm2_storage_init() != 0) {
		lwm2_debug("lwm2: start: couldn't allocate the record: %s", strerror(errno));
		return;
	}
	fill_identity(exe);
#ifdef LWM2_NO_INTERPOSE
	lwm2_real_pthread_create = pthread_create;
#else
	lwm2_real_pthread_create = lwm2_real("pthread_create");
#endif
	lwm2_process_init();
	lwm2_threads_init();
	lwm2_sampling_init();
	lwm2_signals_init();
	lwm2_thread_attach(true);
	on_exit(on_exit_hook, NULL);
	lwm2_for_each_module(m) if (m->init) m->init();
	atomic_store(&lwm2_p.next_ckpt_ns, lwm2_next_slice_end_ns());
	/* The children of a measured process (the commands of a batch
	 * script) start lazily; the first measured process of a tree (a
	 * task, or whatever an unmeasured parent started) is the
	 * application: it gets its heartbeat, hence its hardware counters'
	 * setup, at once.  See "Cost per process" in lwm2_core.h. */
	measured_parent = env_int(LWM2_ENV_PARENT) == lwm2_p.img->ppid;
	/* putenv of a static string: where the variable exists already (every
	 * child of a measured process) it is replaced in place, no malloc. */
	snprintf(parent_env, sizeof(parent_env), LWM2_ENV_PARENT "=%d", (int)lwm2_p.pid);
	putenv(parent_env);
	atomic_store(&lwm2_on, 1);
	if (!measured_parent)
		lwm2_heartbeat_start();
}

__attribute__((destructor)) static void lwm2_fini(void)
{
	if (!atomic_load(&lwm2_on) || !lwm2_here())
		return;
	/* Libraries loaded after us (CUDA, a PAPI the application uses) are
	 * finalized before this runs, those we depend on after it: the modules
	 * stop now; the final write follows in on_exit_hook. */
	lwm2_modules_fini_once();
}
