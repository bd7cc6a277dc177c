/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spank_lwm2.so: what the context files share.  lwm2_spank.c only
 * dispatches on spank_context(); srun.c, allocator.c and stepd.c hold the
 * work of each context; config.c and options.c are plain C without Slurm
 * so the unit tests in spank/test/ link them directly.
 */
#ifndef LWM2_SPANK_H
#define LWM2_SPANK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LWM2_SPANK_PREFIX "lwm2"

/* Whether and how a step is measured. */
enum lwm2_mode {
	LWM2_MODE_UNSET = -1,
	LWM2_MODE_OFF = 0,
	LWM2_MODE_ON = 1,
	LWM2_MODE_PRINT = 2, /* measured, and the digest is printed at the end */
};

/* Where a digest is printed when the mode is print (print= key). */
enum lwm2_print_where {
	LWM2_PRINT_SRUN = 1u << 0,  /* the step digest on srun's stderr */
	LWM2_PRINT_BATCH = 1u << 1, /* the job digest at the end of the batch output */
};

#define LWM2_SLICE_MIN     1u
#define LWM2_SLICE_MAX     3600u /* what liblwm2.so accepts */
#define LWM2_SAMPLE_HZ_MIN 1
#define LWM2_SAMPLE_HZ_MAX 10000
#define LWM2_EVENTS_MAX    256
#define LWM2_CLUSTER_MAX   64

/* plugstack.conf arguments, parsed once per process in slurm_spank_init. */
struct lwm2_config {
	enum lwm2_mode mode; /* default= */
	bool optout;         /* optout= */
	char lib[PATH_MAX];  /* lib= */
	char basedir[PATH_MAX];
	char spool[PATH_MAX];
	unsigned slice; /* seconds */
	char events[LWM2_EVENTS_MAX];
	unsigned print; /* enum lwm2_print_where */
	bool keep;
	int sample_hz; /* -1: the library's own default */
	char cluster[LWM2_CLUSTER_MAX];
};

/* The defaults, before any argument. */
void lwm2_config_defaults(struct lwm2_config *c);

/*
 * Parse the plugstack.conf arguments (key=value each) into c, which holds
 * the defaults.  Returns 0, or -1 with a message naming the key in err; c
 * is then left with the defaults (no half-parsed configuration).
 */
int lwm2_config_parse(struct lwm2_config *c, int ac, char **av, char *err, size_t errlen);

/* Value parsers shared by the plugstack keys and the user options.
 * Each returns 0, or -1 with the reason in err. */
int lwm2_parse_mode(const char *s, enum lwm2_mode *out, char *err, size_t errlen);
int lwm2_parse_slice(const char *s, unsigned *out, char *err, size_t errlen);
int lwm2_parse_events(const char *s, char *out, size_t outlen, char *err, size_t errlen);
const char *lwm2_mode_name(enum lwm2_mode m);

/* Where a --lwm2* value came from, which decides what a bad one does
 * (inherit.c). */
enum lwm2_opt_origin {
	LWM2_OPT_TYPED,     /* a command line or #SBATCH line: refused, the command stops */
	LWM2_OPT_INHERITED, /* the allocation's, read from the environment by a command
	                     * inside it: ignored with a line, the command goes on */
	LWM2_OPT_STEP,      /* in slurmstepd, the step already running: ignored, logged */
};

/* The variable an allocation's option reaches the commands inside it in:
 * SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_<opt>, each character of opt that
 * is not a letter or digit an '_', as Slurm names it.  0, or -1 when buf
 * is too short. */
int lwm2_option_env_name(const char *opt, char *buf, size_t len);

/* The origin of a value the option callback got: remote, else inherited
 * when arg is the environment's own string env_value (getenv of the
 * option's variable), else typed. */
enum lwm2_opt_origin lwm2_option_origin(int remote, const char *arg, const char *env_value);

/* The value as lwm2 reads it, NULL for an option without one: the text
 * Slurm passes a bare --lwm2 on as, where Slurm passed it. */
const char *lwm2_option_value(const char *arg, enum lwm2_opt_origin origin);

/* LD_PRELOAD editing and the rest of a measured step's environment: one
 * rule shared with `lwm2 run` (digest/lib/stepenv.h). */
#include "stepenv.h"

/* ------------------------------------------------------------------ state */

/* What the user asked for with --lwm2*, filled by the option callbacks. */
struct lwm2_user_opts {
	enum lwm2_mode mode;          /* LWM2_MODE_UNSET: not given */
	unsigned slice;               /* 0: not given */
	char events[LWM2_EVENTS_MAX]; /* "": not given */
	bool refused_optout;          /* remote: an opt-out the site does not allow arrived */
};

extern struct lwm2_config lwm2_conf;
extern bool lwm2_conf_ok; /* plugstack arguments parsed without error */
extern struct lwm2_user_opts lwm2_opts;

/* The mode for this job: the user's choice where allowed, else the site's. */
enum lwm2_mode lwm2_effective_mode(void);

/* The cluster name: cluster=, else SLURM_CLUSTER_NAME, else ClusterName. */
const char *lwm2_cluster_name(const char *from_env);

/* The memory peaks of the step's and the job's cgroups (cgroup.c):
 * version 1 or 2, bytes; job_bytes 0 where the job's cgroup could not be
 * read.  -1 where this process is in no step's memory cgroup (Slurm does
 * not confine the step) or the file cannot be read.  cgfile and
 * mountinfo: /proc/self/cgroup and /proc/self/mountinfo (others in the
 * unit tests). */
struct lwm2_cgroup_mem {
	int version;
	uint64_t step_bytes, job_bytes;
};
int lwm2_cgroup_mem_peaks(const char *cgfile, const char *mountinfo, struct lwm2_cgroup_mem *m);

#endif /* LWM2_SPANK_H */
