/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest --file`: the jobs of jobcomp/lwm2's JSON-lines log,
 * streamed line by line by lwm2_logscan: the job fields are parsed and
 * matched, the digest is parsed only as far as the output needs it.
 */
#include "config.h"
#include "lwm2_keys.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd_digest.h"
#include "db.h"
#include "errmsg.h"
#include "logscan.h"
#include "lwm2_cmds.h"
#include "lwm2_record.h"

static const char *jstr(json_object *o, const char *key)
{
	json_object *v = digest_get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void entry_from_line(struct entry *e, json_object *l)
{
	const char *s;

	memset(e, 0, sizeof(*e));
	e->logline = l;
	e->job_id = (uint32_t)json_object_get_int64(digest_get(l, LWM2_KEY_JOB_ID));
	e->array_job_id = (uint32_t)json_object_get_int64(digest_get(l, "array_job_id"));
	e->array_task_id = digest_get(l, "array_task_id")
	                       ? (uint32_t)json_object_get_int64(digest_get(l, "array_task_id"))
	                       : NONE32;
	e->het_job_id = (uint32_t)json_object_get_int64(digest_get(l, "het_job_id"));
	e->het_job_offset = digest_get(l, "het_job_offset")
	                        ? (uint32_t)json_object_get_int64(digest_get(l, "het_job_offset"))
	                        : NONE32;
	e->uid = (uint32_t)json_object_get_int64(digest_get(l, "uid"));
	e->node_count = (uint32_t)json_object_get_int64(digest_get(l, LWM2_KEY_NODE_COUNT));
	e->submit = json_object_get_int64(digest_get(l, "submit"));
	e->start = json_object_get_int64(digest_get(l, LWM2_KEY_START));
	e->end = json_object_get_int64(digest_get(l, LWM2_KEY_END));
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

/* A number's JSON text as json-c keeps it (its text is what the table
 * prints), or NULL for anything else. */
static json_object *raw_number(const char *v, const char *end)
{
	const char *e = lwm2_json_span(v, end);

	if (!e || !(isdigit((unsigned char)*v) || *v == '-'))
		return NULL;
	return lwm2_json_number(v, e);
}

/*
 * {"scope": {...}} with only the values the fields ask for, read from the
 * digest's text at d without parsing all of it (a full parse of 100,000
 * digests takes seconds).  The walkers of logscan.h go member by member,
 * so the order of the members and the spacing between them do not matter.
 */
static json_object *scope_subset(const char *d, const char *end, const struct out *out)
{
	const char *sc = lwm2_json_member(d, end, LWM2_KEY_SCOPE), *m, *t, *v;
	json_object *wrap, *scope, *metrics, *totals;
	size_t i;

	if (!sc || *sc != '{')
		return NULL;
	/* lwm2_json_member() stops at the end of the object it walks: the end
	 * of the line is bound enough, and spanning objects first would cost a
	 * scan */
	if ((m = lwm2_json_member(sc, end, LWM2_KEY_METRICS)) && *m != '{')
		m = NULL;
	if ((t = lwm2_json_member(sc, end, LWM2_KEY_TOTALS)) && *t != '{')
		t = NULL;
	wrap = json_object_new_object();
	scope = json_object_new_object();
	metrics = json_object_new_object();
	totals = json_object_new_object();
	json_object_object_add(wrap, LWM2_KEY_SCOPE, scope);
	json_object_object_add(scope, LWM2_KEY_METRICS, metrics);
	json_object_object_add(scope, LWM2_KEY_TOTALS, totals);
	if ((v = lwm2_json_member(sc, end, LWM2_KEY_PROCESSES)))
		json_object_object_add(scope, LWM2_KEY_PROCESSES, raw_number(v, end));
	if ((v = lwm2_json_member(sc, end, LWM2_KEY_MPI_PROCESSES)))
		json_object_object_add(scope, LWM2_KEY_MPI_PROCESSES, raw_number(v, end));
	for (i = 0; i < out->nfields; i++) {
		const char *f = out->fields[i], *dot = strchr(f, '.');
		char key[64];
		size_t k;

		if (digest_is_counter(f) && t) {
			for (k = 0; k < LWM2_NCOUNTERS; k++)
				if (!strcasecmp(f, lwm2_counter_names[k]) &&
				    (v = lwm2_json_member(t, end, lwm2_counter_names[k])))
					json_object_object_add(totals, lwm2_counter_names[k],
					                       raw_number(v, end));
		} else if (m && digest_is_metric(f, dot ? (size_t)(dot - f) : strlen(f))) {
			const char *mo;
			json_object *e;
			static const char *const stats[] = {"min", "avg", "max"};

			digest_metric_key(f, dot ? (size_t)(dot - f) : strlen(f), key, sizeof(key));
			if (json_object_object_get_ex(metrics, key, NULL))
				continue;
			if (!(mo = lwm2_json_member(m, end, key)) || *mo != '{')
				continue;
			e = json_object_new_object();
			for (k = 0; k < 3; k++)
				if ((v = lwm2_json_member(mo, end, stats[k])))
					json_object_object_add(e, stats[k], raw_number(v, end));
			json_object_object_add(metrics, key, e);
		}
	}
	return wrap;
}

struct log_ctx {
	struct out *out;
	struct opts *o;
	enum need need;
};

/* One line of the log, its job fields parsed and its digest located by
 * lwm2_logscan (the same reader `lwm2 stats` uses). */
static int log_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct log_ctx *c = arg;
	json_object *full = NULL, *part = NULL;
	struct entry e;

	entry_from_line(&e, l->fields);
	if (c->o->njobs && digest_want_of(c->o, e.job_id, e.array_job_id, e.array_task_id,
	                                  e.het_job_id, e.het_job_offset) < 0)
		return 0;
	if (!digest_user_matches(c->o, e.user, e.uid) || !digest_account_matches(c->o, e.account) ||
	    !digest_window_matches(c->o, e.start, e.end))
		return 0;
	if (l->digest) {
		e.has_digest = true;
		if (c->need == NEED_FULL)
			e.digest = full = lwm2_json_parse_at(l->digest, l->end);
		else if (c->need == NEED_SCOPE)
			e.digest = part = scope_subset(l->digest, l->end, c->out);
		if (c->need != NEED_NONE && !e.digest)
			return lwm2_errprintf(0, err, errlen, "the digest is unreadable");
	}
	digest_emit_for_wants(c->out, c->o, &e);
	json_object_put(full);
	json_object_put(part);
	return 0;
}

int digest_read_log(struct out *out, struct opts *o)
{
	struct log_ctx c = {.out = out, .o = o, .need = digest_need_of(out, o)};
	/* --wait's passes only look: the last line may be one being written */
	struct lwm2_logscan_count count = {.quiet = out->quiet};

	struct lwm2_source src = {.files = o->files, .nfiles = o->nfiles, .db_given = o->db};
	/* the database reads the jobs that ended after the window's start
	 * (ran within it: the command keeps those that started before its
	 * end), of the users and accounts asked for */
	struct lwm2_db_select sel = {.start = o->start,
	                             .users = o->users,
	                             .nusers = o->nusers,
	                             .accounts = o->accounts,
	                             .naccounts = o->naccounts,
	                             .metric = -1};

	if (!o->db)
		return lwm2_logscan_files("digest", o->files, o->nfiles, log_line, &c, &count) < 0
		           ? -1
		           : 0;
	if (lwm2_source_resolve("digest", &src, false) < 0)
		return -1;
	return lwm2_source_scan("digest", &src, &sel, true, log_line, &c);
}
