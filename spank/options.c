/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user options, in one table, registered with spank_option_register()
 * in slurm_spank_init (the only way that reaches sbatch and salloc).  The
 * callbacks run in srun, sbatch and salloc (remote == 0) and again in
 * slurmstepd (remote == 1).  What a value that cannot be used does depends
 * on where it came from (inherit.c): typed on a command line, it stops
 * that command, as Slurm's own options do; inherited from the allocation,
 * it never stops a command inside it, and one line says what lwm2 does
 * instead; in slurmstepd the job is already running, and it is logged.
 */
#include <pwd.h>
#include <slurm/spank.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "contexts.h"
#include "lwm2_spank.h"

struct lwm2_config lwm2_conf;
bool lwm2_conf_ok;
struct lwm2_user_opts lwm2_opts = {.mode = LWM2_MODE_UNSET};

/* Each option's val is its index in the table. */
enum { OPT_MODE, OPT_SLICE, OPT_EVENTS, OPT_RANKS };

static int opt_cb(int val, const char *arg, int remote);

static struct spank_option options[] = {
    /* srun --help gives the option 30 columns: "on|off|light|print"
     * would push its text onto a line of its own. */
    {"lwm2", "MODE", "lwm2: on, off, light (ends only), print (+digest)", 2, OPT_MODE, opt_cb},
    {"lwm2-slice", "SECONDS", "lwm2: length of a time slice in seconds", 1, OPT_SLICE, opt_cb},
    {"lwm2-events", "LIST", "lwm2: hardware counter events to measure", 1, OPT_EVENTS, opt_cb},
    {"lwm2-ranks", "LIST", "lwm2: measure only these ranks (0,4-7,last)", 1, OPT_RANKS, opt_cb},
    SPANK_OPTIONS_TABLE_END};

/* What a command inside the allocation uses when it cannot use the
 * allocation's value: the site's setting (its own option, if it has one,
 * is read after the environment and still counts). */
static void site_setting(int val, char *buf, size_t len)
{
	switch (val) {
	case OPT_MODE:
		snprintf(buf, len, "the site's default, %s", lwm2_mode_name(lwm2_conf.mode));
		break;
	case OPT_SLICE:
		snprintf(buf, len, "the site's slice, %u s", lwm2_conf.slice);
		break;
	case OPT_RANKS:
		snprintf(buf, len, "the site's ranks, %s",
		         lwm2_conf.ranks[0] ? lwm2_conf.ranks : "all");
		break;
	default:
		snprintf(buf, len, "the site's events, %s",
		         lwm2_conf.events[0] ? lwm2_conf.events : "none");
		break;
	}
}

/* var: the option's variable, which an inherited value came in. */
static int refuse(enum lwm2_opt_origin origin, int val, const char *var, const char *arg,
                  const char *why)
{
	const char *opt = options[val].name;
	char instead[LWM2_EVENTS_MAX + 64];

	switch (origin) {
	case LWM2_OPT_STEP:
		slurm_error("lwm2: option: ignoring --%s=%s: %s", opt, arg ? arg : "", why);
		return 0;
	case LWM2_OPT_INHERITED:
		site_setting(val, instead, sizeof(instead));
		slurm_info("lwm2: option: ignoring --%s=%s from the allocation (%s): %s; using %s",
		           opt, arg ? arg : "", var, why, instead);
		return 0;
	default:
		slurm_error("lwm2: option: couldn't use --%s=%s: %s", opt, arg ? arg : "", why);
		return -1;
	}
}

static int opt_cb(int val, const char *arg, int remote)
{
	char var[128], err[256] = "";
	enum lwm2_opt_origin origin;
	enum lwm2_mode mode;
	unsigned slice;
	char events[LWM2_EVENTS_MAX], ranks[LWM2_RANKS_MAX];

	if (lwm2_option_env_name(options[val].name, var, sizeof(var)) < 0)
		var[0] = '\0'; /* getenv("") is NULL: nothing counts as inherited */
	origin = lwm2_option_origin(remote, arg, getenv(var));
	arg = lwm2_option_value(arg, origin);
	switch (val) {
	case OPT_MODE:
		if (lwm2_parse_mode(arg, &mode, err, sizeof(err)) < 0)
			return refuse(origin, val, var, arg, err);
		if (mode == LWM2_MODE_OFF && !lwm2_conf.optout) {
			if (origin == LWM2_OPT_STEP) {
				lwm2_opts.refused_optout = true;
				return 0;
			}
			return refuse(origin, val, var, arg,
			              "this site measures every job (plugstack optout=no)");
		}
		lwm2_opts.mode = mode;
		return 0;
	case OPT_SLICE:
		if (lwm2_parse_slice(arg, &slice, err, sizeof(err)) < 0)
			return refuse(origin, val, var, arg, err);
		lwm2_opts.slice = slice;
		return 0;
	case OPT_EVENTS:
		if (lwm2_parse_events(arg, events, sizeof(events), err, sizeof(err)) < 0)
			return refuse(origin, val, var, arg, err);
		memcpy(lwm2_opts.events, events, sizeof(events));
		return 0;
	case OPT_RANKS:
		if (lwm2_parse_ranks(arg, ranks, sizeof(ranks), err, sizeof(err)) < 0)
			return refuse(origin, val, var, arg, err);
		memcpy(lwm2_opts.ranks, ranks, sizeof(ranks));
		return 0;
	default:
		return -1;
	}
}

int lwm2_options_register(spank_t sp)
{
	struct spank_option *o;
	int rc = 0;

	for (o = options; o->name; o++) {
		spank_err_t e = spank_option_register(sp, o);

		if (e != ESPANK_SUCCESS) {
			slurm_error("lwm2: init: couldn't register option --%s: %s", o->name,
			            spank_strerror(e));
			rc = -1;
		}
	}
	return rc;
}

enum lwm2_mode lwm2_effective_mode(const struct lwm2_job_names *j, char *why, size_t whylen)
{
	if (!lwm2_conf_ok) {
		if (why)
			snprintf(why, whylen, "the plugstack arguments are not valid");
		return LWM2_MODE_OFF;
	}
	if (lwm2_opts.mode != LWM2_MODE_UNSET) {
		if (why)
			snprintf(why, whylen, "--lwm2=%s", lwm2_mode_name(lwm2_opts.mode));
		return lwm2_opts.mode;
	}
	return lwm2_policy_mode(&lwm2_conf, j, why, whylen);
}

void lwm2_job_names_of(uid_t uid, int (*get)(void *ctx, const char *var, char *buf, size_t len),
                       void *ctx, struct lwm2_job_names_buf *b)
{
	static const char *const vars[LWM2_NPOLICY] = {
	    [LWM2_POLICY_ACCOUNT] = "SLURM_JOB_ACCOUNT",
	    [LWM2_POLICY_QOS] = "SLURM_JOB_QOS",
	    [LWM2_POLICY_PARTITION] = "SLURM_JOB_PARTITION",
	};
	struct passwd pw, *res = NULL;
	char pwbuf[4096];

	memset(b, 0, sizeof(*b));
	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &res) == 0 && res)
		snprintf(b->text[LWM2_POLICY_USER], sizeof(b->text[0]), "%s", res->pw_name);
	for (int s = 0; s < LWM2_NPOLICY; s++) {
		if (vars[s] && get(ctx, vars[s], b->text[s], sizeof(b->text[s])) < 0)
			b->text[s][0] = '\0';
		b->names.name[s] = b->text[s];
	}
}

/*
 * Only public interfaces: slurmctld puts ClusterName into every batch job's
 * environment and srun into its own and each step's (SLURM_CLUSTER_NAME),
 * so the job environment (from_env, read with spank_getenv in slurmstepd)
 * and then the process's own answer without reaching into the loading
 * program's internal configuration, whose layout changes between releases.
 */
const char *lwm2_cluster_name(const char *from_env)
{
	const char *own;

	if (lwm2_conf.cluster[0])
		return lwm2_conf.cluster;
	if (from_env && *from_env)
		return from_env;
	own = getenv("SLURM_CLUSTER_NAME");
	if (own && *own)
		return own;
	return "unknown";
}

int lwm2_common_init(spank_t sp, int ac, char **av)
{
	char err[512];
	int rc = 0;

	lwm2_config_defaults(&lwm2_conf);
	lwm2_conf_ok = lwm2_config_parse(&lwm2_conf, ac, av, err, sizeof(err)) == 0;
	if (!lwm2_conf_ok) {
		/* Measuring with a configuration the site did not mean is
		 * worse than not measuring: lwm2 stays off for this process.
		 * The error fails the step only where plugstack.conf lists
		 * the plugin as required. */
		slurm_error("lwm2: init: couldn't parse plugstack.conf arguments: %s", err);
		rc = -1;
	}
	/* Options are registered even then, so that job scripts that use
	 * --lwm2 keep working while the site fixes its configuration. */
	if (lwm2_options_register(sp) < 0)
		rc = -1;
	return rc;
}
