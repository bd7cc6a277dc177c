/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CUBE's algebra of experiments over job digests: the difference of two
 * runs, the mean of several, the merge of runs that measured different
 * things.  The result is a digest like any other (every reader renders
 * it), built on a copy of one operand (its job, application and process
 * counts), with the figures of the operation in its scopes, marked
 * "derived" and naming its operands.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "jsonutil.h"
#include "lwm2_algebra.h"
#include "lwm2_keys.h"
#include "lwm2_render.h"

/* What no derived figure is true of: the operand's time series, its own
 * findings and requests, lwm2's cost in it. */
static const char *const dropped[] = {
    LWM2_KEY_GRID,          LWM2_KEY_HISTORY,   LWM2_KEY_INTERFERENCE,
    LWM2_KEY_FIT,           LWM2_KEY_LWM2_COST, LWM2_KEY_VIEW,
    LWM2_KEY_UPGRADED_FROM, LWM2_KEY_COMPACT,   LWM2_KEY_INCOMPLETE_LIST,
};

struct alg {
	enum lwm2_algebra_op op;
	json_object *const *d;
	size_t n;
	json_object *ranks[16]; /* each operand's per-process table, where aligned */
	bool aligned;
};

#define ALG_MAX_OPERANDS 16

const char *lwm2_algebra_name(enum lwm2_algebra_op op)
{
	return op == LWM2_ALGEBRA_DIFF ? "diff" : op == LWM2_ALGEBRA_MEAN ? "mean" : "merge";
}

/* ------------------------------------------------------------ processes */

static json_object *rows_of(json_object *ranks)
{
	return ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
}

/* The column named name in ranks, or -1. */
static int col_of(json_object *ranks, const char *name)
{
	json_object *cols = ju_get(ranks, LWM2_KEY_COLS, json_type_array);

	for (size_t i = 0; cols && i < json_object_array_length(cols); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(cols, i)), name))
			return (int)i;
	return -1;
}

static json_object *cell(json_object *row, int col)
{
	return col < 0 ? NULL : json_object_array_get_idx(row, (size_t)col);
}

/* Every operand has a per-process table of the same processes in the
 * same order: each row's step and rank alike. */
static bool ranks_align(struct alg *a)
{
	size_t rows = 0;

	for (size_t i = 0; i < a->n; i++) {
		json_object *r = ju_get(a->d[i], LWM2_KEY_RANKS, json_type_object);

		if (!rows_of(r) || col_of(r, LWM2_KEY_STEP) != 0 || col_of(r, LWM2_KEY_RANK) != 2)
			return false;
		a->ranks[i] = r;
		if (i == 0)
			rows = json_object_array_length(rows_of(r));
		else if (json_object_array_length(rows_of(r)) != rows)
			return false;
	}
	for (size_t k = 0; k < rows; k++)
		for (size_t i = 1; i < a->n; i++) {
			json_object *x = json_object_array_get_idx(rows_of(a->ranks[0]), k),
			            *y = json_object_array_get_idx(rows_of(a->ranks[i]), k);

			for (int c = 0; c < 3; c += 2)
				if (json_object_get_int64(cell(x, c)) !=
				    json_object_get_int64(cell(y, c)))
					return false;
		}
	return rows > 0;
}

/* One process's figure of the metric of the columns cols[] (one per
 * operand, -1 where absent) in row k: *out, or false without one. */
static bool row_value(const struct alg *a, const int *cols, size_t k, double *out)
{
	double sum = 0, v[ALG_MAX_OPERANDS] = {0};

	for (size_t i = 0; i < a->n; i++) {
		json_object *c = cell(json_object_array_get_idx(rows_of(a->ranks[i]), k), cols[i]);
		bool has = c && (json_object_is_type(c, json_type_int) ||
		                 json_object_is_type(c, json_type_double));

		if (a->op == LWM2_ALGEBRA_MERGE) {
			if (has) {
				*out = json_object_get_double(c);
				return true;
			}
			continue;
		}
		if (!has)
			return false;
		v[i] = json_object_get_double(c);
		sum += v[i];
	}
	if (a->op == LWM2_ALGEBRA_MERGE)
		return false;
	*out = a->op == LWM2_ALGEBRA_DIFF ? v[1] - v[0] : sum / (double)a->n;
	return true;
}

/* The derived table: the first operand's rows (step, node, rank, flags)
 * with each metric's column computed; diff and mean keep the metrics
 * every operand has, merge those of any. */
static json_object *derive_ranks(const struct alg *a)
{
	json_object *base = a->ranks[0], *out = json_object_new_object(),
	            *cols = json_object_new_array(), *rows = json_object_new_array(), *nodes;
	int in[LWM2_NMETRICS][ALG_MAX_OPERANDS];
	int keep[LWM2_NMETRICS], nkeep = 0;
	size_t nrows = json_object_array_length(rows_of(base));

	for (int c = 0; c < 4; c++)
		json_object_array_add(
		    cols, json_object_get(json_object_array_get_idx(
		              ju_get(base, LWM2_KEY_COLS, json_type_array), (size_t)c)));
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		size_t have = 0;

		for (size_t i = 0; i < a->n; i++)
			have += (in[k][i] = col_of(a->ranks[i], lwm2_metric_ids[k])) >= 0;
		if (have == a->n || (a->op == LWM2_ALGEBRA_MERGE && have)) {
			keep[nkeep++] = k;
			json_object_array_add(cols, json_object_new_string(lwm2_metric_ids[k]));
		}
	}
	for (size_t r = 0; r < nrows; r++) {
		json_object *src = json_object_array_get_idx(rows_of(base), r),
		            *row = json_object_new_array();

		for (int c = 0; c < 4; c++)
			json_object_array_add(row, json_object_get(cell(src, c)));
		for (int j = 0; j < nkeep; j++) {
			double v;

			json_object_array_add(row, row_value(a, in[keep[j]], r, &v) ? ju_double(v)
			                                                            : NULL);
		}
		json_object_array_add(rows, row);
	}
	nodes = ju_get(base, LWM2_KEY_NODES, json_type_array);
	ju_add(out, LWM2_KEY_NODES, nodes ? json_object_get(nodes) : json_object_new_array());
	ju_add(out, LWM2_KEY_COLS, cols);
	ju_add(out, LWM2_KEY_ROWS, rows);
	return out;
}

/* [rank, node] of row k of the derived table t. */
static json_object *where(json_object *t, json_object *row)
{
	json_object *at = json_object_new_array();
	json_object *node = json_object_array_get_idx(ju_get(t, LWM2_KEY_NODES, json_type_array),
	                                              (size_t)json_object_get_int64(cell(row, 1)));

	json_object_array_add(at, json_object_new_int64(json_object_get_int64(cell(row, 2))));
	json_object_array_add(at,
	                      json_object_new_string(node ? json_object_get_string(node) : "?"));
	return at;
}

/* The metric k's statistics over the derived table t's processes of step
 * (-1: all), into m: false where none has a figure. */
static bool stat_from_rows(json_object *t, int k, int64_t step, json_object *m)
{
	int col = col_of(t, lwm2_metric_ids[k]);
	json_object *rows = rows_of(t), *lo = NULL, *hi = NULL;
	double sum = 0, min = 0, max = 0;
	int64_t n = 0;

	for (size_t r = 0; col >= 0 && r < json_object_array_length(rows); r++) {
		json_object *row = json_object_array_get_idx(rows, r), *c = cell(row, col);
		double v;

		if (!c || (step >= 0 && json_object_get_int64(cell(row, 0)) != step))
			continue;
		v = json_object_get_double(c);
		if (!n || v < min)
			min = v, lo = row;
		if (!n || v > max)
			max = v, hi = row;
		sum += v;
		n++;
	}
	if (!n)
		return false;
	ju_add(m, LWM2_KEY_MIN, ju_double(min));
	ju_add(m, LWM2_KEY_AVG, ju_double(sum / (double)n));
	ju_add(m, LWM2_KEY_MAX, ju_double(max));
	ju_add(m, LWM2_KEY_N, json_object_new_int64(n));
	ju_add(m, LWM2_KEY_MIN_AT, where(t, lo));
	ju_add(m, LWM2_KEY_MAX_AT, where(t, hi));
	return true;
}

/* ------------------------------------------------------------ scopes */

/* The statistics of metric k in scope s: false where not measured. */
static bool stat_of(json_object *s, int k, double *min, double *avg, double *max, int64_t *n)
{
	json_object *m = ju_get(ju_get(s, LWM2_KEY_METRICS, json_type_object), lwm2_metric_ids[k],
	                        json_type_object);

	return m && ju_int(m, LWM2_KEY_N, n) && *n > 0 && ju_num(m, LWM2_KEY_MIN, min) &&
	       ju_num(m, LWM2_KEY_AVG, avg) && ju_num(m, LWM2_KEY_MAX, max);
}

/* Why metric k has no derived figure: the first operand's reason where no
 * operand measured it, else which did. */
static json_object *why_missing(const struct alg *a, json_object *const *s, size_t have,
                                const bool *has, int k)
{
	char why[160];
	const char *r;

	if (!have) {
		for (size_t i = 0; i < a->n; i++)
			if (s[i] && (r = ju_str(ju_get(s[i], LWM2_KEY_MISSING, json_type_object),
			                        lwm2_metric_ids[k])))
				return json_object_new_string(r);
		return json_object_new_string("not in this digest");
	}
	if (a->op == LWM2_ALGEBRA_DIFF)
		snprintf(why, sizeof(why), "measured in %s only", has[0] ? "A" : "B");
	else
		snprintf(why, sizeof(why), "measured in %zu of %zu operands", have, a->n);
	return json_object_new_string(why);
}

/* Metric k of the operands' scopes s[] (NULL: the operand lacks the
 * step) into the metrics and missing objects of the derived scope. */
static void derive_metric(const struct alg *a, json_object *const *s, json_object *t, int64_t step,
                          int k, json_object *ms, json_object *miss)
{
	double min[ALG_MAX_OPERANDS], avg[ALG_MAX_OPERANDS], max[ALG_MAX_OPERANDS];
	double smin = 0, savg = 0, smax = 0;
	int64_t n[ALG_MAX_OPERANDS], nmin = INT64_MAX;
	bool has[ALG_MAX_OPERANDS];
	size_t have = 0, first = a->n;
	json_object *m;

	for (size_t i = 0; i < a->n; i++) {
		has[i] = s[i] && stat_of(s[i], k, &min[i], &avg[i], &max[i], &n[i]);
		if (!has[i])
			continue;
		have++;
		if (first == a->n)
			first = i;
		smin += min[i], savg += avg[i], smax += max[i];
		nmin = n[i] < nmin ? n[i] : nmin;
	}
	if (a->op == LWM2_ALGEBRA_MERGE && have) {
		json_object_object_add(
		    ms, lwm2_metric_ids[k],
		    json_object_get(ju_get(ju_get(s[first], LWM2_KEY_METRICS, json_type_object),
		                           lwm2_metric_ids[k], json_type_object)));
		return;
	}
	if (have < a->n) {
		json_object_object_add(miss, lwm2_metric_ids[k], why_missing(a, s, have, has, k));
		return;
	}
	m = json_object_new_object();
	if (!t || !stat_from_rows(t, k, step, m)) {
		/* of the averages: diff's spread is unknown; mean's extremes are the
		 * means of the extremes */
		bool diff = a->op == LWM2_ALGEBRA_DIFF;
		double v = diff ? avg[1] - avg[0] : savg / (double)a->n;

		ju_add(m, LWM2_KEY_MIN, ju_double(diff ? v : smin / (double)a->n));
		ju_add(m, LWM2_KEY_AVG, ju_double(v));
		ju_add(m, LWM2_KEY_MAX, ju_double(diff ? v : smax / (double)a->n));
		ju_add(m, LWM2_KEY_N, json_object_new_int64(nmin));
	}
	json_object_object_add(ms, lwm2_metric_ids[k], m);
}

/* The counters' sums: B - A, the mean, or the first operand's; "not
 * measured" where an operand lacks one (merge: where all do). */
static void derive_totals(const struct alg *a, json_object *const *s, json_object *out)
{
	json_object *t = json_object_new_object();

	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		const char *name = lwm2_counter_names[c];
		double v[ALG_MAX_OPERANDS] = {0}, sum = 0;
		size_t have = 0, first = a->n, seen = 0;

		for (size_t i = 0; i < a->n; i++) {
			json_object *x = ju_get(ju_get(s[i], LWM2_KEY_TOTALS, json_type_object),
			                        name, json_type_double);

			seen += s[i] &&
			        json_object_object_get_ex(
			            ju_get(s[i], LWM2_KEY_TOTALS, json_type_object), name, NULL);
			if (!x)
				continue;
			v[i] = json_object_get_double(x);
			sum += v[i];
			if (first == a->n)
				first = i;
			have++;
		}
		if (!seen)
			continue;
		if (a->op == LWM2_ALGEBRA_MERGE ? !have : have < a->n)
			json_object_object_add(t, name, json_object_new_string("not measured"));
		else
			json_object_object_add(t, name,
			                       ju_double(a->op == LWM2_ALGEBRA_MERGE ? v[first]
			                                 : a->op == LWM2_ALGEBRA_DIFF
			                                     ? v[1] - v[0]
			                                     : sum / (double)a->n));
	}
	json_object_object_add(out, LWM2_KEY_TOTALS, t);
}

/* The derived scope out (a copy of one operand's, its counts kept) from
 * the operands' scopes s[]. */
static void derive_scope(const struct alg *a, json_object *const *s, json_object *t, int64_t step,
                         json_object *out)
{
	json_object *ms = json_object_new_object(), *miss = json_object_new_object();

	for (int k = 0; k < LWM2_NMETRICS; k++)
		derive_metric(a, s, t, step, k, ms, miss);
	json_object_object_add(out, LWM2_KEY_METRICS, ms);
	json_object_object_add(out, LWM2_KEY_MISSING, miss);
	json_object_object_del(out, LWM2_KEY_V1_METRICS);
	json_object_object_del(out, LWM2_KEY_EXECUTABLES);
	derive_totals(a, s, out);
}

json_object *lwm2_digest_step(json_object *d, int64_t id)
{
	json_object *steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);

	for (size_t i = 0; steps && i < json_object_array_length(steps); i++) {
		json_object *s = json_object_array_get_idx(steps, i);

		if (ju_int_or(s, LWM2_KEY_STEP_ID, -1) == id)
			return s;
	}
	return NULL;
}

/* The steps: those every operand has (merge: any, the first operand's
 * where several have one). */
static void derive_steps(const struct alg *a, json_object *out, json_object *t)
{
	json_object *steps = json_object_new_array();

	for (size_t oi = 0; oi < a->n; oi++) {
		/* diff: B's steps, B being the copy the result is made on */
		size_t o = a->op == LWM2_ALGEBRA_DIFF ? 1 : oi;
		json_object *mine = ju_get(a->d[o], LWM2_KEY_STEPS, json_type_array);

		for (size_t i = 0; mine && i < json_object_array_length(mine); i++) {
			int64_t id =
			    ju_int_or(json_object_array_get_idx(mine, i), LWM2_KEY_STEP_ID, -1);
			json_object *s[ALG_MAX_OPERANDS] = {NULL}, *copy = NULL;
			size_t have = 0;
			bool earlier = false;

			for (size_t j = 0; j < a->n; j++) {
				have += (s[j] = lwm2_digest_step(a->d[j], id)) != NULL;
				earlier = earlier || (a->op == LWM2_ALGEBRA_MERGE && j < o && s[j]);
			}
			if (earlier || (a->op != LWM2_ALGEBRA_MERGE && have < a->n))
				continue;
			json_object_deep_copy(s[o], &copy, NULL);
			if (!copy)
				continue;
			derive_scope(a, s, t, id, copy);
			json_object_array_add(steps, copy);
		}
		if (a->op != LWM2_ALGEBRA_MERGE)
			break; /* the others' steps are the first's or left out */
	}
	json_object_object_add(out, LWM2_KEY_STEPS, steps);
}

static json_object *operands(const struct alg *a, const char *const *what)
{
	json_object *ops = json_object_new_array();

	for (size_t i = 0; i < a->n; i++) {
		json_object *o = json_object_new_object();
		json_object *job = ju_get(a->d[i], LWM2_KEY_JOB, json_type_object);

		ju_add(o, LWM2_KEY_SOURCE, json_object_new_string(what[i] ? what[i] : "?"));
		ju_add(o, LWM2_KEY_JOB_ID,
		       json_object_new_int64(ju_int_or(job, LWM2_KEY_JOB_ID, 0)));
		json_object_array_add(ops, o);
	}
	return ops;
}

json_object *lwm2_digest_algebra(enum lwm2_algebra_op op, json_object *const *d,
                                 const char *const *what, size_t n, char *err, size_t errlen)
{
	struct alg a = {.op = op, .d = d, .n = n};
	json_object *out = NULL, *t = NULL, *base, *s[ALG_MAX_OPERANDS], *der, *app;

	if (op == LWM2_ALGEBRA_DIFF ? n != 2 : n < 2 || n > ALG_MAX_OPERANDS) {
		lwm2_errprintf(EINVAL, err, errlen, "%s wants %s digests", lwm2_algebra_name(op),
		               op == LWM2_ALGEBRA_DIFF ? "two" : "2 to 16");
		return NULL;
	}
	base = d[op == LWM2_ALGEBRA_DIFF ? 1 : 0];
	if (json_object_deep_copy(base, &out, NULL) < 0 || !out) {
		lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		json_object_object_del(out, dropped[i]);
	/* the averages of one operand's main program are not the result's */
	if ((app = ju_get(out, LWM2_KEY_APPLICATION, json_type_object)))
		json_object_object_del(app, LWM2_KEY_METRICS);
	a.aligned = ranks_align(&a);
	json_object_object_del(out, LWM2_KEY_RANKS);
	if (a.aligned) {
		t = derive_ranks(&a);
		json_object_object_add(out, LWM2_KEY_RANKS, t);
	}
	for (size_t i = 0; i < n; i++)
		s[i] = ju_get(d[i], LWM2_KEY_SCOPE, json_type_object);
	derive_scope(&a, s, t, -1, ju_get(out, LWM2_KEY_SCOPE, json_type_object));
	derive_steps(&a, out, t);
	der = json_object_new_object();
	ju_add(der, LWM2_KEY_OPERATION, json_object_new_string(lwm2_algebra_name(op)));
	ju_add(der, LWM2_KEY_OPERANDS, operands(&a, what));
	ju_add(der, LWM2_KEY_RANKS_ALIGNED, json_object_new_boolean(a.aligned));
	ju_add(out, LWM2_KEY_DERIVED, der);
	return out;
}
