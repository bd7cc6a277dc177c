/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Derived metrics: a name and an expression (expr.h) over a scope's
 * metrics (their averages) and counters (their sums over the processes),
 * evaluated into the digest as it is read, so that every view that shows
 * the digest shows them.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "expr.h"
#include "jsonutil.h"
#include "lwm2_algebra.h"
#include "lwm2_keys.h"
#include "lwm2_record.h"
#include "lwm2_render.h"

#define DERIVED_NAME_MAX 64

struct lwm2_derived_metric {
	char name[DERIVED_NAME_MAX];
	char *text; /* the expression as written */
	struct lwm2_expr *e;
};

/* Names: the metrics' ids first, then the counters'. */
static int resolve(const char *name, size_t len, void *arg)
{
	(void)arg;
	for (int k = 0; k < LWM2_NMETRICS; k++)
		if (strlen(lwm2_metric_ids[k]) == len && !memcmp(lwm2_metric_ids[k], name, len))
			return k;
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		if (strlen(lwm2_counter_names[c]) == len &&
		    !memcmp(lwm2_counter_names[c], name, len))
			return LWM2_NMETRICS + c;
	return -1;
}

int lwm2_derived_find(const struct lwm2_derived_set *s, const char *name, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i].name) == len && !memcmp(s->v[i].name, name, len))
			return (int)i;
	return -1;
}

const char *lwm2_derived_name(const struct lwm2_derived_set *s, size_t i)
{
	return s->v[i].name;
}

/* The name before '=' of def: its length, or 0 when it is not one. */
static size_t name_len(const char *def)
{
	size_t n = 0;

	while (isspace((unsigned char)*def))
		def++;
	if (!isalpha((unsigned char)def[0]) && def[0] != '_')
		return 0;
	while (isalnum((unsigned char)def[n]) || def[n] == '_')
		n++;
	return n < DERIVED_NAME_MAX ? n : 0;
}

int lwm2_derived_add(struct lwm2_derived_set *s, const char *def, char *err, size_t errlen)
{
	const char *p = def, *eq;
	char why[200];
	struct lwm2_derived_metric m = {0}, *v;
	size_t len;
	int at;

	while (isspace((unsigned char)*p))
		p++;
	len = name_len(p);
	eq = p + len;
	while (len && isspace((unsigned char)*eq))
		eq++;
	if (!len || *eq != '=')
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "bad derived metric \"%s\": want NAME=EXPRESSION", def);
	memcpy(m.name, p, len);
	if (resolve(m.name, len, NULL) >= 0)
		return lwm2_errprintf(
		    EINVAL, err, errlen,
		    "bad derived metric \"%s\": %s is a metric or counter already", def, m.name);
	if (!(m.e = lwm2_expr_parse(eq + 1, resolve, NULL, why, sizeof(why))))
		return lwm2_errprintf(errno, err, errlen, "bad derived metric \"%s\": %s", def,
		                      why);
	if (!(m.text = strdup(eq + 1 + strspn(eq + 1, " \t")))) {
		lwm2_expr_free(m.e);
		return lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
	}
	if ((at = lwm2_derived_find(s, m.name, len)) >= 0) {
		free(s->v[at].text);
		lwm2_expr_free(s->v[at].e);
		s->v[at] = m;
		return 0;
	}
	if (!(v = realloc(s->v, (s->n + 1) * sizeof(*v)))) {
		free(m.text);
		lwm2_expr_free(m.e);
		return lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
	}
	s->v = v;
	s->v[s->n++] = m;
	return 0;
}

int lwm2_derived_add_lines(struct lwm2_derived_set *s, const char *text, char *err, size_t errlen)
{
	while (text && *text) {
		size_t len = strcspn(text, "\n");
		char *line = strndup(text, len);
		int rc;

		if (!line)
			return lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
		rc = line[strspn(line, " \t")] ? lwm2_derived_add(s, line, err, errlen) : 0;
		free(line);
		if (rc < 0)
			return -1;
		text += len + (text[len] == '\n');
	}
	return 0;
}

void lwm2_derived_free(struct lwm2_derived_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].text);
		lwm2_expr_free(s->v[i].e);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* ------------------------------------------------------------ evaluation */

/* A name's value in a scope: a metric's average, a counter's sum. */
static double scope_value(int id, void *arg)
{
	json_object *s = arg, *m;
	double v;
	int64_t n;

	if (id < LWM2_NMETRICS) {
		m = ju_get(ju_get(s, LWM2_KEY_METRICS, json_type_object), lwm2_metric_ids[id],
		           json_type_object);
		return m && ju_int(m, LWM2_KEY_N, &n) && n > 0 && ju_num(m, LWM2_KEY_AVG, &v) ? v
		                                                                              : NAN;
	}
	return ju_num(ju_get(s, LWM2_KEY_TOTALS, json_type_object),
	              lwm2_counter_names[id - LWM2_NMETRICS], &v)
	           ? v
	           : NAN;
}

static json_object *figure(const struct lwm2_derived_metric *m, enum lwm2_expr_status st, double v)
{
	json_object *o = json_object_new_object();

	ju_add(o, LWM2_KEY_EXPR, json_object_new_string(m->text));
	ju_add(o, LWM2_KEY_VALUE, st == LWM2_EXPR_OK ? ju_double(v) : NULL);
	if (st != LWM2_EXPR_OK)
		ju_add(o, LWM2_KEY_WHY,
		       json_object_new_string(st == LWM2_EXPR_DIV_ZERO ? "division by zero"
		                                                       : "not measured"));
	return o;
}

static void apply_scope(const struct lwm2_derived_set *s, json_object *scope)
{
	json_object *dm;

	if (!scope)
		return;
	/* those written into the digest (lwm2 mean --metric) stay beside these */
	if (!(dm = ju_get(scope, LWM2_KEY_DERIVED_METRICS, json_type_object))) {
		dm = json_object_new_object();
		ju_add(scope, LWM2_KEY_DERIVED_METRICS, dm);
	}
	for (size_t i = 0; i < s->n; i++) {
		double v;
		enum lwm2_expr_status st = lwm2_expr_eval(s->v[i].e, scope_value, scope, &v);

		ju_add(dm, s->v[i].name, figure(&s->v[i], st, v));
	}
}

/* The per-process table's columns of the names of an expression. */
struct row_ctx {
	json_object *row;
	int col[LWM2_NMETRICS];
};

static int in_table(int id, void *arg)
{
	return id < LWM2_NMETRICS && ((struct row_ctx *)arg)->col[id] >= 0;
}

static double row_value(int id, void *arg)
{
	struct row_ctx *r = arg;
	json_object *c = json_object_array_get_idx(r->row, (size_t)r->col[id]);

	return c && (json_object_is_type(c, json_type_int) ||
	             json_object_is_type(c, json_type_double))
	           ? json_object_get_double(c)
	           : NAN;
}

static void apply_ranks(const struct lwm2_derived_set *s, json_object *ranks)
{
	json_object *cols = ju_get(ranks, LWM2_KEY_COLS, json_type_array),
	            *rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
	struct row_ctx r;

	if (!cols || !rows)
		return;
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		r.col[k] = -1;
		for (size_t c = 0; c < json_object_array_length(cols); c++)
			if (!strcmp(json_object_get_string(json_object_array_get_idx(cols, c)),
			            lwm2_metric_ids[k]))
				r.col[k] = (int)c;
	}
	for (size_t i = 0; i < s->n; i++) {
		bool known = false;

		if (!lwm2_expr_names_all(s->v[i].e, in_table, &r))
			continue;
		for (size_t c = 0; c < json_object_array_length(cols); c++)
			known = known ||
			        !strcmp(json_object_get_string(json_object_array_get_idx(cols, c)),
			                s->v[i].name);
		if (known)
			continue; /* applied before, as the digest was written */
		json_object_array_add(cols, json_object_new_string(s->v[i].name));
		for (size_t k = 0; k < json_object_array_length(rows); k++) {
			double v;

			r.row = json_object_array_get_idx(rows, k);
			json_object_array_add(r.row, lwm2_expr_eval(s->v[i].e, row_value, &r, &v) ==
			                                     LWM2_EXPR_OK
			                                 ? ju_double(v)
			                                 : NULL);
		}
	}
}

void lwm2_derived_apply(const struct lwm2_derived_set *s, json_object *d)
{
	json_object *steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);

	if (!s || !s->n)
		return;
	apply_scope(s, ju_get(d, LWM2_KEY_SCOPE, json_type_object));
	for (size_t i = 0; steps && i < json_object_array_length(steps); i++)
		apply_scope(s, json_object_array_get_idx(steps, i));
	apply_ranks(s, ju_get(d, LWM2_KEY_RANKS, json_type_object));
}
