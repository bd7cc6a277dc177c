/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The portal's questions in SQL (db.h: lwm2_db_page, lwm2_db_groups):
 * the selection, who may see what, the order and the page, the count and
 * the groups, all answered by the database over its indexes, so that a
 * page costs what it shows and not the period's jobs.  The SQL is the
 * part that SQLite and MariaDB share; each backend runs it (its select).
 * Every value of a request travels as a bound parameter.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"
#include "errmsg.h"

/* The columns of enum lwm2_db_field's texts and of the figures. */
static const char *const text_columns[LWM2_DBF_NTEXTS] = {
    [LWM2_DBF_CLUSTER] = "cluster",   [LWM2_DBF_USER] = "user_name",
    [LWM2_DBF_ACCOUNT] = "account",   [LWM2_DBF_PARTITION] = "partition_name",
    [LWM2_DBF_APP] = "app",           [LWM2_DBF_STATE] = "state",
    [LWM2_DBF_LANGUAGE] = "language", [LWM2_DBF_MPI_LIBRARY] = "mpi_library",
    [LWM2_DBF_MODE] = "run_mode",
};

static const char *const figure_columns[LWM2_JR_N] = {
    [LWM2_JR_MPI] = "mpi_pct",
    [LWM2_JR_IO] = "io_pct",
    [LWM2_JR_TPC] = "threads_per_core",
    [LWM2_JR_CPI] = "cpi",
};

/* A query's text and its parameters, growing as they are added. */
struct sql {
	char *s;
	size_t len, cap;
	struct lwm2_db_param *p;
	size_t np, pcap;
	bool failed; /* out of memory */
};

static void add(struct sql *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct sql *q, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (q->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(q->s + q->len, q->cap - q->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= q->cap - q->len) {
		q->failed = true;
		return;
	}
	q->len += (size_t)n;
}

static void param(struct sql *q, struct lwm2_db_param p)
{
	if (q->failed)
		return;
	if (q->np == q->pcap) {
		size_t cap = q->pcap ? 2 * q->pcap : 16;
		struct lwm2_db_param *np = realloc(q->p, cap * sizeof(*np));

		if (!np) {
			q->failed = true;
			return;
		}
		q->p = np;
		q->pcap = cap;
	}
	q->p[q->np++] = p;
}

#define PARAM_TEXT(q, v) param((q), (struct lwm2_db_param){.cls = LWM2_DBC_TEXT, .s = (v)})
#define PARAM_INT(q, v)  param((q), (struct lwm2_db_param){.cls = LWM2_DBC_INT, .i = (v)})
#define PARAM_REAL(q, v) param((q), (struct lwm2_db_param){.cls = LWM2_DBC_REAL, .d = (v)})

static int sql_begin(struct sql *q, size_t naccounts)
{
	memset(q, 0, sizeof(*q));
	q->cap = 4096 + 8 * naccounts + 64 * lwm2_db_ncolumns;
	if (!(q->s = malloc(q->cap)))
		return -1;
	q->s[0] = '\0';
	return 0;
}

static void sql_free(struct sql *q)
{
	free(q->s);
	free(q->p);
}

/* The selection: the time range, the texts, the figure's range, who may
 * see the job, the node it ran on. */
static void where(struct sql *q, const struct lwm2_db_query *qu, int schema)
{
	add(q, " FROM job WHERE end_time >= ? AND end_time <= ?");
	PARAM_INT(q, qu->start);
	PARAM_INT(q, qu->end);
	for (int f = 0; f < LWM2_DBF_NTEXTS; f++) {
		const char *col = lwm2_db_column_in(text_columns[f], schema);

		if (!qu->text[f] || !*qu->text[f])
			continue;
		if (!col) { /* an older schema's rows have no such text */
			add(q, " AND 0 = 1");
			continue;
		}
		add(q, " AND %s = ?", col);
		PARAM_TEXT(q, qu->text[f]);
	}
	if (qu->figure >= 0 && qu->figure < LWM2_JR_N && (qu->has_min || qu->has_max)) {
		const char *col = figure_columns[qu->figure];

		add(q, " AND %s IS NOT NULL", col);
		if (qu->has_min) {
			add(q, " AND %s >= ?", col);
			PARAM_REAL(q, qu->min);
		}
		if (qu->has_max) {
			add(q, " AND %s <= ?", col);
			PARAM_REAL(q, qu->max);
		}
	}
	if (!qu->all) {
		add(q, " AND (user_name = ?");
		PARAM_TEXT(q, qu->user ? qu->user : "");
		if (qu->naccounts) {
			add(q, " OR account IN (");
			for (size_t i = 0; i < qu->naccounts; i++) {
				add(q, "%s?", i ? ", " : "");
				PARAM_TEXT(q, qu->accounts[i]);
			}
			add(q, ")");
		}
		add(q, ")");
	}
	if (qu->node) {
		if (schema < 5) {
			add(q, " AND 0 = 1");
		} else {
			add(q, " AND id IN (SELECT job FROM job_node WHERE node = ?)");
			PARAM_TEXT(q, qu->node);
		}
	}
}

/* The order: the field's, then the job id's, the same way; a figure a
 * job lacks last either way (NULL comes first ascending in both SQLite
 * and MariaDB, last descending). */
static void order_by(struct sql *q, const struct lwm2_db_query *qu, int schema)
{
	const char *dir = qu->desc ? " DESC" : "";
	int o = qu->order;

	if (o >= 0 && o < LWM2_DBF_NTEXTS) {
		const char *col = lwm2_db_column_in(text_columns[o], schema);

		if (col)
			add(q, " ORDER BY %s%s,", col, dir);
		else
			add(q, " ORDER BY");
	} else if (o >= LWM2_DBF_FIGURE && o < LWM2_DBF_FIGURE + LWM2_JR_N) {
		const char *col = figure_columns[o - LWM2_DBF_FIGURE];

		if (qu->desc)
			add(q, " ORDER BY %s DESC,", col);
		else
			add(q, " ORDER BY %s IS NULL, %s,", col, col);
	} else if (o == LWM2_DBF_END) {
		add(q, " ORDER BY end_time%s,", dir);
	} else if (o == LWM2_DBF_ELAPSED) {
		add(q,
		    " ORDER BY CASE WHEN start > 0 AND end_time > start THEN end_time - start "
		    "ELSE 0 END%s,",
		    dir);
	} else if (o == LWM2_DBF_CORE_H) {
		add(q, " ORDER BY core_hours%s,", dir);
	} else {
		add(q, " ORDER BY");
	}
	add(q, " job_id%s", dir);
}

static int out_of_memory(char *err, size_t errlen)
{
	return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
}

struct totals {
	int64_t *total;
	double *core_h;
};

static int on_totals(void *arg, const struct lwm2_db_value *v)
{
	struct totals *t = arg;

	*t->total = v[0].null ? 0 : v[0].i;
	*t->core_h = v[1].null ? 0 : v[1].d;
	return 0;
}

struct page {
	struct lwm2_jobrow *j;
	int (*fn)(void *arg, const struct lwm2_jobrow *j);
	void *arg;
};

static int on_page_row(void *arg, const struct lwm2_db_value *v)
{
	struct page *pg = arg;

	memset(pg->j, 0, sizeof(*pg->j));
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		lwm2_db_value_set(pg->j, &lwm2_db_columns[i], &v[i]);
	return pg->fn(pg->arg, pg->j);
}

static int page_rows(struct lwm2_db *db, const struct lwm2_db_query *qu,
                     int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                     size_t errlen)
{
	enum lwm2_db_class cls[64];
	struct page pg = {.j = malloc(sizeof(*pg.j)), .fn = fn, .arg = arg};
	struct sql q;
	int rc;

	if (lwm2_db_ncolumns > sizeof(cls) / sizeof(cls[0]) || !pg.j ||
	    sql_begin(&q, qu->naccounts) < 0) {
		free(pg.j);
		return out_of_memory(err, errlen);
	}
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		cls[i] = lwm2_db_class_of(lwm2_db_columns[i].kind);
	/* the page's rows found by what the index holds, and only theirs
	 * read whole (an order over the rows themselves would read every
	 * row of the period) */
	add(&q, "SELECT ");
	if (!q.failed)
		q.len += lwm2_db_columns_sql(q.s + q.len, q.cap - q.len, db->schema);
	add(&q, " FROM job JOIN (SELECT id AS page_id");
	where(&q, qu, db->schema);
	order_by(&q, qu, db->schema);
	add(&q, " LIMIT ? OFFSET ?) page ON job.id = page.page_id");
	PARAM_INT(&q, qu->limit);
	PARAM_INT(&q, qu->offset);
	order_by(&q, qu, db->schema);
	rc = q.failed ? out_of_memory(err, errlen)
	              : db->be->select(db, q.s, q.p, q.np, cls, lwm2_db_ncolumns, on_page_row, &pg,
	                               err, errlen);
	sql_free(&q);
	free(pg.j);
	return rc;
}

int lwm2_db_page(struct lwm2_db *db, const struct lwm2_db_query *qu, int64_t *total, double *core_h,
                 int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                 size_t errlen)
{
	static const enum lwm2_db_class tcls[] = {LWM2_DBC_INT, LWM2_DBC_REAL};
	struct totals t = {total, core_h};
	struct sql q;
	int rc;

	*total = 0;
	*core_h = 0;
	if (sql_begin(&q, qu->naccounts) < 0)
		return out_of_memory(err, errlen);
	add(&q, "SELECT COUNT(*), SUM(core_hours)");
	where(&q, qu, db->schema);
	rc = q.failed ? out_of_memory(err, errlen)
	              : db->be->select(db, q.s, q.p, q.np, tcls, 2, on_totals, &t, err, errlen);
	sql_free(&q);
	if (rc != 0 || *total <= qu->offset || qu->limit <= 0)
		return rc;
	return page_rows(db, qu, fn, arg, err, errlen);
}

/* The figures a group weighs: the MPI and I/O shares (the first of
 * enum lwm2_jobrow_value), which the indexes of the groups hold. */
#define GROUP_FIGURES (LWM2_JR_IO + 1)
_Static_assert(LWM2_JR_MPI == 0 && LWM2_JR_IO == 1, "the shares first");

struct groups {
	int (*fn)(void *arg, const struct lwm2_db_group *g);
	void *arg;
};

static int on_group(void *arg, const struct lwm2_db_value *v)
{
	struct groups *gs = arg;
	struct lwm2_db_group g = {
	    .name = v[0].null ? "" : v[0].s,
	    .jobs = v[1].null ? 0 : v[1].i,
	    .core_h = v[2].null ? 0 : v[2].d,
	};

	for (int k = 0; k < GROUP_FIGURES; k++) {
		g.w[k] = v[3 + 2 * k].null ? 0 : v[3 + 2 * k].d;
		g.wv[k] = v[4 + 2 * k].null ? 0 : v[4 + 2 * k].d;
	}
	return gs->fn(gs->arg, &g);
}

int lwm2_db_groups(struct lwm2_db *db, const struct lwm2_db_query *qu, int by,
                   int (*fn)(void *arg, const struct lwm2_db_group *g), void *arg, char *err,
                   size_t errlen)
{
	enum lwm2_db_class cls[3 + 2 * GROUP_FIGURES] = {LWM2_DBC_TEXT, LWM2_DBC_INT,
	                                                 LWM2_DBC_REAL};
	struct groups gs = {fn, arg};
	const char *col;
	char name[128];
	struct sql q;
	int rc;

	if (by < 0 || by >= LWM2_DBF_NTEXTS)
		return lwm2_errprintf(EINVAL, err, errlen, "no such grouping");
	col = lwm2_db_column_in(text_columns[by], db->schema);
	/* the column itself (NULL a group of its own, lwm2_db_group's ""):
	 * an index that leads with it gives the groups in order */
	snprintf(name, sizeof(name), "%s", col ? col : "NULL");
	for (size_t i = 3; i < sizeof(cls) / sizeof(cls[0]); i++)
		cls[i] = LWM2_DBC_REAL;
	if (sql_begin(&q, qu->naccounts) < 0)
		return out_of_memory(err, errlen);
	add(&q, "SELECT %s, COUNT(*), SUM(core_hours)", name);
	/* a share weighs by the core-hours of the jobs that have both */
	for (int k = 0; k < GROUP_FIGURES; k++)
		add(&q,
		    ", SUM(CASE WHEN %s IS NOT NULL AND core_hours > 0 THEN core_hours END)"
		    ", SUM(CASE WHEN %s IS NOT NULL AND core_hours > 0 THEN core_hours * %s END)",
		    figure_columns[k], figure_columns[k], figure_columns[k]);
	where(&q, qu, db->schema);
	add(&q, " GROUP BY %s", name);
	rc = q.failed ? out_of_memory(err, errlen)
	              : db->be->select(db, q.s, q.p, q.np, cls, sizeof(cls) / sizeof(cls[0]),
	                               on_group, &gs, err, errlen);
	sql_free(&q);
	return rc;
}
