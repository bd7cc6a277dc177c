/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside `lwm2 digest`: one job's fields, its output line (text, table,
 * CSV, JSON) and whether it is one of the jobs asked for.  Both sources
 * (digest_log.c, digest_slurmdb.c) hand each job they read to
 * digest_emit_for_wants; cmd_digest.c parses the options and picks the
 * source.  Kept apart from cmd_digest.c so that the sources depend on
 * this file alone and the command on them, with no circle of calls.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <slurm/slurm.h>

#include "cmd_digest.h"
#include "cmd_io.h"
#include "csv.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"
#include "lwm2_record.h"
#include "lwm2_render.h"
#include "numparse.h"

/* Widest column of -o FIELD%WIDTH. */
#define LWM2_FIELD_WIDTH_MAX 1024

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
	else if (sc && (v = digest_get(digest_get(sc, LWM2_KEY_DERIVED_METRICS), f))) {
		/* a derived metric (lwm2_derived_apply): n/a without a figure */
		json_object *x = digest_get(v, LWM2_KEY_VALUE);

		snprintf(buf, len, "%s",
		         x && !json_object_is_type(x, json_type_null) ? json_object_get_string(x)
		                                                      : "n/a");
	} else if (digest_is_counter(f) && sc) {
		/* the total under the counter's own name (f is in any case) */
		v = NULL;
		for (i = 0; i < LWM2_NCOUNTERS && !v; i++)
			if (!strcasecmp(f, lwm2_counter_names[i]))
				v = digest_get(digest_get(sc, LWM2_KEY_TOTALS),
				               lwm2_counter_names[i]);
		if (v && json_object_is_type(v, json_type_string)) /* "not measured" */
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
	if (e->digest)
		lwm2_derived_apply(&o->derived, e->digest);
	switch (o->out) {
	case OUT_TEXT:
		fmt_jobid(e, id, sizeof(id));
		if (!e->has_digest || !e->digest) {
			lwm2_log_error("digest: job %s: no digest: %s", id,
			               e->reason ? e->reason : e->status);
			return;
		}
		if (out->ok > 1)
			putchar('\n');
		{
			struct lwm2_render_opts ro = {.flags = 0,
			                              .steps = o->steps || e->step >= 0};

			if (lwm2_digest_render(e->digest, stdout, &ro) < 0)
				lwm2_log_error("digest: couldn't render job %s: %s", id,
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
int digest_setup_fields(struct out *out, const char *format)
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
			uint64_t w;

			*pct = '\0';
			if (lwm2_parse_u64(pct + 1, NULL, 1, LWM2_FIELD_WIDTH_MAX, &w) < 0) {
				lwm2_log_error("digest: couldn't use the width of field \"%s\": "
				               "\"%s\" is not 1 to %d",
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
		if (!field_known(items[i]) &&
		    lwm2_derived_find(&out->o->derived, items[i], strlen(items[i])) < 0) {
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
				lwm2_log_error("digest: job %" PRIu32 ": no step %" PRId64
				               " in its digest",
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

	if (o->out == OUT_TEXT || o->out == OUT_JSON || o->derived.n)
		return NEED_FULL; /* a derived metric may name any metric or counter */
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
		uint64_t v;

		if ((lwm2_parse_u64(o->users[i], NULL, 0, UINT32_MAX, &v) == 0 && v == uid) ||
		    (user && !strcmp(o->users[i], user)))
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
