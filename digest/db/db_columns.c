/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job table's columns: the one list that the schema, the insert and
 * the read of a row are made from (db_internal.h).  Columns are named
 * apart from SQL's reserved words (end, user, partition) so that the
 * same names serve every SQL dialect.  A new column goes at the end, with
 * a migration in the backend.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "db_internal.h"
#include "lwm2_render.h"

#define COL(name, kind, field)                                                                     \
	{                                                                                          \
		name, LWM2_DBK_##kind, offsetof(struct lwm2_jobrow, field), 0, 0                   \
	}
#define BUF(name, field)                                                                           \
	{                                                                                          \
		name, LWM2_DBK_BUF, offsetof(struct lwm2_jobrow, field), 0,                        \
		    sizeof(((struct lwm2_jobrow *)0)->field)                                       \
	}
#define OPT(name, field, has)                                                                      \
	{                                                                                          \
		name, LWM2_DBK_OPT, offsetof(struct lwm2_jobrow, field),                           \
		    offsetof(struct lwm2_jobrow, has), 0                                           \
	}

const struct lwm2_db_column lwm2_db_columns[] = {
    /* the job, as Slurm knew it */
    COL("cluster", STR, cluster),
    COL("job_id", I64, job_id),
    BUF("sacct_id", id),
    COL("submit", I64, submit),
    COL("start", I64, start),
    COL("end_time", I64, end),
    COL("user_name", STR, user),
    COL("uid", I64, uid),
    COL("account", STR, account),
    COL("partition_name", STR, partition),
    COL("qos", STR, qos),
    COL("state", STR, state),
    COL("job_name", STR, name),
    COL("nodes", STR, nodes),
    COL("node_count", U32, node_count),
    COL("cpus", I64, cpus),
    /* requested against used */
    COL("core_hours", REAL, use.req_core_h),
    COL("used_core_hours", REAL, use.used_core_h),
    COL("mem_req_mb", REAL, use.mem_req_mb),
    COL("mem_peak_mb", REAL, use.mem_peak_mb),
    /* the digest's job-wide figures */
    COL("has_digest", BOOL, digest),
    COL("cpus_per_task", U32, cpus_per_task),
    OPT("mpi_pct", v[LWM2_JR_MPI], has[LWM2_JR_MPI]),
    OPT("io_pct", v[LWM2_JR_IO], has[LWM2_JR_IO]),
    OPT("threads_per_core", v[LWM2_JR_TPC], has[LWM2_JR_TPC]),
    OPT("cpi", v[LWM2_JR_CPI], has[LWM2_JR_CPI]),
    COL("rules_fired", RULES, fired),
    OPT("lwm2_cost_s", own_s, has_own),
    OPT("lwm2_cost_pct", own_pct, has_own_pct),
    /* what the job ran */
    BUF("exe", exe),
    BUF("app", app),
    BUF("image", image),
    /* schema 3: what lwm2 stats groups by besides */
    BUF("language", language),
    BUF("mpi_library", mpi_library),
    BUF("run_mode", mode),
    OPT("mpi_calls_per_s", mpi_calls_per_s, has_mpi_calls),
    /* schema 6: the main processor, for lwm2 stats --by cpu */
    BUF("cpu_model", cpu),
};

const size_t lwm2_db_ncolumns = sizeof(lwm2_db_columns) / sizeof(lwm2_db_columns[0]);

size_t lwm2_db_rules_text(uint64_t bits, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < lwm2_nguidance_rules && r < 64; r++)
		if ((bits & (1ull << r)) && k + strlen(lwm2_guidance_rules[r].id) + 2 < len)
			k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? "," : "",
			                      lwm2_guidance_rules[r].id);
	return k;
}

uint64_t lwm2_db_rules_bits(const char *s)
{
	uint64_t bits = 0;

	while (s && *s) {
		size_t n = strcspn(s, ",");

		for (size_t r = 0; r < lwm2_nguidance_rules && r < 64; r++)
			if (strlen(lwm2_guidance_rules[r].id) == n &&
			    !strncmp(lwm2_guidance_rules[r].id, s, n))
				bits |= 1ull << r;
		s += n + (s[n] == ',');
	}
	return bits;
}

void lwm2_db_value_of(const struct lwm2_jobrow *j, const struct lwm2_db_column *c,
                      struct lwm2_db_value *v, char *rules, size_t rlen)
{
	struct lwm2_jobrow *w = (struct lwm2_jobrow *)(uintptr_t)j; /* read only */

	memset(v, 0, sizeof(*v));
	switch (c->kind) {
	case LWM2_DBK_I64:
		v->i = *LWM2_DB_AT(w, c->off, int64_t);
		break;
	case LWM2_DBK_U32:
		v->i = *LWM2_DB_AT(w, c->off, uint32_t);
		break;
	case LWM2_DBK_BOOL:
		v->i = *LWM2_DB_AT(w, c->off, bool);
		break;
	case LWM2_DBK_STR:
		v->s = *LWM2_DB_AT(w, c->off, const char *);
		v->null = !v->s;
		break;
	case LWM2_DBK_BUF:
		v->s = LWM2_DB_AT(w, c->off, char);
		break;
	case LWM2_DBK_REAL:
		v->d = *LWM2_DB_AT(w, c->off, double);
		v->null = isnan(v->d);
		break;
	case LWM2_DBK_OPT:
		v->d = *LWM2_DB_AT(w, c->off, double);
		v->null = !*LWM2_DB_AT(w, c->has_off, bool);
		break;
	case LWM2_DBK_RULES:
		v->len = lwm2_db_rules_text(*LWM2_DB_AT(w, c->off, uint64_t), rules, rlen);
		v->s = rules;
		return;
	}
	if (v->s)
		v->len = strlen(v->s);
}

void lwm2_db_value_set(struct lwm2_jobrow *j, const struct lwm2_db_column *c,
                       const struct lwm2_db_value *v)
{
	switch (c->kind) {
	case LWM2_DBK_I64:
		*LWM2_DB_AT(j, c->off, int64_t) = v->null ? 0 : v->i;
		break;
	case LWM2_DBK_U32:
		*LWM2_DB_AT(j, c->off, uint32_t) = v->null ? 0 : (uint32_t)v->i;
		break;
	case LWM2_DBK_BOOL:
		*LWM2_DB_AT(j, c->off, bool) = !v->null && v->i != 0;
		break;
	case LWM2_DBK_STR:
		*LWM2_DB_AT(j, c->off, const char *) = v->null ? NULL : v->s;
		break;
	case LWM2_DBK_BUF:
		snprintf(LWM2_DB_AT(j, c->off, char), c->len, "%s", v->s ? v->s : "");
		break;
	case LWM2_DBK_REAL:
		*LWM2_DB_AT(j, c->off, double) = v->null ? NAN : v->d;
		break;
	case LWM2_DBK_OPT:
		*LWM2_DB_AT(j, c->has_off, bool) = !v->null;
		*LWM2_DB_AT(j, c->off, double) = v->null ? 0 : v->d;
		break;
	case LWM2_DBK_RULES:
		*LWM2_DB_AT(j, c->off, uint64_t) = lwm2_db_rules_bits(v->null ? NULL : v->s);
		break;
	}
}

void lwm2_db_insert_sql(char *sql, size_t len, const char *verb, const char *tail)
{
	size_t k = 0;

	k += (size_t)snprintf(sql + k, len - k, "%s job (", verb);
	for (size_t i = 0; i < lwm2_db_ncolumns && k < len; i++)
		k += (size_t)snprintf(sql + k, len - k, "%s%s", i ? ", " : "",
		                      lwm2_db_columns[i].name);
	if (k < len)
		k += (size_t)snprintf(sql + k, len - k, ") VALUES (");
	for (size_t i = 0; i < lwm2_db_ncolumns && k < len; i++)
		k += (size_t)snprintf(sql + k, len - k, "%s?", i ? ", " : "");
	if (k < len)
		snprintf(sql + k, len - k, ")%s", tail);
}

/* " AND col IN (?, ...)" for n values; "" for none */
static size_t in_list(char *sql, size_t len, const char *col, size_t n)
{
	size_t k = 0;

	if (!n)
		return 0;
	k += (size_t)snprintf(sql, len, " AND %s IN (", col);
	for (size_t i = 0; i < n && k < len; i++)
		k += (size_t)snprintf(sql + k, len - k, "%s?", i ? ", " : "");
	k += (size_t)snprintf(sql + k, len > k ? len - k : 0, ")");
	return k;
}

/* A user given as a uid is matched by the caller: the list then narrows
 * nothing in SQL. */
static bool names_only(char *const *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (l[i][0] >= '0' && l[i][0] <= '9')
			return false;
	return true;
}

/* The selection's WHERE and the log's order; its parameters: the end
 * time's bounds, nusers names, the accounts, (with_ids) the job ids. */
static void where(char *sql, size_t cap, const struct lwm2_db_select *sel, size_t nusers,
                  bool with_ids)
{
	size_t k = 0;

	k += (size_t)snprintf(sql + k, cap - k, " WHERE end_time >= ? AND end_time <= ?");
	k += in_list(sql + k, cap - k, "user_name", nusers);
	k += in_list(sql + k, cap - k, "account", sel->naccounts);
	if (with_ids)
		k += in_list(sql + k, cap - k, "job_id", sel->njob_ids);
	snprintf(sql + k, cap - k, " ORDER BY job.id");
}

int lwm2_db_column_since(size_t i)
{
	return i < LWM2_DB_COLUMNS_V2 ? 1 : i < LWM2_DB_COLUMNS_V3 ? 3 : 6;
}

const char *lwm2_db_column_in(const char *name, int schema)
{
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		if (!strcmp(lwm2_db_columns[i].name, name))
			return schema < lwm2_db_column_since(i) ? NULL : name;
	return NULL;
}

size_t lwm2_db_columns_sql(char *sql, size_t cap, int schema)
{
	size_t k = 0;

	/* a database of an older schema, read only, has not the newer
	 * columns: NULL, as the rows of jobs imported before the migration
	 * have them */
	for (size_t i = 0; i < lwm2_db_ncolumns && k < cap; i++)
		k += (size_t)snprintf(sql + k, cap - k, "%s%s", i ? ", " : "",
		                      schema < lwm2_db_column_since(i) ? "NULL"
		                                                       : lwm2_db_columns[i].name);
	return k < cap ? k : cap - 1;
}

char *lwm2_db_jobs_sql(const struct lwm2_db_select *sel, int64_t metric_id, int schema,
                       size_t *nusers)
{
	size_t cap = 1024 + 8 * (sel->nusers + sel->naccounts) + 64 * lwm2_db_ncolumns, k = 0;
	char *sql = malloc(cap);

	*nusers = names_only(sel->users, sel->nusers) ? sel->nusers : 0;
	if (!sql)
		return NULL;
	k += (size_t)snprintf(sql + k, cap - k, "SELECT ");
	k += lwm2_db_columns_sql(sql + k, cap - k, schema);
	if (sel->metric >= 0)
		k += (size_t)snprintf(
		    sql + k, cap - k,
		    ", m.n, m.min, m.avg, m.max FROM job LEFT JOIN job_metric m ON "
		    "m.job = job.id AND m.metric = %" PRId64,
		    metric_id);
	else
		k += (size_t)snprintf(sql + k, cap - k, " FROM job");
	where(sql + k, cap - k, sel, *nusers, false);
	return sql;
}

char *lwm2_db_lines_sql(const struct lwm2_db_select *sel, bool want_grid, int schema,
                        size_t *nusers)
{
	size_t cap = 1024 + 8 * (sel->nusers + sel->naccounts + sel->njob_ids);
	char *sql = malloc(cap);
	size_t k;

	*nusers = names_only(sel->users, sel->nusers) ? sel->nusers : 0;
	if (!sql)
		return NULL;
	if (schema >= 2)
		k = (size_t)snprintf(
		    sql, cap,
		    "SELECT job.id, t.cut, t.line, %s, %s FROM job LEFT JOIN job_text "
		    "t ON t.job = job.id",
		    want_grid ? "t.grid" : "NULL", schema >= 4 ? "t.dict" : "NULL");
	else /* a database of schema 1, read only: no job has its line */
		k = (size_t)snprintf(sql, cap, "SELECT job.id, NULL, NULL, NULL, NULL FROM job");
	where(sql + k, cap - k, sel, *nusers, true);
	return sql;
}
