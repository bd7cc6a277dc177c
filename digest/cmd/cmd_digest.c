/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest`: the digests of finished jobs, read back like sacct.
 *
 * From Slurm accounting (libslurmdb) by default, so slurmdbd's PrivateData
 * decides who sees which job; or from the JSON-lines log that jobcomp/lwm2
 * writes (--file), streamed line by line: the job fields come before the
 * digest on each line and are matched without parsing the digest.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
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
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "logscan.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_record.h"
#include "lwm2_render.h"
#include "slurm_compat.h"
#include "slurmutil.h"

#define NONE32 0xfffffffeu /* Slurm's NO_VAL */
/* Step ids above this are Slurm's special steps (batch, extern, ...). */
#define LWM2_STEP_ID_MAX 0xfffffff0u
/* Widest column of -o FIELD%WIDTH. */
#define LWM2_FIELD_WIDTH_MAX 1024

/* ------------------------------------------------------------ options */

struct want {
	uint32_t job_id;
	uint32_t array_task; /* NONE32: any */
	uint32_t het_offset; /* NONE32: any */
	int64_t step;        /* -1: the whole job */
	bool found;          /* printed something for it */
	bool done;           /* has a digest or a final reason */
};

enum out_mode { OUT_TEXT, OUT_TABLE, OUT_PARSABLE, OUT_CSV, OUT_JSON };

struct opts {
	struct want *jobs;
	size_t njobs;
	char **users;
	size_t nusers;
	char **accounts;
	size_t naccounts;
	int64_t start, end; /* 0: not set */
	char *format;
	enum out_mode out;
	const char *file;
	const char *cluster;
	int wait;
	bool steps;
	bool noheader;
	bool all_users;
};

/* One job as either source gives it. */
struct entry {
	uint32_t job_id, array_job_id, array_task_id, het_job_id, het_job_offset;
	uint32_t node_count, uid;
	int64_t submit, start, end;
	char user[64];
	const char *account, *partition, *state, *nodes, *exit_code;
	char exit_buf[32];
	const char *status; /* ok, no_records, not_started, running, pending, none */
	const char *reason;
	json_object *digest; /* NULL without one, or not parsed (--file) */
	bool has_digest;
	json_object *logline; /* --file: the whole line */
	int64_t step;         /* step asked for, or -1 */
};

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: lwm2 digest [OPTIONS]\n"
	        "Show lwm2 job digests from Slurm accounting (or from jobcomp/lwm2's log).\n\n"
	        "Selection:\n"
	        "  -j, --jobs=JOB[.STEP][,...]  jobs (JOB: ID, ID_TASK for an array task,\n"
	        "                               ID+OFFSET for a het job component)\n"
	        "  -u, --user=USER[,...]        jobs of these users (default: yours)\n"
	        "  -a, --allusers               jobs of all users (as far as PrivateData allows)\n"
	        "  -A, --account=ACCOUNT[,...]  jobs charged to these accounts\n"
	        "  -S, --starttime=TIME         jobs that ran after TIME (default: midnight)\n"
	        "  -E, --endtime=TIME           jobs that ran before TIME (default: now)\n"
	        "  -M, --cluster=NAME           cluster (default: ClusterName of slurm.conf)\n"
	        "  -f, --file=LOG               read jobcomp/lwm2's JSON-lines log instead\n"
	        "  -w, --wait=SECONDS           wait up to SECONDS for digests of jobs that\n"
	        "                               have just ended (with -j)\n"
	        "Output (default: the text digest of each job):\n"
	        "  -o, --format=FIELD[,...]     a table of these fields (--helpformat lists them)\n"
	        "  -p, --parsable2              fields separated by '|'\n"
	        "      --csv                    comma-separated values\n"
	        "      --json                   a JSON array: job fields, status and digest\n"
	        "  -n, --noheader               no header line\n"
	        "      --steps                  text digest: every step too\n"
	        "TIME: now, now-N[s|m|h|d], YYYY-MM-DD[THH:MM[:SS]], @EPOCH, or as sacct\n"
	        "      takes it (MM/DD[/YY], HH:MM, today, now-3days, ...).\n"
	        "Exit status: 0 when every selected job has a digest, 1 otherwise, 2 usage.\n");
}

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
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v == 0 || v >= NONE32)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Numeric users must be uids: an overlong number must not wrap to one. */
static int check_uids(const char *cmd, char **users, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *u = users[i];
		unsigned long long v;
		char *end;

		if (!isdigit((unsigned char)*u))
			continue;
		errno = 0;
		v = strtoull(u, &end, 10);
		if (*end)
			continue; /* a name that starts with a digit */
		if (errno || v >= UINT32_MAX) {
			fprintf(stderr, "lwm2: %s: couldn't use user \"%s\": not a uid (0 to %u)\n",
			        cmd, u, UINT32_MAX - 1);
			return -1;
		}
	}
	return 0;
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
		fprintf(stderr, "lwm2: digest: couldn't parse -j: no job id given\n");
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
		if (!rc && *p == '_') {
			uint32_t t = 0;

			/* parse_u32 refuses 0, which is a valid task id */
			if (!strncmp(p + 1, "0", 1) && !isdigit((unsigned char)p[2]))
				end = p + 2;
			else if (parse_u32(p + 1, &end, &t) < 0)
				rc = -1;
			w.array_task = t;
			p = end;
		} else if (!rc && *p == '+') {
			uint32_t t = 0;

			if (!strncmp(p + 1, "0", 1) && !isdigit((unsigned char)p[2]))
				end = p + 2;
			else if (parse_u32(p + 1, &end, &t) < 0)
				rc = -1;
			w.het_offset = t;
			p = end;
		}
		if (!rc && *p == '.') {
			if (!strcmp(p + 1, "batch"))
				w.step = SLURM_BATCH_SCRIPT;
			else if (!strcmp(p + 1, "extern"))
				w.step = SLURM_EXTERN_CONT;
			else {
				unsigned long s = 0;

				/* digits only, and a step id Slurm can give: no sign, no
				 * wrap of an overlong number to a small one */
				errno = 0;
				if (isdigit((unsigned char)p[1]))
					s = strtoul(p + 1, &end, 10);
				if (!isdigit((unsigned char)p[1]) || errno || *end ||
				    s >= LWM2_STEP_ID_MAX)
					rc = -1;
				w.step = (int64_t)s;
			}
			p += strlen(p);
		}
		if (!rc && *p)
			rc = -1;
		if (rc) {
			fprintf(stderr,
			        "lwm2: digest: couldn't parse job \"%s\": want ID, ID_TASK, "
			        "ID+OFFSET, optionally .STEP\n",
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

/* ------------------------------------------------------------ fields */

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

/* The scope the fields come from: the job, or the step asked for. */
static json_object *scope_of(const struct entry *e)
{
	json_object *steps, *s;
	size_t i;

	if (!e->digest)
		return NULL;
	if (e->step < 0)
		return get(e->digest, "scope");
	steps = get(e->digest, "steps");
	for (i = 0; steps && json_object_is_type(steps, json_type_array) &&
	            i < json_object_array_length(steps);
	     i++) {
		s = json_object_array_get_idx(steps, i);
		if (json_object_get_int64(get(s, "step_id")) == e->step)
			return get(s, "scope") ? get(s, "scope") : s;
	}
	return NULL;
}

static void fmt_time(int64_t t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0) {
		snprintf(buf, len, "Unknown");
		return;
	}
	localtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void fmt_elapsed(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		s = 0;
	if (s >= 86400)
		snprintf(buf, len, "%" PRId64 "-%02d:%02d:%02d", s / 86400, (int)(s % 86400 / 3600),
		         (int)(s % 3600 / 60), (int)(s % 60));
	else
		snprintf(buf, len, "%02d:%02d:%02d", (int)(s / 3600), (int)(s % 3600 / 60),
		         (int)(s % 60));
}

static void fmt_jobid(const struct entry *e, char *buf, size_t len)
{
	if (e->array_task_id != NONE32 && e->array_job_id)
		snprintf(buf, len, "%" PRIu32 "_%" PRIu32, e->array_job_id, e->array_task_id);
	else if (e->het_job_offset != NONE32 && e->het_job_id)
		snprintf(buf, len, "%" PRIu32 "+%" PRIu32, e->het_job_id, e->het_job_offset);
	else
		snprintf(buf, len, "%" PRIu32, e->job_id);
	if (e->step >= 0) {
		size_t n = strlen(buf);

		if (e->step == SLURM_BATCH_SCRIPT)
			snprintf(buf + n, len - n, ".batch");
		else if (e->step == SLURM_EXTERN_CONT)
			snprintf(buf + n, len - n, ".extern");
		else
			snprintf(buf + n, len - n, ".%" PRId64, e->step);
	}
}

static bool is_metric(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < LWM2_NMETRICS; i++)
		if (strlen(lwm2_metric_ids[i]) == len &&
		    !strncasecmp(name, lwm2_metric_ids[i], len))
			return true;
	return false;
}

static bool is_counter(const char *name)
{
	size_t i;

	for (i = 0; i < LWM2_NCOUNTERS; i++)
		if (!strcasecmp(name, lwm2_counter_names[i]))
			return true;
	return false;
}

static const char *const job_fields[] = {
    "JobID",    "JobIDRaw", "User",      "UID",          "Account", "Partition", "State",
    "ExitCode", "Submit",   "Start",     "End",          "Elapsed", "NNodes",    "NodeList",
    "Status",   "Reason",   "Processes", "MPIProcesses", "Steps",
};

static bool field_known(const char *f)
{
	const char *dot = strchr(f, '.');
	size_t i;

	for (i = 0; i < sizeof(job_fields) / sizeof(job_fields[0]); i++)
		if (!strcasecmp(f, job_fields[i]))
			return true;
	if (is_counter(f))
		return true;
	if (dot)
		return is_metric(f, (size_t)(dot - f)) &&
		       (!strcasecmp(dot, ".min") || !strcasecmp(dot, ".max") ||
		        !strcasecmp(dot, ".avg"));
	return is_metric(f, strlen(f));
}

/* Lower-case metric id of a field name, for JSON look-ups. */
static void metric_key(const char *f, size_t len, char *buf, size_t blen)
{
	size_t i;

	for (i = 0; i < LWM2_NMETRICS; i++)
		if (strlen(lwm2_metric_ids[i]) == len && !strncasecmp(f, lwm2_metric_ids[i], len)) {
			snprintf(buf, blen, "%s", lwm2_metric_ids[i]);
			return;
		}
	snprintf(buf, blen, "%.*s", (int)len, f);
}

static void field_value(const struct entry *e, const char *f, char *buf, size_t len)
{
	json_object *sc = scope_of(e), *v;
	const char *dot;
	char key[64];
	size_t i;

	buf[0] = '\0';
	if (!strcasecmp(f, "JobID"))
		fmt_jobid(e, buf, len);
	else if (!strcasecmp(f, "JobIDRaw"))
		snprintf(buf, len, "%" PRIu32, e->job_id);
	else if (!strcasecmp(f, "User"))
		snprintf(buf, len, "%s", e->user);
	else if (!strcasecmp(f, "UID"))
		snprintf(buf, len, "%" PRIu32, e->uid);
	else if (!strcasecmp(f, "Account"))
		snprintf(buf, len, "%s", e->account ? e->account : "");
	else if (!strcasecmp(f, "Partition"))
		snprintf(buf, len, "%s", e->partition ? e->partition : "");
	else if (!strcasecmp(f, "State"))
		snprintf(buf, len, "%s", e->state ? e->state : "");
	else if (!strcasecmp(f, "ExitCode"))
		snprintf(buf, len, "%s", e->exit_code ? e->exit_code : "");
	else if (!strcasecmp(f, "Submit"))
		fmt_time(e->submit, buf, len);
	else if (!strcasecmp(f, "Start"))
		fmt_time(e->start, buf, len);
	else if (!strcasecmp(f, "End"))
		fmt_time(e->end, buf, len);
	else if (!strcasecmp(f, "Elapsed"))
		fmt_elapsed(e->start > 0 && e->end > e->start ? e->end - e->start : 0, buf, len);
	else if (!strcasecmp(f, "NNodes"))
		snprintf(buf, len, "%" PRIu32, e->node_count);
	else if (!strcasecmp(f, "NodeList"))
		snprintf(buf, len, "%s", e->nodes ? e->nodes : "None assigned");
	else if (!strcasecmp(f, "Status"))
		snprintf(buf, len, "%s", e->status);
	else if (!strcasecmp(f, "Reason"))
		snprintf(buf, len, "%s", e->reason ? e->reason : "");
	else if (!strcasecmp(f, "Processes") && sc)
		snprintf(buf, len, "%" PRId64, json_object_get_int64(get(sc, "processes")));
	else if (!strcasecmp(f, "MPIProcesses") && sc)
		snprintf(buf, len, "%" PRId64, json_object_get_int64(get(sc, "mpi_processes")));
	else if (!strcasecmp(f, "Steps") && e->digest)
		snprintf(buf, len, "%zu",
		         get(e->digest, "steps") ? json_object_array_length(get(e->digest, "steps"))
		                                 : (size_t)0);
	else if (is_counter(f) && sc) {
		for (i = 0; i < LWM2_NCOUNTERS; i++)
			if (!strcasecmp(f, lwm2_counter_names[i]))
				break;
		if ((v = get(get(sc, "totals"), lwm2_counter_names[i])))
			snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
		else if (get(sc, "totals"))
			snprintf(buf, len, "0");
	} else if (sc) {
		const char *stat = "avg";

		dot = strchr(f, '.');
		if (dot)
			stat = dot + 1;
		metric_key(f, dot ? (size_t)(dot - f) : strlen(f), key, sizeof(key));
		v = get(get(get(sc, "metrics"), key), strcasecmp(stat, "min") == 0   ? "min"
		                                      : strcasecmp(stat, "max") == 0 ? "max"
		                                                                     : "avg");
		if (v)
			snprintf(buf, len, "%s", json_object_get_string(v));
	}
}

/* ------------------------------------------------------------ output */

struct out {
	const struct opts *o;
	char **fields;
	size_t nfields;
	int *width;
	bool header_done;
	size_t njson;
	unsigned ok, missing;
	bool quiet; /* --wait: only find out whether the digests are there */
};

static void csv_cell(const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void table_header(struct out *out)
{
	size_t i;
	const char sep = out->o->out == OUT_CSV ? ',' : '|';

	if (out->header_done || out->o->noheader)
		return;
	out->header_done = true;
	for (i = 0; i < out->nfields; i++) {
		if (out->o->out == OUT_TABLE)
			printf("%s%*s", i ? " " : "", -out->width[i], out->fields[i]);
		else
			printf("%s%s", i ? (char[]){sep, 0} : "", out->fields[i]);
	}
	putchar('\n');
	if (out->o->out == OUT_TABLE) {
		for (i = 0; i < out->nfields; i++) {
			printf("%s", i ? " " : "");
			for (int k = 0; k < out->width[i]; k++)
				putchar('-');
		}
		putchar('\n');
	}
}

static json_object *entry_json(const struct entry *e)
{
	json_object *o = json_object_new_object();
	char id[64];

	fmt_jobid(e, id, sizeof(id));
	json_object_object_add(o, "job", json_object_new_string(id));
	json_object_object_add(o, "job_id", json_object_new_int64(e->job_id));
	json_object_object_add(o, "user", json_object_new_string(e->user));
	if (e->account)
		json_object_object_add(o, "account", json_object_new_string(e->account));
	if (e->partition)
		json_object_object_add(o, "partition", json_object_new_string(e->partition));
	if (e->state)
		json_object_object_add(o, "state", json_object_new_string(e->state));
	if (e->exit_code)
		json_object_object_add(o, "exit_code", json_object_new_string(e->exit_code));
	json_object_object_add(o, "start", json_object_new_int64(e->start));
	json_object_object_add(o, "end", json_object_new_int64(e->end));
	json_object_object_add(o, "node_count", json_object_new_int64(e->node_count));
	if (e->nodes)
		json_object_object_add(o, "nodes", json_object_new_string(e->nodes));
	json_object_object_add(o, "status", json_object_new_string(e->status));
	if (e->reason)
		json_object_object_add(o, "reason", json_object_new_string(e->reason));
	if (e->digest)
		json_object_object_add(o, "digest", json_object_get(e->digest));
	return o;
}

static void emit(struct out *out, const struct entry *e)
{
	const struct opts *o = out->o;
	char id[64], val[4096];
	size_t i;

	if (out->quiet)
		return;
	if (e->has_digest)
		out->ok++;
	else
		out->missing++;
	switch (o->out) {
	case OUT_TEXT:
		fmt_jobid(e, id, sizeof(id));
		if (!e->has_digest || !e->digest) {
			fprintf(stderr, "lwm2: digest: job %s: no digest: %s\n", id,
			        e->reason ? e->reason : e->status);
			return;
		}
		if (out->ok > 1)
			putchar('\n');
		{
			struct lwm2_render_opts ro = {.flags = 0,
			                              .steps = o->steps || e->step >= 0};

			if (lwm2_digest_render(e->digest, stdout, &ro) < 0)
				fprintf(stderr, "lwm2: digest: couldn't render job %s: %s\n", id,
				        strerror(errno));
		}
		return;
	case OUT_JSON: {
		json_object *j = entry_json(e);

		printf("%s%s", out->njson++ ? ",\n" : "[\n",
		       json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
		json_object_put(j);
		return;
	}
	default:
		break;
	}
	table_header(out);
	for (i = 0; i < out->nfields; i++) {
		field_value(e, out->fields[i], val, sizeof(val));
		if (o->out == OUT_TABLE) {
			/* like sacct: cut to the column, '+' marks the cut */
			int w = out->width[i];

			if ((int)strlen(val) > w && w > 0) {
				val[w - 1] = '+';
				val[w] = '\0';
			}
			printf("%s%*s", i ? " " : "", w, val);
		} else if (o->out == OUT_CSV) {
			if (i)
				putchar(',');
			csv_cell(val);
		} else {
			printf("%s%s", i ? "|" : "", val);
		}
	}
	putchar('\n');
}

/* "Field%N" sets a column width, as in sacct. */
static int setup_fields(struct out *out, const char *format)
{
	char **items = NULL;
	size_t n = 0, i;

	if (lwm2_split_list(format, &items, &n) < 0)
		return -1;
	out->fields = items;
	out->nfields = n;
	if (!(out->width = calloc(n ? n : 1, sizeof(int))))
		return -1;
	for (i = 0; i < n; i++) {
		char *pct = strchr(items[i], '%');

		out->width[i] = 10;
		if (pct) {
			char *e;
			long w;

			*pct = '\0';
			errno = 0;
			w = strtol(pct + 1, &e, 10);
			if (e == pct + 1 || *e || errno || w < 1 || w > LWM2_FIELD_WIDTH_MAX) {
				fprintf(stderr,
				        "lwm2: digest: couldn't use the width of field \"%s\": "
				        "\"%s\" is not 1 to %d\n",
				        items[i], pct + 1, LWM2_FIELD_WIDTH_MAX);
				return -1;
			}
			out->width[i] = (int)w;
		} else if (!strcasecmp(items[i], "JobID") || !strcasecmp(items[i], "Start") ||
		           !strcasecmp(items[i], "End") || !strcasecmp(items[i], "Submit")) {
			out->width[i] = strcasecmp(items[i], "JobID") ? 19 : 12;
		} else if (!strcasecmp(items[i], "Reason")) {
			out->width[i] = 40;
		}
		if (!field_known(items[i])) {
			fprintf(
			    stderr,
			    "lwm2: digest: couldn't use field \"%s\": unknown (see --helpformat)\n",
			    items[i]);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ status */

/*
 * The LWM2 part of an AdminComment: a digest, or a status object from
 * jobcomp/lwm2 telling why there is none ({"status":..,"reason":..}).
 */
static void from_comment(struct entry *e, const char *comment)
{
	const char *p;
	char err[256];

	e->digest = NULL;
	if (!comment || !(p = strstr(comment, LWM2_DIGEST_PREFIX "{")))
		return;
	e->digest = lwm2_digest_parse(comment, strlen(comment), err, sizeof(err));
	if (e->digest) {
		e->status = "ok";
		e->reason = NULL;
		return;
	}
	{
		json_object *o = json_tokener_parse(p + strlen(LWM2_DIGEST_PREFIX));
		const char *st = json_object_get_string(get(o, "status"));
		const char *why = json_object_get_string(get(o, "reason"));
		static char sbuf[64], rbuf[512];

		if (st) {
			snprintf(sbuf, sizeof(sbuf), "%s", st);
			snprintf(rbuf, sizeof(rbuf), "%s", why ? why : st);
			e->status = sbuf;
			e->reason = rbuf;
		} else {
			snprintf(rbuf, sizeof(rbuf), "the stored digest is unreadable: %s", err);
			e->status = "bad";
			e->reason = rbuf;
		}
		json_object_put(o);
	}
}

/* ------------------------------------------------------------ matching */

static bool user_matches(const struct opts *o, const char *user, uint32_t uid)
{
	size_t i;

	if (!o->nusers)
		return true;
	for (i = 0; i < o->nusers; i++) {
		char *end;
		unsigned long v = strtoul(o->users[i], &end, 10);

		if ((!*end && v == uid) || (user && !strcmp(o->users[i], user)))
			return true;
	}
	return false;
}

static bool account_matches(const struct opts *o, const char *acct)
{
	size_t i;

	if (!o->naccounts)
		return true;
	for (i = 0; i < o->naccounts; i++)
		if (acct && !strcmp(o->accounts[i], acct))
			return true;
	return false;
}

/* Which -j entry (index) the job is, or -1; with no -j, 0 for everything. */
static long want_of(const struct opts *o, uint32_t job_id, uint32_t array_job_id,
                    uint32_t array_task, uint32_t het_job_id, uint32_t het_off)
{
	size_t i;

	if (!o->njobs)
		return 0;
	for (i = 0; i < o->njobs; i++) {
		const struct want *w = &o->jobs[i];

		if (w->array_task != NONE32) {
			if (array_job_id == w->job_id && array_task == w->array_task)
				return (long)i;
		} else if (w->het_offset != NONE32) {
			if (het_job_id == w->job_id && het_off == w->het_offset)
				return (long)i;
		} else if (job_id == w->job_id || (array_job_id && array_job_id == w->job_id) ||
		           (het_job_id && het_job_id == w->job_id)) {
			return (long)i;
		}
	}
	return -1;
}

static bool window_matches(const struct opts *o, int64_t start, int64_t end)
{
	/* ran (or ended) inside [-S, -E] */
	if (o->start && end && end < o->start)
		return false;
	if (o->end && start && start > o->end)
		return false;
	if (o->end && !start && end > o->end)
		return false;
	return true;
}

/* ------------------------------------------------------------ --file */

/* A top-level value of a log line, found without parsing it: the job
 * fields come first and are plain values; inside strings every quote is
 * escaped, so ,"key": can only be a key. */
static const char *raw_field(const char *line, const char *limit, const char *key)
{
	char pat[48];
	const char *p;
	size_t n = (size_t)snprintf(pat, sizeof(pat), "\"%s\":", key);

	for (p = line; (p = strstr(p, pat)) && (!limit || p < limit); p += n)
		if (p > line && (p[-1] == ',' || p[-1] == '{'))
			return p + n;
	return NULL;
}

static int64_t raw_int(const char *line, const char *limit, const char *key, int64_t dflt)
{
	const char *v = raw_field(line, limit, key);

	return v ? strtoll(v, NULL, 10) : dflt;
}

/* A string value, unescaped only for the simple cases it has to compare. */
static bool raw_str_eq(const char *line, const char *limit, const char *key, const char *want)
{
	const char *v = raw_field(line, limit, key);
	size_t n = strlen(want);

	return v && *v == '"' && !strncmp(v + 1, want, n) && v[1 + n] == '"';
}

static bool line_prefilter(const struct opts *o, const char *line)
{
	const char *limit = strstr(line, ",\"digest\":");
	int64_t start, end;
	size_t i;

	if (o->njobs) {
		uint32_t id = (uint32_t)raw_int(line, limit, "job_id", 0);
		uint32_t aj = (uint32_t)raw_int(line, limit, "array_job_id", 0);
		uint32_t at = (uint32_t)raw_int(line, limit, "array_task_id", NONE32);
		uint32_t hj = (uint32_t)raw_int(line, limit, "het_job_id", 0);
		uint32_t ho = (uint32_t)raw_int(line, limit, "het_job_offset", NONE32);

		if (want_of(o, id, aj, at, hj, ho) < 0)
			return false;
	}
	if (o->nusers) {
		bool m = false;
		uint32_t uid = (uint32_t)raw_int(line, limit, "uid", -1);

		for (i = 0; i < o->nusers && !m; i++)
			m = raw_str_eq(line, limit, "user", o->users[i]);
		if (!m && !user_matches(o, NULL, uid))
			return false;
	}
	if (o->naccounts) {
		bool m = false;

		for (i = 0; i < o->naccounts && !m; i++)
			m = raw_str_eq(line, limit, "account", o->accounts[i]);
		if (!m)
			return false;
	}
	start = raw_int(line, limit, "start", 0);
	end = raw_int(line, limit, "end", 0);
	return window_matches(o, start, end);
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void entry_from_line(struct entry *e, json_object *l)
{
	const char *s;

	memset(e, 0, sizeof(*e));
	e->logline = l;
	e->job_id = (uint32_t)json_object_get_int64(get(l, "job_id"));
	e->array_job_id = (uint32_t)json_object_get_int64(get(l, "array_job_id"));
	e->array_task_id = get(l, "array_task_id")
	                       ? (uint32_t)json_object_get_int64(get(l, "array_task_id"))
	                       : NONE32;
	e->het_job_id = (uint32_t)json_object_get_int64(get(l, "het_job_id"));
	e->het_job_offset = get(l, "het_job_offset")
	                        ? (uint32_t)json_object_get_int64(get(l, "het_job_offset"))
	                        : NONE32;
	e->uid = (uint32_t)json_object_get_int64(get(l, "uid"));
	e->node_count = (uint32_t)json_object_get_int64(get(l, "node_count"));
	e->submit = json_object_get_int64(get(l, "submit"));
	e->start = json_object_get_int64(get(l, "start"));
	e->end = json_object_get_int64(get(l, "end"));
	snprintf(e->user, sizeof(e->user), "%s", jstr(l, "user") ? jstr(l, "user") : "");
	e->account = jstr(l, "account");
	e->partition = jstr(l, "partition");
	e->state = jstr(l, "state");
	e->nodes = jstr(l, "nodes");
	e->exit_code = jstr(l, "exit_code");
	s = jstr(l, "status");
	e->status = s ? s : "none";
	e->reason = jstr(l, "reason");
	e->step = -1;
}

static void emit_for_wants(struct out *out, struct opts *o, struct entry *e)
{
	long wi = want_of(o, e->job_id, e->array_job_id, e->array_task_id, e->het_job_id,
	                  e->het_job_offset);

	if (o->njobs && wi >= 0) {
		/* every -j entry that names this job, each with its step */
		size_t i;

		for (i = 0; i < o->njobs; i++) {
			struct want *w = &o->jobs[i];
			struct want one = *w;
			struct opts tmp = *o;

			tmp.jobs = &one;
			tmp.njobs = 1;
			if (want_of(&tmp, e->job_id, e->array_job_id, e->array_task_id,
			            e->het_job_id, e->het_job_offset) < 0)
				continue;
			e->step = w->step;
			w->found = true;
			if (e->has_digest ||
			    (strcmp(e->status, "pending") && strcmp(e->status, "running")))
				w->done = true;
			if (e->digest && w->step >= 0 && !scope_of(e)) {
				fprintf(stderr,
				        "lwm2: digest: job %" PRIu32 ": no step %" PRId64
				        " in its digest\n",
				        e->job_id, w->step);
				out->missing++;
				continue;
			}
			emit(out, e);
		}
		return;
	}
	e->step = -1;
	emit(out, e);
}

/* What of the digest the output needs: lines are parsed only that far. */
enum need { NEED_NONE, NEED_SCOPE, NEED_FULL };

static enum need digest_need(const struct out *out, const struct opts *o)
{
	size_t i;
	enum need n = NEED_NONE;

	if (o->out == OUT_TEXT || o->out == OUT_JSON)
		return NEED_FULL;
	for (i = 0; i < o->njobs; i++)
		if (o->jobs[i].step >= 0)
			return NEED_FULL;
	for (i = 0; i < out->nfields; i++) {
		const char *f = out->fields[i];
		size_t k;
		bool job_field = false;

		if (!strcasecmp(f, "Steps"))
			return NEED_FULL;
		for (k = 0; k < sizeof(job_fields) / sizeof(job_fields[0]); k++)
			if (!strcasecmp(f, job_fields[k]))
				job_field = true;
		if (!job_field || !strcasecmp(f, "Processes") || !strcasecmp(f, "MPIProcesses"))
			n = NEED_SCOPE;
	}
	return n;
}

static json_object *raw_number(const char *v)
{
	char buf[64];
	size_t n = strcspn(v, ",}] ");

	if (!n || n >= sizeof(buf) || !(isdigit((unsigned char)*v) || *v == '-'))
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	if (strpbrk(buf, ".eE"))
		return json_object_new_double_s(strtod(buf, NULL), buf);
	return json_object_new_int64(strtoll(buf, NULL, 10));
}

/*
 * {"scope": {...}} with only the values the fields ask for, read from the
 * line without parsing the whole digest (a full parse of 100,000 digests
 * takes seconds).  The digest starts with its version and "job", so the
 * first ,"scope": after the digest's start is the top-level one.
 */
static json_object *scope_subset(const char *dpos, const struct out *out)
{
	const char *sc = strstr(dpos, ",\"scope\":{"), *sc_end, *m, *m_end = NULL, *t,
	           *t_end = NULL, *v;
	json_object *wrap, *scope, *metrics, *totals;
	size_t i;

	if (!sc)
		return NULL;
	sc += strlen(",\"scope\":");
	/* lwm2_json_member() stops at the end of the object it walks: the end of the
	 * line is bound enough, and spanning objects first would cost a scan */
	sc_end = sc + strlen(sc);
	if ((m = lwm2_json_member(sc, sc_end, "metrics")) && *m == '{')
		m_end = sc_end;
	if ((t = lwm2_json_member(sc, sc_end, "totals")) && *t == '{')
		t_end = sc_end;
	wrap = json_object_new_object();
	scope = json_object_new_object();
	metrics = json_object_new_object();
	totals = json_object_new_object();
	json_object_object_add(wrap, "scope", scope);
	json_object_object_add(scope, "metrics", metrics);
	json_object_object_add(scope, "totals", totals);
	if ((v = lwm2_json_member(sc, sc_end, "processes")))
		json_object_object_add(scope, "processes", raw_number(v));
	if ((v = lwm2_json_member(sc, sc_end, "mpi_processes")))
		json_object_object_add(scope, "mpi_processes", raw_number(v));
	for (i = 0; i < out->nfields; i++) {
		const char *f = out->fields[i], *dot = strchr(f, '.');
		char key[64];
		size_t k;

		if (is_counter(f) && t_end) {
			for (k = 0; k < LWM2_NCOUNTERS; k++)
				if (!strcasecmp(f, lwm2_counter_names[k]) &&
				    (v = lwm2_json_member(t, t_end, lwm2_counter_names[k])))
					json_object_object_add(totals, lwm2_counter_names[k],
					                       raw_number(v));
		} else if (m_end && is_metric(f, dot ? (size_t)(dot - f) : strlen(f))) {
			const char *mo, *mo_end;
			json_object *e;
			static const char *const stats[] = {"min", "avg", "max"};

			metric_key(f, dot ? (size_t)(dot - f) : strlen(f), key, sizeof(key));
			if (json_object_object_get_ex(metrics, key, NULL))
				continue;
			if (!(mo = lwm2_json_member(m, m_end, key)) || *mo != '{' ||
			    !(mo_end = m_end))
				continue;
			e = json_object_new_object();
			for (k = 0; k < 3; k++)
				if ((v = lwm2_json_member(mo, mo_end, stats[k])))
					json_object_object_add(e, stats[k], raw_number(v));
			json_object_object_add(metrics, key, e);
		}
	}
	return wrap;
}

static int read_file(struct out *out, struct opts *o)
{
	FILE *f = lwm2_open_input("digest", o->file);
	struct lwm2_lines lr = {.f = f};
	char *line = NULL;
	long n;
	unsigned long bad = 0, toolong = 0;
	enum need need = digest_need(out, o);
	int rc = 0;

	if (!f)
		return -1;
	while ((n = lwm2_lines_next(&lr, &line)) != -1) {
		json_object *l, *full = NULL, *part = NULL;
		char *dpos;
		struct entry e;

		if (n == -2) {
			toolong++;
			continue;
		}
		if (!line_prefilter(o, line))
			continue;
		/* the job fields alone: the line up to its digest */
		dpos = strstr(line, ",\"digest\":");
		if (dpos) {
			char saved[2] = {dpos[0], dpos[1]};

			dpos[0] = '}';
			dpos[1] = '\0';
			l = json_tokener_parse(line);
			dpos[0] = saved[0];
			dpos[1] = saved[1];
		} else {
			l = json_tokener_parse(line);
		}
		if (!l || !get(l, "job_id")) {
			bad++;
			json_object_put(l);
			continue;
		}
		entry_from_line(&e, l);
		if (dpos) {
			e.has_digest = true;
			if (need == NEED_FULL) {
				if ((full = json_tokener_parse(line)))
					e.digest = get(full, "digest");
			} else if (need == NEED_SCOPE) {
				e.digest = part = scope_subset(dpos, out);
			}
			if (need != NEED_NONE && !e.digest) {
				bad++;
				json_object_put(l);
				continue;
			}
		}
		/* the precise check, now that the line is parsed */
		if (user_matches(o, e.user, e.uid) && account_matches(o, e.account))
			emit_for_wants(out, o, &e);
		json_object_put(full);
		json_object_put(part);
		json_object_put(l);
	}
	if (ferror(f)) {
		fprintf(stderr, "lwm2: digest: couldn't read %s: %s\n", o->file, strerror(errno));
		rc = -1;
	}
	lwm2_lines_free(&lr);
	if (f != stdin)
		fclose(f);
	if (bad)
		fprintf(stderr, "lwm2: digest: skipped %lu unreadable lines of %s\n", bad, o->file);
	if (toolong)
		fprintf(stderr, "lwm2: digest: skipped %lu lines of %s longer than %u bytes\n",
		        toolong, o->file, LWM2_LINE_MAX);
	return rc;
}

/* ------------------------------------------------------------ accounting */

/* sacct's names of the base states (slurm.h's enum job_states). */
static const char *state_name(uint32_t state)
{
	static const char *const names[] = {
	    [JOB_PENDING] = "PENDING",     [JOB_RUNNING] = "RUNNING",
	    [JOB_SUSPENDED] = "SUSPENDED", [JOB_COMPLETE] = "COMPLETED",
	    [JOB_CANCELLED] = "CANCELLED", [JOB_FAILED] = "FAILED",
	    [JOB_TIMEOUT] = "TIMEOUT",     [JOB_NODE_FAIL] = "NODE_FAIL",
	    [JOB_PREEMPTED] = "PREEMPTED", [JOB_BOOT_FAIL] = "BOOT_FAIL",
	    [JOB_DEADLINE] = "DEADLINE",   [JOB_OOM] = "OUT_OF_MEMORY",
	};
	uint32_t base = state & JOB_STATE_BASE;

	if (state & JOB_REQUEUE)
		return "REQUEUED";
	return base < sizeof(names) / sizeof(names[0]) && names[base] ? names[base] : "UNKNOWN";
}

static void entry_from_rec(struct entry *e, slurmdb_job_rec_t *r)
{
	struct passwd *pw;
	uint32_t base = r->state & JOB_STATE_BASE;
	unsigned sig = r->exitcode & 0x7f, status = (r->exitcode >> 8) & 0xff;

	memset(e, 0, sizeof(*e));
	e->job_id = r->jobid;
	e->array_job_id = r->array_job_id;
	e->array_task_id = r->array_job_id ? r->array_task_id : NONE32;
	e->het_job_id = r->het_job_id;
	e->het_job_offset = r->het_job_id ? r->het_job_offset : NONE32;
	e->uid = r->uid;
	e->node_count = r->alloc_nodes;
	e->submit = r->submit;
	e->start = r->start;
	e->end = r->end;
	if (r->user)
		snprintf(e->user, sizeof(e->user), "%s", r->user);
	else if ((pw = getpwuid(r->uid)))
		snprintf(e->user, sizeof(e->user), "%s", pw->pw_name);
	else
		snprintf(e->user, sizeof(e->user), "%" PRIu32, r->uid);
	e->account = r->account;
	e->partition = r->partition;
	e->state = state_name(r->state);
	e->nodes = r->nodes && strcmp(r->nodes, "None assigned") ? r->nodes : NULL;
	snprintf(e->exit_buf, sizeof(e->exit_buf), "%u:%u", status, sig);
	e->exit_code = e->exit_buf;
	e->step = -1;
	from_comment(e, r->admin_comment);
	e->has_digest = e->digest != NULL;
	if (e->digest || e->reason)
		return;
	if (base == JOB_PENDING) {
		e->status = "pending";
		e->reason = "the job has not started yet";
	} else if (base == JOB_RUNNING || base == JOB_SUSPENDED || !r->end) {
		e->status = "running";
		e->reason = "the job is still running";
	} else if (!r->start || !e->nodes) {
		e->status = "not_started";
		e->reason = "the job never ran";
	} else if (time(NULL) - r->end < 300) {
		/* jobcomp/lwm2 waits for the nodes, then queues the digest
		 * behind the job's own record */
		e->status = "pending";
		e->reason = "the job has just ended and its digest is not stored yet (try --wait)";
	} else {
		e->status = "none";
		e->reason = "no digest stored: lwm2 was off for this job, or jobcomp/lwm2 is not "
		            "the cluster's JobCompType";
	}
}

static int read_accounting(struct out *out, struct opts *o)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t *sel = NULL;
	char *cluster = NULL;
	void *db;
	list_t *jobs, *users = NULL, *accts = NULL, *clusters = NULL, *steps = NULL;
	list_itr_t *it;
	slurmdb_job_rec_t *r;
	size_t i;
	int rc = 0;

	slurm_init(NULL);
	memset(&cond, 0, sizeof(cond));
	cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
	cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_NO_STEP;

	if (!o->cluster) {
		cluster = lwm2_slurm_cluster_name();
		if (!cluster) {
			fprintf(stderr, "lwm2: digest: couldn't find ClusterName in slurm.conf; "
			                "give --cluster\n");
			return -1;
		}
	}
	clusters = slurm_list_create(NULL);
	slurm_list_append(clusters, (void *)(o->cluster ? o->cluster : cluster));
	cond.cluster_list = clusters;

	if (o->njobs) {
		if (!(sel = calloc(o->njobs, sizeof(*sel))))
			return -1;
		steps = slurm_list_create(NULL);
		for (i = 0; i < o->njobs; i++) {
			sel[i].step_id.job_id = o->jobs[i].job_id;
			sel[i].step_id.step_id = NO_VAL;
			sel[i].step_id.step_het_comp = NO_VAL;
			sel[i].array_task_id = o->jobs[i].array_task;
			sel[i].het_job_offset = o->jobs[i].het_offset;
			slurm_list_append(steps, &sel[i]);
		}
		cond.step_list = steps;
	}
	if (o->nusers) {
		users = slurm_list_create(NULL);
		for (i = 0; i < o->nusers; i++) {
			struct passwd *pw = getpwnam(o->users[i]);
			static char uidbuf[64][16];
			char *end;

			if (pw) {
				snprintf(uidbuf[i % 64], sizeof(uidbuf[0]), "%u",
				         (unsigned)pw->pw_uid);
				slurm_list_append(users, uidbuf[i % 64]);
			} else if ((void)strtoul(o->users[i], &end, 10), !*end) {
				slurm_list_append(users, o->users[i]);
			} else {
				fprintf(stderr, "lwm2: digest: couldn't find user %s\n",
				        o->users[i]);
				rc = -1;
				goto out;
			}
		}
		cond.userid_list = users;
	}
	if (o->naccounts) {
		accts = slurm_list_create(NULL);
		for (i = 0; i < o->naccounts; i++)
			slurm_list_append(accts, o->accounts[i]);
		cond.acct_list = accts;
	}
	cond.usage_start = (time_t)o->start;
	cond.usage_end = (time_t)o->end;

	if (!(db = slurmdb_connection_get(NULL))) {
		fprintf(stderr, "lwm2: digest: couldn't connect to slurmdbd: %s\n",
		        slurm_strerror(errno));
		rc = -1;
		goto out;
	}
	jobs = slurmdb_jobs_get(db, &cond);
	if (!jobs) {
		fprintf(stderr, "lwm2: digest: couldn't read jobs from accounting: %s\n",
		        slurm_strerror(errno));
		slurmdb_connection_close(&db);
		rc = -1;
		goto out;
	}
	it = slurm_list_iterator_create(jobs);
	while ((r = slurm_list_next(it))) {
		struct entry e;

		entry_from_rec(&e, r);
		/* userid_list and the window are matched by slurmdbd; a -j
		 * without a window still lists every run of a requeued job */
		emit_for_wants(out, o, &e);
		json_object_put(e.digest);
	}
	slurm_list_iterator_destroy(it);
	slurm_list_destroy(jobs);
	slurmdb_connection_close(&db);
out:
	if (steps)
		slurm_list_destroy(steps);
	if (users)
		slurm_list_destroy(users);
	if (accts)
		slurm_list_destroy(accts);
	slurm_list_destroy(clusters);
	free(sel);
	free(cluster);
	return rc;
}

/* ------------------------------------------------------------ main */

enum { OPT_CSV = 256, OPT_JSON, OPT_STEPS, OPT_HELPFORMAT };

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
}

static int run_once(struct out *out, struct opts *o)
{
	return o->file ? read_file(out, o) : read_accounting(out, o);
}

int lwm2_cmd_digest(int argc, char **argv)
{
	static const struct option lopts[] = {
	    {"jobs", required_argument, NULL, 'j'},
	    {"user", required_argument, NULL, 'u'},
	    {"allusers", no_argument, NULL, 'a'},
	    {"account", required_argument, NULL, 'A'},
	    {"starttime", required_argument, NULL, 'S'},
	    {"endtime", required_argument, NULL, 'E'},
	    {"cluster", required_argument, NULL, 'M'},
	    {"file", required_argument, NULL, 'f'},
	    {"wait", required_argument, NULL, 'w'},
	    {"format", required_argument, NULL, 'o'},
	    {"parsable2", no_argument, NULL, 'p'},
	    {"noheader", no_argument, NULL, 'n'},
	    {"csv", no_argument, NULL, OPT_CSV},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"steps", no_argument, NULL, OPT_STEPS},
	    {"helpformat", no_argument, NULL, OPT_HELPFORMAT},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct opts o = {0};
	struct out out = {0};
	int c, rc = 0;
	bool want_json = false, want_csv = false, want_p = false;
	size_t i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "j:u:aA:S:E:M:f:w:o:pnh", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			if (parse_jobs(optarg, &o) < 0)
				goto usage_err;
			break;
		case 'u':
			if (lwm2_split_list(optarg, &o.users, &o.nusers) < 0 ||
			    check_uids("digest", o.users, o.nusers) < 0)
				goto usage_err;
			break;
		case 'a':
			o.all_users = true;
			break;
		case 'A':
			if (lwm2_split_list(optarg, &o.accounts, &o.naccounts) < 0)
				goto usage_err;
			break;
		case 'S':
		case 'E':
			if (lwm2_time_arg(optarg, c == 'S' ? &o.start : &o.end) < 0) {
				fprintf(stderr, "lwm2: digest: couldn't parse time \"%s\"\n",
				        optarg);
				goto usage_err;
			}
			break;
		case 'M':
			o.cluster = optarg;
			break;
		case 'f':
			o.file = optarg;
			break;
		case 'w': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (*end || v < 0 || v > 86400) {
				fprintf(stderr, "lwm2: digest: couldn't parse --wait \"%s\"\n",
				        optarg);
				goto usage_err;
			}
			o.wait = (int)v;
			break;
		}
		case 'o':
			o.format = optarg;
			break;
		case 'p':
			want_p = true;
			break;
		case 'n':
			o.noheader = true;
			break;
		case OPT_CSV:
			want_csv = true;
			break;
		case OPT_JSON:
			want_json = true;
			break;
		case OPT_STEPS:
			o.steps = true;
			break;
		case OPT_HELPFORMAT:
			helpformat();
			free_opts(&o);
			return 0;
		case 'h':
			usage(stdout);
			free_opts(&o);
			return 0;
		default:
			goto usage_err;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lwm2: digest: unexpected argument \"%s\"\n", argv[optind]);
		goto usage_err;
	}
	if (want_json + want_csv + want_p > 1) {
		fprintf(stderr, "lwm2: digest: --json, --csv and -p exclude each other\n");
		goto usage_err;
	}
	o.out = want_json  ? OUT_JSON
	        : want_csv ? OUT_CSV
	        : want_p   ? OUT_PARSABLE
	        : o.format ? OUT_TABLE
	                   : OUT_TEXT;
	if ((o.out == OUT_CSV || o.out == OUT_PARSABLE || o.out == OUT_TABLE) && !o.format)
		o.format = "JobID,User,Account,State,Elapsed,NNodes,Processes,mpi_time,"
		           "posix_io_time,Status";
	out.o = &o;
	if (o.format && o.out != OUT_JSON && o.out != OUT_TEXT && setup_fields(&out, o.format) < 0)
		goto usage_err;

	/* like sacct: your own jobs unless told otherwise; root sees all */
	if (!o.njobs && !o.nusers && !o.all_users && getuid() != 0) {
		struct passwd *pw = getpwuid(getuid());
		char buf[32];

		snprintf(buf, sizeof(buf), "%u", (unsigned)getuid());
		if (lwm2_split_list(pw ? pw->pw_name : buf, &o.users, &o.nusers) < 0)
			goto usage_err;
	}
	if (!o.njobs && !o.start) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		o.start = mktime(&tm);
	}

	if (o.wait && o.njobs) {
		/* poll until every asked-for job has its digest or a final
		 * reason; print once, at the end */
		time_t deadline = time(NULL) + o.wait;

		for (;;) {
			bool all = true;
			struct out probe = out;

			probe.quiet = true;
			for (i = 0; i < o.njobs; i++)
				o.jobs[i].done = o.jobs[i].found = false;
			run_once(&probe, &o);
			for (i = 0; i < o.njobs; i++)
				all = all && o.jobs[i].done;
			if (all || time(NULL) >= deadline)
				break;
			sleep(1);
		}
	}
	for (i = 0; i < o.njobs; i++)
		o.jobs[i].found = o.jobs[i].done = false;
	out.ok = out.missing = 0;
	out.header_done = false;
	out.njson = 0;
	if (run_once(&out, &o) < 0)
		rc = 1;
	if (o.out == OUT_JSON)
		printf("%s\n", out.njson ? "\n]" : "[]");
	for (i = 0; i < o.njobs; i++) {
		if (!o.jobs[i].found) {
			fprintf(stderr,
			        "lwm2: digest: couldn't find job %" PRIu32 ": no such job%s\n",
			        o.jobs[i].job_id,
			        o.file ? " in the log"
			               : " in accounting, or PrivateData hides it from you");
			rc = 1;
		}
	}
	if (out.missing)
		rc = 1;
	fflush(stdout);
	for (i = 0; i < out.nfields; i++)
		free(out.fields[i]);
	free(out.fields);
	free(out.width);
	free_opts(&o);
	return rc;
usage_err:
	usage(stderr);
	for (i = 0; i < out.nfields; i++)
		free(out.fields[i]);
	free(out.fields);
	free(out.width);
	free_opts(&o);
	return 2;
}
