/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The environment of measured processes, as both of their starters set it:
 * spank_lwm2.so edits a step's job environment in slurmstepd, `lwm2 run`
 * its child's own before exec.  One rule for both, so that a program runs
 * under `lwm2 run` exactly as under `srun --lwm2`: liblwm2.so first in
 * LD_PRELOAD and only once, the user's own entries kept; the LWM2_*
 * variables of lwm2_env.h; CUDA_INJECTION64_PATH where liblwm2cuda.so is
 * installed beside the library; ASan's link-order check off; the step's
 * descriptors for containers (stepfds.h).  Plain C without Slurm, so the
 * unit tests link it directly.
 */
#ifndef LWM2_STEPENV_H
#define LWM2_STEPENV_H

#include <stdbool.h>
#include <stddef.h>

/*
 * LD_PRELOAD editing.  Entries are separated by ':' or blanks (as ld.so
 * reads them) and written back separated by ':'.  An entry is ours when it
 * is lib or has lib's file name (a second copy of the library from another
 * path would be loaded twice).  Both return 0, or -1 with errno
 * ENAMETOOLONG when out is too small.
 */
int lwm2_preload_add(const char *cur, const char *lib, char *out, size_t outlen);
int lwm2_preload_remove(const char *cur, const char *lib, char *out, size_t outlen);
/* Whether cur holds an entry that is ours. */
bool lwm2_preload_has(const char *cur, const char *lib);

/* What lwm2 adds to ASAN_OPTIONS: with the preload, AddressSanitizer's
 * runtime (libasan.so, gcc's default) is no longer first in the list of
 * libraries, and the program would end at once with "ASan runtime does
 * not come first in initial library list". */
#define LWM2_ASAN_OPT "verify_asan_link_order=0"

/*
 * ASAN_OPTIONS with the check off: cur with LWM2_ASAN_OPT appended, or cur
 * unchanged where it names the check already (the user's own choice).
 * Returns 0, or -1 with errno ENAMETOOLONG.
 */
int lwm2_asan_options_add(const char *cur, char *out, size_t outlen);
/* The reverse: cur without the entry lwm2_asan_options_add appended.
 * Returns 1 where something was taken out, 0 where nothing was. */
int lwm2_asan_options_remove(const char *cur, char *out, size_t outlen);

/* liblwm2cuda.so beside lib: CUPTI's injection library. */
void lwm2_cuda_lib_path(const char *lib, char *out, size_t outlen);

/*
 * Where the environment is: slurmstepd reads and writes the job's through
 * spank_getenv and friends, `lwm2 run` its own (inherited by exec).
 */
struct lwm2_env_ops {
	/* var's value into buf, "" when unset: 0, or -1 when it does not fit. */
	int (*get)(void *ctx, const char *var, char *buf, size_t len);
	int (*set)(void *ctx, const char *var, const char *val); /* 0 or -1 */
	void (*unset)(void *ctx, const char *var);
	void *ctx;
};

/* What the measured processes are told.  For the strings, NULL leaves what
 * the environment has (the user's own, by hand) and "" unsets it. */
struct lwm2_step_env {
	const char *mode; /* LWM2_MODE: "on", or "light"; NULL: on */
	const char *lib;  /* liblwm2.so */
	const char *dir;  /* where the rank records go */
	const char *slice, *events, *sample_hz, *job_id, *step_id;
	long root_ppid; /* the tasks' parent: each task keeps a record */
};

/*
 * Set the environment of a measured step.  LD_PRELOAD goes last: a step
 * with half of the variables set must not load the library.  In light
 * mode CUDA_INJECTION64_PATH is not set, and taken out where it is ours
 * (inherited from a measured batch shell): CUPTI's callbacks on every
 * CUDA call are the cost light mode does without.  Returns 0,
 * or -1 with the reason in err (the caller then clears what was set with
 * lwm2_step_env_clear).
 */
int lwm2_step_env_set(const struct lwm2_env_ops *ops, const struct lwm2_step_env *e, char *err,
                      size_t errlen);

/*
 * Take out every trace of lwm2 (a step that is not measured inherits the
 * measured batch shell's LD_PRELOAD and LWM2_*): our LD_PRELOAD entry,
 * the variables lwm2_env.h lists as inherited, the ASan option we added,
 * CUDA_INJECTION64_PATH where it is ours.
 */
void lwm2_step_env_clear(const struct lwm2_env_ops *ops, const char *lib);

/*
 * In the task, before exec: open the step's descriptors for containers
 * and pass them on (LWM2_LIB_FD, LWM2_DIR_FD, LWM2_ROOT).  On failure the
 * three are unset (an inherited set names another step) and -1 returned
 * with the reason in err: containers' processes are then not measured,
 * the others are.
 */
int lwm2_step_env_fds(const struct lwm2_env_ops *ops, const char *lib, const char *dir, char *err,
                      size_t errlen);

/*
 * In the task, last before exec, where another plugin may have moved it
 * into a container (pyxis joins the container's mount namespace in its
 * task_init): where "/" is no longer the root LWM2_ROOT names, our
 * LD_PRELOAD entry becomes what an exec into a container makes of it
 * (preload/container.c): the library's own path where that is the
 * library, /proc/self/fd/N where the descriptor is and the image has a
 * glibc loader, else nothing; CUDA_INJECTION64_PATH goes where it is ours
 * and not there; LWM2_CONTAINER becomes container (RUNTIME:IMAGE) unless
 * set.  In the step's own root, only an entry whose library is not
 * there is rewritten so.  Returns 1 where the task is in another root, 0
 * where not, -1 with the reason in err.
 */
int lwm2_step_env_enter_root(const struct lwm2_env_ops *ops, const char *lib, const char *container,
                             char *err, size_t errlen);

#endif /* LWM2_STEPENV_H */
