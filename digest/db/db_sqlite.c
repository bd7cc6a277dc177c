/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The central database in SQLite (db.h): one file, write-ahead journal,
 * several readers beside one writer.  The job table's columns come from
 * lwm2_db_columns (db_columns.c); each metric's min/avg/max is a row of
 * job_metric under the metric's name, so a new metric needs no new
 * column.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db_internal.h"
#include "grow.h"
#include "lwm2_render.h"

struct lwm2_db_sqlite {
	struct lwm2_db base; /* first: the backend's table */
	sqlite3 *h;
	char *path;
	bool writable;
	int schema; /* the file's schema version */
	sqlite3_stmt *insert, *insert_metric, *insert_day, *insert_text, *insert_known_text,
	    *meta_get, *meta_set;
	int64_t metric_id[LWM2_NMETRICS]; /* job_metric's ids of lwm2_metric_ids */
};

/* How long a writer waits for another one (jobcomp/lwm2's follow and an
 * import at the same time) before it gives up for now. */
#define BUSY_MS 10000

static void sq_close(struct lwm2_db *base);
static int sq_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen);

static int fail(struct lwm2_db_sqlite *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "couldn't %s in %s: %s", what, db->path, sqlite3_errmsg(db->h));
	return -1;
}

static int exec(struct lwm2_db_sqlite *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static const char *sql_type(enum lwm2_db_kind k)
{
	switch (k) {
	case LWM2_DBK_I64:
	case LWM2_DBK_U32:
	case LWM2_DBK_BOOL:
		return "INTEGER";
	case LWM2_DBK_REAL:
	case LWM2_DBK_OPT:
		return "REAL";
	default:
		return "TEXT";
	}
}

/* Schema 2: each job's log line (db_text.c). */
#define JOB_TEXT_SQL                                                                               \
	"CREATE TABLE job_text (job INTEGER PRIMARY KEY, cut INTEGER NOT NULL, line BLOB NOT "     \
	"NULL, grid BLOB);\n"

/* The schema of version 2.  The job's identity is its cluster, id,
 * submit and start times: a requeued job runs again under its id with a
 * new start.  The indexes serve the questions asked most: a window of
 * time, one user's or account's jobs in it, one application's history. */
static int create_schema(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	char sql[4096];
	size_t k = 0;

	k += (size_t)snprintf(sql + k, sizeof(sql) - k, "CREATE TABLE job (id INTEGER PRIMARY KEY");
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, ", %s %s", lwm2_db_columns[i].name,
		                      sql_type(lwm2_db_columns[i].kind));
	snprintf(
	    sql + k, sizeof(sql) - k,
	    ", UNIQUE (cluster, job_id, submit, start));\n"
	    "CREATE INDEX job_end ON job (end_time);\n"
	    "CREATE INDEX job_user_end ON job (user_name, end_time);\n"
	    "CREATE INDEX job_account_end ON job (account, end_time);\n"
	    "CREATE INDEX job_app_end ON job (app, end_time);\n"
	    "CREATE TABLE metric (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);\n"
	    "CREATE TABLE job_metric (job INTEGER NOT NULL, metric INTEGER NOT NULL, "
	    "n INTEGER NOT NULL, min REAL, avg REAL, max REAL, "
	    "PRIMARY KEY (job, metric)) WITHOUT ROWID;\n"
	    /* the days (UTC) that have jobs; summarized: the summaries
	       of the day are those of its jobs (a job added later
	       clears it) */
	    "CREATE TABLE day (day INTEGER PRIMARY KEY, jobs INTEGER NOT NULL, "
	    "summarized INTEGER NOT NULL);\n"
	    "CREATE TABLE summary (day INTEGER NOT NULL, dim TEXT NOT NULL, name TEXT NOT "
	    "NULL, data BLOB NOT NULL, PRIMARY KEY (dim, day, name)) WITHOUT ROWID;\n" JOB_TEXT_SQL
	    "INSERT INTO lwm2_meta VALUES ('schema_version', '%d');\n",
	    LWM2_DB_SCHEMA);
	return exec(db, sql, err, errlen);
}

/* The ids of the metrics this build knows, as the file names them; -1 for
 * one it has never stored. */
static int metric_ids(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db->h, "SELECT id FROM metric WHERE name = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return fail(db, "read the metrics' names", err, errlen);
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, lwm2_metric_ids[k], -1, SQLITE_STATIC);
		db->metric_id[k] =
		    sqlite3_step(st) == SQLITE_ROW ? (int64_t)sqlite3_column_int64(st, 0) : -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* Made where new, refused where newer than this build (read-only then),
 * and (later versions) migrated forward in place. */
static int ready_schema(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	char v[32];

	if (db->writable && exec(db,
	                         "BEGIN IMMEDIATE;"
	                         "CREATE TABLE IF NOT EXISTS lwm2_meta (key TEXT PRIMARY KEY, "
	                         "value TEXT NOT NULL);",
	                         err, errlen) < 0)
		return -1;
	if (sq_meta_get(&db->base, "schema_version", v, sizeof(v), err, errlen) < 0)
		goto fail;
	db->schema = atoi(v);
	if (!db->writable) {
		if (!db->schema) {
			snprintf(err, errlen, "%s is not an lwm2 database (no schema version)",
			         db->path);
			return -1;
		}
		return metric_ids(db, err, errlen);
	}
	if (db->schema > LWM2_DB_SCHEMA) {
		snprintf(err, errlen,
		         "%s has schema version %d, newer than this lwm2's %d: not writing to it "
		         "(upgrade lwm2 where it writes)",
		         db->path, db->schema, LWM2_DB_SCHEMA);
		goto fail;
	}
	if (!db->schema && create_schema(db, err, errlen) < 0)
		goto fail;
	/* forward in place: 1 to 2 adds the jobs' lines (the rows of version
	 * 1 have none until their log is imported again) */
	if (db->schema == 1 &&
	    exec(db, JOB_TEXT_SQL "UPDATE lwm2_meta SET value = '2' WHERE key = 'schema_version';",
	         err, errlen) < 0)
		goto fail;
	db->schema = LWM2_DB_SCHEMA;
	/* the metrics this build knows, by name */
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		sqlite3_stmt *st = NULL;

		if (sqlite3_prepare_v2(
		        db->h,
		        "INSERT INTO metric (name) VALUES (?1) ON CONFLICT (name) DO "
		        "UPDATE SET name = name RETURNING id",
		        -1, &st, NULL) != SQLITE_OK) {
			fail(db, "prepare", err, errlen);
			goto fail;
		}
		sqlite3_bind_text(st, 1, lwm2_metric_ids[k], -1, SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_ROW) {
			fail(db, "name the metrics", err, errlen);
			sqlite3_finalize(st);
			goto fail;
		}
		db->metric_id[k] = (int64_t)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return exec(db, "COMMIT", err, errlen);
fail:
	if (db->writable)
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

static int prepare(struct lwm2_db_sqlite *db, const char *sql, sqlite3_stmt **st, char *err,
                   size_t errlen)
{
	if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		return fail(db, "prepare a statement", err, errlen);
	return 0;
}

static int prepare_insert(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	char sql[4096];

	lwm2_db_insert_sql(sql, sizeof(sql), "INSERT OR IGNORE INTO", "");
	if (prepare(db, sql, &db->insert, err, errlen) < 0 ||
	    prepare(db, "INSERT INTO job_metric VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	            &db->insert_metric, err, errlen) < 0 ||
	    prepare(db,
	            "INSERT INTO day VALUES (?1, 1, 0) ON CONFLICT (day) DO UPDATE SET "
	            "jobs = jobs + 1, summarized = 0",
	            &db->insert_day, err, errlen) < 0 ||
	    prepare(db, "INSERT INTO job_text VALUES (?1, ?2, ?3, ?4)", &db->insert_text, err,
	            errlen) < 0 ||
	    prepare(db,
	            "INSERT OR IGNORE INTO job_text SELECT id, ?5, ?6, ?7 FROM job WHERE "
	            "cluster IS ?1 AND job_id = ?2 AND submit = ?3 AND start = ?4",
	            &db->insert_known_text, err, errlen) < 0 ||
	    prepare(db,
	            "INSERT INTO lwm2_meta VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET "
	            "value = excluded.value",
	            &db->meta_set, err, errlen) < 0)
		return -1;
	return 0;
}

/* sqlite:PATH or PATH */
static const char *path_of(const char *url)
{
	return strncmp(url, "sqlite:", 7) ? url : url + 7;
}

static struct lwm2_db *sq_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = calloc(1, sizeof(*db));
	const char *path = path_of(url);
	struct stat sb;
	int flags = mode == LWM2_DB_WRITE    ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
	            : mode == LWM2_DB_UPDATE ? SQLITE_OPEN_READWRITE
	                                     : SQLITE_OPEN_READONLY;

	if (!db || !(db->path = strdup(path))) {
		snprintf(err, errlen, "couldn't open %s: %s", path, strerror(ENOMEM));
		free(db);
		return NULL;
	}
	if (!*path || strstr(url, "://")) {
		snprintf(err, errlen,
		         "couldn't open the database \"%s\": want a file's path or "
		         "sqlite:PATH",
		         url);
		goto fail;
	}
	if (mode != LWM2_DB_WRITE && stat(path, &sb) < 0) {
		snprintf(err, errlen, "couldn't open the database %s: %s", path, strerror(errno));
		goto fail;
	}
	db->writable = mode != LWM2_DB_READ;
	/* the database holds every user's jobs: readable as the log is (its
	 * owner and group), whatever the umask; SQLite gives its journal
	 * files the database's mode */
	if (db->writable && stat(path, &sb) < 0 && errno == ENOENT) {
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);

		if (fd >= 0)
			close(fd);
	}
	if (sqlite3_open_v2(path, &db->h, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "couldn't open the database %s: %s", path,
		         db->h ? sqlite3_errmsg(db->h) : strerror(ENOMEM));
		goto fail;
	}
	sqlite3_busy_timeout(db->h, BUSY_MS);
	/* WAL: readers never wait for the writer; NORMAL: a commit survives
	 * a crash of the process, and the log holds what a power cut takes */
	if (db->writable &&
	    exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", err, errlen) < 0)
		goto fail;
	if (prepare(db, "SELECT value FROM lwm2_meta WHERE key = ?1", &db->meta_get, err, errlen) <
	        0 &&
	    db->writable) {
		/* a new file: the table comes with the schema */
		db->meta_get = NULL;
	} else if (!db->meta_get) {
		snprintf(err, errlen, "%s is not an lwm2 database", path);
		goto fail;
	}
	if (ready_schema(db, err, errlen) < 0)
		goto fail;
	if (db->writable && prepare_insert(db, err, errlen) < 0)
		goto fail;
	db->base.be = &lwm2_db_sqlite;
	return &db->base;
fail:
	sq_close(&db->base);
	return NULL;
}

static void sq_close(struct lwm2_db *base)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	if (!db)
		return;
	sqlite3_finalize(db->insert);
	sqlite3_finalize(db->insert_metric);
	sqlite3_finalize(db->insert_day);
	sqlite3_finalize(db->insert_text);
	sqlite3_finalize(db->insert_known_text);
	sqlite3_finalize(db->meta_get);
	sqlite3_finalize(db->meta_set);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

static int sq_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	int rc;

	buf[0] = '\0';
	if (!db->meta_get && prepare(db, "SELECT value FROM lwm2_meta WHERE key = ?1",
	                             &db->meta_get, err, errlen) < 0)
		return -1;
	sqlite3_reset(db->meta_get);
	sqlite3_bind_text(db->meta_get, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(db->meta_get);
	if (rc == SQLITE_ROW)
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(db->meta_get, 0));
	else if (rc != SQLITE_DONE)
		return fail(db, "read lwm2_meta", err, errlen);
	sqlite3_reset(db->meta_get);
	return 0;
}

static int sq_meta_set(struct lwm2_db *base, const char *key, const char *value, char *err,
                       size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_reset(db->meta_set);
	sqlite3_bind_text(db->meta_set, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(db->meta_set, 2, value, -1, SQLITE_STATIC);
	if (sqlite3_step(db->meta_set) != SQLITE_DONE)
		return fail(db, "write lwm2_meta", err, errlen);
	sqlite3_reset(db->meta_set);
	return 0;
}

static void sq_patience(struct lwm2_db *base, int ms)
{
	sqlite3_busy_timeout(((struct lwm2_db_sqlite *)base)->h, ms);
}

static bool sq_busy(struct lwm2_db *base)
{
	int rc = sqlite3_errcode(((struct lwm2_db_sqlite *)base)->h);

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

static int sq_begin(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	if (!db->writable) {
		snprintf(err, errlen, "%s is open for reading only", db->path);
		return -1;
	}
	return exec(db, "BEGIN IMMEDIATE", err, errlen);
}

static int sq_commit(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	return exec(db, "COMMIT", err, errlen);
}

static void sq_rollback(struct lwm2_db *base)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

/* ------------------------------------------------------------ rows */

/* The job's text: under rowid when the job was just added, else under the
 * row the database had (kept where it had one). */
static int insert_text(struct lwm2_db_sqlite *db, const struct lwm2_jobrow *j,
                       const struct lwm2_db_text *t, bool added, int64_t rowid, char *err,
                       size_t errlen)
{
	sqlite3_stmt *st = added ? db->insert_text : db->insert_known_text;
	int p = 1;

	sqlite3_reset(st);
	if (added) {
		sqlite3_bind_int64(st, p++, rowid);
	} else {
		if (j->cluster)
			sqlite3_bind_text(st, p, j->cluster, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, p);
		p++;
		sqlite3_bind_int64(st, p++, j->job_id);
		sqlite3_bind_int64(st, p++, j->submit);
		sqlite3_bind_int64(st, p++, j->start);
	}
	sqlite3_bind_int64(st, p++, t->cut);
	sqlite3_bind_blob(st, p++, t->line, (int)t->line_len, SQLITE_STATIC);
	if (t->grid)
		sqlite3_bind_blob(st, p, t->grid, (int)t->grid_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, p);
	if (sqlite3_step(st) != SQLITE_DONE)
		return fail(db, "add a job's line", err, errlen);
	return 0;
}

static int sq_insert(struct lwm2_db *base, const struct lwm2_jobrow *j,
                     const struct lwm2_db_text *text, bool *added, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = db->insert;
	struct lwm2_jobrow *w = (struct lwm2_jobrow *)(uintptr_t)j; /* read only */
	int64_t rowid;

	sqlite3_reset(st);
	for (size_t i = 0; i < lwm2_db_ncolumns; i++) {
		const struct lwm2_db_column *c = &lwm2_db_columns[i];
		int p = (int)i + 1;
		double d;

		switch (c->kind) {
		case LWM2_DBK_I64:
			sqlite3_bind_int64(st, p, *LWM2_DB_AT(w, c->off, int64_t));
			break;
		case LWM2_DBK_U32:
			sqlite3_bind_int64(st, p, *LWM2_DB_AT(w, c->off, uint32_t));
			break;
		case LWM2_DBK_BOOL:
			sqlite3_bind_int(st, p, *LWM2_DB_AT(w, c->off, bool));
			break;
		case LWM2_DBK_STR: {
			const char *s = *LWM2_DB_AT(w, c->off, const char *);

			if (s)
				sqlite3_bind_text(st, p, s, -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, p);
			break;
		}
		case LWM2_DBK_BUF:
			sqlite3_bind_text(st, p, LWM2_DB_AT(w, c->off, char), -1, SQLITE_STATIC);
			break;
		case LWM2_DBK_REAL:
			d = *LWM2_DB_AT(w, c->off, double);
			if (isnan(d))
				sqlite3_bind_null(st, p);
			else
				sqlite3_bind_double(st, p, d);
			break;
		case LWM2_DBK_OPT:
			if (*LWM2_DB_AT(w, c->has_off, bool))
				sqlite3_bind_double(st, p, *LWM2_DB_AT(w, c->off, double));
			else
				sqlite3_bind_null(st, p);
			break;
		case LWM2_DBK_RULES: {
			char rules[2048];
			size_t rl = lwm2_db_rules_text(*LWM2_DB_AT(w, c->off, uint64_t), rules,
			                               sizeof(rules));

			sqlite3_bind_text(st, p, rules, (int)rl, SQLITE_TRANSIENT);
		} break;
		}
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		return fail(db, "add a job", err, errlen);
	*added = sqlite3_changes(db->h) > 0;
	rowid = sqlite3_last_insert_rowid(db->h);
	if (*added && j->end > 0) {
		sqlite3_reset(db->insert_day);
		sqlite3_bind_int64(db->insert_day, 1, j->end / LWM2_DB_DAY_S);
		if (sqlite3_step(db->insert_day) != SQLITE_DONE)
			return fail(db, "count the job's day", err, errlen);
	}
	if (text && text->line && insert_text(db, j, text, *added, rowid, err, errlen) < 0)
		return -1;
	if (!*added || !j->digest)
		return 0;
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_metric_stat *m = &j->scope.stat[k];

		if (!m->n)
			continue;
		st = db->insert_metric;
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, rowid);
		sqlite3_bind_int64(st, 2, db->metric_id[k]);
		sqlite3_bind_int64(st, 3, (int64_t)(m->n > INT64_MAX ? INT64_MAX : m->n));
		sqlite3_bind_double(st, 4, m->min);
		sqlite3_bind_double(st, 5, m->avg);
		sqlite3_bind_double(st, 6, m->max);
		if (sqlite3_step(st) != SQLITE_DONE)
			return fail(db, "add a job's metrics", err, errlen);
	}
	return 0;
}

/* A row of the job table back into j (the metric's figures added after). */
static void row_of(sqlite3_stmt *st, struct lwm2_jobrow *j)
{
	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < lwm2_db_ncolumns; i++) {
		const struct lwm2_db_column *c = &lwm2_db_columns[i];
		int p = (int)i;
		bool null = sqlite3_column_type(st, p) == SQLITE_NULL;
		const char *s;

		switch (c->kind) {
		case LWM2_DBK_I64:
			*LWM2_DB_AT(j, c->off, int64_t) = sqlite3_column_int64(st, p);
			break;
		case LWM2_DBK_U32:
			*LWM2_DB_AT(j, c->off, uint32_t) = (uint32_t)sqlite3_column_int64(st, p);
			break;
		case LWM2_DBK_BOOL:
			*LWM2_DB_AT(j, c->off, bool) = sqlite3_column_int(st, p) != 0;
			break;
		case LWM2_DBK_STR:
			*LWM2_DB_AT(j, c->off, const char *) =
			    null ? NULL : (const char *)sqlite3_column_text(st, p);
			break;
		case LWM2_DBK_BUF:
			s = (const char *)sqlite3_column_text(st, p);
			snprintf(LWM2_DB_AT(j, c->off, char), c->len, "%s", s ? s : "");
			break;
		case LWM2_DBK_REAL:
			*LWM2_DB_AT(j, c->off, double) = null ? NAN : sqlite3_column_double(st, p);
			break;
		case LWM2_DBK_OPT:
			*LWM2_DB_AT(j, c->has_off, bool) = !null;
			*LWM2_DB_AT(j, c->off, double) = null ? 0 : sqlite3_column_double(st, p);
			break;
		case LWM2_DBK_RULES:
			*LWM2_DB_AT(j, c->off, uint64_t) =
			    lwm2_db_rules_bits((const char *)sqlite3_column_text(st, p));
			break;
		}
	}
}

/* A selection's parameters from the first, in the order of
 * lwm2_db_jobs_sql and lwm2_db_lines_sql (with_ids: its job ids last). */
static void bind_select(sqlite3_stmt *st, const struct lwm2_db_select *sel, size_t nusers,
                        bool with_ids)
{
	int p = 1;

	sqlite3_bind_int64(st, p++, sel->start ? sel->start : INT64_MIN);
	sqlite3_bind_int64(st, p++, sel->end ? sel->end : INT64_MAX);
	for (size_t i = 0; i < nusers; i++)
		sqlite3_bind_text(st, p++, sel->users[i], -1, SQLITE_STATIC);
	for (size_t i = 0; i < sel->naccounts; i++)
		sqlite3_bind_text(st, p++, sel->accounts[i], -1, SQLITE_STATIC);
	for (size_t i = 0; with_ids && i < sel->njob_ids; i++)
		sqlite3_bind_int64(st, p++, sel->job_ids[i]);
}

static int sq_jobs(struct lwm2_db *base, const struct lwm2_db_select *sel,
                   int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                   size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	size_t nusers;
	char *sql =
	    lwm2_db_jobs_sql(sel, sel->metric >= 0 ? db->metric_id[sel->metric] : -1, &nusers);
	sqlite3_stmt *st = NULL;
	int rc = 0, step;
	struct lwm2_jobrow *j = malloc(sizeof(*j));

	if (!sql || !j) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		free(sql);
		free(j);
		return -1;
	}
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = fail(db, "read the jobs", err, errlen);
		goto done;
	}
	bind_select(st, sel, nusers, false);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		row_of(st, j);
		if (sel->metric >= 0 &&
		    sqlite3_column_type(st, (int)lwm2_db_ncolumns) != SQLITE_NULL) {
			struct lwm2_metric_stat *m = &j->scope.stat[sel->metric];
			int c = (int)lwm2_db_ncolumns;

			m->n = (uint64_t)sqlite3_column_int64(st, c);
			m->min = sqlite3_column_double(st, c + 1);
			m->avg = sqlite3_column_double(st, c + 2);
			m->max = sqlite3_column_double(st, c + 3);
		}
		if ((rc = fn(arg, j)) != 0)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = fail(db, "read the jobs", err, errlen);
	else if (rc < 0)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
done:
	sqlite3_finalize(st);
	free(sql);
	free(j);
	return rc;
}

static int sq_texts(struct lwm2_db *base, const struct lwm2_db_select *sel, bool want_grid,
                    int (*fn)(void *arg, const struct lwm2_db_text *t), void *arg, char *err,
                    size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	size_t nusers;
	char *sql = lwm2_db_lines_sql(sel, want_grid, db->schema >= 2, &nusers);
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	if (!sql) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
		rc = fail(db, "read the jobs' lines", err, errlen);
		goto done;
	}
	bind_select(st, sel, nusers, true);
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		struct lwm2_db_text t = {
		    .job = sqlite3_column_int64(st, 0),
		    .cut = sqlite3_column_int64(st, 1),
		    .line = sqlite3_column_blob(st, 2),
		    .line_len = (size_t)sqlite3_column_bytes(st, 2),
		    .grid = sqlite3_column_blob(st, 3),
		    .grid_len = (size_t)sqlite3_column_bytes(st, 3),
		};

		if ((rc = fn(arg, &t)) != 0)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = fail(db, "read the jobs' lines", err, errlen);
done:
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

/* ------------------------------------------------------------ upkeep */

static int sq_check(struct lwm2_db *base, FILE *out, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;
	int bad = 0;

	if (sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return fail(db, "check", err, errlen);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);

		if (r && strcmp(r, "ok")) {
			fprintf(out, "integrity: %s\n", r);
			bad = 1;
		}
	}
	sqlite3_finalize(st);
	if (!bad)
		fprintf(out, "integrity: ok\n");
	fprintf(out, "schema: %d (this lwm2: %d)\n", db->schema, LWM2_DB_SCHEMA);
	if (sqlite3_prepare_v2(db->h,
	                       "SELECT count(*), min(end_time), max(end_time), sum(has_digest) "
	                       "FROM job",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(db, "count the jobs", err, errlen);
	if (sqlite3_step(st) == SQLITE_ROW)
		fprintf(out,
		        "jobs: %" PRId64 " (%" PRId64 " with a digest), ended from %" PRId64
		        " to %" PRId64 "\n",
		        (int64_t)sqlite3_column_int64(st, 0), (int64_t)sqlite3_column_int64(st, 3),
		        (int64_t)sqlite3_column_int64(st, 1), (int64_t)sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	return bad;
}

static int sq_forget(struct lwm2_db *base, int64_t before, unsigned long *removed, char *err,
                     size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;

	*removed = 0;
	if (sq_begin(&db->base, err, errlen) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		static const char *const del[] = {
		    "DELETE FROM job_metric WHERE job IN (SELECT id FROM job WHERE end_time < ?1)",
		    "DELETE FROM job_text WHERE job IN (SELECT id FROM job WHERE end_time < ?1)",
		};

		if (sqlite3_prepare_v2(db->h, del[i], -1, &st, NULL) != SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, before);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		sqlite3_finalize(st);
		st = NULL;
	}
	if (sqlite3_prepare_v2(db->h, "DELETE FROM job WHERE end_time < ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, before);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	*removed = (unsigned long)sqlite3_changes(db->h);
	sqlite3_finalize(st);
	return sq_commit(&db->base, err, errlen);
fail:
	fail(db, "remove old jobs", err, errlen);
	sqlite3_finalize(st);
	sq_rollback(&db->base);
	return -1;
}

static int sq_vacuum(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	if (!db->writable) {
		snprintf(err, errlen, "%s is open for reading only", db->path);
		return -1;
	}
	return exec(db, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);", err, errlen);
}

/* ------------------------------------------------------------ summaries */

static int sq_days(struct lwm2_db *base, int64_t d0, int64_t d1, struct lwm2_db_day **out,
                   size_t *n, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(db->h,
	                       "SELECT day, summarized FROM day WHERE day BETWEEN ?1 AND ?2 "
	                       "ORDER BY day",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(db, "read the days", err, errlen);
	sqlite3_bind_int64(st, 1, d0);
	sqlite3_bind_int64(st, 2, d1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			struct lwm2_db_day *nd =
			    realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof(*nd));

			if (!nd) {
				snprintf(err, errlen, "%s", strerror(ENOMEM));
				sqlite3_finalize(st);
				return -1;
			}
			*out = nd;
		}
		(*out)[*n].day = (int64_t)sqlite3_column_int64(st, 0);
		(*out)[(*n)++].summarized = sqlite3_column_int(st, 1) != 0;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(db, "read the days", err, errlen);
	return 0;
}

static int sq_summary_read(struct lwm2_db *base, const char *dim, int64_t d0, int64_t d1,
                           int (*fn)(void *arg, int64_t day, const char *name, const void *data,
                                     size_t len),
                           void *arg, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;
	int rc, r = 0;

	if (sqlite3_prepare_v2(db->h,
	                       "SELECT day, name, data FROM summary WHERE dim = ?1 AND day "
	                       "BETWEEN ?2 AND ?3 ORDER BY day, name",
	                       -1, &st, NULL) != SQLITE_OK)
		return fail(db, "read the summaries", err, errlen);
	sqlite3_bind_text(st, 1, dim, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, d0);
	sqlite3_bind_int64(st, 3, d1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((r = fn(arg, (int64_t)sqlite3_column_int64(st, 0),
		            (const char *)sqlite3_column_text(st, 1), sqlite3_column_blob(st, 2),
		            (size_t)sqlite3_column_bytes(st, 2))) != 0)
			break;
	sqlite3_finalize(st);
	if (r < 0) {
		snprintf(err, errlen, "%s: a summary that cannot be read", db->path);
		return -1;
	}
	if (!r && rc != SQLITE_DONE)
		return fail(db, "read the summaries", err, errlen);
	return 0;
}

static int sq_summary_store(struct lwm2_db *base, int64_t day, const struct lwm2_db_summary *v,
                            size_t n, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *del = NULL, *ins = NULL, *mark = NULL;

	if (sq_begin(base, err, errlen) < 0)
		return -1;
	if (sqlite3_prepare_v2(db->h, "DELETE FROM summary WHERE dim = ?1 AND day = ?2", -1, &del,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, "INSERT INTO summary VALUES (?1, ?2, ?3, ?4)", -1, &ins,
	                       NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, "UPDATE day SET summarized = 1 WHERE day = ?1", -1, &mark,
	                       NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(v[i].dim, v[i - 1].dim)) {
			sqlite3_reset(del);
			sqlite3_bind_text(del, 1, v[i].dim, -1, SQLITE_STATIC);
			sqlite3_bind_int64(del, 2, day);
			if (sqlite3_step(del) != SQLITE_DONE)
				goto fail;
		}
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, day);
		sqlite3_bind_text(ins, 2, v[i].dim, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, v[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_blob(ins, 4, v[i].data, (int)v[i].len, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_bind_int64(mark, 1, day);
	if (sqlite3_step(mark) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	sqlite3_finalize(mark);
	return sq_commit(base, err, errlen);
fail:
	fail(db, "keep a day's summaries", err, errlen);
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	sqlite3_finalize(mark);
	sq_rollback(base);
	return -1;
}

static bool sq_writable(struct lwm2_db *base)
{
	return ((struct lwm2_db_sqlite *)base)->writable;
}

const struct lwm2_db_backend lwm2_db_sqlite = {
    .name = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .insert = sq_insert,
    .meta_get = sq_meta_get,
    .meta_set = sq_meta_set,
    .jobs = sq_jobs,
    .texts = sq_texts,
    .patience = sq_patience,
    .busy = sq_busy,
    .check = sq_check,
    .forget = sq_forget,
    .vacuum = sq_vacuum,
    .days = sq_days,
    .summary_read = sq_summary_read,
    .summary_store = sq_summary_store,
    .writable = sq_writable,
};
