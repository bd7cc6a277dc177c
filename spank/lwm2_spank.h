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
	LWM2_MODE_LIGHT = 3, /* times and hardware counters at start and end only */
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

/* What a site rule names a job by, most specific first: the first scope
 * that names the job decides (policy.c). */
enum lwm2_policy_scope {
	LWM2_POLICY_USER,
	LWM2_POLICY_ACCOUNT,
	LWM2_POLICY_QOS,
	LWM2_POLICY_PARTITION,
	LWM2_NPOLICY
};
#define LWM2_POLICY_LIST_MAX 1024 /* one comma-separated list of names */
#define LWM2_RANKS_MAX       256  /* a rank subset as written: "0,5-7,last", "random:4" */

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
	/* on.SCOPE= and off.SCOPE= (names, comma-separated; "" none) */
	char policy_on[LWM2_NPOLICY][LWM2_POLICY_LIST_MAX];
	char policy_off[LWM2_NPOLICY][LWM2_POLICY_LIST_MAX];
	char nodes_off[LWM2_POLICY_LIST_MAX]; /* off.nodes=, Slurm's hostlist syntax */
	char ranks[LWM2_RANKS_MAX];           /* ranks=: the default rank subset, "" all */
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

/* The names of a policy scope as plugstack keys use them ("user" ...). */
extern const char *const lwm2_policy_scope_names[LWM2_NPOLICY];

/* The job as the site's rules see it: NULL or "" where unknown. */
struct lwm2_job_names {
	const char *name[LWM2_NPOLICY];
};

/*
 * The site's mode for a job: the first scope, most specific first, whose
 * on. or off. list names the job decides (on: the site's default= where
 * that measures, print or on, else on); none: default=.  why gets the rule
 * that decided ("off.account=ops", "default=on").  Without Slurm: the
 * unit test links it.
 */
enum lwm2_mode lwm2_policy_mode(const struct lwm2_config *c, const struct lwm2_job_names *j,
                                char *why, size_t whylen);

/* Whether the comma-separated list holds name exactly. */
bool lwm2_policy_list_has(const char *list, const char *name);

/*
 * A rank subset (--lwm2-ranks=, plugstack ranks=): a list of ranks and
 * ranges ("0,5-7"), where "first" is rank 0 and "last" the step's last
 * (TOPAS's first and last PE: "first,last"), or "random:N", N ranks drawn
 * the same on every node of the step (seeded by job and step).  Checked
 * whole into out (0), or -1 with the reason.
 */
int lwm2_parse_ranks(const char *s, char *out, size_t outlen, char *err, size_t errlen);

/*
 * Which of the n ranks (global task ids of this node, any order) the
 * subset rule measures in a step of ntasks tasks: selected[i] for
 * ranks[i].  "" measures all.  seed: the same for every node of the step.
 * Returns how many are selected.
 */
size_t lwm2_ranks_select(const char *rule, uint32_t ntasks, uint64_t seed, const uint32_t *ranks,
                         size_t n, bool *selected);

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
 * rule shared with `lwm2 run` (digest/util/stepenv.h). */
#include "stepenv.h"

/* ------------------------------------------------------------------ state */

/* What the user asked for with --lwm2*, filled by the option callbacks. */
struct lwm2_user_opts {
	enum lwm2_mode mode;          /* LWM2_MODE_UNSET: not given */
	unsigned slice;               /* 0: not given */
	char events[LWM2_EVENTS_MAX]; /* "": not given */
	char ranks[LWM2_RANKS_MAX];   /* "": not given */
	bool refused_optout;          /* remote: an opt-out the site does not allow arrived */
};

extern struct lwm2_config lwm2_conf;
extern bool lwm2_conf_ok; /* plugstack arguments parsed without error */
extern struct lwm2_user_opts lwm2_opts;

/* The mode for this job: the user's choice where allowed, else the site's
 * rules for j (NULL: the default alone); why as lwm2_policy_mode's, or
 * "--lwm2=MODE" for the user's choice (why may be NULL). */
enum lwm2_mode lwm2_effective_mode(const struct lwm2_job_names *j, char *why, size_t whylen);

/* The names the site's rules see, with room for them (options.c). */
struct lwm2_job_names_buf {
	char text[LWM2_NPOLICY][256];
	struct lwm2_job_names names;
};

/* The job's names for the site's rules: the user's from uid through the
 * passwd database (what slurmstepd knows, which the user cannot change),
 * the account, QOS and partition from the job's environment as Slurm sets
 * it (SLURM_JOB_ACCOUNT, SLURM_JOB_QOS, SLURM_JOB_PARTITION) through get
 * (0, or -1 when it could not read). */
void lwm2_job_names_of(uid_t uid, int (*get)(void *ctx, const char *var, char *buf, size_t len),
                       void *ctx, struct lwm2_job_names_buf *b);

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

/* The node's processor (cpuinfo.c). */
#define LWM2_CPU_SOCKETS_MAX 64
struct lwm2_cpu_info {
	char model[128];
	unsigned sockets, cores_per_socket, threads_per_core;
	double mhz_nominal;  /* 0: not known */
	double mhz_measured; /* the kernel's current clock, averaged over the CPUs; 0: none */
};

/* Read the processor from cpuinfo (/proc/cpuinfo) and the cpufreq
 * directory of one CPU (/sys/devices/system/cpu/cpu0/cpufreq; NULL or
 * missing: none).  0, or -1 when cpuinfo names no processor. */
int lwm2_cpu_info_read(const char *cpuinfo, const char *cpufreq_dir, struct lwm2_cpu_info *out);

#endif /* LWM2_SPANK_H */
