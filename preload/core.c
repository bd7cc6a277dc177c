/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Start and end of the preload core: whether a process is measured at all
 * (LWM2_MODE, Slurm's own commands, a sanitizer runtime), the order of
 * things at start, what the modules set in the record image, and the order
 * of things at exit.  The environment it reads is env.c's; the core's
 * lock, system calls and resolver of real functions are core_lock.c,
 * rawsys.c and elf_sym.c.
 *
 * Order at exit(): the application's atexit handlers run first, then the
 * dynamic linker's _dl_fini runs library destructors (ours stops the
 * modules while the libraries they use still stand), and last the on_exit
 * hook registered in our constructor (registered before __libc_start_main
 * registers _dl_fini, so it runs after it) writes the final record with the
 * exit status.  stdio buffers are flushed after that by glibc's own
 * internal write calls, which no wrapper sees in any case.
 */
#include "core_int.h"
#include "lwm2_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lwm2_proc lwm2_p = {.lock = PTHREAD_MUTEX_INITIALIZER, .last_slot = -1};
_Atomic int lwm2_on;
__thread int lwm2_in_core __attribute__((tls_model("initial-exec")));
__thread int lwm2_no_attach __attribute__((tls_model("initial-exec")));

void lwm2_group_missing(enum lwm2_group g, const char *reason)
{
	if ((unsigned)g >= LWM2_NGROUPS || !lwm2_p.img || (lwm2_p.reasons_kept & (1u << g)))
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_p.img->missing |= 1u << g;
	lwm2_copy_str(lwm2_p.img->missing_reason[g], LWM2_REASON_LEN, reason);
	lwm2_unlock();
	lwm2_in_core--;
}

/* Sets bits of a field of the record, under the lock. */
static void record_set_bits(uint32_t *field, uint32_t bits)
{
	lwm2_in_core++;
	lwm2_lock();
	*field |= bits;
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_hwc_events(const char *events)
{
	if (!lwm2_p.img)
		return;
	lwm2_in_core++;
	lwm2_lock();
	lwm2_copy_str(lwm2_p.img->hwc_events, sizeof(lwm2_p.img->hwc_events), events);
	lwm2_unlock();
	lwm2_in_core--;
}

void lwm2_set_runtime(uint32_t runtime_flags)
{
	if (lwm2_p.img)
		record_set_bits(&lwm2_p.img->runtimes, runtime_flags);
}

void lwm2_set_flag(uint32_t flag)
{
	if (lwm2_p.img)
		record_set_bits(&lwm2_p.img->flags, flag);
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

static void on_exit_hook(int status, void *arg)
{
	(void)arg;
	lwm2_finish(LWM2_END_EXIT, status, 0, false);
	/* Joined, so its stack and thread-local storage are freed: a leak
	 * checker run on a clean program finds nothing of ours. */
	lwm2_heartbeat_stop();
}

/* The end of a program the library stepped aside for: its record with the
 * times, CPU and exit status, and nothing counted.  The record's file is
 * named by the process id, so only the process itself writes it. */
static void aside_exit_hook(int status, void *arg)
{
	(void)arg;
	/* A child of fork inherits the hook, not the record: the program's
	 * own process is the one that says why. */
	if (lwm2_raw_getpid() != lwm2_p.pid)
		return;
	lwm2_lock();
	lwm2_rank_file_write(LWM2_END_EXIT, status, 0);
	lwm2_unlock();
}

/* Each group in groups (a bit per enum lwm2_group) marked not measured. */
static void groups_missing(uint32_t groups, const char *why)
{
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (groups & (1u << g))
			lwm2_group_missing((enum lwm2_group)g, why);
}

/*
 * A program built with a sanitizer runs as without lwm2: no wrapper counts
 * (lwm2_on stays 0, every wrapper goes straight to the real call), no
 * thread, no timer, no signal handler.  It still leaves a record at its
 * normal end, so the digest counts the process, its time and exit status,
 * and says why it has no other figures.
 */
static void step_aside(const char *exe, const char *san)
{
	char why[LWM2_REASON_LEN];

	lwm2_debug("lwm2: start: not measuring %s: it is built with %s", exe, san);
	snprintf(why, sizeof(why), "the program is built with %s: lwm2 stepped aside", san);
	groups_missing((1u << LWM2_NGROUPS) - 1, why);
	lwm2_p.img->flags |= LWM2_F_ASIDE;
	on_exit(aside_exit_hook, NULL);
}

/*
 * Light mode (LWM2_MODE=light): what is measured at the start and the end
 * of each process and thread only, at no cost while it runs.  The record
 * keeps its times, rusage, identity and hardware counters (read at thread
 * and slice ends, as always); the wrappers call through untimed (lwm2_on
 * is LWM2_ON_LIGHT) and no sampling timer runs, and the groups those
 * would have measured say why they are empty.
 */
#define LIGHT_GROUPS LWM2_LIGHT_GROUPS
#define LIGHT_REASON LWM2_LIGHT_REASON

/* The start: every read of the environment by lwm2_getenv, inside the
 * window lwm2_init opens and closes around it. */
static void start(void)
{
	const char *mode, *debug, *san;
	char exe[256];
	bool measured_parent, light;
	ssize_t n;

	mode = lwm2_getenv(LWM2_ENV_MODE);
	debug = lwm2_getenv(LWM2_ENV_DEBUG);
	lwm2_p.debug = debug && strcmp(debug, "0") != 0;
	if (mode && strcmp(mode, "off") == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (is_slurm_client(exe))
		return;
	san = lwm2_sanitizer_runtime();
	light = mode && strcmp(mode, "light") == 0;
	if (mode && *mode && !light && strcmp(mode, "on") != 0 && strcmp(mode, "print") != 0)
		lwm2_debug("lwm2: start: couldn't use LWM2_MODE=%s: expected on, off, light or "
		           "print; measuring",
		           mode);

	lwm2_p.pid = lwm2_raw_getpid();
	lwm2_lock_known_pid(lwm2_p.pid);
	lwm2_p.start_ns = lwm2_now_ns();
	lwm2_env_config(mode);

	lwm2_clock_init();
	if (lwm2_storage_init() != 0) {
		lwm2_debug("lwm2: start: couldn't allocate the record: %s", strerror(errno));
		return;
	}
	lwm2_env_identity(exe);
	if (san) {
		step_aside(exe, san);
		return;
	}
#ifdef LWM2_NO_INTERPOSE
	lwm2_real_pthread_create = pthread_create;
#else
	lwm2_real_pthread_create = lwm2_real("pthread_create");
#endif
	lwm2_process_init();
	lwm2_threads_init();
	if (light) {
		groups_missing(LIGHT_GROUPS, LIGHT_REASON);
		/* A module's verdict (no CUDA device, say) was not measured
		 * either: the reason stays light mode's. */
		lwm2_p.reasons_kept = LIGHT_GROUPS;
	} else
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
	 * setup, at once, and keeps a record of its own however short.  See
	 * "Cost per process" in lwm2_core.h. */
	measured_parent = lwm2_env_parent_measured();
	if (!measured_parent)
		lwm2_p.root = true;
	lwm2_container_note_root();
	lwm2_container_keep_init();
	lwm2_unmeasured_init();
	lwm2_env_start_done(); /* the putenvs follow */
	lwm2_env_set_parent(measured_parent);
	atomic_store(&lwm2_on, light ? LWM2_ON_LIGHT : LWM2_ON_COUNTING);
	if (!measured_parent)
		lwm2_heartbeat_start();
}

/* One pass over environ for the start's reads (env.c), closed again
 * however the start ends. */
__attribute__((constructor)) static void lwm2_init(void)
{
	lwm2_env_start_scan();
	start();
	lwm2_env_start_done();
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
