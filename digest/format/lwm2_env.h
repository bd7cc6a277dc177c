/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The environment contract between the programs that start measured
 * processes (spank_lwm2.so in slurmstepd, `lwm2 run`) and liblwm2.so in
 * those processes: every variable's name, defined once.  Both sides use
 * these names only, so a variable cannot be set under one spelling and
 * read under another; liblwm2(7) describes each value.
 */
#ifndef LWM2_ENV_H
#define LWM2_ENV_H

/* Set for a measured step by the SPANK plugin (and by `lwm2 run`). */
#define LWM2_ENV_MODE      "LWM2_MODE"      /* on, off, light, print */
#define LWM2_ENV_DIR       "LWM2_DIR"       /* where rank records go */
#define LWM2_ENV_SLICE     "LWM2_SLICE"     /* slice length, s */
#define LWM2_ENV_EVENTS    "LWM2_EVENTS"    /* hardware counter events */
#define LWM2_ENV_SAMPLE_HZ "LWM2_SAMPLE_HZ" /* CPU time samples per second */
#define LWM2_ENV_JOB_ID    "LWM2_JOB_ID"    /* else SLURM_JOB_ID */
#define LWM2_ENV_STEP_ID   "LWM2_STEP_ID"   /* else SLURM_STEP_ID */
#define LWM2_ENV_ROOT_PPID "LWM2_ROOT_PPID" /* the tasks' parent: a task keeps a record */

/* Set for a measured step by the SPANK plugin (and by `lwm2 run`): what
 * the processes of a container need to reach the step from inside its own
 * mount namespace.  N:DEV:INO is an open file descriptor and the identity
 * of the file it must still be (liblwm2(7), "Containers"). */
#define LWM2_ENV_LIB_FD "LWM2_LIB_FD" /* N:DEV:INO, liblwm2.so itself */
#define LWM2_ENV_DIR_FD "LWM2_DIR_FD" /* N:DEV:INO, the step directory */
#define LWM2_ENV_ROOT   "LWM2_ROOT"   /* DEV:INO of "/" where the step began */

/* Set by the library itself, for its children. */
#define LWM2_ENV_PARENT    "LWM2_PARENT"    /* pid of the measured parent */
#define LWM2_ENV_CONTAINER "LWM2_CONTAINER" /* RUNTIME:IMAGE the process runs in */

/* Set by hand (or by tests); read by the library only. */
#define LWM2_ENV_PRINT      "LWM2_PRINT"      /* a digest on stderr at exit */
#define LWM2_ENV_DEBUG      "LWM2_DEBUG"      /* diagnostics on stderr */
#define LWM2_ENV_SLICE_MS   "LWM2_SLICE_MS"   /* slice length, ms (tests) */
#define LWM2_ENV_MAX_SLICES "LWM2_MAX_SLICES" /* slices kept before coarsening */
#define LWM2_ENV_SHORT_MS   "LWM2_SHORT_MS"   /* shorter images go to the summary */
#define LWM2_ENV_SIGNAL     "LWM2_SIGNAL"     /* the sampling signal */

/* Read by `lwm2 run` only: the library to preload, else the installed one. */
#define LWM2_ENV_LIB "LWM2_LIB"

/*
 * What a step that is not measured must not inherit (from a measured batch
 * shell, say): every variable the starter or the library sets.  The ones
 * set by hand stay, as the user's own environment.
 */
#define LWM2_ENV_INHERITED(X)                                                                      \
	X(LWM2_ENV_MODE)                                                                           \
	X(LWM2_ENV_DIR)                                                                            \
	X(LWM2_ENV_SLICE)                                                                          \
	X(LWM2_ENV_EVENTS)                                                                         \
	X(LWM2_ENV_SAMPLE_HZ)                                                                      \
	X(LWM2_ENV_JOB_ID)                                                                         \
	X(LWM2_ENV_STEP_ID)                                                                        \
	X(LWM2_ENV_ROOT_PPID)                                                                      \
	X(LWM2_ENV_LIB_FD)                                                                         \
	X(LWM2_ENV_DIR_FD)                                                                         \
	X(LWM2_ENV_ROOT)                                                                           \
	X(LWM2_ENV_PARENT)                                                                         \
	X(LWM2_ENV_CONTAINER)

#endif /* LWM2_ENV_H */
