/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest`: the digests of finished jobs, read back like sacct.
 *
 * The options, the matching of jobs and the output (text, table, CSV,
 * JSON); the jobs come from Slurm accounting (digest_slurmdb.c) or from
 * the JSON-lines log that jobcomp/lwm2 writes (--file, digest_log.c).
 */
#include "config.h"
#include "lwm2_keys.h"

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
#include "csv.h"
#include "logscan.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_record.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "slurmutil.h"

/* Step ids above this are Slurm's special steps (batch, extern, ...). */
#define LWM2_STEP_ID_MAX 0xfffffff0u
/* Widest column of -o FIELD%WIDTH. */
#define LWM2_FIELD_WIDTH_MAX 1024

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

json_object *digest_get(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (o && json_object_is_type(o, json_type_object))
		json_object_object_get_ex(o, key, &v);
	return v;
}

/* The scope the fields come from: the job, or the step asked for. */
json_object *digest_scope_of(const struct entry *e)
{
	json_object *steps, *s;
	size_t i;

	if (!e->digest)
		return NULL;
	if (e->step < 0)
		return digest_get(e->digest, LWM2_KEY_SCOPE);
	steps = digest_get(e->digest, LWM2_KEY_STEPS);
	for (i = 0; steps && json_object_is_type(steps, json_type_array) &&
	            i < json_object_array_length(steps);
	     i++) {
		s = json_object_array_get_idx(steps, i);
		if (json_object_get_int64(digest_get(s, LWM2_KEY_STEP_ID)) == e->step)
			return digest_get(s, LWM2_KEY_SCOPE) ? digest_get(s, LWM2_KEY_SCOPE) : s;
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

bool digest_is_metric(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < LWM2_NMETRICS; i++)
		if (strlen(lwm2_metric_ids[i]) == len &&
		    !strncasecmp(name, lwm2_metric_ids[i], len))
			return true;
	return false;
}

bool digest_is_counter(const char *name)
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
	if (digest_is_counter(f))
		return true;
	if (dot)
		return digest_is_metric(f, (size_t)(dot - f)) &&
		       (!strcasecmp(dot, ".min") || !strcasecmp(dot, ".max") ||
		        !strcasecmp(dot, ".avg"));
	return digest_is_metric(f, strlen(f));
}

/* Lower-case metric id of a field name, for JSON look-ups. */
void digest_metric_key(const char *f, size_t len, char *buf, size_t blen)
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
	json_object *sc = digest_scope_of(e), *v;
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
		snprintf(buf, len, "%" PRId64,
		         json_object_get_int64(digest_get(sc, LWM2_KEY_PROCESSES)));
	else if (!strcasecmp(f, "MPIProcesses") && sc)
		snprintf(buf, len, "%" PRId64,
		         json_object_get_int64(digest_get(sc, LWM2_KEY_MPI_PROCESSES)));
	else if (!strcasecmp(f, "Steps") && e->digest)
		snprintf(buf, len, "%zu",
		         digest_get(e->digest, LWM2_KEY_STEPS)
		             ? json_object_array_length(digest_get(e->digest, LWM2_KEY_STEPS))
		             : (size_t)0);
	else if (digest_is_counter(f) && sc) {
		for (i = 0; i < LWM2_NCOUNTERS; i++)
			if (!strcasecmp(f, lwm2_counter_names[i]))
				break;
		if ((v = digest_get(digest_get(sc, LWM2_KEY_TOTALS), lwm2_counter_names[i])) &&
		    json_object_is_type(v, json_type_string)) /* "not measured" */
			snprintf(buf, len, "%s", json_object_get_string(v));
		else if (v)
			snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
		else if (digest_get(sc, LWM2_KEY_TOTALS))
			snprintf(buf, len, "0");
	} else if (sc) {
		const char *stat = "avg";

		dot = strchr(f, '.');
		if (dot)
			stat = dot + 1;
		digest_metric_key(f, dot ? (size_t)(dot - f) : strlen(f), key, sizeof(key));
		v = digest_get(digest_get(digest_get(sc, LWM2_KEY_METRICS), key),
		               strcasecmp(stat, "min") == 0   ? "min"
		               : strcasecmp(stat, "max") == 0 ? "max"
		                                              : "avg");
		if (v)
			snprintf(buf, len, "%s", json_object_get_string(v));
	}
}

/* ------------------------------------------------------------ output */

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

/* Member key of o: the string s, where there is one. */
static void add_str(json_object *o, const char *key, const char *s)
{
	if (s)
		json_object_object_add(o, key, json_object_new_string(s));
}

static json_object *entry_json(const struct entry *e)
{
	json_object *o = json_object_new_object();
	const char *const opt[][2] = {{"account", e->account},
	                              {"partition", e->partition},
	                              {"state", e->state},
	                              {"exit_code", e->exit_code}};
	char id[64];

	fmt_jobid(e, id, sizeof(id));
	add_str(o, "job", id);
	json_object_object_add(o, "job_id", json_object_new_int64(e->job_id));
	add_str(o, "user", e->user);
	for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
		add_str(o, opt[i][0], opt[i][1]);
	json_object_object_add(o, "start", json_object_new_int64(e->start));
	json_object_object_add(o, "end", json_object_new_int64(e->end));
	json_object_object_add(o, "node_count", json_object_new_int64(e->node_count));
	add_str(o, "nodes", e->nodes);
	json_object_object_add(o, "status", json_object_new_string(e->status));
	add_str(o, "reason", e->reason);
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
	if (out->collect) {
		out->collect(e, out->collect_arg);
		return;
	}
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
			lwm2_csv_field(stdout, val);
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

void digest_emit_for_wants(struct out *out, struct opts *o, struct entry *e)
{
	long wi = digest_want_of(o, e->job_id, e->array_job_id, e->array_task_id, e->het_job_id,
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
			if (digest_want_of(&tmp, e->job_id, e->array_job_id, e->array_task_id,
			                   e->het_job_id, e->het_job_offset) < 0)
				continue;
			e->step = w->step;
			w->found = true;
			if (e->has_digest ||
			    (strcmp(e->status, "pending") && strcmp(e->status, "running")))
				w->done = true;
			if (e->digest && w->step >= 0 && !digest_scope_of(e)) {
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

enum need digest_need_of(const struct out *out, const struct opts *o)
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

/* ------------------------------------------------------------ matching */

bool digest_user_matches(const struct opts *o, const char *user, uint32_t uid)
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

bool digest_account_matches(const struct opts *o, const char *acct)
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
long digest_want_of(const struct opts *o, uint32_t job_id, uint32_t array_job_id,
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

bool digest_window_matches(const struct opts *o, int64_t start, int64_t end)
{
	return lwm2_cmd_ran_within(o->start, o->end, start, end);
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
		fprintf(stderr, "lwm2: digest: couldn't find job %" PRIu32 ": no such job%s\n",
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

enum { OPT_CSV = LWM2_OPT_LONG, OPT_JSON, OPT_STEPS, OPT_HELPFORMAT, OPT_DB };

/* The command line as read: the options and the output forms asked for. */
struct digest_cli {
	struct opts o;
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

	if (cli->want_json + cli->want_csv + cli->want_p > 1) {
		fprintf(stderr, "lwm2: digest: --json, --csv and -p exclude each other\n");
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
	    setup_fields(out, o->format) < 0)
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
	free_opts(&cli.o);
	return rc;
}
