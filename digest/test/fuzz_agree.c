/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: the two readers of a digest's scope agree.  The fast
 * text reader (lwm2_scope_from_text, `lwm2 digest --file` and `lwm2
 * stats`) and the json-c reader (lwm2_scope_from_json, everything else)
 * must read the same values from any JSON object: the input itself, and
 * its "scope" when it is a digest.  Text that json-c refuses is not
 * compared: the fast reader does not validate, by design, so a line cut
 * or garbled is read as far as it goes.  Nor is an object that names a
 * member twice: JSON leaves its meaning open, json-c keeps the last, the
 * fast reader stops at the first (it reads a member without walking the
 * rest of its object), and no writer of digests repeats a name.
 */
#include "digest_internal.h"
#include "logscan.h"
#include "lwm2_keys.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* Abort, saying where the readers differ. */
static void differ(const char *what, int k)
{
	fprintf(stderr, "the readers differ on %s%s%s\n", what, k >= 0 ? " of " : "",
	        k >= 0 ? lwm2_metric_ids[k] : "");
	abort();
}

static const char *ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The members of the object at p as the text has them, duplicates
 * counted; -1 when it is not an object. */
static long members(const char *p, const char *end)
{
	long n = 0;

	if (!p || (p = ws(p, end)) >= end || *p != '{')
		return -1;
	p = ws(p + 1, end);
	if (p < end && *p == '}')
		return 0;
	while (p && p < end && *p == '"') {
		if (!(p = lwm2_json_span(p, end)) || (p = ws(p, end)) >= end || *p != ':')
			return -1;
		if (!(p = lwm2_json_span(ws(p + 1, end), end)))
			return -1;
		n++;
		if ((p = ws(p, end)) < end && *p == ',')
			p = ws(p + 1, end);
		else
			break;
	}
	return n;
}

/* Whether o, read by json-c from the text at p, names a member twice, or
 * its metrics or one of them does. */
static int repeats(json_object *o, const char *p, const char *end)
{
	json_object *ms = ju_get(o, LWM2_KEY_METRICS, json_type_object);
	const char *mt = lwm2_json_member(p, end, LWM2_KEY_METRICS);

	if (members(p, end) != json_object_object_length(o))
		return 1;
	if (!ms)
		return 0;
	if (members(mt, end) != json_object_object_length(ms))
		return 1;
	json_object_object_foreach(ms, id, m)
	{
		const char *mv = lwm2_json_member(mt, end, id);

		if (mv && json_object_is_type(m, json_type_object) &&
		    members(mv, end) != json_object_object_length(m))
			return 1;
	}
	return 0;
}

static void agree(json_object *o, const char *p, const char *end)
{
	struct lwm2_scope j, t;

	if (repeats(o, p, end))
		return;
	lwm2_scope_from_json(&j, o, NULL, 4);
	if (lwm2_scope_from_text(&t, p, end, 4) != 0)
		differ("acceptance: the text reader refuses a JSON object", -1);
	if (j.processes != t.processes)
		differ(LWM2_KEY_PROCESSES, -1);
	if (j.mpi_processes != t.mpi_processes)
		differ(LWM2_KEY_MPI_PROCESSES, -1);
	if (j.nodes != t.nodes)
		differ(LWM2_KEY_NODES, -1);
	if (j.incomplete != t.incomplete)
		differ(LWM2_KEY_INCOMPLETE, -1);
	if (j.partial != t.partial)
		differ(LWM2_KEY_PARTIAL, -1);
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_metric_stat *a = &j.stat[k], *b = &t.stat[k];

		if (a->n != b->n)
			differ(LWM2_KEY_N, k);
		if (a->n &&
		    (!same(a->min, b->min) || !same(a->avg, b->avg) || !same(a->max, b->max)))
			differ("min, avg or max", k);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_tokener *tok = json_tokener_new();
	const char *p = (const char *)data, *end = p + size, *sc;
	json_object *o;

	if (!tok)
		return 0;
	/* JSON as the writers and jq write it: json-c's extensions (single
	 * quotes, comments, NaN) are no digest's */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, p, (int)(size < 1u << 20 ? size : 1u << 20));
	/* a whole object, nothing after it but white space */
	if (o && json_tokener_get_error(tok) == json_tokener_success &&
	    json_object_is_type(o, json_type_object)) {
		const char *q = p + json_tokener_get_parse_end(tok);

		while (q < end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
			q++;
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
			p++;
		/* an outer object that names "scope" twice has two scopes:
		 * json-c reads the last, the text reader the first */
		if (q == end && size < 1u << 20 && !repeats(o, p, end)) {
			agree(o, p, end);
			sc = lwm2_json_member(p, end, LWM2_KEY_SCOPE);
			if (ju_get(o, LWM2_KEY_SCOPE, json_type_object) && sc)
				agree(ju_get(o, LWM2_KEY_SCOPE, json_type_object), sc,
				      lwm2_json_span(sc, end));
		}
	}
	json_object_put(o);
	json_tokener_free(tok);
	return 0;
}
