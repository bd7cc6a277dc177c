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
#include "hostlist.h"
#include "lwm2_render.h"
#include "errmsg.h"

struct lwm2_db_sqlite {
	struct lwm2_db base; /* first: the backend's table */
	sqlite3 *h;
	char *path;
	int schema; /* the file's schema version */
	sqlite3_stmt *insert, *insert_day, *insert_text, *insert_known_text, *insert_node,
	    *meta_get, *meta_set, *dict_get, *begin, *commit;
	/* a job's rows of job_metric, one statement of n rows for the jobs
	 * with n metrics, prepared when first needed */
	sqlite3_stmt *insert_metrics[LWM2_NMETRICS + 1];
	int64_t metric_id[LWM2_NMETRICS]; /* job_metric's ids of lwm2_metric_ids */
};

#define META_GET_SQL "SELECT value FROM lwm2_meta WHERE key = ?1"

/* How long a writer waits for another one (jobcomp/lwm2's follow and an
 * import at the same time) before it gives up for now. */
#define BUSY_MS 10000

static void sq_close(struct lwm2_db *base);
static int sq_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen);

static int fail(struct lwm2_db_sqlite *db, const char *what, char *err, size_t errlen)
{
	return lwm2_errprintf(0, err, errlen, "couldn't %s in %s: %s", what, db->path,
	                      sqlite3_errmsg(db->h));
}

static int exec(struct lwm2_db_sqlite *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		lwm2_errprintf(0, err, errlen, "%s: %s", db->path,
		               msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* A statement to run once: 0, or -1 with err (couldn't what). */
static int query(struct lwm2_db_sqlite *db, const char *sql, sqlite3_stmt **st, const char *what,
                 char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK)
		return fail(db, what, err, errlen);
	return 0;
}

static const char *sql_type(enum lwm2_db_kind k)
{
	static const char *const types[] = {
	    [LWM2_DBC_INT] = "INTEGER",
	    [LWM2_DBC_REAL] = "REAL",
	    [LWM2_DBC_TEXT] = "TEXT",
	};

	return types[lwm2_db_class_of(k)];
}

/* Schema 2: each job's log line (db_text.c). */
#define JOB_TEXT_SQL                                                                               \
	"CREATE TABLE job_text (job INTEGER PRIMARY KEY, cut INTEGER NOT NULL, line BLOB NOT "     \
	"NULL, grid BLOB);\n"

/* Schema 4: the lines' dictionaries (db_text.c), and each line's. */
#define TEXT_DICT_SQL                                                                              \
	"CREATE TABLE IF NOT EXISTS text_dict (id INTEGER PRIMARY KEY, line BLOB NOT NULL, grid "  \
	"BLOB);\n"                                                                                 \
	"ALTER TABLE job_text ADD COLUMN dict INTEGER;\n"                                          \
	"UPDATE lwm2_meta SET value = '4' WHERE key = 'schema_version';\n"

/* Schema 5: the nodes each job ran on (a row per node, from the job's
 * host list: the portal's node pages), and indexes that hold what the
 * portal counts, sums, groups and sorts by, so that its questions over a
 * month of millions of jobs read index entries and not rows: one over
 * the period with the figures, ids and texts, and the indexes of a
 * user's, an account's, an application's (and now a partition's) jobs
 * over time with the core-hours and the shares the groups weigh, which
 * give the groups in order without a sort. */
#define SCHEMA5_SQL                                                                                \
	"CREATE TABLE IF NOT EXISTS job_node (node TEXT NOT NULL, job INTEGER NOT NULL, "          \
	"PRIMARY KEY (node, job)) WITHOUT ROWID;\n"                                                \
	"CREATE INDEX IF NOT EXISTS job_node_job ON job_node (job);\n"                             \
	"CREATE INDEX IF NOT EXISTS job_end_figures ON job (end_time, core_hours, mpi_pct, "       \
	"io_pct, threads_per_core, cpi, job_id, start, user_name, account, app, partition_name, "  \
	"state, cluster);\n"                                                                       \
	"DROP INDEX IF EXISTS job_user_end;\n"                                                     \
	"DROP INDEX IF EXISTS job_account_end;\n"                                                  \
	"DROP INDEX IF EXISTS job_app_end;\n"                                                      \
	"CREATE INDEX IF NOT EXISTS job_user_end_shares ON job (user_name, end_time, core_hours, " \
	"mpi_pct, io_pct);\n"                                                                      \
	"CREATE INDEX IF NOT EXISTS job_account_end_shares ON job (account, end_time, "            \
	"core_hours, "                                                                             \
	"mpi_pct, io_pct);\n"                                                                      \
	"CREATE INDEX IF NOT EXISTS job_app_end_shares ON job (app, end_time, core_hours, "        \
	"mpi_pct, "                                                                                \
	"io_pct);\n"                                                                               \
	"CREATE INDEX IF NOT EXISTS job_partition_end_shares ON job (partition_name, end_time, "   \
	"core_hours, mpi_pct, io_pct);\n"                                                          \
	"UPDATE lwm2_meta SET value = '5' WHERE key = 'schema_version';\n"

/* Schema 7: the monthly summaries (db.h), and the days and jobs of its
 * month each was made from. */
#define SCHEMA7_SQL                                                                                \
	"CREATE TABLE IF NOT EXISTS month (month INTEGER PRIMARY KEY, days INTEGER NOT NULL, "     \
	"jobs INTEGER NOT NULL);\n"                                                                \
	"CREATE TABLE IF NOT EXISTS month_summary (month INTEGER NOT NULL, dim TEXT NOT NULL, "    \
	"name TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (dim, month, name)) WITHOUT "         \
	"ROWID;\n"                                                                                 \
	"UPDATE lwm2_meta SET value = '7' WHERE key = 'schema_version';\n"

/* Schema 8: no index of end_time alone, as job_end_figures (schema 5)
 * begins with it and serves every question it served (a window of time,
 * forget); no index of job_node by the job, whose rows forget finds from
 * the job's host list as they were made (sq_forget): two indexes fewer
 * to write with each job. */
#define SCHEMA8_SQL                                                                                \
	"DROP INDEX IF EXISTS job_end;\n"                                                          \
	"DROP INDEX IF EXISTS job_node_job;\n"                                                     \
	"UPDATE lwm2_meta SET value = '8' WHERE key = 'schema_version';\n"

/* The most nodes of one job that get a row of job_node. */
#define NODES_MAX 100000

/* The schema of this build.  The job's identity is its cluster, id,
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
	        TEXT_DICT_SQL SCHEMA5_SQL SCHEMA7_SQL SCHEMA8_SQL
	    "INSERT INTO lwm2_meta VALUES ('schema_version', '%d');\n",
	    LWM2_DB_SCHEMA);
	return exec(db, sql, err, errlen);
}

/* The ids of the metrics this build knows, as the file names them; -1 for
 * one it has never stored. */
static int metric_ids(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;

	if (query(db, "SELECT id FROM metric WHERE name = ?1", &st, "read the metrics' names", err,
	          errlen) < 0)
		return -1;
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, lwm2_metric_ids[k], -1, SQLITE_STATIC);
		db->metric_id[k] =
		    sqlite3_step(st) == SQLITE_ROW ? (int64_t)sqlite3_column_int64(st, 0) : -1;
	}
	sqlite3_finalize(st);
	return 0;
}

struct node_rows {
	struct lwm2_db_sqlite *db;
	sqlite3_stmt *st;
	int64_t job;
};

static int node_row(void *arg, const char *name)
{
	struct node_rows *nr = arg;

	sqlite3_reset(nr->st);
	sqlite3_bind_text(nr->st, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(nr->st, 2, nr->job);
	return sqlite3_step(nr->st) == SQLITE_DONE ? 0 : -2;
}

/* st (?1 a node, ?2 the job) run for each row of job_node of job (its
 * row id) from its host list: added, or removed.  A list that is not one
 * gives what it could; 0, or -1 with err (couldn't what). */
static int each_node(struct lwm2_db_sqlite *db, sqlite3_stmt *st, int64_t job, const char *nodes,
                     const char *what, char *err, size_t errlen)
{
	struct node_rows nr = {db, st, job};

	if (lwm2_hostlist_each(nodes, NODES_MAX, node_row, &nr) == -2)
		return fail(db, what, err, errlen);
	return 0;
}

/* 4 to 5: job_node and the portal's index, job_node filled from the
 * host lists of the jobs there are. */
static int migrate_4_to_5(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	sqlite3_stmt *jobs = NULL, *ins = NULL;
	int rc = -1, step;

	if (exec(db, SCHEMA5_SQL, err, errlen) < 0 ||
	    query(db, "SELECT id, nodes FROM job WHERE nodes IS NOT NULL", &jobs, "read the jobs",
	          err, errlen) < 0 ||
	    query(db, "INSERT OR IGNORE INTO job_node (node, job) VALUES (?1, ?2)", &ins,
	          "add the jobs' nodes", err, errlen) < 0)
		goto done;
	while ((step = sqlite3_step(jobs)) == SQLITE_ROW)
		if (each_node(db, ins, sqlite3_column_int64(jobs, 0),
		              (const char *)sqlite3_column_text(jobs, 1), "add a job's nodes", err,
		              errlen) < 0)
			goto done;
	if (step != SQLITE_DONE) {
		fail(db, "read the jobs", err, errlen);
		goto done;
	}
	rc = 0;
done:
	sqlite3_finalize(jobs);
	sqlite3_finalize(ins);
	return rc;
}

/* 5 to 6 adds the columns after LWM2_DB_COLUMNS_V3 (the main processor),
 * NULL in the rows there are until their log is imported again. */
static int migrate_5_to_6(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	char sql[1024];
	size_t k = 0;

	for (size_t i = LWM2_DB_COLUMNS_V3; i < lwm2_db_ncolumns; i++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, "ALTER TABLE job ADD COLUMN %s %s;",
		                      lwm2_db_columns[i].name, sql_type(lwm2_db_columns[i].kind));
	snprintf(sql + k, sizeof(sql) - k,
	         "UPDATE lwm2_meta SET value = '6' WHERE key = 'schema_version';");
	return exec(db, sql, err, errlen);
}

/* Made where new, refused where newer than this build (read-only then),
 * and (later versions) migrated forward in place. */
static int ready_schema(struct lwm2_db_sqlite *db, char *err, size_t errlen)
{
	char v[32];

	if (db->base.writable && exec(db,
	                              "BEGIN IMMEDIATE;"
	                              "CREATE TABLE IF NOT EXISTS lwm2_meta (key TEXT PRIMARY KEY, "
	                              "value TEXT NOT NULL);",
	                              err, errlen) < 0)
		return -1;
	if (sq_meta_get(&db->base, "schema_version", v, sizeof(v), err, errlen) < 0)
		goto fail;
	db->schema = lwm2_db_schema_of(v);
	if (!db->base.writable) {
		if (!db->schema)
			return lwm2_errprintf(0, err, errlen,
			                      "%s is not an lwm2 database (no schema version)",
			                      db->path);
		return metric_ids(db, err, errlen);
	}
	if (db->schema > LWM2_DB_SCHEMA) {
		lwm2_db_schema_newer(db->path, db->schema, err, errlen);
		goto fail;
	}
	if (!db->schema) {
		if (create_schema(db, err, errlen) < 0)
			goto fail;
		db->schema = LWM2_DB_SCHEMA;
	}
	/* forward in place: 1 to 2 adds the jobs' lines (the rows of version
	 * 1 have none until their log is imported again) */
	if (db->schema == 1) {
		if (exec(db,
		         JOB_TEXT_SQL
		         "UPDATE lwm2_meta SET value = '2' WHERE key = 'schema_version';",
		         err, errlen) < 0)
			goto fail;
		db->schema = 2;
	}
	/* 2 to 3 adds the columns after LWM2_DB_COLUMNS_V2, NULL in the rows
	 * there are */
	if (db->schema == 2) {
		char sql[1024];
		size_t k = 0;

		for (size_t i = LWM2_DB_COLUMNS_V2; i < LWM2_DB_COLUMNS_V3; i++)
			k += (size_t)snprintf(
			    sql + k, sizeof(sql) - k, "ALTER TABLE job ADD COLUMN %s %s;",
			    lwm2_db_columns[i].name, sql_type(lwm2_db_columns[i].kind));
		snprintf(sql + k, sizeof(sql) - k,
		         "UPDATE lwm2_meta SET value = '3' WHERE key = 'schema_version';");
		if (exec(db, sql, err, errlen) < 0)
			goto fail;
		db->schema = 3;
	}
	/* 3 to 4 the lines' dictionaries (the lines stored before keep none) */
	if (db->schema == 3) {
		if (exec(db, TEXT_DICT_SQL, err, errlen) < 0)
			goto fail;
		db->schema = 4;
	}
	if (db->schema == 4 && migrate_4_to_5(db, err, errlen) < 0)
		goto fail;
	if (db->schema <= 5 && migrate_5_to_6(db, err, errlen) < 0)
		goto fail;
	if (db->schema <= 6 && exec(db, SCHEMA7_SQL, err, errlen) < 0)
		goto fail;
	if (db->schema <= 7 && exec(db, SCHEMA8_SQL, err, errlen) < 0)
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
	if (db->base.writable)
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
	const struct {
		const char *sql;
		sqlite3_stmt **st;
	} all[] = {
	    {sql, &db->insert},
	    {"INSERT INTO day VALUES (?1, 1, 0) ON CONFLICT (day) DO UPDATE SET "
	     "jobs = jobs + 1, summarized = 0",
	     &db->insert_day},
	    {"INSERT INTO job_text (job, cut, line, grid, dict) VALUES (?1, ?2, ?3, ?4, ?5)",
	     &db->insert_text},
	    {"INSERT OR IGNORE INTO job_text (job, cut, line, grid, dict) SELECT id, ?5, ?6, ?7, "
	     "?8 FROM job WHERE cluster IS ?1 AND job_id = ?2 AND submit = ?3 AND start = ?4",
	     &db->insert_known_text},
	    {"INSERT INTO lwm2_meta VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET "
	     "value = excluded.value",
	     &db->meta_set},
	    {"INSERT OR IGNORE INTO job_node (node, job) VALUES (?1, ?2)", &db->insert_node},
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (prepare(db, all[i].sql, all[i].st, err, errlen) < 0)
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
		lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", path, strerror(ENOMEM));
		free(db);
		return NULL;
	}
	db->base.where = db->path;
	if (!*path || strstr(url, "://")) {
		lwm2_errprintf(0, err, errlen,
		               "couldn't open the database \"%s\": want a file's path or "
		               "sqlite:PATH",
		               url);
		goto fail;
	}
	/* Who sees what: the file holds every user's jobs, and its mode (its
	 * owner's and group's, as the log) keeps it to the site's
	 * administrators; a user reads their own jobs from Slurm accounting,
	 * where slurmdbd applies PrivateData. */
	if (mode == LWM2_DB_READ && access(path, R_OK) < 0 && errno == EACCES) {
		lwm2_errprintf(EACCES, err, errlen,
		               "couldn't open the database %s: %s" LWM2_DB_NOT_YOURS, path,
		               strerror(EACCES));
		goto fail;
	}
	if (mode != LWM2_DB_WRITE && stat(path, &sb) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't open the database %s: %s", path,
		               strerror(errno));
		goto fail;
	}
	db->base.writable = mode != LWM2_DB_READ;
	/* the database holds every user's jobs: readable as the log is (its
	 * owner and group), whatever the umask; SQLite gives its journal
	 * files the database's mode */
	if (db->base.writable && stat(path, &sb) < 0) {
		int fd = errno == ENOENT ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640)
		                         : -1;

		if (fd >= 0)
			close(fd);
	} else if (db->base.writable && S_ISREG(sb.st_mode) && sb.st_size == 0 &&
	           (sb.st_mode & 0007)) {
		/* (stat found the file) an empty file is a new database to
		 * SQLite, and one that another program made may be anyone's
		 * to read (the sqlite3 shell asked to read a missing file
		 * makes it, mode 0644): others lose their access before the
		 * first job is in it (best effort: a file that is not ours
		 * keeps its mode) */
		(void)chmod(path, sb.st_mode & 0770);
	}
	if (sqlite3_open_v2(path, &db->h, flags | SQLITE_OPEN_NOMUTEX, lwm2_db_walbuf_vfs()) !=
	    SQLITE_OK) {
		lwm2_errprintf(0, err, errlen, "couldn't open the database %s: %s", path,
		               db->h ? sqlite3_errmsg(db->h) : strerror(ENOMEM));
		goto fail;
	}
	sqlite3_busy_timeout(db->h, BUSY_MS);
	/* WAL: readers never wait for the writer; NORMAL: a commit survives
	 * a crash of the process, and the log holds what a power cut takes.
	 * A checkpoint (the WAL copied into the file, both synced to disk)
	 * after 64 MiB of WAL, not SQLite's 4 MiB: a job's commit writes
	 * about 16 pages, so the checkpoint's two fsyncs fall on every
	 * thousandth job, not every sixtieth (jobcomp's follow of 2,000 jobs
	 * one a transaction, bench/db_follow: 180 to 197 us a job on average
	 * with 4 MiB, 147 to 153 with 64 MiB) */
	if (db->base.writable && exec(db,
	                              "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
	                              "PRAGMA wal_autocheckpoint = 16384;", /* pages of 4 KiB */
	                              err, errlen) < 0)
		goto fail;
	if (prepare(db, META_GET_SQL, &db->meta_get, err, errlen) < 0 && db->base.writable) {
		/* a new file: the table comes with the schema */
		db->meta_get = NULL;
	} else if (!db->meta_get) {
		lwm2_errprintf(0, err, errlen, "%s is not an lwm2 database", path);
		goto fail;
	}
	if (ready_schema(db, err, errlen) < 0)
		goto fail;
	if (db->base.writable && prepare_insert(db, err, errlen) < 0)
		goto fail;
	db->base.be = &lwm2_db_sqlite;
	db->base.schema = db->schema;
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
	for (size_t n = 0; n <= LWM2_NMETRICS; n++)
		sqlite3_finalize(db->insert_metrics[n]);
	sqlite3_finalize(db->insert_day);
	sqlite3_finalize(db->insert_text);
	sqlite3_finalize(db->insert_known_text);
	sqlite3_finalize(db->insert_node);
	sqlite3_finalize(db->meta_get);
	sqlite3_finalize(db->meta_set);
	sqlite3_finalize(db->dict_get);
	sqlite3_finalize(db->begin);
	sqlite3_finalize(db->commit);
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
	if (!db->meta_get && prepare(db, META_GET_SQL, &db->meta_get, err, errlen) < 0)
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

/* sql run as exec runs it, its statement kept prepared in *st: the
 * transaction's start and commit come with every job jobcomp's follow
 * adds, and parsing them each time cost a tenth of the commit. */
static int exec_kept(struct lwm2_db_sqlite *db, sqlite3_stmt **st, const char *sql, char *err,
                     size_t errlen)
{
	if (!*st &&
	    sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		return lwm2_errprintf(0, err, errlen, "%s: %s", db->path, sqlite3_errmsg(db->h));
	if (sqlite3_step(*st) != SQLITE_DONE) {
		lwm2_errprintf(0, err, errlen, "%s: %s", db->path, sqlite3_errmsg(db->h));
		sqlite3_reset(*st);
		return -1;
	}
	sqlite3_reset(*st);
	return 0;
}

static int sq_begin(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	return exec_kept(db, &db->begin, "BEGIN IMMEDIATE", err, errlen);
}

static int sq_commit(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	return exec_kept(db, &db->commit, "COMMIT", err, errlen);
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
	p++;
	if (t->dict)
		sqlite3_bind_int64(st, p, t->dict);
	else
		sqlite3_bind_null(st, p);
	if (sqlite3_step(st) != SQLITE_DONE)
		return fail(db, "add a job's line", err, errlen);
	return 0;
}

/* The statement that adds n rows of job_metric (n from 1 to
 * LWM2_NMETRICS), prepared the first time: a statement run costs about
 * as much as the rows it adds, and a job has some dozens.  NULL with err
 * where it could not be prepared. */
static sqlite3_stmt *metrics_statement(struct lwm2_db_sqlite *db, size_t n, char *err,
                                       size_t errlen)
{
	char sql[64 + LWM2_NMETRICS * 24];
	size_t k;

	if (db->insert_metrics[n])
		return db->insert_metrics[n];
	k = (size_t)snprintf(sql, sizeof(sql), "INSERT INTO job_metric VALUES ");
	for (size_t r = 0; r < n; r++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, "%s(?, ?, ?, ?, ?, ?)",
		                      r ? ", " : "");
	if (prepare(db, sql, &db->insert_metrics[n], err, errlen) < 0)
		return NULL;
	return db->insert_metrics[n];
}

/* The job's metrics (those with a figure) under its row, in one
 * statement.  0, or -1 with err. */
static int insert_metrics(struct lwm2_db_sqlite *db, const struct lwm2_jobrow *j, int64_t rowid,
                          char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int p = 0;
	size_t n = 0;

	for (size_t k = 0; k < LWM2_NMETRICS; k++)
		n += j->scope.stat[k].n != 0;
	if (!n)
		return 0;
	if (!(st = metrics_statement(db, n, err, errlen)))
		return -1;
	sqlite3_reset(st);
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_metric_stat *m = &j->scope.stat[k];

		if (!m->n)
			continue;
		sqlite3_bind_int64(st, ++p, rowid);
		sqlite3_bind_int64(st, ++p, db->metric_id[k]);
		sqlite3_bind_int64(st, ++p, (int64_t)(m->n > INT64_MAX ? INT64_MAX : m->n));
		sqlite3_bind_double(st, ++p, m->min);
		sqlite3_bind_double(st, ++p, m->avg);
		sqlite3_bind_double(st, ++p, m->max);
	}
	if (sqlite3_step(st) != SQLITE_DONE)
		return fail(db, "add a job's metrics", err, errlen);
	return 0;
}

static int sq_insert(struct lwm2_db *base, const struct lwm2_jobrow *j,
                     const struct lwm2_db_text *text, bool *added, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = db->insert;
	char rules[2048];
	int64_t rowid;

	sqlite3_reset(st);
	for (size_t i = 0; i < lwm2_db_ncolumns; i++) {
		const struct lwm2_db_column *c = &lwm2_db_columns[i];
		int p = (int)i + 1;
		struct lwm2_db_value v;

		lwm2_db_value_of(j, c, &v, rules, sizeof(rules));
		if (v.null)
			sqlite3_bind_null(st, p);
		else if (lwm2_db_class_of(c->kind) == LWM2_DBC_INT)
			sqlite3_bind_int64(st, p, v.i);
		else if (lwm2_db_class_of(c->kind) == LWM2_DBC_REAL)
			sqlite3_bind_double(st, p, v.d);
		else /* rules[] would serve every RULES column: copied */
			sqlite3_bind_text(st, p, v.s, (int)v.len,
			                  c->kind == LWM2_DBK_RULES ? SQLITE_TRANSIENT
			                                            : SQLITE_STATIC);
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
	if (*added && j->nodes &&
	    each_node(db, db->insert_node, rowid, j->nodes, "add a job's nodes", err, errlen) < 0)
		return -1;
	if (!*added || !j->digest)
		return 0;
	return insert_metrics(db, j, rowid, err, errlen);
}

/* A row of the job table back into j (the metric's figures added after). */
static void row_of(sqlite3_stmt *st, struct lwm2_jobrow *j)
{
	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < lwm2_db_ncolumns; i++) {
		const struct lwm2_db_column *c = &lwm2_db_columns[i];
		int p = (int)i;
		struct lwm2_db_value v = {.null = sqlite3_column_type(st, p) == SQLITE_NULL};

		/* only the getter of the column's class: another would convert
		 * the value in place */
		if (lwm2_db_class_of(c->kind) == LWM2_DBC_INT)
			v.i = sqlite3_column_int64(st, p);
		else if (lwm2_db_class_of(c->kind) == LWM2_DBC_REAL)
			v.d = sqlite3_column_double(st, p);
		else
			v.s = (const char *)sqlite3_column_text(st, p);
		lwm2_db_value_set(j, c, &v);
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

/* sql, a selection's query (NULL: out of memory), run with sel's
 * parameters: each row to row (0: go on, else its value is returned). */
static int select_rows(struct lwm2_db_sqlite *db, char *sql, const struct lwm2_db_select *sel,
                       size_t nusers, bool with_ids, int (*row)(void *arg, sqlite3_stmt *st),
                       void *arg, const char *what, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	if (!sql)
		return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
	if ((rc = query(db, sql, &st, what, err, errlen)) < 0)
		goto done;
	bind_select(st, sel, nusers, with_ids);
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = row(arg, st)) != 0)
			break;
	if (rc == 0 && step != SQLITE_DONE)
		rc = fail(db, what, err, errlen);
done:
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

static int jobs_row(void *arg, sqlite3_stmt *st)
{
	struct lwm2_db_jobs_read *jr = arg;
	int c = (int)lwm2_db_ncolumns, rc;

	row_of(st, jr->j);
	if (jr->sel->metric >= 0 && sqlite3_column_type(st, c) != SQLITE_NULL) {
		struct lwm2_metric_stat *m = &jr->j->scope.stat[jr->sel->metric];

		m->n = (uint64_t)sqlite3_column_int64(st, c);
		m->min = sqlite3_column_double(st, c + 1);
		m->avg = sqlite3_column_double(st, c + 2);
		m->max = sqlite3_column_double(st, c + 3);
	}
	rc = jr->fn(jr->arg, jr->j);
	if (rc < 0)
		snprintf(jr->err, jr->errlen, "%s", strerror(ENOMEM));
	return rc;
}

static int sq_jobs(struct lwm2_db *base, const struct lwm2_db_select *sel,
                   int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                   size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	size_t nusers;
	char *sql = lwm2_db_jobs_sql(sel, sel->metric >= 0 ? db->metric_id[sel->metric] : -1,
	                             db->schema, &nusers);
	struct lwm2_db_jobs_read jr = {.sel = sel,
	                               .j = malloc(sizeof(*jr.j)),
	                               .fn = fn,
	                               .arg = arg,
	                               .err = err,
	                               .errlen = errlen};
	int rc;

	if (!jr.j) {
		free(sql);
		sql = NULL; /* out of memory, as select_rows says */
	}
	rc = select_rows(db, sql, sel, nusers, false, jobs_row, &jr, "read the jobs", err, errlen);
	free(jr.j);
	return rc;
}

struct texts_read {
	int (*fn)(void *arg, const struct lwm2_db_text *t);
	void *arg;
};

static int texts_row(void *arg, sqlite3_stmt *st)
{
	struct texts_read *tr = arg;
	struct lwm2_db_text t = {
	    .job = sqlite3_column_int64(st, 0),
	    .cut = sqlite3_column_int64(st, 1),
	    .line = sqlite3_column_blob(st, 2),
	    .line_len = (size_t)sqlite3_column_bytes(st, 2),
	    .grid = sqlite3_column_blob(st, 3),
	    .grid_len = (size_t)sqlite3_column_bytes(st, 3),
	    .dict = sqlite3_column_int64(st, 4),
	};

	return tr->fn(tr->arg, &t);
}

static int sq_texts(struct lwm2_db *base, const struct lwm2_db_select *sel, bool want_grid,
                    int (*fn)(void *arg, const struct lwm2_db_text *t), void *arg, char *err,
                    size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	size_t nusers;
	char *sql = lwm2_db_lines_sql(sel, want_grid, db->schema, &nusers);
	struct texts_read tr = {.fn = fn, .arg = arg};

	return select_rows(db, sql, sel, nusers, true, texts_row, &tr, "read the jobs' lines", err,
	                   errlen);
}

static void *blob_dup(sqlite3_stmt *st, int col, size_t *len)
{
	const void *b = sqlite3_column_blob(st, col);
	void *c;

	*len = (size_t)sqlite3_column_bytes(st, col);
	if (!b || !(c = malloc(*len ? *len : 1)))
		return NULL;
	return memcpy(c, b, *len);
}

static int sq_dict_load(struct lwm2_db *base, struct lwm2_db_dict *d, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = db->dict_get;
	int rc;

	if (db->schema < 4)
		return 1;
	if (!st &&
	    prepare(db, "SELECT id, line, grid FROM text_dict WHERE id > ?1 ORDER BY id LIMIT 1",
	            &db->dict_get, err, errlen) < 0)
		return -1;
	st = db->dict_get;
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, d->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_reset(st);
		return 1;
	}
	if (rc != SQLITE_ROW)
		return fail(db, "read the lines' dictionary", err, errlen);
	d->id = sqlite3_column_int64(st, 0);
	d->line = blob_dup(st, 1, &d->line_len);
	d->grid = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : blob_dup(st, 2, &d->grid_len);
	if (!d->line || (sqlite3_column_type(st, 2) != SQLITE_NULL && !d->grid)) {
		sqlite3_reset(st);
		lwm2_db_dict_free(d);
		return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
	}
	sqlite3_reset(st);
	return 0;
}

static int sq_dict_store(struct lwm2_db *base, struct lwm2_db_dict *d, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;

	if (query(db, "INSERT INTO text_dict (line, grid) VALUES (?1, ?2)", &st,
	          "keep the lines' dictionary", err, errlen) < 0)
		return -1;
	sqlite3_bind_blob(st, 1, d->line, (int)d->line_len, SQLITE_STATIC);
	if (d->grid)
		sqlite3_bind_blob(st, 2, d->grid, (int)d->grid_len, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		fail(db, "keep the lines' dictionary", err, errlen);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	d->id = sqlite3_last_insert_rowid(db->h);
	return 0;
}

/* A query of db_query.c, its parameters bound in order, each row's
 * values by the columns' classes. */
static int sq_select(struct lwm2_db *base, const char *sql, const struct lwm2_db_param *p,
                     size_t np, const enum lwm2_db_class *cls, size_t ncol,
                     int (*fn)(void *arg, const struct lwm2_db_value *v), void *arg, char *err,
                     size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	struct lwm2_db_value *v = calloc(ncol ? ncol : 1, sizeof(*v));
	sqlite3_stmt *st = NULL;
	int rc = 0, step;

	if (!v)
		return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
	if (query(db, sql, &st, "read the jobs", err, errlen) < 0) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < np; i++) {
		int k = (int)i + 1;

		if (p[i].cls == LWM2_DBC_INT)
			sqlite3_bind_int64(st, k, p[i].i);
		else if (p[i].cls == LWM2_DBC_REAL)
			sqlite3_bind_double(st, k, p[i].d);
		else
			sqlite3_bind_text(st, k, p[i].s, -1, SQLITE_STATIC);
	}
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		for (size_t i = 0; i < ncol; i++) {
			int c = (int)i;

			/* only the getter of the column's class: another would
			 * convert the value in place */
			memset(&v[i], 0, sizeof(v[i]));
			v[i].null = sqlite3_column_type(st, c) == SQLITE_NULL;
			if (cls[i] == LWM2_DBC_INT)
				v[i].i = sqlite3_column_int64(st, c);
			else if (cls[i] == LWM2_DBC_REAL)
				v[i].d = sqlite3_column_double(st, c);
			else if (!v[i].null)
				v[i].s = (const char *)sqlite3_column_text(st, c);
		}
		if ((rc = fn(arg, v)) != 0)
			break;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = fail(db, "read the jobs", err, errlen);
	sqlite3_finalize(st);
	free(v);
	return rc;
}

/* ------------------------------------------------------------ upkeep */

static int sq_check(struct lwm2_db *base, FILE *out, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;
	int bad = 0;

	if (query(db, "PRAGMA integrity_check", &st, "check", err, errlen) < 0)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *r = (const char *)sqlite3_column_text(st, 0);

		if (r && strcmp(r, "ok")) {
			fprintf(out, "integrity: %s\n", r);
			bad = 1;
		}
	}
	sqlite3_finalize(st);
	lwm2_db_check_head(out, bad, db->schema);
	if (query(db,
	          "SELECT count(*), min(end_time), max(end_time), sum(has_digest) "
	          "FROM job",
	          &st, "count the jobs", err, errlen) < 0)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		lwm2_db_check_jobs(
		    out, (int64_t)sqlite3_column_int64(st, 0), (int64_t)sqlite3_column_int64(st, 3),
		    (int64_t)sqlite3_column_int64(st, 1), (int64_t)sqlite3_column_int64(st, 2));
	sqlite3_finalize(st);
	return bad;
}

static int sq_forget(struct lwm2_db *base, int64_t before, unsigned long *removed, char *err,
                     size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL, *jobs = NULL;
	int step;

	*removed = 0;
	if (lwm2_db_begin(&db->base, err, errlen) < 0)
		return -1;
	/* the jobs' nodes by their host lists, as their rows were made:
	 * job_node has no index by the job (schema 8) */
	if (query(db, "SELECT id, nodes FROM job WHERE end_time < ?1 AND nodes IS NOT NULL", &jobs,
	          "remove old jobs", err, errlen) < 0 ||
	    query(db, "DELETE FROM job_node WHERE node = ?1 AND job = ?2", &st, "remove old jobs",
	          err, errlen) < 0)
		goto failed;
	sqlite3_bind_int64(jobs, 1, before);
	while ((step = sqlite3_step(jobs)) == SQLITE_ROW)
		if (each_node(db, st, sqlite3_column_int64(jobs, 0),
		              (const char *)sqlite3_column_text(jobs, 1), "remove old jobs", err,
		              errlen) < 0)
			goto failed;
	if (step != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(jobs);
	sqlite3_finalize(st);
	jobs = st = NULL;
	for (size_t i = 0; i < 3; i++) {
		static const char *const del[] = {
		    "DELETE FROM job_metric WHERE job IN (SELECT id FROM job WHERE end_time < ?1)",
		    "DELETE FROM job_text WHERE job IN (SELECT id FROM job WHERE end_time < ?1)",
		    "DELETE FROM job WHERE end_time < ?1",
		};

		if (sqlite3_prepare_v2(db->h, del[i], -1, &st, NULL) != SQLITE_OK)
			goto fail;
		sqlite3_bind_int64(st, 1, before);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
		if (i == 2)
			*removed = (unsigned long)sqlite3_changes(db->h);
		sqlite3_finalize(st);
		st = NULL;
	}
	return sq_commit(&db->base, err, errlen);
fail:
	fail(db, "remove old jobs", err, errlen);
failed:
	sqlite3_finalize(jobs);
	sqlite3_finalize(st);
	sq_rollback(&db->base);
	return -1;
}

static int sq_vacuum(struct lwm2_db *base, char *err, size_t errlen)
{
	return exec((struct lwm2_db_sqlite *)base, "VACUUM; PRAGMA wal_checkpoint(TRUNCATE);", err,
	            errlen);
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
	if (query(db,
	          "SELECT day, jobs, summarized FROM day WHERE day BETWEEN ?1 AND ?2 "
	          "ORDER BY day",
	          &st, "read the days", err, errlen) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, d0);
	sqlite3_bind_int64(st, 2, d1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lwm2_db_day d = {.day = (int64_t)sqlite3_column_int64(st, 0),
		                        .jobs = (int64_t)sqlite3_column_int64(st, 1),
		                        .summarized = sqlite3_column_int(st, 2) != 0};

		if (lwm2_db_day_add(out, n, &cap, &d) < 0) {
			lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(db, "read the days", err, errlen);
	return 0;
}

static int sq_months(struct lwm2_db *base, int64_t m0, int64_t m1, struct lwm2_db_month **out,
                     size_t *n, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (query(db,
	          "SELECT month, days, jobs FROM month WHERE month BETWEEN ?1 AND ?2 "
	          "ORDER BY month",
	          &st, "read the months", err, errlen) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, m0);
	sqlite3_bind_int64(st, 2, m1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct lwm2_db_month m = {.month = (int64_t)sqlite3_column_int64(st, 0),
		                          .days = (int64_t)sqlite3_column_int64(st, 1),
		                          .jobs = (int64_t)sqlite3_column_int64(st, 2)};

		if (lwm2_db_month_add(out, n, &cap, &m) < 0) {
			lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
			sqlite3_finalize(st);
			free(*out);
			*out = NULL;
			*n = 0;
			return -1;
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return fail(db, "read the months", err, errlen);
	return 0;
}

/* The table of a day's summaries or a month's, and its key's column. */
static const char *summary_table(bool monthly)
{
	return monthly ? "month_summary" : "summary";
}

static const char *summary_key(bool monthly)
{
	return monthly ? "month" : "day";
}

static int
sq_summary_read(struct lwm2_db *base, bool monthly, const char *dim, int64_t d0, int64_t d1,
                int (*fn)(void *arg, int64_t day, const char *name, const void *data, size_t len),
                void *arg, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	const char *key = summary_key(monthly);
	sqlite3_stmt *st = NULL;
	char sql[256];
	int rc, r = 0;

	snprintf(sql, sizeof(sql),
	         "SELECT %s, name, data FROM %s WHERE dim = ?1 AND %s BETWEEN ?2 AND ?3 "
	         "ORDER BY %s, name",
	         key, summary_table(monthly), key, key);
	if (query(db, sql, &st, "read the summaries", err, errlen) < 0)
		return -1;
	sqlite3_bind_text(st, 1, dim, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, d0);
	sqlite3_bind_int64(st, 3, d1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((r = fn(arg, (int64_t)sqlite3_column_int64(st, 0),
		            (const char *)sqlite3_column_text(st, 1), sqlite3_column_blob(st, 2),
		            (size_t)sqlite3_column_bytes(st, 2))) != 0)
			break;
	sqlite3_finalize(st);
	if (r < 0)
		return lwm2_errprintf(0, err, errlen, "%s: a summary that cannot be read",
		                      db->path);
	if (!r && rc != SQLITE_DONE)
		return fail(db, "read the summaries", err, errlen);
	return 0;
}

/* The day's (month NULL) or the month's summaries of the dims in v
 * replaced, and the day marked summarized or the month's days and jobs
 * kept, in one transaction. */
static int sq_summary_store(struct lwm2_db *base, int64_t day, const struct lwm2_db_month *month,
                            const struct lwm2_db_summary *v, size_t n, char *err, size_t errlen)
{
	struct lwm2_db_sqlite *db = (struct lwm2_db_sqlite *)base;
	bool monthly = month != NULL;
	const char *key = summary_key(monthly), *table = summary_table(monthly);
	sqlite3_stmt *del = NULL, *ins = NULL, *mark = NULL;
	char del_sql[128], ins_sql[128];

	snprintf(del_sql, sizeof(del_sql), "DELETE FROM %s WHERE dim = ?1 AND %s = ?2", table, key);
	snprintf(ins_sql, sizeof(ins_sql), "INSERT INTO %s VALUES (?1, ?2, ?3, ?4)", table);
	if (lwm2_db_begin(base, err, errlen) < 0)
		return -1;
	if (sqlite3_prepare_v2(db->h, del_sql, -1, &del, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h, ins_sql, -1, &ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db->h,
	                       monthly
	                           ? "INSERT INTO month VALUES (?1, ?2, ?3) ON CONFLICT (month) "
	                             "DO UPDATE SET days = excluded.days, jobs = excluded.jobs"
	                           : "UPDATE day SET summarized = 1 WHERE day = ?1",
	                       -1, &mark, NULL) != SQLITE_OK)
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
	if (monthly) {
		sqlite3_bind_int64(mark, 2, month->days);
		sqlite3_bind_int64(mark, 3, month->jobs);
	}
	if (sqlite3_step(mark) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	sqlite3_finalize(mark);
	return sq_commit(base, err, errlen);
fail:
	fail(db, monthly ? "keep a month's summaries" : "keep a day's summaries", err, errlen);
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	sqlite3_finalize(mark);
	sq_rollback(base);
	return -1;
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
    .months = sq_months,
    .dict_load = sq_dict_load,
    .dict_store = sq_dict_store,
    .select = sq_select,
};
