/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest --file`: the jobs of jobcomp/lwm2's JSON-lines log,
 * streamed line by line: the job fields come before the digest on each
 * line and are matched without parsing the digest.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd_digest.h"
#include "logscan.h"
#include "lwm2_record.h"

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

		if (digest_want_of(o, id, aj, at, hj, ho) < 0)
			return false;
	}
	if (o->nusers) {
		bool m = false;
		uint32_t uid = (uint32_t)raw_int(line, limit, "uid", -1);

		for (i = 0; i < o->nusers && !m; i++)
			m = raw_str_eq(line, limit, "user", o->users[i]);
		if (!m && !digest_user_matches(o, NULL, uid))
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
	return digest_window_matches(o, start, end);
}

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
	e->job_id = (uint32_t)json_object_get_int64(digest_get(l, "job_id"));
	e->array_job_id = (uint32_t)json_object_get_int64(digest_get(l, "array_job_id"));
	e->array_task_id = digest_get(l, "array_task_id")
	                       ? (uint32_t)json_object_get_int64(digest_get(l, "array_task_id"))
	                       : NONE32;
	e->het_job_id = (uint32_t)json_object_get_int64(digest_get(l, "het_job_id"));
	e->het_job_offset = digest_get(l, "het_job_offset")
	                        ? (uint32_t)json_object_get_int64(digest_get(l, "het_job_offset"))
	                        : NONE32;
	e->uid = (uint32_t)json_object_get_int64(digest_get(l, "uid"));
	e->node_count = (uint32_t)json_object_get_int64(digest_get(l, "node_count"));
	e->submit = json_object_get_int64(digest_get(l, "submit"));
	e->start = json_object_get_int64(digest_get(l, "start"));
	e->end = json_object_get_int64(digest_get(l, "end"));
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

		if (digest_is_counter(f) && t_end) {
			for (k = 0; k < LWM2_NCOUNTERS; k++)
				if (!strcasecmp(f, lwm2_counter_names[k]) &&
				    (v = lwm2_json_member(t, t_end, lwm2_counter_names[k])))
					json_object_object_add(totals, lwm2_counter_names[k],
					                       raw_number(v));
		} else if (m_end && digest_is_metric(f, dot ? (size_t)(dot - f) : strlen(f))) {
			const char *mo, *mo_end;
			json_object *e;
			static const char *const stats[] = {"min", "avg", "max"};

			digest_metric_key(f, dot ? (size_t)(dot - f) : strlen(f), key, sizeof(key));
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

int digest_read_log(struct out *out, struct opts *o)
{
	FILE *f = lwm2_open_input("digest", o->file);
	struct lwm2_lines lr = {.f = f};
	char *line = NULL;
	long n;
	unsigned long bad = 0, toolong = 0;
	enum need need = digest_need_of(out, o);
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
		if (!l || !digest_get(l, "job_id")) {
			bad++;
			json_object_put(l);
			continue;
		}
		entry_from_line(&e, l);
		if (dpos) {
			e.has_digest = true;
			if (need == NEED_FULL) {
				if ((full = json_tokener_parse(line)))
					e.digest = digest_get(full, "digest");
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
		if (digest_user_matches(o, e.user, e.uid) && digest_account_matches(o, e.account))
			digest_emit_for_wants(out, o, &e);
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
