/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest`: the digests of finished jobs, read back like sacct.
 *
 * The options and the source: the jobs come from Slurm accounting
 * (digest_slurmdb.c) or from the JSON-lines log that jobcomp/lwm2 writes
 * (--file, digest_log.c); each is matched and printed by digest_emit.c.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "cmd_digest.h"
#include "cmd_io.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_record.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "slurmutil.h"
#include "log.h"

/* Step ids above this are Slurm's special steps (batch, extern, ...). */
#define LWM2_STEP_ID_MAX 0xfffffff0u

/* ------------------------------------------------------------ options */

static void helpformat(void)
{
	size_t i;

	printf("Job fields:\n  JobID JobIDRaw User UID Account Partition State ExitCode\n"
	       "  Submit Start End Elapsed NNodes NodeList Status Reason Processes\n"
	       "  MPIProcesses Steps\n");
	printf("Metrics (job-wide average; add .min, .max or .avg):\n");
	for (i = 0; i < LWM2_NMETRICS; i++)
		printf("%s%s", i % 4 == 0 ? "  " : " ", lwm2_metric_ids[i]),
		    (i % 4 == 3 || i + 1 == LWM2_NMETRICS) ? (void)putchar('\n') : (void)0;
	printf("Totals (sums over every process):\n");
	for (i = 0; i < LWM2_NCOUNTERS; i++)
		printf("%s%s", i % 4 == 0 ? "  " : " ", lwm2_counter_names[i]),
		    (i % 4 == 3 || i + 1 == LWM2_NCOUNTERS) ? (void)putchar('\n') : (void)0;
}

static int parse_u32(const char *s, char **end, uint32_t *out)
{
	uint64_t v;

	if (lwm2_parse_u64(s, (const char **)end, 1, NONE32 - 1, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Numeric users must be uids: an overlong number must not wrap to one. */
static int check_uids(const char *cmd, char **users, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *u = users[i];
		uint64_t v;

		if (!isdigit((unsigned char)*u) ||
		    lwm2_parse_u64(u, NULL, 0, UINT32_MAX - 1, &v) == 0)
			continue;
		if (errno == EINVAL)
			continue; /* a name that starts with a digit */
		lwm2_log_error("%s: couldn't use user \"%s\": not a uid (0 to %u)", cmd, u,
		               UINT32_MAX - 1);
		return -1;
	}
	return 0;
}

/* The number after an ID's '_' or '+' at p, 0 included (which parse_u32
 * refuses), in *v: where it ends, or NULL. */
static char *parse_suffix(char *p, uint32_t *v)
{
	char *end;

	*v = 0;
	if (!strncmp(p, "0", 1) && !isdigit((unsigned char)p[1]))
		return p + 1;
	return parse_u32(p, &end, v) < 0 ? NULL : end;
}

static int parse_jobs(const char *arg, struct opts *o)
{
	char **items = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (lwm2_split_list(arg, &items, &n) < 0)
		return -1;
	/* "-j ''" (an unset shell variable) must not widen to every job. */
	if (n == 0) {
		lwm2_log_error("digest: couldn't parse -j: no job id given");
		free(items);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct want w = {.array_task = NONE32, .het_offset = NONE32, .step = -1};
		char *p = items[i], *end;
		struct want *nj;

		if (parse_u32(p, &end, &w.job_id) < 0)
			rc = -1;
		p = end;
		if (!rc && (*p == '_' || *p == '+')) {
			p = parse_suffix(p + 1, *p == '_' ? &w.array_task : &w.het_offset);
			if (!p)
				rc = -1;
		}
		if (!rc && *p == '.') {
			if (!strcmp(p + 1, "batch"))
				w.step = SLURM_BATCH_SCRIPT;
			else if (!strcmp(p + 1, "extern"))
				w.step = SLURM_EXTERN_CONT;
			else {
				uint64_t s = 0;

				/* digits only, and a step id Slurm can give: no sign, no
				 * wrap of an overlong number to a small one */
				if (lwm2_parse_u64(p + 1, NULL, 0, LWM2_STEP_ID_MAX - 1, &s) < 0)
					rc = -1;
				w.step = (int64_t)s;
			}
			p += strlen(p);
		}
		if (!rc && *p)
			rc = -1;
		if (rc) {
			lwm2_log_error("digest: couldn't parse job \"%s\": want ID, ID_TASK, "
			               "ID+OFFSET, optionally .STEP",
			               items[i]);
			break;
		}
		if (!(nj = realloc(o->jobs, (o->njobs + 1) * sizeof(*nj)))) {
			rc = -1;
			break;
		}
		o->jobs = nj;
		o->jobs[o->njobs++] = w;
	}
	for (i = 0; i < n; i++)
		free(items[i]);
	free(items);
	return rc;
}

/* ------------------------------------------------------------ main */

static void free_opts(struct opts *o)
{
	size_t i;

	for (i = 0; i < o->nusers; i++)
		free(o->users[i]);
	for (i = 0; i < o->naccounts; i++)
		free(o->accounts[i]);
	free(o->users);
	free(o->accounts);
	free(o->jobs);
	free(o->files);
	lwm2_derived_free(&o->derived);
}

static int run_once(struct out *out, struct opts *o)
{
	return o->file || o->db ? digest_read_log(out, o) : digest_read_slurmdb(out, o);
}

/* The jobs not found, each said as lwm2 digest says it: the count. */
static size_t say_not_found(const struct opts *o)
{
	size_t i, n = 0;

	for (i = 0; i < o->njobs; i++) {
		if (o->jobs[i].found)
			continue;
		lwm2_log_error("digest: couldn't find job %" PRIu32 ": no such job%s",
		               o->jobs[i].job_id,
		               o->file ? " in the log"
		               : o->db ? " in the database"
		                       : " in accounting, or PrivateData hides it from you");
		n++;
	}
	return n;
}

/* The jobs JOBS names (-j's forms) from Slurm accounting of CLUSTER (NULL:
 * this one), each handed to fn as lwm2 digest --json would print it.  0,
 * or -1 after lwm2 digest's message (a malformed JOBS, a job not found,
 * accounting unreachable). */
static int collect(const char *jobs, const char *cluster,
                   void (*fn)(const struct entry *e, void *arg), void *arg)
{
	struct opts o = {.out = OUT_JSON, .cluster = cluster};
	struct out out = {.o = &o, .collect = fn, .collect_arg = arg};
	int rc = 0;

	if (parse_jobs(jobs, &o) < 0)
		return -1;
	if (digest_read_slurmdb(&out, &o) < 0 || say_not_found(&o))
		rc = -1;
	free_opts(&o);
	return rc;
}

/* A requeued job has several runs: the last one counts. */
struct last_run {
	json_object *digest;
	char *reason;
};

static void keep_last(const struct entry *e, void *arg)
{
	struct last_run *p = arg;

	if (e->digest) {
		json_object_put(p->digest);
		p->digest = json_object_get(e->digest);
	} else if (e->reason) {
		free(p->reason);
		p->reason = strdup(e->reason);
	}
}

json_object *lwm2_digest_last_run(const char *job, const char *cluster, char **reason)
{
	struct last_run p = {0};

	collect(job, cluster, keep_last, &p);
	if (reason && !p.digest)
		*reason = p.reason;
	else
		free(p.reason);
	return p.digest;
}

enum { OPT_CSV = LWM2_OPT_LONG, OPT_JSON, OPT_STEPS, OPT_HELPFORMAT, OPT_DB, OPT_METRIC };

/* The command line as read: the options and the output forms asked for. */
struct digest_cli {
	struct opts o;
	char **metrics; /* --metric, as given */
	size_t nmetrics;
	bool want_json, want_csv, want_p;
};

static const struct lwm2_optspec digest_spec = {
    .cmd = "digest",
    .usage = "Usage: lwm2 digest [OPTIONS]\n"
             "Show lwm2 job digests from Slurm accounting (or from jobcomp/lwm2's log).\n\n",
    .footer = LWM2_OPT_SACCT_TIME_HELP
    "Exit status: 0 when every selected job has a digest, 1 otherwise, 2 usage.\n",
    .col = 31,
    .no_operands = true,
    .opts = (const struct lwm2_opt[]){
        {NULL, 0, NULL, "Selection:"},
        {"jobs", 'j', "JOB[.STEP][,...]",
         "jobs (JOB: ID, ID_TASK for an array task,\nID+OFFSET for a het job component)"},
        {"user", 'u', "USER[,...]", "jobs of these users (default: yours)"},
        {"allusers", 'a', NULL, "jobs of all users (as far as PrivateData allows)"},
        {"account", 'A', "ACCOUNT[,...]", "jobs charged to these accounts"},
        {"starttime", 'S', "TIME", "jobs that ran after TIME (default: midnight)"},
        {"endtime", 'E', "TIME", "jobs that ran before TIME (default: now)"},
        {"cluster", 'M', "NAME", "cluster (default: ClusterName of slurm.conf)"},
        {"file", 'f', "LOG",
         "read jobcomp/lwm2's JSON-lines log instead\n(several allowed, patterns, gzip and "
         "zstd)"},
        {"db", OPT_DB, "DATABASE", "read the central database instead (lwm2 db)"},
        {"wait", 'w', "SECONDS",
         "wait up to SECONDS for digests of jobs that\nhave just ended (with -j)"},
        {NULL, 0, NULL, "Output (default: the text digest of each job):"},
        {"format", 'o', "FIELD[,...]", "a table of these fields (--helpformat lists them)"},
        {"parsable2", 'p', NULL, "fields separated by '|'"},
        {"csv", OPT_CSV, NULL, "comma-separated values"},
        {"json", OPT_JSON, NULL, "a JSON array: job fields, status and digest"},
        {"noheader", 'n', NULL, "no header line"},
        {"steps", OPT_STEPS, NULL, "text digest: every step too"},
        {"metric", OPT_METRIC, "NAME=EXPR",
         "a derived metric, in every output form\n(several allowed; see lwm2(1))"},
        {"helpformat", OPT_HELPFORMAT, NULL, NULL},
        {0},
    }};

/* --helpformat and the selection; the others are in digest_store */
static int digest_opt(void *ctx, int key, char *arg)
{
	struct opts *o = &((struct digest_cli *)ctx)->o;
	uint64_t v;

	switch (key) {
	case OPT_HELPFORMAT:
		helpformat();
		return LWM2_OPT_EXIT;
	case 'j':
		return parse_jobs(arg, o) < 0 ? LWM2_OPT_USAGE : 0;

	case 'u':
		return lwm2_split_list(arg, &o->users, &o->nusers) < 0 ||
		               check_uids("digest", o->users, o->nusers) < 0
		           ? LWM2_OPT_USAGE
		           : 0;
	case 'S':
	case 'E':
		return lwm2_cmd_time_opt("digest", arg, key == 'S' ? &o->start : &o->end) < 0
		           ? LWM2_OPT_USAGE
		           : 0;
	case 'f':
		if (lwm2_cmd_push_arg(&o->files, &o->nfiles, arg) < 0)
			return lwm2_opt_error(&digest_spec, LWM2_OPT_USAGE, "%s", strerror(ENOMEM));
		if (!o->file)
			o->file = arg;
		return 0;
	default: /* 'w' */
		if (lwm2_parse_u64(arg, NULL, 0, 86400, &v) < 0)
			return lwm2_opt_error(&digest_spec, LWM2_OPT_USAGE,
			                      "couldn't parse --wait \"%s\"", arg);
		o->wait = (int)v;
		return 0;
	}
}

/* The output form and the defaults that follow from the options: 0 or -1
 * (usage). */
static int digest_settle(struct digest_cli *cli, struct out *out)
{
	struct opts *o = &cli->o;
	char err[300];

	/* lwm2.conf's first, --metric's over them */
	if (lwm2_cmd_derived_conf("digest", &o->derived) < 0)
		return -1;
	for (size_t i = 0; i < cli->nmetrics; i++)
		if (lwm2_derived_add(&o->derived, cli->metrics[i], err, sizeof(err)) < 0) {
			lwm2_log_error("digest: %s", err);
			return -1;
		}
	if (cli->want_json + cli->want_csv + cli->want_p > 1) {
		lwm2_log_error("digest: --json, --csv and -p exclude each other");
		return -1;
	}
	o->out = cli->want_json  ? OUT_JSON
	         : cli->want_csv ? OUT_CSV
	         : cli->want_p   ? OUT_PARSABLE
	         : o->format     ? OUT_TABLE
	                         : OUT_TEXT;
	if ((o->out == OUT_CSV || o->out == OUT_PARSABLE || o->out == OUT_TABLE) && !o->format)
		o->format = "JobID,User,Account,State,Elapsed,NNodes,Processes,mpi_time,"
		            "posix_io_time,Status";
	out->o = o;
	if (o->format && o->out != OUT_JSON && o->out != OUT_TEXT &&
	    digest_setup_fields(out, o->format) < 0)
		return -1;

	/* like sacct: your own jobs unless told otherwise; root sees all */
	if (!o->njobs && !o->nusers && !o->all_users && getuid() != 0) {
		struct passwd *pw = getpwuid(getuid());
		char buf[32];

		snprintf(buf, sizeof(buf), "%u", (unsigned)getuid());
		if (lwm2_split_list(pw ? pw->pw_name : buf, &o->users, &o->nusers) < 0)
			return -1;
	}
	if (!o->njobs && !o->start) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		o->start = mktime(&tm);
	}
	return 0;
}

/* --wait: poll until every asked-for job has its digest or a final reason
 * (printing nothing: that is done once, at the end). */
static void digest_wait(struct out *out, struct opts *o)
{
	time_t deadline = time(NULL) + o->wait;
	size_t i;

	for (;;) {
		bool all = true;
		struct out probe = *out;

		probe.quiet = true;
		for (i = 0; i < o->njobs; i++)
			o->jobs[i].done = o->jobs[i].found = false;
		run_once(&probe, o);
		for (i = 0; i < o->njobs; i++)
			all = all && o->jobs[i].done;
		if (all || time(NULL) >= deadline)
			break;
		sleep(1);
	}
}

/* One pass that prints: the exit status. */
static int digest_print(struct out *out, struct opts *o)
{
	int rc = 0;
	size_t i;

	for (i = 0; i < o->njobs; i++)
		o->jobs[i].found = o->jobs[i].done = false;
	out->ok = out->missing = 0;
	out->header_done = false;
	out->njson = 0;
	if (run_once(out, o) < 0)
		rc = 1;
	if (o->out == OUT_JSON)
		printf("%s\n", out->njson ? "\n]" : "[]");
	if (say_not_found(o))
		rc = 1;
	if (out->missing)
		rc = 1;
	fflush(stdout);
	return rc;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore digest_store[] = {
    {'A', LWM2_OPT_LIST(struct digest_cli, o.accounts, o.naccounts)},
    {'a', LWM2_OPT_TRUE(struct digest_cli, o.all_users)},
    {'M', LWM2_OPT_ARG(struct digest_cli, o.cluster)},
    {'o', LWM2_OPT_ARG(struct digest_cli, o.format)},
    {'p', LWM2_OPT_TRUE(struct digest_cli, want_p)},
    {'n', LWM2_OPT_TRUE(struct digest_cli, o.noheader)},
    {OPT_CSV, LWM2_OPT_TRUE(struct digest_cli, want_csv)},
    {OPT_JSON, LWM2_OPT_TRUE(struct digest_cli, want_json)},
    {OPT_STEPS, LWM2_OPT_TRUE(struct digest_cli, o.steps)},
    {OPT_DB, LWM2_OPT_ARG(struct digest_cli, o.db)},
    {OPT_METRIC, LWM2_OPT_PUSH(struct digest_cli, metrics, nmetrics)},
    {0},
};

int lwm2_cmd_digest(int argc, char **argv)
{
	struct digest_cli cli = {0};
	struct out out = {0};
	int rc = lwm2_opt_parse_store(&digest_spec, digest_store, argc, argv, digest_opt, &cli);

	if (rc >= 0 && digest_settle(&cli, &out) < 0)
		rc = LWM2_OPT_USAGE;
	if (rc >= 0) {
		if (cli.o.wait && cli.o.njobs)
			digest_wait(&out, &cli.o);
		rc = digest_print(&out, &cli.o);
	} else {
		if (rc == LWM2_OPT_USAGE)
			lwm2_opt_usage(&digest_spec, stderr);
		rc = lwm2_opt_status(rc);
	}
	for (size_t i = 0; i < out.nfields; i++)
		free(out.fields[i]);
	free(out.fields);
	free(out.width);
	free(cli.metrics);
	free_opts(&cli.o);
	return rc;
}
