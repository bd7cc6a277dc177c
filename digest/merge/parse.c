/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Structural checks of node records and digests, and parsing digests back
 * from text.  Everything the renderer and the digest builder read is
 * checked here first, so that they can rely on types and lengths.
 */
#define _GNU_SOURCE /* memmem */
#include "digest_internal.h"
#include "errmsg.h"
#include "lwm2_keys.h"
#include "lwm2_version.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

static int bad(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Every refusal of a malformed digest is EINVAL. */
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = lwm2_verrprintf(EINVAL, err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static bool int_array(json_object *a, size_t want)
{
	if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) != want)
		return false;
	for (size_t i = 0; i < want; i++)
		if (!json_object_is_type(json_object_array_get_idx(a, i), json_type_int))
			return false;
	return true;
}

int lwm2_node_validate(json_object *node, char *err, size_t errlen)
{
	int map[LWM2_MAP_MAX];
	size_t nmap;
	int64_t v;
	json_object *procs, *series, *cols;
	char why[160];

	if (!node || !json_object_is_type(node, json_type_object))
		return bad(err, errlen, "node record is not a JSON object");
	if (!ju_int(node, "lwm2_node_version", &v))
		return bad(err, errlen, "node record version missing");
	/* Only version 1 exists: when the layout changes, the previous
	 * version's up-conversion goes here, before the checks of this one. */
	if (lwm2_version_check("node record", v, 1, LWM2_NODE_VERSION, why, sizeof(why)))
		return bad(err, errlen, "%s", why);
	if (!ju_str(node, LWM2_KEY_CLUSTER) || !ju_str(node, LWM2_KEY_NODE) ||
	    !ju_int(node, LWM2_KEY_JOB_ID, &v) || v < 0 || !ju_int(node, LWM2_KEY_STEP_ID, &v) ||
	    v < 0 || v > UINT32_MAX)
		return bad(err, errlen, "node record identity incomplete");
	if (lwm2_counter_map(node, map, LWM2_MAP_MAX, &nmap) != 0)
		return bad(err, errlen, "node record counter names missing or malformed");
	procs = ju_get(node, "procs", json_type_array);
	if (!procs)
		return bad(err, errlen, "node record has no process list");
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		if (!json_object_is_type(p, json_type_object) ||
		    !int_array(ju_get(p, LWM2_KEY_C, json_type_array), nmap) ||
		    !ju_int(p, "start_ns", &v) || !ju_int(p, "end_ns", &v) ||
		    !ju_int(p, LWM2_KEY_FLAGS, &v))
			return bad(err, errlen, "node record process %zu malformed", i);
	}
	series = ju_get(node, "series", json_type_object);
	if (series) {
		int64_t n;
		if (!ju_int(series, LWM2_KEY_N, &n) || n < 0 || n > 1 << 20 ||
		    !ju_int(series, LWM2_KEY_FIRST_SLICE, &v) || v < 0 ||
		    !ju_int(series, LWM2_KEY_SLICE_LENGTH_S, &v) || v <= 0 ||
		    !(cols = ju_get(series, LWM2_KEY_C, json_type_object)))
			return bad(err, errlen, "node record series malformed");
		json_object_object_foreach(cols, k, col)
		{
			if (!int_array(col, (size_t)n))
				return bad(err, errlen,
				           "node record series %s has the wrong length", k);
		}
	}
	return 0;
}

static int scope_validate(json_object *s, const char *what, char *err, size_t errlen)
{
	json_object *ms, *miss;
	int64_t v;

	if (!s)
		return bad(err, errlen, "%s missing or not an object", what);
	if (!ju_int(s, LWM2_KEY_PROCESSES, &v) || v < 0)
		return bad(err, errlen, "%s: processes missing", what);
	ms = ju_get(s, LWM2_KEY_METRICS, json_type_object);
	if (!ms)
		return bad(err, errlen, "%s: metrics missing", what);
	json_object_object_foreach(ms, k, m)
	{
		double x;
		json_object *at;
		if (!json_object_is_type(m, json_type_object) || !ju_num(m, LWM2_KEY_MIN, &x) ||
		    !ju_num(m, LWM2_KEY_AVG, &x) || !ju_num(m, LWM2_KEY_MAX, &x) ||
		    !ju_int(m, LWM2_KEY_N, &v) || v < 0)
			return bad(err, errlen, "%s: metric %s malformed", what, k);
		for (int i = 0; i < 2; i++) {
			size_t n;
			at = ju_get(m, i ? LWM2_KEY_MAX_AT : LWM2_KEY_MIN_AT, json_type_array);
			if (!at)
				continue;
			/* [rank, node] (version 1) or [rank, node, pid, exe] */
			n = json_object_array_length(at);
			if ((n != 2 && n != 4) ||
			    !json_object_is_type(json_object_array_get_idx(at, 0), json_type_int) ||
			    !json_object_is_type(json_object_array_get_idx(at, 1),
			                         json_type_string) ||
			    (n == 4 && (!json_object_is_type(json_object_array_get_idx(at, 2),
			                                     json_type_int) ||
			                !json_object_is_type(json_object_array_get_idx(at, 3),
			                                     json_type_string))))
				return bad(err, errlen, "%s: metric %s location malformed", what,
				           k);
		}
	}
	miss = ju_get(s, LWM2_KEY_MISSING, json_type_object);
	if (miss) {
		json_object_object_foreach(miss, k2, r)
		{
			if (!json_object_is_type(r, json_type_string))
				return bad(err, errlen, "%s: missing reason of %s is not text",
				           what, k2);
		}
	}
	return 0;
}

const struct lwm2_v1_change lwm2_v1_changes[] = {
    {"mpi_time", "digest version 1 included MPI_Init and MPI_Finalize in this share"},
    {"mpi_p2p_msg_size", "digest version 1 divided by point-to-point calls, not by messages"},
    {"write_bw", "digest version 1 left fsync and fdatasync time out of the write time"},
};
const size_t lwm2_nv1_changes = sizeof(lwm2_v1_changes) / sizeof(lwm2_v1_changes[0]);

/* A version 1 scope: metrics whose definition changed move to "v1_metrics"
 * (kept as they were) and are listed as missing with the reason. */
static void upgrade_scope(json_object *s)
{
	json_object *ms = s ? ju_get(s, LWM2_KEY_METRICS, json_type_object) : NULL, *miss,
	            *old = NULL;

	if (!ms)
		return;
	if (!(miss = ju_get(s, LWM2_KEY_MISSING, json_type_object))) {
		miss = json_object_new_object();
		ju_add(s, LWM2_KEY_MISSING, miss);
	}
	for (size_t i = 0; i < lwm2_nv1_changes; i++) {
		json_object *m = ju_get(ms, lwm2_v1_changes[i].id, json_type_object);
		if (!m)
			continue;
		if (!old) {
			old = json_object_new_object();
			ju_add(s, LWM2_KEY_V1_METRICS, old);
		}
		ju_add(old, lwm2_v1_changes[i].id, json_object_get(m));
		json_object_object_del(ms, lwm2_v1_changes[i].id);
		ju_add(miss, lwm2_v1_changes[i].id, json_object_new_string(lwm2_v1_changes[i].why));
	}
}

static void upgrade_v1(json_object *d)
{
	json_object *steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);

	upgrade_scope(ju_get(d, LWM2_KEY_SCOPE, json_type_object));
	for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
		json_object *st = json_object_array_get_idx(steps, i);
		if (json_object_is_type(st, json_type_object))
			upgrade_scope(st);
	}
}

/* The up-conversion of a digest, one step per version: upgrades[v] brings
 * a version v digest to version v + 1 in place.  A new version adds the
 * step from the one before it. */
static void (*const upgrades[LWM2_DIGEST_VERSION])(json_object *) = {
    [1] = upgrade_v1,
};

int lwm2_digest_upgrade(json_object *d)
{
	int64_t v, from;

	if (!d || !ju_int(d, LWM2_KEY_DIGEST_VERSION, &v) || v < 1 || v >= LWM2_DIGEST_VERSION)
		return 0;
	for (from = v; v < LWM2_DIGEST_VERSION; v++)
		upgrades[v](d);
	ju_add(d, LWM2_KEY_DIGEST_VERSION, json_object_new_int(LWM2_DIGEST_VERSION));
	ju_add(d, LWM2_KEY_UPGRADED_FROM, json_object_new_int((int)from));
	return 1;
}

/* Version 1 to 2 for a scope struct: the changed metrics are missing,
 * with the same reasons upgrade_scope gives. */
static void upgrade_struct_v1(struct lwm2_scope *s)
{
	for (size_t i = 0; i < lwm2_nv1_changes; i++) {
		int k = lwm2_metric_index(lwm2_v1_changes[i].id);
		if (k < 0)
			continue;
		memset(&s->stat[k], 0, sizeof(s->stat[k]));
		s->stat[k].min_rank = s->stat[k].max_rank = -1;
		s->stat[k].reason = lwm2_v1_changes[i].why;
	}
}

/* upgrades[] for the struct reader: a new version adds its step to both. */
static void (*const struct_upgrades[LWM2_DIGEST_VERSION])(struct lwm2_scope *) = {
    [1] = upgrade_struct_v1,
};

int lwm2_scope_upgrade(struct lwm2_scope *s, long long from)
{
	if (!s || from < 1 || from >= LWM2_DIGEST_VERSION)
		return 0;
	for (long long v = from; v < LWM2_DIGEST_VERSION; v++)
		struct_upgrades[v](s);
	return 1;
}

int lwm2_digest_validate(json_object *d, char *err, size_t errlen)
{
	json_object *steps;
	int64_t v;
	char why[160];

	if (!d || !json_object_is_type(d, json_type_object))
		return bad(err, errlen, "digest is not a JSON object");
	if (!ju_int(d, LWM2_KEY_DIGEST_VERSION, &v))
		return bad(err, errlen, "not an lwm2 digest (no lwm2_digest_version)");
	if (lwm2_version_check("digest", v, 1, LWM2_DIGEST_VERSION, why, sizeof(why)))
		return bad(err, errlen, "%s", why);
	if (!ju_get(d, LWM2_KEY_JOB, json_type_object))
		return bad(err, errlen, "digest has no job object");
	if (scope_validate(ju_get(d, LWM2_KEY_SCOPE, json_type_object), LWM2_KEY_SCOPE, err,
	                   errlen))
		return -1;
	steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);
	if (json_object_object_get_ex(d, LWM2_KEY_STEPS, NULL) && !steps)
		return bad(err, errlen, "steps is not an array");
	for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		char what[32];
		snprintf(what, sizeof(what), "step %zu", i);
		if (!json_object_is_type(s, json_type_object) || !ju_int(s, LWM2_KEY_STEP_ID, &v))
			return bad(err, errlen, "%s: step_id missing", what);
		if (scope_validate(s, what, err, errlen))
			return -1;
	}
	return 0;
}

const char *lwm2_digest_mark(const char *text, size_t len)
{
	const size_t plen = strlen(LWM2_DIGEST_PREFIX);
	const char *p = text, *end = text ? text + len : NULL;

	while (p && (size_t)(end - p) > plen &&
	       (p = memmem(p, (size_t)(end - p), LWM2_DIGEST_PREFIX, plen))) {
		if ((p == text || isspace((unsigned char)p[-1])) && (size_t)(end - p) > plen &&
		    p[plen] == '{')
			return p;
		p += plen;
	}
	return NULL;
}

json_object *lwm2_digest_parse(const char *text, size_t len, char *err, size_t errlen)
{
	const char *p = text, *end = text ? text + len : NULL, *mark;
	json_tokener *tok;
	json_object *o, *inner;

	if (!text) {
		bad(err, errlen, "no text");
		return NULL;
	}
	if (len > LWM2_DIGEST_TEXT_MAX) {
		bad(err, errlen, "digest text of %zu bytes exceeds the limit", len);
		errno = EFBIG;
		return NULL;
	}
	/* AdminComment may hold other tools' text around ours.  Without a
	 * part of ours, the first marker anywhere starts the text to parse. */
	if (!(mark = lwm2_digest_mark(text, len)) && len >= strlen(LWM2_DIGEST_PREFIX))
		mark = memmem(text, len, LWM2_DIGEST_PREFIX, strlen(LWM2_DIGEST_PREFIX));
	if (mark) {
		p = mark + strlen(LWM2_DIGEST_PREFIX);
	} else {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		if (p == end || *p != '{') {
			bad(err, errlen, "no digest found (neither JSON nor %s)",
			    LWM2_DIGEST_PREFIX);
			return NULL;
		}
	}
	if (end - p > INT32_MAX) {
		bad(err, errlen, "digest text too long");
		return NULL;
	}
	tok = json_tokener_new_ex(64);
	if (!tok) {
		errno = ENOMEM;
		return NULL;
	}
	o = json_tokener_parse_ex(tok, p, (int)(end - p));
	if (!o || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error je = json_tokener_get_error(tok);
		bad(err, errlen, "digest is not valid JSON: %s",
		    je == json_tokener_continue ? "truncated" : json_tokener_error_desc(je));
		json_object_put(o);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	/* A JSON-lines log entry carries the digest under "digest". */
	if (!ju_get(o, LWM2_KEY_DIGEST_VERSION, json_type_int) &&
	    (inner = ju_get(o, "digest", json_type_object))) {
		json_object_get(inner);
		json_object_put(o);
		o = inner;
	}
	if (lwm2_digest_validate(o, err, errlen) != 0) {
		json_object_put(o);
		errno = EINVAL;
		return NULL;
	}
	lwm2_digest_upgrade(o);
	return o;
}
