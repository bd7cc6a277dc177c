/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The central database on a MariaDB or MySQL server (db.h), through
 * MariaDB's client library: a site's own server, the one slurmdbd uses,
 * in a database of lwm2's own.  The tables, their columns and their
 * meaning are SQLite's (db_sqlite.c); what differs is the dialect, kept
 * here:
 *   - ids are BIGINT AUTO_INCREMENT, REAL is DOUBLE, tables are InnoDB;
 *     a job's id stays 8 bytes, as INSERT ... ON DUPLICATE KEY uses up an
 *     id for each job already there (an import again uses up as many as
 *     its log has jobs);
 *   - the bytes of a job (schema 8, 2,005 B a job in the bench's import
 *     of 10,000, 3,158 before; bench/README.md): job_metric, a row per
 *     metric, is most of them, its pages compressed to 8 KiB and its
 *     metric's id 2 bytes (names only inserted when missing, so no id is
 *     used up); job_node clustered by the job, the nodes' index beside;
 *     no job_end index, as job_end_figures (end_time first) serves it;
 *   - text is stored as bytes (VARBINARY, BLOB): exactly what the log
 *     had, compared byte by byte as SQLite compares it, and a job name
 *     that is not UTF-8 cannot fail an import; the columns in a key or an
 *     index are VARBINARY(1024), since a key needs a bounded length;
 *   - a job already there: INSERT ... ON DUPLICATE KEY UPDATE id = id,
 *     not INSERT IGNORE, which would also turn a value that does not fit
 *     into a warning and store it cut;
 *   - `key` is a reserved word (lwm2_meta's column is quoted);
 *   - every value goes through a prepared statement with typed binds:
 *     a double travels as its 8 bytes and comes back the same, so the
 *     answers are the log's to the last digit;
 *   - the rows that only want a job's id (its day's count, line, nodes,
 *     metrics) wait, and go a table at a time, many jobs' rows in one
 *     round trip (an array bind), before the commit (see "batches");
 *   - the schema is made under a named lock (GET_LOCK), as DDL commits
 *     and cannot sit in a transaction.
 * The daily and monthly summaries (db.h) are kept as SQLite keeps them
 * (tables day, summary, month and month_summary).  Opened to update
 * (LWM2_DB_UPDATE), the database must be there, and a user who may only
 * SELECT fails the open (naming the metrics is an INSERT): the caller
 * then opens it to read, and the rows answer.
 *
 * The address:
 *   mysql://[USER[:PASSWORD]@]HOST[:PORT]/DBNAME[?OPTION=VALUE&...]
 *   mariadb://...                     the same
 * with OPTION socket=PATH (HOST localhost: a unix socket; without it the
 * client's default) and password_file=PATH (the password is its first
 * line: a password in the address is seen by ps and in logs).  USER,
 * PASSWORD and values may be %XX-escaped.  The client's option files are
 * read too, groups [client], [client-mariadb] and [lwm2] (~/.my.cnf,
 * /etc/mysql/my.cnf): what the address leaves out (user, password,
 * socket) may come from there.  Opened for writing, a database that does
 * not exist is made (CREATE DATABASE, where the user may).
 *
 * The job table is not partitioned by month, though forget could then
 * drop a month at once (MariaDB 10.11, measured):
 *   - every unique key must hold the partitioning column (error 1503 for
 *     the id's primary key and the job's identity): a month column in
 *     each, so the identity (cluster, job_id, submit, start, month) lets
 *     a job whose end differs between two lines be stored twice;
 *   - job_metric, job_text and job_node have no end time: each would
 *     need the month column too, written by every insert, or a dropped
 *     month leaves their rows behind (partitioned InnoDB tables take no
 *     foreign key, error 1506, so nothing would cascade);
 *   - each month's partition must be split off the catch-all (MAXVALUE)
 *     ahead by ALTER TABLE ... REORGANIZE PARTITION, which commits the
 *     open transaction and holds the table's metadata lock: it must run
 *     apart from the writer's transactions, and a catch-all that holds
 *     rows (an import of old logs, a month not split in time) is copied
 *     meanwhile (200,000 rows: 2.6 s; a site's years: many minutes in
 *     which jobcomp's follow waits);
 *   - partitioning a database there is copies every row of those tables.
 * The index that starts with end_time (job_end_figures) serves forget
 * and a window of time meanwhile, and the monthly summaries (schema 7) a
 * question over whole months; forget removes the jobs 2,000 a
 * transaction (db.c), so a month leaves without a long transaction and
 * the follow writes between its chunks.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_internal.h"
#include "lwm2_render.h"
#include "errmsg.h"
#include "hostlist.h"
#include "numparse.h"

#ifdef HAVE_MARIADB

#include <mysql.h>

/* How long a connection, a read or a write waits for a server that does
 * not answer (a stopped one, a network gone) before it fails.  A server
 * that is down or killed fails at once; this bounds a hung one, long
 * enough for OPTIMIZE TABLE (vacuum) or CHECK TABLE on a large table,
 * which answer only when done.  jobcomp/lwm2 follows off slurmctld's
 * threads, after the line is in the log: a hung server delays the
 * database, never the log. */
#define CONNECT_S 10
#define IO_S      600
/* lwm2_meta's value of a key set, a write that may come before the
 * statements of a writer are prepared (the schema's version). */
#define META_SET_SQL                                                                               \
	"INSERT INTO lwm2_meta VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)"
/* How long a writer waits for another one making the schema. */
#define LOCK_S 30

struct url {
	char user[256], password[512], host[256], db[65], socket[1024];
	unsigned port;
};

/* The rows of the jobs added in a transaction that only want the job's
 * id, waiting to be sent a table at a time (see "batches" below).  Each
 * table's columns are arrays of n rows (cap allocated); text is copied
 * into bytes (offsets, as bytes moves when it grows). */
struct batch {
	size_t jobs;  /* jobs added since the last send */
	size_t size;  /* what the rows take on the wire, about */
	size_t limit; /* the most of size sent at once */
	struct {
		size_t n, cap;
		long long *day, *jobs;
	} day;
	struct {
		size_t n, cap;
		long long *job, *cut, *dict;
		char *dict_null, *grid_null;
		size_t *line_at, *grid_at;
		unsigned long *line_len, *grid_len;
		const char **line, **grid; /* filled when sent */
	} text;
	struct {
		size_t n, cap;
		long long *job;
		size_t *name_at;
		unsigned long *name_len;
		const char **name; /* filled when sent */
	} node;
	struct {
		size_t n, cap;
		long long *job, *metric, *count;
		double *min, *avg, *max;
	} metric;
	char *bytes;
	size_t used, bytes_cap;
};

struct lwm2_db_maria {
	struct lwm2_db base; /* first: the backend's table */
	MYSQL *h;
	char where[600]; /* the address without its password, for messages */
	bool create;     /* LWM2_DB_WRITE (UPDATE: written, never made) */
	int schema;
	MYSQL_STMT *insert, *insert_metric, *insert_day, *insert_text, *insert_known_text,
	    *insert_node, *meta_get, *meta_set;
	int64_t metric_id[LWM2_NMETRICS];
	struct batch batch;
};

static void my_close(struct lwm2_db *base);
static void batch_free(struct batch *bt);
static void batch_limit(struct lwm2_db_maria *db);
static int my_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen);

static int fail(struct lwm2_db_maria *db, const char *what, char *err, size_t errlen)
{
	return lwm2_errprintf(0, err, errlen, "couldn't %s in %s: %s", what, db->where,
	                      mysql_error(db->h));
}

static int stmt_fail(struct lwm2_db_maria *db, MYSQL_STMT *st, const char *what, char *err,
                     size_t errlen)
{
	return lwm2_errprintf(0, err, errlen, "couldn't %s in %s: %s", what, db->where,
	                      st ? mysql_stmt_error(st) : mysql_error(db->h));
}

static int exec(struct lwm2_db_maria *db, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *r;

	if (mysql_query(db->h, sql))
		return lwm2_errprintf(0, err, errlen, "%s: %s", db->where, mysql_error(db->h));
	r = mysql_store_result(db->h); /* a statement with rows: dropped */
	mysql_free_result(r);
	return 0;
}

/* A parameter or a result: a BIGINT in *v. */
static void bind_i64(MYSQL_BIND *b, long long *v)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
}

/* A parameter of n bytes at s, sent as type (MYSQL_TYPE_STRING or _BLOB). */
static void bind_text(MYSQL_BIND *b, enum enum_field_types type, const void *s, size_t n,
                      unsigned long *len)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = type;
	b->buffer = (void *)(uintptr_t)s;
	*len = (unsigned long)n;
	b->length = len;
}

static void bind_bytes(MYSQL_BIND *b, const void *s, size_t n, unsigned long *len)
{
	bind_text(b, MYSQL_TYPE_BLOB, s, n, len);
}

/* st closed where there is one. */
static void stmt_close(MYSQL_STMT *st)
{
	if (st)
		mysql_stmt_close(st);
}

/* Statements, each closed where open. */
static void close_stmts(MYSQL_STMT **const *st, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		stmt_close(*st[i]);
		*st[i] = NULL;
	}
}

/* ------------------------------------------------------------ address */

static int unhex(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

/* s[0..n) with %XX decoded into out; -1 when it does not fit or a % is
 * not followed by two hex digits. */
static int decode(const char *s, size_t n, char *out, size_t len)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			if (i + 2 >= n || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0)
				return -1;
			c = unhex(s[i + 1]) * 16 + unhex(s[i + 2]);
			i += 2;
		}
		if (k + 1 >= len || !c)
			return -1;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return 0;
}

static int read_password(const char *path, char *out, size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f || !fgets(out, (int)len, f)) {
		int e = errno;

		lwm2_errprintf(0, err, errlen, "couldn't read the password file %.400s: %s%s", path,
		               f ? "it is empty" : strerror(e),
		               !f && e == EACCES ? LWM2_DB_NOT_YOURS : "");
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	n = strcspn(out, "\r\n");
	out[n] = '\0';
	return 0;
}

/* An option of the query (socket=, password_file=) into u. */
static int url_option(const char *s, size_t n, struct url *u, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', n);
	char val[1024];
	size_t kl = eq ? (size_t)(eq - s) : n;

	if (!eq || decode(eq + 1, n - kl - 1, val, sizeof(val)) < 0 || !val[0])
		return lwm2_errprintf(0, err, errlen, "the option \"%.*s\" wants a value", (int)kl,
		                      s);
	if (kl == 6 && !strncmp(s, "socket", 6))
		snprintf(u->socket, sizeof(u->socket), "%s", val);
	else if (kl == 13 && !strncmp(s, "password_file", 13))
		return read_password(val, u->password, sizeof(u->password), err, errlen);
	else {
		return lwm2_errprintf(0, err, errlen,
		                      "unknown option \"%.*s\" (socket=, password_file=)", (int)kl,
		                      s);
	}
	return 0;
}

/* mysql://[USER[:PASSWORD]@]HOST[:PORT]/DBNAME[?OPTIONS] into u; the
 * address without its password into where. */
static int parse_url(const char *url, struct url *u, char *where, size_t wlen, char *err,
                     size_t errlen)
{
	const char *p = strstr(url, "://"), *auth, *at, *slash, *q, *colon;

	memset(u, 0, sizeof(*u));
	snprintf(where, wlen, "%s", url);
	if (!p)
		return lwm2_errprintf(0, err, errlen,
		                      "want mysql://[USER[:PASSWORD]@]HOST[:PORT]/DBNAME");
	auth = p + 3;
	slash = strchr(auth, '/');
	if (!slash)
		return lwm2_errprintf(0, err, errlen, "no /DBNAME");
	at = memchr(auth, '@', (size_t)(slash - auth));
	for (const char *a = at; a && a < slash; a = memchr(a + 1, '@', (size_t)(slash - a - 1)))
		at = a; /* the last @: a password may hold one */
	if (at) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		if (decode(auth, (size_t)((colon ? colon : at) - auth), u->user, sizeof(u->user)) <
		        0 ||
		    (colon && decode(colon + 1, (size_t)(at - colon - 1), u->password,
		                     sizeof(u->password)) < 0))
			return lwm2_errprintf(0, err, errlen,
			                      "a user or password too long or badly %%-escaped");
		/* what is said of the database: no password */
		snprintf(where, wlen, "%.*s%.*s@%s", (int)(auth - url), url,
		         (int)((colon ? colon : at) - auth), auth, at + 1);
		auth = at + 1;
	}
	colon = memchr(auth, ':', (size_t)(slash - auth));
	if (decode(auth, (size_t)((colon ? colon : slash) - auth), u->host, sizeof(u->host)) < 0)
		return lwm2_errprintf(0, err, errlen, "a host name too long");
	if (colon) {
		const char *end;
		uint64_t port;

		if (lwm2_parse_u64(colon + 1, &end, 1, 65535, &port) < 0 || end != slash)
			return lwm2_errprintf(0, err, errlen, "the port \"%.*s\" is no port",
			                      (int)(slash - colon - 1), colon + 1);
		u->port = (unsigned)port;
	}
	q = strchr(slash + 1, '?');
	if (decode(slash + 1, q ? (size_t)(q - slash - 1) : strlen(slash + 1), u->db,
	           sizeof(u->db)) < 0 ||
	    !u->db[0] ||
	    strspn(u->db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                  "0123456789_$") != strlen(u->db))
		return lwm2_errprintf(0, err, errlen,
		                      "the database's name wants 1 to 64 of A-Z a-z 0-9 _ $");
	for (q = q ? q + 1 : NULL; q && *q;) {
		size_t n = strcspn(q, "&");

		if (n && url_option(q, n, u, err, errlen) < 0)
			return -1;
		q += n + (q[n] == '&');
	}
	return 0;
}

/* ------------------------------------------------------------ schema */

/* The columns in a key or an index: bounded bytes. */
static bool indexed(const char *name)
{
	return !strcmp(name, "cluster") || !strcmp(name, "user_name") || !strcmp(name, "account") ||
	       !strcmp(name, "app");
}

static const char *sql_type(const struct lwm2_db_column *c)
{
	switch (c->kind) {
	case LWM2_DBK_I64:
	case LWM2_DBK_U32:
		return "BIGINT";
	case LWM2_DBK_BOOL:
		return "TINYINT";
	case LWM2_DBK_REAL:
	case LWM2_DBK_OPT:
		return "DOUBLE";
	default:
		return indexed(c->name) ? "VARBINARY(1024)" : "BLOB";
	}
}

/* Schema 2: each job's log line (db_text.c). */
#define JOB_TEXT_SQL                                                                               \
	"CREATE TABLE IF NOT EXISTS job_text (job BIGINT NOT NULL PRIMARY KEY, cut BIGINT NOT "    \
	"NULL, line LONGBLOB NOT NULL, grid LONGBLOB) ENGINE=InnoDB"

/* Schema 4: the lines' dictionaries (db_text.c), and each line's. */
static const char *const text_dict_sql[] = {
    "CREATE TABLE IF NOT EXISTS text_dict (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, "
    "line LONGBLOB NOT NULL, grid LONGBLOB) ENGINE=InnoDB",
    "ALTER TABLE job_text ADD COLUMN IF NOT EXISTS dict BIGINT",
};

/* Schema 5, as SQLite's: the nodes each job ran on, and the portal's
 * index over the period (its texts are too long for one key of InnoDB:
 * the figures and ids only). */
static const char *const schema5_sql[] = {
    "CREATE TABLE IF NOT EXISTS job_node (node VARBINARY(255) NOT NULL, job BIGINT NOT NULL, "
    "PRIMARY KEY (node, job), KEY job_node_job (job)) ENGINE=InnoDB",
    "ALTER TABLE job ADD KEY IF NOT EXISTS job_end_figures (end_time, core_hours, mpi_pct, "
    "io_pct, threads_per_core, cpi, job_id, start)",
};

/* Schema 7, as SQLite's: the monthly summaries (db.h), and the days and
 * jobs of its month each was made from. */
static const char *const schema7_sql[] = {
    "CREATE TABLE IF NOT EXISTS month (month BIGINT NOT NULL PRIMARY KEY, days BIGINT NOT "
    "NULL, jobs BIGINT NOT NULL) ENGINE=InnoDB",
    "CREATE TABLE IF NOT EXISTS month_summary (month BIGINT NOT NULL, dim VARBINARY(64) NOT "
    "NULL, name VARBINARY(1024) NOT NULL, data LONGBLOB NOT NULL, "
    "PRIMARY KEY (dim, month, name)) ENGINE=InnoDB",
};

/* The most nodes of one job that get a row of job_node. */
#define NODES_MAX 100000

/* Schema 8: a metric's id in 2 bytes, as each job has a row of
 * job_metric per metric (the names are this build's, a few dozen, each
 * named once: see name_metrics). */
#define METRIC_ID_SQL "SMALLINT UNSIGNED"
#define METRIC_ID_MAX "65535"

/* Schema 8: job_node clustered by the job, whose nodes are added
 * together (its pages filled in order), the nodes' index beside: a
 * secondary index holds no transaction id nor rollback pointer, so the
 * index that is filled at random is the smaller. */
#define JOB_NODE_SQL                                                                               \
	"CREATE TABLE IF NOT EXISTS job_node (node VARBINARY(255) NOT NULL, job BIGINT NOT NULL, " \
	"PRIMARY KEY (job, node), KEY job_node_node (node)) ENGINE=InnoDB"

/* Schema 8: job_metric's pages compressed to 8 KiB (zlib), half their
 * size on disk: its rows are most of a job's bytes.  A server that
 * cannot (innodb_file_per_table off, pages over 16 KiB, MariaDB 10.6.0
 * to 10.6.5's innodb_read_only_compressed) keeps them whole. */
#define COMPRESSED_SQL ", ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8"

static bool compression_usable(struct lwm2_db_maria *db)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	bool usable = true;

	/* a server without the variable (MySQL, other MariaDB versions)
	 * writes compressed tables */
	if (mysql_query(db->h, "SELECT @@innodb_read_only_compressed"))
		return true;
	if ((r = mysql_store_result(db->h)) && (row = mysql_fetch_row(r)) && row[0])
		usable = strcmp(row[0], "1") != 0;
	mysql_free_result(r);
	return usable;
}

/* sql (a CREATE or ALTER TABLE) with COMPRESSED_SQL where the server
 * takes it, else as it is. */
static int compressed(struct lwm2_db_maria *db, const char *sql, char *err, size_t errlen)
{
	char with[1024];

	if ((size_t)snprintf(with, sizeof(with), "%s" COMPRESSED_SQL, sql) < sizeof(with) &&
	    compression_usable(db) && !mysql_query(db->h, with)) {
		mysql_free_result(mysql_store_result(db->h));
		return 0;
	}
	return exec(db, sql, err, errlen);
}

/* The schema of this build, as SQLite's: the job's identity is its
 * cluster, id, submit and start times; the indexes serve a window of
 * time, one user's or account's jobs in it, one application's history. */
static int create_schema(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char sql[4096];
	size_t k = 0;

	k += (size_t)snprintf(sql + k, sizeof(sql) - k,
	                      "CREATE TABLE IF NOT EXISTS job (id BIGINT NOT NULL AUTO_INCREMENT "
	                      "PRIMARY KEY");
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, ", %s %s", lwm2_db_columns[i].name,
		                      sql_type(&lwm2_db_columns[i]));
	snprintf(sql + k, sizeof(sql) - k,
	         ", UNIQUE KEY job_identity (cluster, job_id, submit, start)"
	         ", KEY job_user_end (user_name, end_time)"
	         ", KEY job_account_end (account, end_time), KEY job_app_end (app, end_time)"
	         ") ENGINE=InnoDB");
	static const char *const tables[] = {
	    "CREATE TABLE IF NOT EXISTS metric (id " METRIC_ID_SQL " NOT NULL AUTO_INCREMENT "
	    "PRIMARY KEY, name VARBINARY(255) NOT NULL UNIQUE) ENGINE=InnoDB",
	    JOB_NODE_SQL,
	    /* the daily summaries (db.h): the days (UTC) that have jobs,
	       summarized while a day's summaries are those of its jobs */
	    "CREATE TABLE IF NOT EXISTS day (day BIGINT NOT NULL PRIMARY KEY, jobs BIGINT "
	    "NOT NULL, summarized TINYINT NOT NULL) ENGINE=InnoDB",
	    "CREATE TABLE IF NOT EXISTS summary (day BIGINT NOT NULL, dim VARBINARY(64) NOT "
	    "NULL, name VARBINARY(1024) NOT NULL, data LONGBLOB NOT NULL, "
	    "PRIMARY KEY (dim, day, name)) ENGINE=InnoDB",
	    JOB_TEXT_SQL,
	};

	char version[16];

	if (exec(db, sql, err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (exec(db, tables[i], err, errlen) < 0)
			return -1;
	if (compressed(
	        db,
	        "CREATE TABLE IF NOT EXISTS job_metric (job BIGINT NOT NULL, metric " METRIC_ID_SQL
	        " NOT NULL, n BIGINT NOT NULL, min DOUBLE, avg DOUBLE, max DOUBLE, PRIMARY "
	        "KEY (job, metric)) ENGINE=InnoDB",
	        err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(text_dict_sql) / sizeof(text_dict_sql[0]); i++)
		if (exec(db, text_dict_sql[i], err, errlen) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(schema5_sql) / sizeof(schema5_sql[0]); i++)
		if (exec(db, schema5_sql[i], err, errlen) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(schema7_sql) / sizeof(schema7_sql[0]); i++)
		if (exec(db, schema7_sql[i], err, errlen) < 0)
			return -1;
	snprintf(version, sizeof(version), "%d", LWM2_DB_SCHEMA);
	return db->base.be->meta_set(&db->base, "schema_version", version, err, errlen);
}

/* sql once for each metric this build knows (read) or has no id for
 * yet, its name the parameter; read: the id it answers into
 * db->metric_id (-1 where none). */
static int each_metric(struct lwm2_db_maria *db, const char *sql, bool read, const char *what,
                       char *err, size_t errlen)
{
	MYSQL_STMT *st = mysql_stmt_init(db->h);
	MYSQL_BIND p, r;
	unsigned long len;
	long long id;

	if (!st || mysql_stmt_prepare(st, sql, (unsigned long)-1))
		goto fail;
	bind_i64(&r, &id);
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		if (!read && db->metric_id[k] >= 0)
			continue;
		bind_text(&p, MYSQL_TYPE_STRING, lwm2_metric_ids[k], strlen(lwm2_metric_ids[k]),
		          &len);
		if (mysql_stmt_bind_param(st, &p) || mysql_stmt_execute(st) ||
		    (read && mysql_stmt_bind_result(st, &r)))
			goto fail;
		if (read) {
			db->metric_id[k] = mysql_stmt_fetch(st) == 0 ? (int64_t)id : -1;
			mysql_stmt_free_result(st);
		}
	}
	mysql_stmt_close(st);
	return 0;
fail:
	stmt_fail(db, st, what, err, errlen);
	stmt_close(st);
	return -1;
}

/* The ids of the metrics this build knows, as the database names them;
 * -1 for one it has never stored. */
static int metric_ids(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	return each_metric(db, "SELECT id FROM metric WHERE name = ?", true,
	                   "read the metrics' names", err, errlen);
}

/* The metrics this build knows that have no id named: only those, as
 * INSERT IGNORE of a name there is would still use up an id. */
static int name_metrics(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	size_t missing = 0;

	if (metric_ids(db, err, errlen) < 0)
		return -1;
	for (size_t k = 0; k < LWM2_NMETRICS; k++)
		missing += db->metric_id[k] < 0;
	if (!missing)
		return 0;
	if (each_metric(db, "INSERT IGNORE INTO metric (name) VALUES (?)", false,
	                "name the metrics", err, errlen) < 0)
		return -1;
	return metric_ids(db, err, errlen);
}

/* Whether the database has lwm2_meta: 1, 0, or -1 with err.  Asked
 * before CREATE TABLE IF NOT EXISTS, which wants the CREATE privilege
 * even where the table is there. */
static int has_meta(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	MYSQL_RES *r;
	int has;

	if (mysql_query(db->h, "SHOW TABLES LIKE 'lwm2\\_meta'") ||
	    !(r = mysql_store_result(db->h)))
		return fail(db, "read the tables", err, errlen);
	has = mysql_num_rows(r) > 0;
	mysql_free_result(r);
	return has;
}

static int prepare(struct lwm2_db_maria *db, const char *sql, MYSQL_STMT **st, char *err,
                   size_t errlen);

struct node_rows {
	struct lwm2_db_maria *db;
	MYSQL_STMT *st;
	long long job;
};

static int node_row(void *arg, const char *name)
{
	struct node_rows *nr = arg;
	MYSQL_BIND b[2];
	unsigned long len;

	bind_text(&b[0], MYSQL_TYPE_STRING, name, strlen(name), &len);
	bind_i64(&b[1], &nr->job);
	return mysql_stmt_bind_param(nr->st, b) || mysql_stmt_execute(nr->st) ? -2 : 0;
}

/* The rows of job_node of job (its row id) from its host list.  A list
 * that is not one adds what it could; 0, or -1 with err. */
static int add_nodes(struct lwm2_db_maria *db, MYSQL_STMT *st, int64_t job, const char *nodes,
                     char *err, size_t errlen)
{
	struct node_rows nr = {db, st, job};

	if (lwm2_hostlist_each(nodes, NODES_MAX, node_row, &nr) == -2)
		return stmt_fail(db, st, "add a job's nodes", err, errlen);
	return 0;
}

#define INSERT_NODE_SQL "INSERT IGNORE INTO job_node (node, job) VALUES (?, ?)"

/* 5 to 6 adds the columns after LWM2_DB_COLUMNS_V3 (the main processor),
 * NULL in the rows there are until their log is imported again. */
static int migrate_5_to_6(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char alter[1024];
	size_t k = 0;

	k += (size_t)snprintf(alter, sizeof(alter), "ALTER TABLE job");
	for (size_t i = LWM2_DB_COLUMNS_V3; i < lwm2_db_ncolumns; i++)
		k += (size_t)snprintf(alter + k, sizeof(alter) - k,
		                      "%s ADD COLUMN IF NOT EXISTS %s %s",
		                      i > LWM2_DB_COLUMNS_V3 ? "," : "", lwm2_db_columns[i].name,
		                      sql_type(&lwm2_db_columns[i]));
	if (exec(db, alter, err, errlen) < 0)
		return -1;
	return db->base.be->meta_set(&db->base, "schema_version", "6", err, errlen);
}

/* 6 to 7: the monthly summaries' tables, empty: a reader that may
 * write makes them from the days'. */
static int migrate_6_to_7(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(schema7_sql) / sizeof(schema7_sql[0]); i++)
		if (exec(db, schema7_sql[i], err, errlen) < 0)
			return -1;
	return db->base.be->meta_set(&db->base, "schema_version", "7", err, errlen);
}

/* The metrics whose ids do not fit METRIC_ID_SQL (ids used up by the
 * names' inserts of schema 7 and before) given the smallest free ones,
 * a metric at a time (a migration cut short takes up the next). */
static int renumber_metrics(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	for (;;) {
		MYSQL_RES *r;
		MYSQL_ROW row;
		char rows[160], metric[160];
		long long old = 0, free_id = 0;

		if (mysql_query(db->h,
		                "SELECT (SELECT min(id) FROM metric WHERE id > " METRIC_ID_MAX
		                "), (SELECT min(a.id + 1) FROM (SELECT 0 id UNION ALL SELECT "
		                "id FROM metric) a WHERE a.id + 1 NOT IN (SELECT id FROM "
		                "metric))") ||
		    !(r = mysql_store_result(db->h)))
			return fail(db, "read the metrics' ids", err, errlen);
		if ((row = mysql_fetch_row(r)) && row[0] && row[1]) {
			old = strtoll(row[0], NULL, 10);
			free_id = strtoll(row[1], NULL, 10);
		}
		mysql_free_result(r);
		if (!old)
			return 0;
		snprintf(rows, sizeof(rows),
		         "UPDATE job_metric SET metric = %lld WHERE metric = %lld", free_id, old);
		snprintf(metric, sizeof(metric), "UPDATE metric SET id = %lld WHERE id = %lld",
		         free_id, old);
		if (exec(db, "START TRANSACTION", err, errlen) < 0 ||
		    exec(db, rows, err, errlen) < 0 || exec(db, metric, err, errlen) < 0 ||
		    exec(db, "COMMIT", err, errlen) < 0)
			return -1;
	}
}

/* 7 to 8, the rows' bytes (db->schema 8's): job_end dropped, as
 * job_end_figures (end_time first) serves what it served; the metrics'
 * ids in METRIC_ID_SQL and job_metric compressed; job_node clustered by
 * the job.  job_metric and job_node are copied: on a large database it
 * takes minutes, once (each step may be repeated). */
static int migrate_7_to_8(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	if (renumber_metrics(db, err, errlen) < 0 ||
	    exec(db,
	         "ALTER TABLE metric MODIFY id " METRIC_ID_SQL
	         " NOT NULL AUTO_INCREMENT, AUTO_INCREMENT = 1",
	         err, errlen) < 0 ||
	    compressed(db, "ALTER TABLE job_metric MODIFY metric " METRIC_ID_SQL " NOT NULL", err,
	               errlen) < 0 ||
	    exec(db, "ALTER TABLE job DROP KEY IF EXISTS job_end", err, errlen) < 0 ||
	    exec(db,
	         "ALTER TABLE job_node DROP PRIMARY KEY, DROP KEY IF EXISTS job_node_job, ADD "
	         "PRIMARY KEY (job, node), ADD KEY IF NOT EXISTS job_node_node (node)",
	         err, errlen) < 0)
		return -1;
	return db->base.be->meta_set(&db->base, "schema_version", "8", err, errlen);
}

/* 4 to 5: job_node and the portal's index, job_node filled from the
 * host lists of the jobs there are, a few thousand jobs at a time (each
 * step may be repeated: a migration cut short is taken up again). */
static int migrate_4_to_5(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	MYSQL_STMT *ins = NULL;
	long long last = 0;
	int rc = -1;

	for (size_t i = 0; i < sizeof(schema5_sql) / sizeof(schema5_sql[0]); i++)
		if (exec(db, schema5_sql[i], err, errlen) < 0)
			return -1;
	if (prepare(db, INSERT_NODE_SQL, &ins, err, errlen) < 0)
		goto done;
	for (;;) {
		char sql[160];
		MYSQL_RES *res;
		MYSQL_ROW row;
		unsigned long rows = 0;

		snprintf(sql, sizeof(sql),
		         "SELECT id, nodes FROM job WHERE id > %lld AND nodes IS NOT NULL ORDER BY "
		         "id LIMIT 5000",
		         last);
		if (mysql_query(db->h, sql) || !(res = mysql_store_result(db->h))) {
			fail(db, "read the jobs", err, errlen);
			goto done;
		}
		while ((row = mysql_fetch_row(res))) {
			last = strtoll(row[0], NULL, 10);
			rows++;
			if (add_nodes(db, ins, last, row[1], err, errlen) < 0) {
				mysql_free_result(res);
				goto done;
			}
		}
		mysql_free_result(res);
		if (!rows)
			break;
	}
	rc = db->base.be->meta_set(&db->base, "schema_version", "5", err, errlen);
done:
	stmt_close(ins);
	return rc;
}

/* Made where new, refused where newer than this build (read-only then),
 * and (later versions) migrated forward in place. */
static int ready_schema(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char v[32], sql[80];
	int rc = -1, has = has_meta(db, err, errlen);

	if (has < 0)
		return -1;
	if (!db->create) {
		if (!has)
			return lwm2_errprintf(0, err, errlen, "%s is not an lwm2 database",
			                      db->where);
		if (my_meta_get(&db->base, "schema_version", v, sizeof(v), err, errlen) < 0)
			return -1;
		db->schema = lwm2_db_schema_of(v);
		if (!db->schema)
			return lwm2_errprintf(0, err, errlen,
			                      "%s is not an lwm2 database (no schema version)",
			                      db->where);
		if (!db->base.writable)
			return metric_ids(db, err, errlen);
	}
	/* two writers starting at once make it once */
	snprintf(sql, sizeof(sql), "SELECT GET_LOCK(CONCAT('lwm2:', DATABASE()), %d)", LOCK_S);
	if (mysql_query(db->h, sql))
		return fail(db, "lock the schema", err, errlen);
	mysql_free_result(mysql_store_result(db->h));
	if ((!has && exec(db,
	                  "CREATE TABLE IF NOT EXISTS lwm2_meta (`key` VARBINARY(3072) NOT NULL "
	                  "PRIMARY KEY, value BLOB NOT NULL) ENGINE=InnoDB",
	                  err, errlen) < 0) ||
	    my_meta_get(&db->base, "schema_version", v, sizeof(v), err, errlen) < 0)
		goto out;
	db->schema = lwm2_db_schema_of(v);
	if (db->schema > LWM2_DB_SCHEMA) {
		lwm2_db_schema_newer(db->where, db->schema, err, errlen);
		goto out;
	}
	if (!db->schema && db->create) {
		if (create_schema(db, err, errlen) < 0)
			goto out;
		db->schema = LWM2_DB_SCHEMA;
	}
	/* forward in place: 1 to 2 adds the jobs' lines (the rows of version
	 * 1 have none until their log is imported again) */
	if (db->schema == 1) {
		if (exec(db, JOB_TEXT_SQL, err, errlen) < 0 ||
		    db->base.be->meta_set(&db->base, "schema_version", "2", err, errlen) < 0)
			goto out;
		db->schema = 2;
	}
	/* 2 to 3 adds the columns after LWM2_DB_COLUMNS_V2, NULL in the rows
	 * there are */
	if (db->schema == 2) {
		char alter[1024];
		size_t k = 0;

		k += (size_t)snprintf(alter, sizeof(alter), "ALTER TABLE job");
		for (size_t i = LWM2_DB_COLUMNS_V2; i < LWM2_DB_COLUMNS_V3; i++)
			k += (size_t)snprintf(alter + k, sizeof(alter) - k, "%s ADD COLUMN %s %s",
			                      i > LWM2_DB_COLUMNS_V2 ? "," : "",
			                      lwm2_db_columns[i].name,
			                      sql_type(&lwm2_db_columns[i]));
		if (exec(db, alter, err, errlen) < 0 ||
		    db->base.be->meta_set(&db->base, "schema_version", "3", err, errlen) < 0)
			goto out;
		db->schema = 3;
	}
	/* 3 to 4 the lines' dictionaries (the lines stored before keep none) */
	if (db->schema == 3) {
		for (size_t i = 0; i < sizeof(text_dict_sql) / sizeof(text_dict_sql[0]); i++)
			if (exec(db, text_dict_sql[i], err, errlen) < 0)
				goto out;
		if (db->base.be->meta_set(&db->base, "schema_version", "4", err, errlen) < 0)
			goto out;
		db->schema = 4;
	}
	if (db->schema == 4 && migrate_4_to_5(db, err, errlen) < 0)
		goto out;
	if (db->schema <= 5 && migrate_5_to_6(db, err, errlen) < 0)
		goto out;
	if (db->schema <= 6 && migrate_6_to_7(db, err, errlen) < 0)
		goto out;
	if (db->schema <= 7 && migrate_7_to_8(db, err, errlen) < 0)
		goto out;
	db->schema = LWM2_DB_SCHEMA;
	rc = name_metrics(db, err, errlen);
out:
	mysql_query(db->h, "SELECT RELEASE_LOCK(CONCAT('lwm2:', DATABASE()))");
	mysql_free_result(mysql_store_result(db->h));
	return rc;
}

static int prepare(struct lwm2_db_maria *db, const char *sql, MYSQL_STMT **st, char *err,
                   size_t errlen)
{
	if (!(*st = mysql_stmt_init(db->h)))
		return fail(db, "prepare a statement", err, errlen);
	if (mysql_stmt_prepare(*st, sql, (unsigned long)strlen(sql)))
		return stmt_fail(db, *st, "prepare a statement", err, errlen);
	return 0;
}

static int prepare_insert(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char sql[4096];

	/* INSERT IGNORE would store a value that does not fit cut */
	lwm2_db_insert_sql(sql, sizeof(sql), "INSERT INTO", " ON DUPLICATE KEY UPDATE id = id");
	const struct {
		const char *sql;
		MYSQL_STMT **st;
	} all[] = {
	    {sql, &db->insert},
	    {"INSERT INTO job_metric VALUES (?, ?, ?, ?, ?, ?)", &db->insert_metric},
	    {"INSERT INTO day VALUES (?, ?, 0) ON DUPLICATE KEY UPDATE jobs = jobs + "
	     "VALUES(jobs), summarized = 0",
	     &db->insert_day},
	    {"INSERT INTO job_text (job, cut, line, grid, dict) VALUES (?, ?, ?, ?, ?)",
	     &db->insert_text},
	    {"INSERT IGNORE INTO job_text (job, cut, line, grid, dict) SELECT id, ?, ?, ?, ? "
	     "FROM job WHERE cluster <=> ? AND job_id = ? AND submit = ? AND start = ?",
	     &db->insert_known_text},
	    {META_SET_SQL, &db->meta_set},
	    {INSERT_NODE_SQL, &db->insert_node},
	};

	/* one the schema's making prepared already is kept, not leaked */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!*all[i].st && prepare(db, all[i].sql, all[i].st, err, errlen) < 0)
			return -1;
	batch_limit(db);
	return 0;
}

/* ------------------------------------------------------------ connection */

static int connect_db(struct lwm2_db_maria *db, const struct url *u, bool create, char *err,
                      size_t errlen)
{
	unsigned int t;
	my_bool no = 0;

	if (!(db->h = mysql_init(NULL)))
		return lwm2_errprintf(0, err, errlen, "couldn't open the database %s: %s",
		                      db->where, strerror(ENOMEM));
	mysql_options(db->h, MYSQL_READ_DEFAULT_GROUP, "lwm2");
	t = CONNECT_S;
	mysql_options(db->h, MYSQL_OPT_CONNECT_TIMEOUT, &t);
	t = IO_S;
	mysql_options(db->h, MYSQL_OPT_READ_TIMEOUT, &t);
	mysql_options(db->h, MYSQL_OPT_WRITE_TIMEOUT, &t);
	/* a lost connection is an error the caller sees (and reopens), never
	 * a silent new one in the middle of a transaction */
	mysql_options(db->h, MYSQL_OPT_RECONNECT, &no);
	mysql_options(db->h, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (!mysql_real_connect(db->h, u->host[0] ? u->host : NULL, u->user[0] ? u->user : NULL,
	                        u->password[0] ? u->password : NULL, create ? NULL : u->db, u->port,
	                        u->socket[0] ? u->socket : NULL, 0))
		return lwm2_errprintf(0, err, errlen, "couldn't open the database %s: %s",
		                      db->where, mysql_error(db->h));
	if (create) {
		char sql[160];

		snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`", u->db);
		if (mysql_query(db->h, sql) || mysql_select_db(db->h, u->db))
			return lwm2_errprintf(0, err, errlen, "couldn't make the database %s: %s",
			                      db->where, mysql_error(db->h));
	}
	return 0;
}

static struct lwm2_db *my_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = calloc(1, sizeof(*db));
	struct url u;
	char why[512];

	if (!db) {
		lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", url, strerror(ENOMEM));
		return NULL;
	}
	db->base.be = &lwm2_db_mariadb;
	db->base.where = db->where;
	db->base.writable = mode != LWM2_DB_READ;
	db->create = mode == LWM2_DB_WRITE;
	if (parse_url(url, &u, db->where, sizeof(db->where), why, sizeof(why)) < 0) {
		lwm2_errprintf(0, err, errlen, "couldn't open the database %s: %s", db->where, why);
		goto fail;
	}
	if (connect_db(db, &u, false, err, errlen) < 0) {
		/* ER_BAD_DB_ERROR: made when writing */
		if (!db->create || mysql_errno(db->h) != 1049)
			goto fail;
		mysql_close(db->h);
		if (connect_db(db, &u, true, err, errlen) < 0)
			goto fail;
	}
	memset(&u, 0, sizeof(u)); /* the password */
	if (ready_schema(db, err, errlen) < 0)
		goto fail;
	db->base.schema = db->schema;
	if (db->base.writable && prepare_insert(db, err, errlen) < 0)
		goto fail;
	return &db->base;
fail:
	memset(&u, 0, sizeof(u));
	my_close(&db->base);
	return NULL;
}

static void my_close(struct lwm2_db *base)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (!db)
		return;
	MYSQL_STMT **const all[] = {&db->insert,      &db->insert_metric,     &db->insert_day,
	                            &db->insert_text, &db->insert_known_text, &db->insert_node,
	                            &db->meta_get,    &db->meta_set};
	close_stmts(all, sizeof(all) / sizeof(all[0]));
	batch_free(&db->batch);
	if (db->h)
		mysql_close(db->h);
	free(db);
}

static int my_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_BIND p, r;
	unsigned long kl, vl = 0;
	my_bool null = 0;
	int f;

	buf[0] = '\0';
	if (!db->meta_get && prepare(db, "SELECT value FROM lwm2_meta WHERE `key` = ?",
	                             &db->meta_get, err, errlen) < 0)
		return -1;
	bind_text(&p, MYSQL_TYPE_STRING, key, strlen(key), &kl);
	memset(&r, 0, sizeof(r));
	r.buffer_type = MYSQL_TYPE_STRING;
	r.buffer = buf;
	r.buffer_length = len > 0 ? len - 1 : 0;
	r.length = &vl;
	r.is_null = &null;
	if (mysql_stmt_bind_param(db->meta_get, &p) || mysql_stmt_execute(db->meta_get) ||
	    mysql_stmt_bind_result(db->meta_get, &r))
		return stmt_fail(db, db->meta_get, "read lwm2_meta", err, errlen);
	f = mysql_stmt_fetch(db->meta_get);
	if (f == 0 || f == MYSQL_DATA_TRUNCATED)
		buf[vl < len ? vl : len - 1] = '\0';
	else if (f != MYSQL_NO_DATA) {
		stmt_fail(db, db->meta_get, "read lwm2_meta", err, errlen);
		mysql_stmt_free_result(db->meta_get);
		return -1;
	}
	mysql_stmt_free_result(db->meta_get);
	return 0;
}

static int my_meta_set(struct lwm2_db *base, const char *key, const char *value, char *err,
                       size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_BIND p[2];
	unsigned long kl, vl;

	if (!db->meta_set && prepare(db, META_SET_SQL, &db->meta_set, err, errlen) < 0)
		return -1;
	bind_text(&p[0], MYSQL_TYPE_STRING, key, strlen(key), &kl);
	bind_text(&p[1], MYSQL_TYPE_STRING, value, strlen(value), &vl);
	if (mysql_stmt_bind_param(db->meta_set, p) || mysql_stmt_execute(db->meta_set))
		return stmt_fail(db, db->meta_set, "write lwm2_meta", err, errlen);
	return 0;
}

/* ------------------------------------------------------------ batches */

/*
 * A job added costs one round trip for its row (its id, and whether it was
 * there, come back) and one for each of the rows that only want that id:
 * its day's count, its line, its nodes, its metrics.  Those wait here and
 * go a table at a time, each table's rows in one round trip (an array
 * bind), after BATCH_JOBS jobs, before what is waiting would make a packet
 * larger than the limit, and always before the transaction commits or
 * anything reads the tables; a rollback drops them.  Measured, importing
 * 1,000 jobs (2 cores, the server on a unix socket): 6,075 statements
 * executed, 6,125 sendto and 6,950 recvfrom one job at a time, 1,091,
 * 1,158 and 1,515 so; 3,000 jobs: the client's CPU 0.36-0.63 s, the
 * server's 0.59-0.75 s, before, 0.22-0.26 s and 0.27-0.32 s so.
 */
#define BATCH_JOBS 256
/* The most bytes sent at once: the server refuses a packet larger than
 * its max_allowed_packet (4 MiB on older servers), half of which at most. */
#define BATCH_BYTES (8u << 20)
/* What a row's values take on the wire besides its text, about. */
#define ROW_BYTES 64

/* Each of the arrays whose pointers are at cols[i] (elements of sizes[i]
 * bytes) room for one more than n elements; 0, or -1 out of memory (those
 * grown already kept: *cap is the least).  The pointers are copied as
 * bytes: they are of the columns' own types. */
static int grow_columns(void *const *cols, const size_t *sizes, size_t ncols, size_t n, size_t *cap)
{
	size_t want;

	if (n < *cap)
		return 0;
	want = *cap ? *cap * 2 : 64;
	for (size_t i = 0; i < ncols; i++) {
		void *old, *p;

		memcpy(&old, cols[i], sizeof(old));
		if (want > SIZE_MAX / sizes[i] || !(p = realloc(old, want * sizes[i])))
			return -1;
		memcpy(cols[i], &p, sizeof(p));
	}
	*cap = want;
	return 0;
}

static int out_of_memory(char *err, size_t errlen)
{
	return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
}

/* A copy of n bytes at s kept in the batch, at *at; 0, or -1. */
static int keep_bytes(struct batch *bt, const void *s, size_t n, size_t *at)
{
	if (n > bt->bytes_cap - bt->used) {
		size_t want = bt->bytes_cap ? bt->bytes_cap : 1 << 16;
		char *p;

		while (want - bt->used < n) {
			if (want > SIZE_MAX / 2)
				return -1;
			want *= 2;
		}
		if (!(p = realloc(bt->bytes, want)))
			return -1;
		bt->bytes = p;
		bt->bytes_cap = want;
	}
	if (n)
		memcpy(bt->bytes + bt->used, s, n);
	*at = bt->used;
	bt->used += n;
	return 0;
}

static bool batch_waits(const struct batch *bt)
{
	return bt->day.n || bt->text.n || bt->node.n || bt->metric.n;
}

/* What waits dropped, the memory kept for the next. */
static void batch_clear(struct batch *bt)
{
	bt->jobs = bt->size = bt->used = 0;
	bt->day.n = bt->text.n = bt->node.n = bt->metric.n = 0;
}

static void batch_free(struct batch *bt)
{
	void *all[] = {bt->day.day,      bt->day.jobs,       bt->text.job,       bt->text.cut,
	               bt->text.dict,    bt->text.dict_null, bt->text.grid_null, bt->text.line_at,
	               bt->text.grid_at, bt->text.line_len,  bt->text.grid_len,  bt->text.line,
	               bt->text.grid,    bt->node.job,       bt->node.name_at,   bt->node.name_len,
	               bt->node.name,    bt->metric.job,     bt->metric.metric,  bt->metric.count,
	               bt->metric.min,   bt->metric.avg,     bt->metric.max,     bt->bytes};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
	memset(bt, 0, sizeof(*bt));
}

/* rows rows of b's arrays through st in one round trip. */
static int send_rows(struct lwm2_db_maria *db, MYSQL_STMT *st, MYSQL_BIND *b, size_t rows,
                     const char *what, char *err, size_t errlen)
{
	unsigned int n = (unsigned int)rows;

	if (!rows)
		return 0;
	if (mysql_stmt_attr_set(st, STMT_ATTR_ARRAY_SIZE, &n) || mysql_stmt_bind_param(st, b) ||
	    mysql_stmt_execute(st))
		return stmt_fail(db, st, what, err, errlen);
	return 0;
}

/* A column of n-byte values (long long, double) at v. */
static void bind_array(MYSQL_BIND *b, enum enum_field_types type, void *v, char *null)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = type;
	b->buffer = v;
	b->u.indicator = null;
}

/* A column of texts: pointers into the batch's bytes at the offsets at. */
static void bind_texts(MYSQL_BIND *b, enum enum_field_types type, const struct batch *bt,
                       const char **p, const size_t *at, unsigned long *len, char *null,
                       size_t rows)
{
	for (size_t i = 0; i < rows; i++)
		p[i] = bt->bytes && (!null || !null[i]) ? bt->bytes + at[i] : "";
	bind_array(b, type, p, null);
	b->length = len;
}

/* What waits sent, each table's rows in one round trip, and dropped
 * whether they went or not (a failure fails the transaction: the caller
 * rolls it back).  0, or -1 with err. */
static int batch_send(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	struct batch *bt = &db->batch;
	MYSQL_BIND day[2], text[5], node[2], metric[6];
	const struct {
		MYSQL_STMT *st;
		MYSQL_BIND *b;
		size_t rows;
		const char *what;
	} table[] = {
	    {db->insert_day, day, bt->day.n, "count the jobs' days"},
	    {db->insert_text, text, bt->text.n, "add the jobs' lines"},
	    {db->insert_node, node, bt->node.n, "add the jobs' nodes"},
	    {db->insert_metric, metric, bt->metric.n, "add the jobs' metrics"},
	};
	int rc = 0;

	if (!batch_waits(bt))
		return 0;
	bind_array(&day[0], MYSQL_TYPE_LONGLONG, bt->day.day, NULL);
	bind_array(&day[1], MYSQL_TYPE_LONGLONG, bt->day.jobs, NULL);
	bind_array(&text[0], MYSQL_TYPE_LONGLONG, bt->text.job, NULL);
	bind_array(&text[1], MYSQL_TYPE_LONGLONG, bt->text.cut, NULL);
	bind_texts(&text[2], MYSQL_TYPE_BLOB, bt, bt->text.line, bt->text.line_at,
	           bt->text.line_len, NULL, bt->text.n);
	bind_texts(&text[3], MYSQL_TYPE_BLOB, bt, bt->text.grid, bt->text.grid_at,
	           bt->text.grid_len, bt->text.grid_null, bt->text.n);
	bind_array(&text[4], MYSQL_TYPE_LONGLONG, bt->text.dict, bt->text.dict_null);
	bind_texts(&node[0], MYSQL_TYPE_STRING, bt, bt->node.name, bt->node.name_at,
	           bt->node.name_len, NULL, bt->node.n);
	bind_array(&node[1], MYSQL_TYPE_LONGLONG, bt->node.job, NULL);
	bind_array(&metric[0], MYSQL_TYPE_LONGLONG, bt->metric.job, NULL);
	bind_array(&metric[1], MYSQL_TYPE_LONGLONG, bt->metric.metric, NULL);
	bind_array(&metric[2], MYSQL_TYPE_LONGLONG, bt->metric.count, NULL);
	bind_array(&metric[3], MYSQL_TYPE_DOUBLE, bt->metric.min, NULL);
	bind_array(&metric[4], MYSQL_TYPE_DOUBLE, bt->metric.avg, NULL);
	bind_array(&metric[5], MYSQL_TYPE_DOUBLE, bt->metric.max, NULL);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]) && !rc; i++)
		rc = send_rows(db, table[i].st, table[i].b, table[i].rows, table[i].what, err,
		               errlen);
	batch_clear(bt);
	return rc;
}

/* Room for a row of size bytes: what waits sent first where the row
 * would take it past the limit. */
static int batch_room(struct lwm2_db_maria *db, size_t size, char *err, size_t errlen)
{
	struct batch *bt = &db->batch;

	if (bt->size && size > bt->limit - (bt->size < bt->limit ? bt->size : bt->limit) &&
	    batch_send(db, err, errlen) < 0)
		return -1;
	bt->size += size;
	return 0;
}

/* One more job of the day counted (the day's summaries stale). */
static int batch_day(struct lwm2_db_maria *db, long long day, char *err, size_t errlen)
{
	struct batch *bt = &db->batch;
	void *const cols[] = {&bt->day.day, &bt->day.jobs};
	const size_t sizes[] = {sizeof(long long), sizeof(long long)};
	size_t i = bt->day.n;

	while (i > 0 && bt->day.day[i - 1] != day)
		i--;
	if (i > 0) {
		bt->day.jobs[i - 1]++;
		return 0;
	}
	if (batch_room(db, ROW_BYTES, err, errlen) < 0)
		return -1;
	if (grow_columns(cols, sizes, 2, bt->day.n, &bt->day.cap) < 0)
		return out_of_memory(err, errlen);
	bt->day.day[bt->day.n] = day;
	bt->day.jobs[bt->day.n++] = 1;
	return 0;
}

/* The line of the job just added, under its id. */
static int batch_text(struct lwm2_db_maria *db, int64_t id, const struct lwm2_db_text *t, char *err,
                      size_t errlen)
{
	struct batch *bt = &db->batch;
	void *const cols[] = {&bt->text.job,       &bt->text.cut,       &bt->text.dict,
	                      &bt->text.dict_null, &bt->text.grid_null, &bt->text.line_at,
	                      &bt->text.grid_at,   &bt->text.line_len,  &bt->text.grid_len,
	                      &bt->text.line,      &bt->text.grid};
	const size_t sizes[] = {sizeof(long long),    sizeof(long long),     sizeof(long long),
	                        sizeof(char),         sizeof(char),          sizeof(size_t),
	                        sizeof(size_t),       sizeof(unsigned long), sizeof(unsigned long),
	                        sizeof(const char *), sizeof(const char *)};
	size_t k, grid_len = t->grid ? t->grid_len : 0;

	_Static_assert(sizeof(cols) / sizeof(cols[0]) == sizeof(sizes) / sizeof(sizes[0]),
	               "a size for each column");
	if (batch_room(db, ROW_BYTES + t->line_len + grid_len, err, errlen) < 0)
		return -1;
	k = bt->text.n;
	if (grow_columns(cols, sizes, sizeof(cols) / sizeof(cols[0]), k, &bt->text.cap) < 0 ||
	    keep_bytes(bt, t->line, t->line_len, &bt->text.line_at[k]) < 0 ||
	    keep_bytes(bt, t->grid, grid_len, &bt->text.grid_at[k]) < 0)
		return out_of_memory(err, errlen);
	bt->text.job[k] = id;
	bt->text.cut[k] = t->cut;
	bt->text.dict[k] = t->dict;
	bt->text.dict_null[k] = t->dict ? STMT_INDICATOR_NONE : STMT_INDICATOR_NULL;
	bt->text.grid_null[k] = t->grid ? STMT_INDICATOR_NONE : STMT_INDICATOR_NULL;
	bt->text.line_len[k] = (unsigned long)t->line_len;
	bt->text.grid_len[k] = (unsigned long)grid_len;
	bt->text.n++;
	return 0;
}

struct batch_nodes {
	struct lwm2_db_maria *db;
	long long job;
	char *err;
	size_t errlen;
};

/* A node of the job just added (lwm2_hostlist_each's callback). */
static int batch_node(void *arg, const char *name)
{
	struct batch_nodes *nr = arg;
	struct batch *bt = &nr->db->batch;
	void *const cols[] = {&bt->node.job, &bt->node.name_at, &bt->node.name_len, &bt->node.name};
	const size_t sizes[] = {sizeof(long long), sizeof(size_t), sizeof(unsigned long),
	                        sizeof(const char *)};
	size_t len = strlen(name), k;

	if (batch_room(nr->db, ROW_BYTES + len, nr->err, nr->errlen) < 0)
		return -2;
	k = bt->node.n;
	if (grow_columns(cols, sizes, 4, k, &bt->node.cap) < 0 ||
	    keep_bytes(bt, name, len, &bt->node.name_at[k]) < 0) {
		out_of_memory(nr->err, nr->errlen);
		return -2;
	}
	bt->node.job[k] = nr->job;
	bt->node.name_len[k] = (unsigned long)len;
	bt->node.n++;
	return 0;
}

/* The metrics of the job just added. */
static int batch_metrics(struct lwm2_db_maria *db, const struct lwm2_jobrow *j, int64_t id,
                         char *err, size_t errlen)
{
	struct batch *bt = &db->batch;
	void *const cols[] = {&bt->metric.job, &bt->metric.metric, &bt->metric.count,
	                      &bt->metric.min, &bt->metric.avg,    &bt->metric.max};
	const size_t sizes[] = {sizeof(long long), sizeof(long long), sizeof(long long),
	                        sizeof(double),    sizeof(double),    sizeof(double)};

	for (size_t m = 0; m < LWM2_NMETRICS; m++) {
		const struct lwm2_metric_stat *s = &j->scope.stat[m];
		size_t k;

		if (!s->n)
			continue;
		if (batch_room(db, ROW_BYTES, err, errlen) < 0)
			return -1;
		k = bt->metric.n;
		if (grow_columns(cols, sizes, 6, k, &bt->metric.cap) < 0)
			return out_of_memory(err, errlen);
		bt->metric.job[k] = id;
		bt->metric.metric[k] = db->metric_id[m];
		bt->metric.count[k] = (long long)(s->n > INT64_MAX ? INT64_MAX : s->n);
		bt->metric.min[k] = s->min;
		bt->metric.avg[k] = s->avg;
		bt->metric.max[k] = s->max;
		bt->metric.n++;
	}
	return 0;
}

/* The most a batch sends at once: BATCH_BYTES, or half the server's
 * max_allowed_packet where that is less (the default where it cannot be
 * read). */
static void batch_limit(struct lwm2_db_maria *db)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long long packet = 0;

	if (mysql_query(db->h, "SELECT @@max_allowed_packet") == 0 &&
	    (r = mysql_store_result(db->h))) {
		if ((row = mysql_fetch_row(r)) && row[0])
			packet = strtoull(row[0], NULL, 10);
		mysql_free_result(r);
	}
	db->batch.limit = !packet                                         ? (size_t)1 << 20
	                  : packet >= 2 * (unsigned long long)BATCH_BYTES ? BATCH_BYTES
	                                                                  : (size_t)(packet / 2);
}

/* What waits sent first: START TRANSACTION commits the one open. */
static int my_begin(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (batch_send(db, err, errlen) < 0)
		return -1;
	return exec(db, "START TRANSACTION", err, errlen);
}

static int my_commit(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	/* never the jobs' rows without the rest */
	if (batch_send(db, err, errlen) < 0) {
		mysql_rollback(db->h);
		return -1;
	}
	if (mysql_commit(db->h))
		return fail(db, "commit", err, errlen);
	return 0;
}

static void my_rollback(struct lwm2_db *base)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	batch_clear(&db->batch);
	mysql_rollback(db->h); /* a lost connection: the server has dropped it */
}

/* ------------------------------------------------------------ rows */

/* One value of a row to send or receive: its bind and its storage. */
struct cell {
	long long i;
	double d;
	unsigned long len;
	my_bool null, error;
};

static void bind_column(const struct lwm2_db_column *c, const struct lwm2_jobrow *j, MYSQL_BIND *b,
                        struct cell *v, char *rules, size_t rlen)
{
	struct lwm2_db_value x;

	lwm2_db_value_of(j, c, &x, rules, rlen);
	memset(b, 0, sizeof(*b));
	v->null = x.null;
	b->is_null = &v->null;
	switch (lwm2_db_class_of(c->kind)) {
	case LWM2_DBC_REAL:
		v->d = x.d;
		b->buffer_type = MYSQL_TYPE_DOUBLE;
		b->buffer = &v->d;
		break;
	case LWM2_DBC_TEXT:
		b->buffer_type = MYSQL_TYPE_STRING;
		b->buffer = (void *)(uintptr_t)(x.s ? x.s : "");
		v->len = (unsigned long)x.len;
		b->length = &v->len;
		break;
	case LWM2_DBC_INT:
		v->i = x.i;
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = &v->i;
		break;
	}
}

/* The text of a job the database had, under its row (kept where it had
 * one); the lines waiting are sent first: the job may be one of theirs. */
static int insert_known_text(struct lwm2_db_maria *db, const struct lwm2_jobrow *j,
                             const struct lwm2_db_text *t, char *err, size_t errlen)
{
	MYSQL_STMT *st = db->insert_known_text;
	MYSQL_BIND b[8];
	long long key[3] = {j->job_id, j->submit, j->start}, cut = t->cut, dict = t->dict;
	unsigned long ll, gl, cl;
	my_bool no_grid = !t->grid, no_cluster = !j->cluster, no_dict = !t->dict;
	int k = 0;

	if (db->batch.text.n && batch_send(db, err, errlen) < 0)
		return -1;
	bind_i64(&b[k++], &cut);
	bind_bytes(&b[k++], t->line, t->line_len, &ll);
	bind_bytes(&b[k], t->grid, t->grid_len, &gl);
	b[k++].is_null = &no_grid;
	bind_i64(&b[k], &dict);
	b[k++].is_null = &no_dict;
	bind_text(&b[k], MYSQL_TYPE_STRING, j->cluster ? j->cluster : "",
	          j->cluster ? strlen(j->cluster) : 0, &cl);
	b[k++].is_null = &no_cluster;
	for (int i = 0; i < 3; i++)
		bind_i64(&b[k++], &key[i]);
	if (mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st))
		return stmt_fail(db, st, "add a job's line", err, errlen);
	return 0;
}

/* The rows of a job added that want its id wait in the batch. */
static int batch_job(struct lwm2_db_maria *db, const struct lwm2_jobrow *j,
                     const struct lwm2_db_text *text, int64_t id, char *err, size_t errlen)
{
	struct batch_nodes nr = {db, id, err, errlen};

	if (j->end > 0 && batch_day(db, j->end / LWM2_DB_DAY_S, err, errlen) < 0)
		return -1;
	if (text && text->line && batch_text(db, id, text, err, errlen) < 0)
		return -1;
	if (j->nodes && lwm2_hostlist_each(j->nodes, NODES_MAX, batch_node, &nr) == -2)
		return -1;
	if (j->digest && batch_metrics(db, j, id, err, errlen) < 0)
		return -1;
	if (++db->batch.jobs >= BATCH_JOBS)
		return batch_send(db, err, errlen);
	return 0;
}

static int my_insert(struct lwm2_db *base, const struct lwm2_jobrow *j,
                     const struct lwm2_db_text *text, bool *added, char *err, size_t errlen)
{
	int64_t id;

	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_BIND b[64];
	struct cell v[64];
	char rules[2048];

	_Static_assert(sizeof(b) / sizeof(b[0]) >= 40, "room for the job table's columns");
	if (lwm2_db_ncolumns > sizeof(b) / sizeof(b[0]))
		return lwm2_errprintf(0, err, errlen, "too many columns");
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		bind_column(&lwm2_db_columns[i], j, &b[i], &v[i], rules, sizeof(rules));
	if (mysql_stmt_bind_param(db->insert, b) || mysql_stmt_execute(db->insert))
		return stmt_fail(db, db->insert, "add a job", err, errlen);
	*added = mysql_stmt_affected_rows(db->insert) == 1;
	id = (int64_t)mysql_stmt_insert_id(db->insert);
	if (*added)
		return batch_job(db, j, text, id, err, errlen);
	if (text && text->line)
		return insert_known_text(db, j, text, err, errlen);
	return 0;
}

/* ------------------------------------------------------------ reading */

/* The result of the job table's read: a bind and storage per column, the
 * metric's four after them; text into buffers that grow to the longest. */
struct reader {
	size_t n;
	MYSQL_BIND b[68];
	struct cell v[68];
	char *text[68];
	size_t cap[68];
};

/* n columns of the classes cls (at most 68). */
static int reader_bind_classes(struct reader *r, const enum lwm2_db_class *cls, size_t n)
{
	r->n = n;
	memset(r->b, 0, sizeof(r->b));
	for (size_t i = 0; i < r->n; i++) {
		MYSQL_BIND *b = &r->b[i];

		b->is_null = &r->v[i].null;
		b->error = &r->v[i].error;
		b->length = &r->v[i].len;
		if (cls[i] == LWM2_DBC_TEXT) {
			if (!r->text[i] && !(r->text[i] = malloc(r->cap[i] = 256)))
				return -1;
			b->buffer_type = MYSQL_TYPE_STRING;
			b->buffer = r->text[i];
			b->buffer_length = r->cap[i] - 1;
		} else if (cls[i] == LWM2_DBC_REAL) {
			b->buffer_type = MYSQL_TYPE_DOUBLE;
			b->buffer = &r->v[i].d;
		} else {
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &r->v[i].i;
		}
	}
	return 0;
}

/* The job table's ncol columns, and the metric's four after them. */
static int reader_bind(struct reader *r, size_t ncol, bool metric)
{
	enum lwm2_db_class cls[sizeof(r->b) / sizeof(r->b[0])];
	size_t n = ncol + (metric ? 4 : 0);

	for (size_t i = 0; i < n && i < sizeof(cls) / sizeof(cls[0]); i++)
		cls[i] = lwm2_db_class_of(i < ncol    ? lwm2_db_columns[i].kind
		                          : i == ncol ? LWM2_DBK_I64
		                                      : LWM2_DBK_REAL);
	return reader_bind_classes(r, cls, n);
}

/* A row fetched with some text longer than its buffer: those columns
 * again, into buffers made large enough, kept for the next rows. */
static int reader_refetch(struct reader *r, MYSQL_STMT *st)
{
	for (size_t i = 0; i < r->n; i++) {
		char *t;

		if ((r->b[i].buffer_type != MYSQL_TYPE_STRING &&
		     r->b[i].buffer_type != MYSQL_TYPE_BLOB) ||
		    r->v[i].len < r->cap[i])
			continue;
		if (!(t = realloc(r->text[i], r->v[i].len + 1)))
			return -1;
		r->text[i] = t;
		r->cap[i] = r->v[i].len + 1;
		r->b[i].buffer = t;
		r->b[i].buffer_length = r->cap[i] - 1;
		if (mysql_stmt_fetch_column(st, &r->b[i], (unsigned)i, 0))
			return -1;
	}
	return mysql_stmt_bind_result(st, r->b) ? -1 : 0;
}

/* r's buffers and r (NULL: none). */
static void reader_free(struct reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < sizeof(r->text) / sizeof(r->text[0]); i++)
		free(r->text[i]);
	free(r);
}

/* A fetched row back into j (the metric's figures added after). */
static void row_of(struct reader *r, struct lwm2_jobrow *j)
{
	memset(j, 0, sizeof(*j));
	for (size_t i = 0; i < lwm2_db_ncolumns; i++) {
		const struct lwm2_db_column *c = &lwm2_db_columns[i];
		const struct cell *v = &r->v[i];
		char *s = r->text[i];

		if (s)
			s[v->null ? 0 : v->len < r->cap[i] ? v->len : r->cap[i] - 1] = '\0';
		lwm2_db_value_set(
		    j, c, &(struct lwm2_db_value){.null = v->null, .i = v->i, .d = v->d, .s = s});
	}
}

/* A selection's parameters, in the order of lwm2_db_jobs_sql and
 * lwm2_db_lines_sql (with_ids: its job ids last), with their storage. */
struct select_params {
	MYSQL_BIND *b;
	unsigned long *len;
	long long *num;
};

static void select_params_free(struct select_params *sp)
{
	free(sp->b);
	free(sp->len);
	free(sp->num);
	memset(sp, 0, sizeof(*sp));
}

/* 0, or -1 out of memory. */
static int select_params(const struct lwm2_db_select *sel, size_t nusers, bool with_ids,
                         struct select_params *sp)
{
	size_t names = 2 + nusers + sel->naccounts, n = names + (with_ids ? sel->njob_ids : 0);

	sp->b = calloc(n, sizeof(*sp->b));
	sp->len = calloc(n, sizeof(*sp->len));
	sp->num = calloc(n, sizeof(*sp->num));
	if (!sp->b || !sp->len || !sp->num) {
		select_params_free(sp);
		return -1;
	}
	sp->num[0] = sel->start ? sel->start : INT64_MIN;
	sp->num[1] = sel->end ? sel->end : INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const char *s = i < 2 || i >= names ? NULL
		                : i < 2 + nusers    ? sel->users[i - 2]
		                                    : sel->accounts[i - 2 - nusers];

		if (!s) {
			if (i >= names)
				sp->num[i] = sel->job_ids[i - names];
			sp->b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			sp->b[i].buffer = &sp->num[i];
			continue;
		}
		sp->b[i].buffer_type = MYSQL_TYPE_STRING;
		sp->b[i].buffer = (void *)(uintptr_t)s;
		sp->len[i] = (unsigned long)strlen(s);
		sp->b[i].length = &sp->len[i];
	}
	return 0;
}

/* st run with its parameters p, each row fetched into r (its text
 * buffers grown to fit) to row (0: go on; else its value is returned).
 * 0, or -1 with err. */
static int fetch_rows(struct lwm2_db_maria *db, MYSQL_STMT *st, MYSQL_BIND *p, struct reader *r,
                      int (*row)(void *arg, struct reader *r), void *arg, char *err, size_t errlen)
{
	int rc, f;

	if (mysql_stmt_bind_param(st, p) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r->b))
		return stmt_fail(db, st, "read the jobs", err, errlen);
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		if (f == MYSQL_DATA_TRUNCATED && reader_refetch(r, st) < 0)
			return stmt_fail(db, st, "read the jobs", err, errlen);
		if ((rc = row(arg, r)) != 0)
			return rc;
	}
	return f == MYSQL_NO_DATA ? 0 : stmt_fail(db, st, "read the jobs", err, errlen);
}

static int jobs_row(void *arg, struct reader *r)
{
	struct lwm2_db_jobs_read *jr = arg;
	size_t ncol = lwm2_db_ncolumns;
	int rc;

	row_of(r, jr->j);
	if (jr->sel->metric >= 0 && !r->v[ncol].null) {
		struct lwm2_metric_stat *m = &jr->j->scope.stat[jr->sel->metric];

		m->n = (uint64_t)r->v[ncol].i;
		m->min = r->v[ncol + 1].d;
		m->avg = r->v[ncol + 2].d;
		m->max = r->v[ncol + 3].d;
	}
	if ((rc = jr->fn(jr->arg, jr->j)) < 0)
		lwm2_errprintf(0, jr->err, jr->errlen, "%s", strerror(ENOMEM));
	return rc;
}

static int my_jobs(struct lwm2_db *base, const struct lwm2_db_select *sel,
                   int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                   size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	size_t nusers;
	char *sql = lwm2_db_jobs_sql(sel, sel->metric >= 0 ? db->metric_id[sel->metric] : -1,
	                             db->schema, &nusers);
	size_t ncol = lwm2_db_ncolumns;
	struct lwm2_db_jobs_read jr = {sel, malloc(sizeof(*jr.j)), fn, arg, err, errlen};
	struct select_params sp = {0};
	struct reader *r = calloc(1, sizeof(*r));
	MYSQL_STMT *st = NULL;
	int rc = -1;

	if (batch_send(db, err, errlen) < 0)
		goto done;
	if (!sql || !jr.j || !r || select_params(sel, nusers, false, &sp) < 0 ||
	    ncol + 4 > sizeof(r->b) / sizeof(r->b[0]) ||
	    reader_bind(r, ncol, sel->metric >= 0) < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		goto done;
	}
	if (prepare(db, sql, &st, err, errlen) < 0)
		goto done;
	rc = fetch_rows(db, st, sp.b, r, jobs_row, &jr, err, errlen);
done:
	stmt_close(st);
	reader_free(r);
	free(sql);
	free(jr.j);
	select_params_free(&sp);
	return rc;
}

static int my_texts(struct lwm2_db *base, const struct lwm2_db_select *sel, bool want_grid,
                    int (*fn)(void *arg, const struct lwm2_db_text *t), void *arg, char *err,
                    size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	size_t nusers;
	char *sql = lwm2_db_lines_sql(sel, want_grid, db->schema, &nusers);
	struct select_params sp = {0};
	MYSQL_BIND r[5];
	unsigned long len[5] = {0};
	long long id = 0, cut = 0, dict = 0;
	my_bool null[5] = {0}, error[5] = {0};
	char *buf[2] = {NULL, NULL};
	size_t cap[2] = {0, 0};
	MYSQL_STMT *st = NULL;
	int rc = 0, f;

	if (batch_send(db, err, errlen) < 0) {
		rc = -1;
		goto done;
	}
	if (!sql || select_params(sel, nusers, true, &sp) < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		rc = -1;
		goto done;
	}
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 5; i++) {
		r[i].is_null = &null[i];
		r[i].error = &error[i];
		r[i].length = &len[i];
		r[i].buffer_type = i < 2 || i == 4 ? MYSQL_TYPE_LONGLONG : MYSQL_TYPE_BLOB;
	}
	r[0].buffer = &id;
	r[1].buffer = &cut;
	r[4].buffer = &dict;
	if (prepare(db, sql, &st, err, errlen) < 0) {
		rc = -1;
		goto done;
	}
	if (mysql_stmt_bind_param(st, sp.b) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r)) {
		rc = stmt_fail(db, st, "read the jobs' lines", err, errlen);
		goto done;
	}
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		/* the blobs: each fetched into a buffer of its length */
		for (int i = 0; i < 2; i++) {
			MYSQL_BIND *b = &r[2 + i];

			if (null[2 + i] || !len[2 + i])
				continue;
			if (len[2 + i] > cap[i]) {
				char *t = realloc(buf[i], len[2 + i]);

				if (!t) {
					lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
					rc = -1;
					goto done;
				}
				buf[i] = t;
				cap[i] = len[2 + i];
			}
			b->buffer = buf[i];
			b->buffer_length = (unsigned long)cap[i];
			if (mysql_stmt_fetch_column(st, b, (unsigned)(2 + i), 0)) {
				rc = stmt_fail(db, st, "read the jobs' lines", err, errlen);
				goto done;
			}
		}
		struct lwm2_db_text t = {
		    .job = id,
		    .cut = null[1] ? 0 : cut,
		    .line = null[2]  ? NULL
		            : buf[0] ? buf[0]
		                     : "",
		    .line_len = null[2] ? 0 : len[2],
		    .grid = null[3] ? NULL : buf[1],
		    .grid_len = null[3] ? 0 : len[3],
		    .dict = null[4] ? 0 : dict,
		};

		if ((rc = fn(arg, &t)) != 0)
			break;
	}
	if (rc == 0 && f != MYSQL_NO_DATA)
		rc = stmt_fail(db, st, "read the jobs' lines", err, errlen);
done:
	stmt_close(st);
	free(buf[0]);
	free(buf[1]);
	free(sql);
	select_params_free(&sp);
	return rc;
}

/* InnoDB counts a lock wait in whole seconds, 1 at least. */
static void my_patience(struct lwm2_db *base, int ms)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	char sql[64];

	snprintf(sql, sizeof(sql), "SET SESSION innodb_lock_wait_timeout = %d",
	         ms < 1000 ? 1 : (ms + 999) / 1000);
	if (mysql_query(db->h, sql) == 0)
		mysql_free_result(mysql_store_result(db->h));
}

/* ER_LOCK_WAIT_TIMEOUT, ER_LOCK_DEADLOCK */
static bool my_busy(struct lwm2_db *base)
{
	unsigned int e = mysql_errno(((struct lwm2_db_maria *)base)->h);

	return e == 1205 || e == 1213;
}

/* ------------------------------------------------------------ upkeep */

static long long num(const char *s)
{
	return s ? strtoll(s, NULL, 10) : 0;
}

static int my_check(struct lwm2_db *base, FILE *out, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_RES *res;
	MYSQL_ROW row;
	int bad = 0;

	if (batch_send(db, err, errlen) < 0)
		return -1;
	/* rows of Table, Op, Msg_type, Msg_text: all well is "status OK" */
	if (mysql_query(db->h, "CHECK TABLE lwm2_meta, job, metric, job_metric") ||
	    !(res = mysql_store_result(db->h)))
		return fail(db, "check", err, errlen);
	while ((row = mysql_fetch_row(res)))
		if (row[2] && row[3] && (strcmp(row[2], "status") || strcmp(row[3], "OK"))) {
			fprintf(out, "integrity: %s: %s: %s\n", row[0] ? row[0] : "?", row[2],
			        row[3]);
			bad |= strcmp(row[2], "error") == 0 || strcmp(row[2], "status") == 0;
		}
	mysql_free_result(res);
	lwm2_db_check_head(out, bad, db->schema);
	if (mysql_query(db->h, "SELECT count(*), min(end_time), max(end_time), sum(has_digest) "
	                       "FROM job") ||
	    !(res = mysql_store_result(db->h)))
		return fail(db, "count the jobs", err, errlen);
	if ((row = mysql_fetch_row(res)))
		lwm2_db_check_jobs(out, num(row[0]), num(row[3]), num(row[1]), num(row[2]));
	mysql_free_result(res);
	return bad;
}

static int my_forget(struct lwm2_db *base, int64_t before, unsigned long *removed, char *err,
                     size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	static const char *const sql[] = {
	    "DELETE m FROM job_metric m JOIN job ON job.id = m.job WHERE job.end_time < ?",
	    "DELETE t FROM job_text t JOIN job ON job.id = t.job WHERE job.end_time < ?",
	    "DELETE n FROM job_node n JOIN job ON job.id = n.job WHERE job.end_time < ?",
	    "DELETE FROM job WHERE end_time < ?",
	};
	long long t = before;
	MYSQL_BIND p;
	MYSQL_STMT *st = NULL;

	*removed = 0;
	if (lwm2_db_begin(&db->base, err, errlen) < 0)
		return -1;
	bind_i64(&p, &t);
	for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]); i++) {
		if (prepare(db, sql[i], &st, err, errlen) < 0)
			goto fail;
		if (mysql_stmt_bind_param(st, &p) || mysql_stmt_execute(st)) {
			stmt_fail(db, st, "remove old jobs", err, errlen);
			goto fail;
		}
		if (i == sizeof(sql) / sizeof(sql[0]) - 1)
			*removed = (unsigned long)mysql_stmt_affected_rows(st);
		mysql_stmt_close(st);
		st = NULL;
	}
	return my_commit(&db->base, err, errlen);
fail:
	stmt_close(st);
	my_rollback(&db->base);
	*removed = 0;
	return -1;
}

/* InnoDB rebuilds the tables (OPTIMIZE: "doing recreate + analyze"). */
static int my_vacuum(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (batch_send(db, err, errlen) < 0)
		return -1;
	return exec(db, "OPTIMIZE TABLE job, job_metric, metric, lwm2_meta", err, errlen);
}

/* ------------------------------------------------------------ summaries */

/* A statement on the days, executed with p, its results bound to r. */
static MYSQL_STMT *run_days(struct lwm2_db_maria *db, const char *sql, MYSQL_BIND *p,
                            struct reader *r, const char *what, char *err, size_t errlen)
{
	MYSQL_STMT *st = NULL;

	if (prepare(db, sql, &st, err, errlen) < 0) {
		stmt_close(st);
		return NULL;
	}
	if (mysql_stmt_bind_param(st, p) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r->b)) {
		stmt_fail(db, st, what, err, errlen);
		mysql_stmt_close(st);
		return NULL;
	}
	return st;
}

/* r's binds: BIGINTs, then bytes (growing as read) from column first. */
static int reader_days(struct reader *r, size_t n, size_t first)
{
	memset(r, 0, sizeof(*r));
	r->n = n;
	for (size_t i = 0; i < n; i++) {
		MYSQL_BIND *b = &r->b[i];

		b->is_null = &r->v[i].null;
		b->error = &r->v[i].error;
		b->length = &r->v[i].len;
		if (i < first) {
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &r->v[i].i;
			continue;
		}
		if (!(r->text[i] = malloc(r->cap[i] = 256)))
			return -1;
		b->buffer_type = MYSQL_TYPE_BLOB;
		b->buffer = r->text[i];
		b->buffer_length = r->cap[i] - 1;
	}
	return 0;
}

/* Each row of sql (three BIGINTs) over [lo, hi] to add (0: go on, -1:
 * out of memory).  0, or -1 with err. */
static int read_rows3(struct lwm2_db_maria *db, const char *sql, int64_t lo, int64_t hi,
                      int (*add)(void *arg, const long long v[3]), void *arg, const char *what,
                      char *err, size_t errlen)
{
	long long lim[2] = {lo, hi}, v[3];
	MYSQL_BIND p[2];
	struct reader *r = malloc(sizeof(*r));
	MYSQL_STMT *st = NULL;
	int f, rc = -1;

	bind_i64(&p[0], &lim[0]);
	bind_i64(&p[1], &lim[1]);
	if (batch_send(db, err, errlen) < 0)
		goto done;
	if (!r || reader_days(r, 3, 3) < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		goto done;
	}
	if (!(st = run_days(db, sql, p, r, what, err, errlen)))
		goto done;
	while ((f = mysql_stmt_fetch(st)) == 0) {
		for (int i = 0; i < 3; i++)
			v[i] = r->v[i].i;
		if (add(arg, v) < 0) {
			lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
			goto done;
		}
	}
	if (f != MYSQL_NO_DATA)
		stmt_fail(db, st, what, err, errlen);
	else
		rc = 0;
done:
	stmt_close(st);
	reader_free(r);
	return rc;
}

struct days_out {
	struct lwm2_db_day **out;
	struct lwm2_db_month **months;
	size_t *n, cap;
};

static int add_day(void *arg, const long long v[3])
{
	struct days_out *o = arg;
	struct lwm2_db_day d = {.day = v[0], .jobs = v[1], .summarized = v[2] != 0};

	return lwm2_db_day_add(o->out, o->n, &o->cap, &d);
}

static int add_month(void *arg, const long long v[3])
{
	struct days_out *o = arg;
	struct lwm2_db_month m = {.month = v[0], .days = v[1], .jobs = v[2]};

	return lwm2_db_month_add(o->months, o->n, &o->cap, &m);
}

static int my_days(struct lwm2_db *base, int64_t d0, int64_t d1, struct lwm2_db_day **out,
                   size_t *n, char *err, size_t errlen)
{
	struct days_out o = {.out = out, .n = n};

	*out = NULL;
	*n = 0;
	if (read_rows3(
	        (struct lwm2_db_maria *)base,
	        "SELECT day, jobs, summarized FROM day WHERE day BETWEEN ? AND ? ORDER BY day", d0,
	        d1, add_day, &o, "read the days", err, errlen) == 0)
		return 0;
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}

static int my_months(struct lwm2_db *base, int64_t m0, int64_t m1, struct lwm2_db_month **out,
                     size_t *n, char *err, size_t errlen)
{
	struct days_out o = {.months = out, .n = n};

	*out = NULL;
	*n = 0;
	if (read_rows3((struct lwm2_db_maria *)base,
	               "SELECT month, days, jobs FROM month WHERE month BETWEEN ? AND ? "
	               "ORDER BY month",
	               m0, m1, add_month, &o, "read the months", err, errlen) == 0)
		return 0;
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
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
my_summary_read(struct lwm2_db *base, bool monthly, const char *dim, int64_t d0, int64_t d1,
                int (*fn)(void *arg, int64_t day, const char *name, const void *data, size_t len),
                void *arg, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	const char *key = summary_key(monthly);
	long long lim[2] = {d0, d1};
	unsigned long dl;
	MYSQL_BIND p[3];
	struct reader *r = malloc(sizeof(*r));
	MYSQL_STMT *st = NULL;
	char sql[256];
	int f = 0, rc = 0;

	snprintf(sql, sizeof(sql),
	         "SELECT %s, name, data FROM %s WHERE dim = ? AND %s BETWEEN ? AND ? "
	         "ORDER BY %s, name",
	         key, summary_table(monthly), key, key);

	bind_bytes(&p[0], dim, strlen(dim), &dl);
	bind_i64(&p[1], &lim[0]);
	bind_i64(&p[2], &lim[1]);
	if (batch_send(db, err, errlen) < 0) {
		rc = -1;
		goto done;
	}
	if (!r || reader_days(r, 3, 1) < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		rc = -1;
		goto done;
	}
	st = run_days(db, sql, p, r, "read the summaries", err, errlen);
	if (!st) {
		rc = -1;
		goto done;
	}
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		if (f == MYSQL_DATA_TRUNCATED && reader_refetch(r, st) < 0)
			break;
		r->text[1][r->v[1].len < r->cap[1] ? r->v[1].len : r->cap[1] - 1] = '\0';
		if ((rc = fn(arg, (int64_t)r->v[0].i, r->text[1], r->text[2], r->v[2].len)) != 0)
			break;
	}
	if (rc < 0)
		lwm2_errprintf(0, err, errlen, "%s: a summary that cannot be read", db->where);
	else if (!rc && f != MYSQL_NO_DATA)
		rc = stmt_fail(db, st, "read the summaries", err, errlen);
	else
		rc = 0;
done:
	stmt_close(st);
	reader_free(r);
	return rc;
}

/* A copy of a blob read into r's column i. */
static void *blob_dup(const struct reader *r, size_t i, size_t *len)
{
	void *c;

	*len = r->v[i].len;
	if (!(c = malloc(*len ? *len : 1)))
		return NULL;
	return memcpy(c, r->text[i], *len);
}

static int my_dict_load(struct lwm2_db *base, struct lwm2_db_dict *d, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	long long id = d->id;
	MYSQL_BIND p[1];
	struct reader *r;
	MYSQL_STMT *st = NULL;
	int f, rc = -1;

	if (db->schema < 4)
		return 1;
	if (!(r = malloc(sizeof(*r))) || reader_days(r, 3, 1) < 0) {
		reader_free(r);
		return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
	}
	bind_i64(&p[0], &id);
	st = run_days(db, "SELECT id, line, grid FROM text_dict WHERE id > ? ORDER BY id LIMIT 1",
	              p, r, "read the lines' dictionary", err, errlen);
	if (!st)
		goto done;
	f = mysql_stmt_fetch(st);
	if (f == MYSQL_DATA_TRUNCATED && reader_refetch(r, st) < 0) {
		stmt_fail(db, st, "read the lines' dictionary", err, errlen);
		goto done;
	}
	if (f == MYSQL_NO_DATA) {
		rc = 1;
		goto done;
	}
	if (f != 0 && f != MYSQL_DATA_TRUNCATED) {
		stmt_fail(db, st, "read the lines' dictionary", err, errlen);
		goto done;
	}
	d->id = (int64_t)r->v[0].i;
	d->line = blob_dup(r, 1, &d->line_len);
	d->grid = r->v[2].null ? NULL : blob_dup(r, 2, &d->grid_len);
	if (!d->line || (!r->v[2].null && !d->grid)) {
		lwm2_db_dict_free(d);
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		goto done;
	}
	rc = 0;
done:
	stmt_close(st);
	reader_free(r);
	return rc;
}

static int my_dict_store(struct lwm2_db *base, struct lwm2_db_dict *d, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_STMT *st = NULL;
	MYSQL_BIND p[2];
	unsigned long l[2];
	my_bool no_grid = !d->grid;
	int rc = 0;

	if (prepare(db, "INSERT INTO text_dict (line, grid) VALUES (?, ?)", &st, err, errlen) < 0) {
		stmt_close(st);
		return -1;
	}
	bind_bytes(&p[0], d->line, d->line_len, &l[0]);
	bind_bytes(&p[1], d->grid, d->grid_len, &l[1]);
	p[1].is_null = &no_grid;
	if (mysql_stmt_bind_param(st, p) || mysql_stmt_execute(st))
		rc = stmt_fail(db, st, "keep the lines' dictionary", err, errlen);
	else
		d->id = (int64_t)mysql_stmt_insert_id(st);
	stmt_close(st);
	return rc;
}

/* The day's (month NULL) or the month's summaries of the dims in v
 * replaced, and the day marked summarized or the month's days and jobs
 * kept, in one transaction. */
static int my_summary_store(struct lwm2_db *base, int64_t day, const struct lwm2_db_month *month,
                            const struct lwm2_db_summary *v, size_t n, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	bool monthly = month != NULL;
	const char *key = summary_key(monthly), *table = summary_table(monthly),
	           *what = monthly ? "keep a month's summaries" : "keep a day's summaries";
	MYSQL_STMT *del = NULL, *ins = NULL, *mark = NULL;
	MYSQL_STMT **const all[] = {&del, &ins, &mark};
	MYSQL_BIND p[4];
	long long d = day, days = monthly ? month->days : 0, jobs = monthly ? month->jobs : 0;
	unsigned long l[4];
	char del_sql[128], ins_sql[128];

	snprintf(del_sql, sizeof(del_sql), "DELETE FROM %s WHERE dim = ? AND %s = ?", table, key);
	snprintf(ins_sql, sizeof(ins_sql), "INSERT INTO %s VALUES (?, ?, ?, ?)", table);
	if (lwm2_db_begin(base, err, errlen) < 0)
		return -1;
	if (prepare(db, del_sql, &del, err, errlen) < 0 ||
	    prepare(db, ins_sql, &ins, err, errlen) < 0 ||
	    prepare(db,
	            monthly ? "INSERT INTO month VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE "
	                      "days = VALUES(days), jobs = VALUES(jobs)"
	                    : "UPDATE day SET summarized = 1 WHERE day = ?",
	            &mark, err, errlen) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(v[i].dim, v[i - 1].dim))
			continue;
		bind_bytes(&p[0], v[i].dim, strlen(v[i].dim), &l[0]);
		bind_i64(&p[1], &d);
		if (mysql_stmt_bind_param(del, p) || mysql_stmt_execute(del)) {
			stmt_fail(db, del, what, err, errlen);
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		bind_i64(&p[0], &d);
		bind_bytes(&p[1], v[i].dim, strlen(v[i].dim), &l[1]);
		bind_bytes(&p[2], v[i].name, strlen(v[i].name), &l[2]);
		bind_bytes(&p[3], v[i].data, v[i].len, &l[3]);
		if (mysql_stmt_bind_param(ins, p) || mysql_stmt_execute(ins)) {
			stmt_fail(db, ins, what, err, errlen);
			goto fail;
		}
	}
	bind_i64(&p[0], &d);
	bind_i64(&p[1], &days);
	bind_i64(&p[2], &jobs);
	if (mysql_stmt_bind_param(mark, p) || mysql_stmt_execute(mark)) {
		stmt_fail(db, mark, what, err, errlen);
		goto fail;
	}
	close_stmts(all, sizeof(all) / sizeof(all[0]));
	return my_commit(base, err, errlen);
fail:
	close_stmts(all, sizeof(all) / sizeof(all[0]));
	my_rollback(base);
	return -1;
}

struct select_read {
	struct lwm2_db_value *v;
	size_t ncol;
	int (*fn)(void *arg, const struct lwm2_db_value *v);
	void *arg;
};

static int select_row(void *arg, struct reader *r)
{
	struct select_read *sr = arg;

	for (size_t i = 0; i < sr->ncol; i++) {
		const struct cell *c = &r->v[i];
		char *s = r->text[i];

		if (s)
			s[c->null ? 0 : c->len < r->cap[i] ? c->len : r->cap[i] - 1] = '\0';
		sr->v[i] = (struct lwm2_db_value){
		    .null = c->null, .i = c->i, .d = c->d, .s = c->null ? NULL : s};
	}
	return sr->fn(sr->arg, sr->v);
}

/* A query of db_query.c, its parameters bound in order, each row's
 * values by the columns' classes. */
static int my_select(struct lwm2_db *base, const char *sql, const struct lwm2_db_param *p,
                     size_t np, const enum lwm2_db_class *cls, size_t ncol,
                     int (*fn)(void *arg, const struct lwm2_db_value *v), void *arg, char *err,
                     size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_BIND *pb = calloc(np ? np : 1, sizeof(*pb));
	unsigned long *plen = calloc(np ? np : 1, sizeof(*plen));
	long long *pnum = calloc(np ? np : 1, sizeof(*pnum));
	struct lwm2_db_value *v = calloc(ncol ? ncol : 1, sizeof(*v));
	struct reader *r = calloc(1, sizeof(*r));
	MYSQL_STMT *st = NULL;
	int rc = 0;

	if ((rc = batch_send(db, err, errlen)) < 0)
		goto done;
	if (!pb || !plen || !pnum || !v || !r || ncol > sizeof(r->b) / sizeof(r->b[0]) ||
	    reader_bind_classes(r, cls, ncol) < 0) {
		rc = lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		goto done;
	}
	for (size_t i = 0; i < np; i++) {
		if (p[i].cls == LWM2_DBC_TEXT) {
			pb[i].buffer_type = MYSQL_TYPE_STRING;
			pb[i].buffer = (void *)(uintptr_t)p[i].s;
			plen[i] = (unsigned long)strlen(p[i].s);
			pb[i].length = &plen[i];
		} else if (p[i].cls == LWM2_DBC_REAL) {
			pb[i].buffer_type = MYSQL_TYPE_DOUBLE;
			pb[i].buffer = (void *)(uintptr_t)&p[i].d;
		} else {
			pnum[i] = p[i].i;
			pb[i].buffer_type = MYSQL_TYPE_LONGLONG;
			pb[i].buffer = &pnum[i];
		}
	}
	if ((rc = prepare(db, sql, &st, err, errlen)) < 0)
		goto done;
	rc = fetch_rows(db, st, pb, r, select_row, &(struct select_read){v, ncol, fn, arg}, err,
	                errlen);
done:
	stmt_close(st);
	reader_free(r);
	free(v);
	free(pnum);
	free(plen);
	free(pb);
	return rc;
}

#define MY_BACKEND(scheme)                                                                         \
	{                                                                                          \
		.name = scheme, .open = my_open, .close = my_close, .begin = my_begin,             \
		.commit = my_commit, .rollback = my_rollback, .insert = my_insert,                 \
		.meta_get = my_meta_get, .meta_set = my_meta_set, .jobs = my_jobs,                 \
		.texts = my_texts, .check = my_check, .forget = my_forget, .vacuum = my_vacuum,    \
		.days = my_days, .summary_read = my_summary_read,                                  \
		.summary_store = my_summary_store, .months = my_months, .patience = my_patience,   \
		.busy = my_busy, .dict_load = my_dict_load, .dict_store = my_dict_store,           \
		.select = my_select,                                                               \
	}

#else /* !HAVE_MARIADB */

static struct lwm2_db *my_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	(void)mode;
	lwm2_errprintf(
	    0, err, errlen,
	    "couldn't open the database %.*s...: this lwm2 was built without MariaDB/MySQL "
	    "(libmariadb-dev)",
	    (int)strcspn(url, "@/"), url);
	return NULL;
}

#define MY_BACKEND(scheme)                                                                         \
	{                                                                                          \
		.name = scheme, .open = my_open                                                    \
	}

#endif

const struct lwm2_db_backend lwm2_db_mariadb = MY_BACKEND("mariadb");
const struct lwm2_db_backend lwm2_db_mysql = MY_BACKEND("mysql");
