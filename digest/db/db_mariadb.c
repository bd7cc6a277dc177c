/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The central database on a MariaDB or MySQL server (db.h), through
 * MariaDB's client library: a site's own server, the one slurmdbd uses,
 * in a database of lwm2's own.  The tables, their columns and their
 * meaning are SQLite's (db_sqlite.c); what differs is the dialect, kept
 * here:
 *   - ids are BIGINT AUTO_INCREMENT, REAL is DOUBLE, tables are InnoDB;
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
 *   - a job's metrics are sent in one round trip (an array bind);
 *   - the schema is made under a named lock (GET_LOCK), as DDL commits
 *     and cannot sit in a transaction.
 * The daily summaries (db.h) are kept as SQLite keeps them (tables day
 * and summary).  Opened to update (LWM2_DB_UPDATE), the database must be
 * there, and a user who may only SELECT fails the open (naming the
 * metrics is an INSERT): the caller then opens it to read, and the rows
 * answer.
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
 * The job table is not partitioned by month (PARTITION BY RANGE on
 * end_time), though forget could then drop a month at once: MariaDB
 * wants the partitioning column in every unique key, so the job's
 * identity would become (cluster, job_id, submit, start, end_time), and
 * the id's primary key (id, end_time); job_metric, which has no end_time,
 * would not be partitioned with it, so a dropped month would leave its
 * metrics behind; and each month's partition must be made ahead by an
 * ALTER TABLE that commits whatever transaction is open, with an import
 * of old logs landing in one catch-all partition.  The end_time index
 * serves forget and a window of time meanwhile.
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
/* How long a writer waits for another one making the schema. */
#define LOCK_S 30

struct url {
	char user[256], password[512], host[256], db[65], socket[1024];
	unsigned port;
};

struct lwm2_db_maria {
	struct lwm2_db base; /* first: the backend's table */
	MYSQL *h;
	char where[600];       /* the address without its password, for messages */
	bool writable, create; /* create: LWM2_DB_WRITE (UPDATE: written, never made) */
	int schema;
	MYSQL_STMT *insert, *insert_metric, *insert_day, *insert_text, *insert_known_text,
	    *meta_get, *meta_set;
	int64_t metric_id[LWM2_NMETRICS];
};

static void my_close(struct lwm2_db *base);
static int my_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen);

static int fail(struct lwm2_db_maria *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "couldn't %s in %s: %s", what, db->where, mysql_error(db->h));
	return -1;
}

static int stmt_fail(struct lwm2_db_maria *db, MYSQL_STMT *st, const char *what, char *err,
                     size_t errlen)
{
	snprintf(err, errlen, "couldn't %s in %s: %s", what, db->where,
	         st ? mysql_stmt_error(st) : mysql_error(db->h));
	return -1;
}

static int exec(struct lwm2_db_maria *db, const char *sql, char *err, size_t errlen)
{
	MYSQL_RES *r;

	if (mysql_query(db->h, sql)) {
		snprintf(err, errlen, "%s: %s", db->where, mysql_error(db->h));
		return -1;
	}
	r = mysql_store_result(db->h); /* a statement with rows: dropped */
	mysql_free_result(r);
	return 0;
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
		snprintf(err, errlen, "couldn't read the password file %.400s: %s", path,
		         f ? "it is empty" : strerror(errno));
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

	if (!eq || decode(eq + 1, n - kl - 1, val, sizeof(val)) < 0 || !val[0]) {
		snprintf(err, errlen, "the option \"%.*s\" wants a value", (int)kl, s);
		return -1;
	}
	if (kl == 6 && !strncmp(s, "socket", 6))
		snprintf(u->socket, sizeof(u->socket), "%s", val);
	else if (kl == 13 && !strncmp(s, "password_file", 13))
		return read_password(val, u->password, sizeof(u->password), err, errlen);
	else {
		snprintf(err, errlen, "unknown option \"%.*s\" (socket=, password_file=)", (int)kl,
		         s);
		return -1;
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
	if (!p) {
		snprintf(err, errlen, "want mysql://[USER[:PASSWORD]@]HOST[:PORT]/DBNAME");
		return -1;
	}
	auth = p + 3;
	slash = strchr(auth, '/');
	if (!slash) {
		snprintf(err, errlen, "no /DBNAME");
		return -1;
	}
	at = memchr(auth, '@', (size_t)(slash - auth));
	for (const char *a = at; a && a < slash; a = memchr(a + 1, '@', (size_t)(slash - a - 1)))
		at = a; /* the last @: a password may hold one */
	if (at) {
		colon = memchr(auth, ':', (size_t)(at - auth));
		if (decode(auth, (size_t)((colon ? colon : at) - auth), u->user, sizeof(u->user)) <
		        0 ||
		    (colon && decode(colon + 1, (size_t)(at - colon - 1), u->password,
		                     sizeof(u->password)) < 0)) {
			snprintf(err, errlen, "a user or password too long or badly %%-escaped");
			return -1;
		}
		/* what is said of the database: no password */
		snprintf(where, wlen, "%.*s%.*s@%s", (int)(auth - url), url,
		         (int)((colon ? colon : at) - auth), auth, at + 1);
		auth = at + 1;
	}
	colon = memchr(auth, ':', (size_t)(slash - auth));
	if (decode(auth, (size_t)((colon ? colon : slash) - auth), u->host, sizeof(u->host)) < 0) {
		snprintf(err, errlen, "a host name too long");
		return -1;
	}
	if (colon) {
		char *end;
		unsigned long port = strtoul(colon + 1, &end, 10);

		if (end != slash || !port || port > 65535) {
			snprintf(err, errlen, "the port \"%.*s\" is no port",
			         (int)(slash - colon - 1), colon + 1);
			return -1;
		}
		u->port = (unsigned)port;
	}
	q = strchr(slash + 1, '?');
	if (decode(slash + 1, q ? (size_t)(q - slash - 1) : strlen(slash + 1), u->db,
	           sizeof(u->db)) < 0 ||
	    !u->db[0] ||
	    strspn(u->db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                  "0123456789_$") != strlen(u->db)) {
		snprintf(err, errlen, "the database's name wants 1 to 64 of A-Z a-z 0-9 _ $");
		return -1;
	}
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

/* The schema of version 2, as SQLite's: the job's identity is its
 * cluster, id, submit and start times; the indexes serve a window of
 * time, one user's or account's jobs in it, one application's history. */
static int create_schema(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char sql[4096], v[64];
	size_t k = 0;

	k += (size_t)snprintf(sql + k, sizeof(sql) - k,
	                      "CREATE TABLE IF NOT EXISTS job (id BIGINT NOT NULL AUTO_INCREMENT "
	                      "PRIMARY KEY");
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		k += (size_t)snprintf(sql + k, sizeof(sql) - k, ", %s %s", lwm2_db_columns[i].name,
		                      sql_type(&lwm2_db_columns[i]));
	snprintf(sql + k, sizeof(sql) - k,
	         ", UNIQUE KEY job_identity (cluster, job_id, submit, start)"
	         ", KEY job_end (end_time), KEY job_user_end (user_name, end_time)"
	         ", KEY job_account_end (account, end_time), KEY job_app_end (app, end_time)"
	         ") ENGINE=InnoDB");
	if (exec(db, sql, err, errlen) < 0 ||
	    exec(db,
	         "CREATE TABLE IF NOT EXISTS metric (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY "
	         "KEY, name VARBINARY(255) NOT NULL UNIQUE) ENGINE=InnoDB",
	         err, errlen) < 0 ||
	    exec(db,
	         "CREATE TABLE IF NOT EXISTS job_metric (job BIGINT NOT NULL, metric BIGINT NOT "
	         "NULL, n BIGINT NOT NULL, min DOUBLE, avg DOUBLE, max DOUBLE, "
	         "PRIMARY KEY (job, metric)) ENGINE=InnoDB",
	         err, errlen) < 0 ||
	    /* the daily summaries (db.h): the days (UTC) that have jobs,
	       summarized while a day's summaries are those of its jobs */
	    exec(db,
	         "CREATE TABLE IF NOT EXISTS day (day BIGINT NOT NULL PRIMARY KEY, jobs BIGINT "
	         "NOT NULL, summarized TINYINT NOT NULL) ENGINE=InnoDB",
	         err, errlen) < 0 ||
	    exec(db,
	         "CREATE TABLE IF NOT EXISTS summary (day BIGINT NOT NULL, dim VARBINARY(64) NOT "
	         "NULL, name VARBINARY(1024) NOT NULL, data LONGBLOB NOT NULL, "
	         "PRIMARY KEY (dim, day, name)) ENGINE=InnoDB",
	         err, errlen) < 0 ||
	    exec(db, JOB_TEXT_SQL, err, errlen) < 0)
		return -1;
	snprintf(v, sizeof(v), "%d", LWM2_DB_SCHEMA);
	return db->base.be->meta_set(&db->base, "schema_version", v, err, errlen);
}

/* The ids of the metrics this build knows, as the database names them;
 * -1 for one it has never stored. */
static int metric_ids(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	MYSQL_STMT *st = mysql_stmt_init(db->h);
	MYSQL_BIND p, r;
	unsigned long len;
	long long id;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	if (!st ||
	    mysql_stmt_prepare(st, "SELECT id FROM metric WHERE name = ?", (unsigned long)-1))
		goto fail;
	p.buffer_type = MYSQL_TYPE_STRING;
	p.length = &len;
	r.buffer_type = MYSQL_TYPE_LONGLONG;
	r.buffer = &id;
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		p.buffer = (void *)(uintptr_t)lwm2_metric_ids[k];
		len = (unsigned long)strlen(lwm2_metric_ids[k]);
		if (mysql_stmt_bind_param(st, &p) || mysql_stmt_execute(st) ||
		    mysql_stmt_bind_result(st, &r))
			goto fail;
		db->metric_id[k] = mysql_stmt_fetch(st) == 0 ? (int64_t)id : -1;
		mysql_stmt_free_result(st);
	}
	mysql_stmt_close(st);
	return rc;
fail:
	stmt_fail(db, st, "read the metrics' names", err, errlen);
	if (st)
		mysql_stmt_close(st);
	return -1;
}

static int name_metrics(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	MYSQL_STMT *st = mysql_stmt_init(db->h);
	MYSQL_BIND p;
	unsigned long len;

	memset(&p, 0, sizeof(p));
	if (!st || mysql_stmt_prepare(st, "INSERT IGNORE INTO metric (name) VALUES (?)",
	                              (unsigned long)-1))
		goto fail;
	p.buffer_type = MYSQL_TYPE_STRING;
	p.length = &len;
	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		p.buffer = (void *)(uintptr_t)lwm2_metric_ids[k];
		len = (unsigned long)strlen(lwm2_metric_ids[k]);
		if (mysql_stmt_bind_param(st, &p) || mysql_stmt_execute(st))
			goto fail;
	}
	mysql_stmt_close(st);
	return metric_ids(db, err, errlen);
fail:
	stmt_fail(db, st, "name the metrics", err, errlen);
	if (st)
		mysql_stmt_close(st);
	return -1;
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

/* Made where new, refused where newer than this build (read-only then),
 * and (later versions) migrated forward in place. */
static int ready_schema(struct lwm2_db_maria *db, char *err, size_t errlen)
{
	char v[32], sql[80];
	int rc = -1, has = has_meta(db, err, errlen);

	if (has < 0)
		return -1;
	if (!db->create) {
		if (!has) {
			snprintf(err, errlen, "%s is not an lwm2 database", db->where);
			return -1;
		}
		if (my_meta_get(&db->base, "schema_version", v, sizeof(v), err, errlen) < 0)
			return -1;
		db->schema = atoi(v);
		if (!db->schema) {
			snprintf(err, errlen, "%s is not an lwm2 database (no schema version)",
			         db->where);
			return -1;
		}
		if (!db->writable)
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
	db->schema = atoi(v);
	if (db->schema > LWM2_DB_SCHEMA) {
		snprintf(err, errlen,
		         "%s has schema version %d, newer than this lwm2's %d: not writing to it "
		         "(upgrade lwm2 where it writes)",
		         db->where, db->schema, LWM2_DB_SCHEMA);
		goto out;
	}
	if (!db->schema && db->create && create_schema(db, err, errlen) < 0)
		goto out;
	/* forward in place: 1 to 2 adds the jobs' lines (the rows of version
	 * 1 have none until their log is imported again) */
	if (db->schema == 1 &&
	    (exec(db, JOB_TEXT_SQL, err, errlen) < 0 ||
	     db->base.be->meta_set(&db->base, "schema_version", "2", err, errlen) < 0))
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
	if (prepare(db, sql, &db->insert, err, errlen) < 0 ||
	    prepare(db, "INSERT INTO job_metric VALUES (?, ?, ?, ?, ?, ?)", &db->insert_metric, err,
	            errlen) < 0 ||
	    prepare(db,
	            "INSERT INTO day VALUES (?, 1, 0) ON DUPLICATE KEY UPDATE jobs = jobs + 1, "
	            "summarized = 0",
	            &db->insert_day, err, errlen) < 0 ||
	    prepare(db, "INSERT INTO job_text VALUES (?, ?, ?, ?)", &db->insert_text, err, errlen) <
	        0 ||
	    prepare(db,
	            "INSERT IGNORE INTO job_text SELECT id, ?, ?, ? FROM job WHERE cluster <=> ? "
	            "AND job_id = ? AND submit = ? AND start = ?",
	            &db->insert_known_text, err, errlen) < 0 ||
	    prepare(db,
	            "INSERT INTO lwm2_meta VALUES (?, ?) ON DUPLICATE KEY UPDATE value = "
	            "VALUES(value)",
	            &db->meta_set, err, errlen) < 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------------ connection */

static int connect_db(struct lwm2_db_maria *db, const struct url *u, bool create, char *err,
                      size_t errlen)
{
	unsigned int t;
	my_bool no = 0;

	if (!(db->h = mysql_init(NULL))) {
		snprintf(err, errlen, "couldn't open the database %s: %s", db->where,
		         strerror(ENOMEM));
		return -1;
	}
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
	                        u->socket[0] ? u->socket : NULL, 0)) {
		snprintf(err, errlen, "couldn't open the database %s: %s", db->where,
		         mysql_error(db->h));
		return -1;
	}
	if (create) {
		char sql[160];

		snprintf(sql, sizeof(sql), "CREATE DATABASE IF NOT EXISTS `%s`", u->db);
		if (mysql_query(db->h, sql) || mysql_select_db(db->h, u->db)) {
			snprintf(err, errlen, "couldn't make the database %s: %s", db->where,
			         mysql_error(db->h));
			return -1;
		}
	}
	return 0;
}

static struct lwm2_db *my_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = calloc(1, sizeof(*db));
	struct url u;
	char why[512];

	if (!db) {
		snprintf(err, errlen, "couldn't open %s: %s", url, strerror(ENOMEM));
		return NULL;
	}
	db->base.be = &lwm2_db_mariadb;
	db->writable = mode != LWM2_DB_READ;
	db->create = mode == LWM2_DB_WRITE;
	if (parse_url(url, &u, db->where, sizeof(db->where), why, sizeof(why)) < 0) {
		snprintf(err, errlen, "couldn't open the database %s: %s", db->where, why);
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
	if (db->writable && prepare_insert(db, err, errlen) < 0)
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
	if (db->insert)
		mysql_stmt_close(db->insert);
	if (db->insert_metric)
		mysql_stmt_close(db->insert_metric);
	if (db->insert_day)
		mysql_stmt_close(db->insert_day);
	if (db->insert_text)
		mysql_stmt_close(db->insert_text);
	if (db->insert_known_text)
		mysql_stmt_close(db->insert_known_text);
	if (db->meta_get)
		mysql_stmt_close(db->meta_get);
	if (db->meta_set)
		mysql_stmt_close(db->meta_set);
	if (db->h)
		mysql_close(db->h);
	free(db);
}

static int my_meta_get(struct lwm2_db *base, const char *key, char *buf, size_t len, char *err,
                       size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_BIND p, r;
	unsigned long kl = (unsigned long)strlen(key), vl = 0;
	my_bool null = 0;
	int f;

	buf[0] = '\0';
	if (!db->meta_get && prepare(db, "SELECT value FROM lwm2_meta WHERE `key` = ?",
	                             &db->meta_get, err, errlen) < 0)
		return -1;
	memset(&p, 0, sizeof(p));
	memset(&r, 0, sizeof(r));
	p.buffer_type = MYSQL_TYPE_STRING;
	p.buffer = (void *)(uintptr_t)key;
	p.length = &kl;
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
	unsigned long kl = (unsigned long)strlen(key), vl = (unsigned long)strlen(value);

	if (!db->meta_set &&
	    prepare(db,
	            "INSERT INTO lwm2_meta VALUES (?, ?) ON DUPLICATE KEY UPDATE value = "
	            "VALUES(value)",
	            &db->meta_set, err, errlen) < 0)
		return -1;
	memset(p, 0, sizeof(p));
	p[0].buffer_type = p[1].buffer_type = MYSQL_TYPE_STRING;
	p[0].buffer = (void *)(uintptr_t)key;
	p[0].length = &kl;
	p[1].buffer = (void *)(uintptr_t)value;
	p[1].length = &vl;
	if (mysql_stmt_bind_param(db->meta_set, p) || mysql_stmt_execute(db->meta_set))
		return stmt_fail(db, db->meta_set, "write lwm2_meta", err, errlen);
	return 0;
}

static int my_begin(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (!db->writable) {
		snprintf(err, errlen, "%s is open for reading only", db->where);
		return -1;
	}
	return exec(db, "START TRANSACTION", err, errlen);
}

static int my_commit(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (mysql_commit(db->h))
		return fail(db, "commit", err, errlen);
	return 0;
}

static void my_rollback(struct lwm2_db *base)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

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
	struct lwm2_jobrow *w = (struct lwm2_jobrow *)(uintptr_t)j; /* read only */
	const char *s = NULL;

	memset(b, 0, sizeof(*b));
	v->null = 0;
	b->is_null = &v->null;
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
		s = *LWM2_DB_AT(w, c->off, const char *);
		v->null = !s;
		break;
	case LWM2_DBK_BUF:
		s = LWM2_DB_AT(w, c->off, char);
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
		lwm2_db_rules_text(*LWM2_DB_AT(w, c->off, uint64_t), rules, rlen);
		s = rules;
		break;
	}
	switch (c->kind) {
	case LWM2_DBK_REAL:
	case LWM2_DBK_OPT:
		b->buffer_type = MYSQL_TYPE_DOUBLE;
		b->buffer = &v->d;
		break;
	case LWM2_DBK_STR:
	case LWM2_DBK_BUF:
	case LWM2_DBK_RULES:
		b->buffer_type = MYSQL_TYPE_STRING;
		b->buffer = (void *)(uintptr_t)(s ? s : "");
		v->len = s ? (unsigned long)strlen(s) : 0;
		b->length = &v->len;
		break;
	default:
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = &v->i;
		break;
	}
}

/* A job's metrics, all in one round trip (an array of rows). */
static int insert_metrics(struct lwm2_db_maria *db, const struct lwm2_jobrow *j, int64_t id,
                          char *err, size_t errlen)
{
	long long job[LWM2_NMETRICS], metric[LWM2_NMETRICS], n[LWM2_NMETRICS];
	double mn[LWM2_NMETRICS], avg[LWM2_NMETRICS], mx[LWM2_NMETRICS];
	MYSQL_BIND b[6];
	unsigned int rows = 0;

	for (size_t k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_metric_stat *m = &j->scope.stat[k];

		if (!m->n)
			continue;
		job[rows] = id;
		metric[rows] = db->metric_id[k];
		n[rows] = (long long)(m->n > INT64_MAX ? INT64_MAX : m->n);
		mn[rows] = m->min;
		avg[rows] = m->avg;
		mx[rows] = m->max;
		rows++;
	}
	if (!rows)
		return 0;
	memset(b, 0, sizeof(b));
	b[0].buffer = job;
	b[1].buffer = metric;
	b[2].buffer = n;
	b[3].buffer = mn;
	b[4].buffer = avg;
	b[5].buffer = mx;
	for (int i = 0; i < 6; i++)
		b[i].buffer_type = i < 3 ? MYSQL_TYPE_LONGLONG : MYSQL_TYPE_DOUBLE;
	if (mysql_stmt_attr_set(db->insert_metric, STMT_ATTR_ARRAY_SIZE, &rows) ||
	    mysql_stmt_bind_param(db->insert_metric, b) || mysql_stmt_execute(db->insert_metric))
		return stmt_fail(db, db->insert_metric, "add a job's metrics", err, errlen);
	return 0;
}

/* The job's text: under id when the job was just added, else under the
 * row the database had (kept where it had one). */
static int insert_text(struct lwm2_db_maria *db, const struct lwm2_jobrow *j,
                       const struct lwm2_db_text *t, bool added, int64_t id, char *err,
                       size_t errlen)
{
	MYSQL_STMT *st = added ? db->insert_text : db->insert_known_text;
	MYSQL_BIND b[7];
	long long key[3] = {j->job_id, j->submit, j->start}, job = id, cut = t->cut;
	unsigned long ll = (unsigned long)t->line_len, gl = (unsigned long)t->grid_len,
	              cl = j->cluster ? (unsigned long)strlen(j->cluster) : 0;
	my_bool no_grid = !t->grid, no_cluster = !j->cluster;
	int k = 0;

	memset(b, 0, sizeof(b));
	if (added) {
		b[k].buffer_type = MYSQL_TYPE_LONGLONG;
		b[k++].buffer = &job;
	}
	b[k].buffer_type = MYSQL_TYPE_LONGLONG;
	b[k++].buffer = &cut;
	b[k].buffer_type = MYSQL_TYPE_BLOB;
	b[k].buffer = (void *)(uintptr_t)t->line;
	b[k++].length = &ll;
	b[k].buffer_type = MYSQL_TYPE_BLOB;
	b[k].buffer = (void *)(uintptr_t)t->grid;
	b[k].length = &gl;
	b[k++].is_null = &no_grid;
	if (!added) {
		b[k].buffer_type = MYSQL_TYPE_STRING;
		b[k].buffer = (void *)(uintptr_t)(j->cluster ? j->cluster : "");
		b[k].length = &cl;
		b[k++].is_null = &no_cluster;
		for (int i = 0; i < 3; i++) {
			b[k].buffer_type = MYSQL_TYPE_LONGLONG;
			b[k++].buffer = &key[i];
		}
	}
	if (mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st))
		return stmt_fail(db, st, "add a job's line", err, errlen);
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
	if (lwm2_db_ncolumns > sizeof(b) / sizeof(b[0])) {
		snprintf(err, errlen, "too many columns");
		return -1;
	}
	for (size_t i = 0; i < lwm2_db_ncolumns; i++)
		bind_column(&lwm2_db_columns[i], j, &b[i], &v[i], rules, sizeof(rules));
	if (mysql_stmt_bind_param(db->insert, b) || mysql_stmt_execute(db->insert))
		return stmt_fail(db, db->insert, "add a job", err, errlen);
	*added = mysql_stmt_affected_rows(db->insert) == 1;
	id = (int64_t)mysql_stmt_insert_id(db->insert);
	if (*added && j->end > 0) {
		/* the job's day: its summaries are stale now */
		MYSQL_BIND d;
		long long day = j->end / LWM2_DB_DAY_S;

		memset(&d, 0, sizeof(d));
		d.buffer_type = MYSQL_TYPE_LONGLONG;
		d.buffer = &day;
		if (mysql_stmt_bind_param(db->insert_day, &d) || mysql_stmt_execute(db->insert_day))
			return stmt_fail(db, db->insert_day, "count the job's day", err, errlen);
	}
	if (text && text->line && insert_text(db, j, text, *added, id, err, errlen) < 0)
		return -1;
	if (!*added || !j->digest)
		return 0;
	return insert_metrics(db, j, id, err, errlen);
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

static int reader_bind(struct reader *r, size_t ncol, bool metric)
{
	r->n = ncol + (metric ? 4 : 0);
	memset(r->b, 0, sizeof(r->b));
	for (size_t i = 0; i < r->n; i++) {
		MYSQL_BIND *b = &r->b[i];
		enum lwm2_db_kind k = i < ncol    ? lwm2_db_columns[i].kind
		                      : i == ncol ? LWM2_DBK_I64
		                                  : LWM2_DBK_REAL;

		b->is_null = &r->v[i].null;
		b->error = &r->v[i].error;
		b->length = &r->v[i].len;
		if (k == LWM2_DBK_STR || k == LWM2_DBK_BUF || k == LWM2_DBK_RULES) {
			if (!r->text[i] && !(r->text[i] = malloc(r->cap[i] = 256)))
				return -1;
			b->buffer_type = MYSQL_TYPE_STRING;
			b->buffer = r->text[i];
			b->buffer_length = r->cap[i] - 1;
		} else if (k == LWM2_DBK_REAL || k == LWM2_DBK_OPT) {
			b->buffer_type = MYSQL_TYPE_DOUBLE;
			b->buffer = &r->v[i].d;
		} else {
			b->buffer_type = MYSQL_TYPE_LONGLONG;
			b->buffer = &r->v[i].i;
		}
	}
	return 0;
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

static void reader_free(struct reader *r)
{
	for (size_t i = 0; i < sizeof(r->text) / sizeof(r->text[0]); i++)
		free(r->text[i]);
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
			*LWM2_DB_AT(j, c->off, const char *) = v->null ? NULL : s;
			break;
		case LWM2_DBK_BUF:
			snprintf(LWM2_DB_AT(j, c->off, char), c->len, "%s", s);
			break;
		case LWM2_DBK_REAL:
			*LWM2_DB_AT(j, c->off, double) = v->null ? NAN : v->d;
			break;
		case LWM2_DBK_OPT:
			*LWM2_DB_AT(j, c->has_off, bool) = !v->null;
			*LWM2_DB_AT(j, c->off, double) = v->null ? 0 : v->d;
			break;
		case LWM2_DBK_RULES:
			*LWM2_DB_AT(j, c->off, uint64_t) = lwm2_db_rules_bits(v->null ? "" : s);
			break;
		}
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

static int my_jobs(struct lwm2_db *base, const struct lwm2_db_select *sel,
                   int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                   size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	size_t nusers;
	char *sql =
	    lwm2_db_jobs_sql(sel, sel->metric >= 0 ? db->metric_id[sel->metric] : -1, &nusers);
	size_t ncol = lwm2_db_ncolumns;
	struct lwm2_jobrow *j = malloc(sizeof(*j));
	struct select_params sp = {0};
	struct reader *r = calloc(1, sizeof(*r));
	MYSQL_STMT *st = NULL;
	int rc = 0, f;

	if (!sql || !j || !r || select_params(sel, nusers, false, &sp) < 0 ||
	    ncol + 4 > sizeof(r->b) / sizeof(r->b[0]) ||
	    reader_bind(r, ncol, sel->metric >= 0) < 0) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		rc = -1;
		goto done;
	}
	if (prepare(db, sql, &st, err, errlen) < 0) {
		rc = -1;
		goto done;
	}
	if (mysql_stmt_bind_param(st, sp.b) || mysql_stmt_execute(st) ||
	    mysql_stmt_bind_result(st, r->b)) {
		rc = stmt_fail(db, st, "read the jobs", err, errlen);
		goto done;
	}
	while ((f = mysql_stmt_fetch(st)) == 0 || f == MYSQL_DATA_TRUNCATED) {
		if (f == MYSQL_DATA_TRUNCATED && reader_refetch(r, st) < 0) {
			rc = stmt_fail(db, st, "read the jobs", err, errlen);
			goto done;
		}
		row_of(r, j);
		if (sel->metric >= 0 && !r->v[ncol].null) {
			struct lwm2_metric_stat *m = &j->scope.stat[sel->metric];

			m->n = (uint64_t)r->v[ncol].i;
			m->min = r->v[ncol + 1].d;
			m->avg = r->v[ncol + 2].d;
			m->max = r->v[ncol + 3].d;
		}
		if ((rc = fn(arg, j)) != 0)
			break;
	}
	if (rc == 0 && f != MYSQL_NO_DATA)
		rc = stmt_fail(db, st, "read the jobs", err, errlen);
	else if (rc < 0)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
done:
	if (st)
		mysql_stmt_close(st);
	if (r)
		reader_free(r);
	free(r);
	free(sql);
	free(j);
	select_params_free(&sp);
	return rc;
}

static int my_texts(struct lwm2_db *base, const struct lwm2_db_select *sel, bool want_grid,
                    int (*fn)(void *arg, const struct lwm2_db_text *t), void *arg, char *err,
                    size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	size_t nusers;
	char *sql = lwm2_db_lines_sql(sel, want_grid, db->schema >= 2, &nusers);
	struct select_params sp = {0};
	MYSQL_BIND r[4];
	unsigned long len[4] = {0};
	long long id = 0, cut = 0;
	my_bool null[4] = {0}, error[4] = {0};
	char *buf[2] = {NULL, NULL};
	size_t cap[2] = {0, 0};
	MYSQL_STMT *st = NULL;
	int rc = 0, f;

	if (!sql || select_params(sel, nusers, true, &sp) < 0) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		rc = -1;
		goto done;
	}
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 4; i++) {
		r[i].is_null = &null[i];
		r[i].error = &error[i];
		r[i].length = &len[i];
		r[i].buffer_type = i < 2 ? MYSQL_TYPE_LONGLONG : MYSQL_TYPE_BLOB;
	}
	r[0].buffer = &id;
	r[1].buffer = &cut;
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
					snprintf(err, errlen, "%s", strerror(ENOMEM));
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
		};

		if ((rc = fn(arg, &t)) != 0)
			break;
	}
	if (rc == 0 && f != MYSQL_NO_DATA)
		rc = stmt_fail(db, st, "read the jobs' lines", err, errlen);
done:
	if (st)
		mysql_stmt_close(st);
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
	if (!bad)
		fprintf(out, "integrity: ok\n");
	fprintf(out, "schema: %d (this lwm2: %d)\n", db->schema, LWM2_DB_SCHEMA);
	if (mysql_query(db->h, "SELECT count(*), min(end_time), max(end_time), sum(has_digest) "
	                       "FROM job") ||
	    !(res = mysql_store_result(db->h)))
		return fail(db, "count the jobs", err, errlen);
	if ((row = mysql_fetch_row(res)))
		fprintf(out, "jobs: %lld (%lld with a digest), ended from %lld to %lld\n",
		        num(row[0]), num(row[3]), num(row[1]), num(row[2]));
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
	    "DELETE FROM job WHERE end_time < ?",
	};
	long long t = before;
	MYSQL_BIND p;
	MYSQL_STMT *st = NULL;

	*removed = 0;
	if (my_begin(&db->base, err, errlen) < 0)
		return -1;
	memset(&p, 0, sizeof(p));
	p.buffer_type = MYSQL_TYPE_LONGLONG;
	p.buffer = &t;
	for (size_t i = 0; i < 3; i++) {
		if (prepare(db, sql[i], &st, err, errlen) < 0)
			goto fail;
		if (mysql_stmt_bind_param(st, &p) || mysql_stmt_execute(st)) {
			stmt_fail(db, st, "remove old jobs", err, errlen);
			goto fail;
		}
		if (i == 2)
			*removed = (unsigned long)mysql_stmt_affected_rows(st);
		mysql_stmt_close(st);
		st = NULL;
	}
	return my_commit(&db->base, err, errlen);
fail:
	if (st)
		mysql_stmt_close(st);
	my_rollback(&db->base);
	*removed = 0;
	return -1;
}

/* InnoDB rebuilds the tables (OPTIMIZE: "doing recreate + analyze"). */
static int my_vacuum(struct lwm2_db *base, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;

	if (!db->writable) {
		snprintf(err, errlen, "%s is open for reading only", db->where);
		return -1;
	}
	return exec(db, "OPTIMIZE TABLE job, job_metric, metric, lwm2_meta", err, errlen);
}

/* ------------------------------------------------------------ summaries */

/* A statement on the days, executed with p, its results bound to r. */
static MYSQL_STMT *run_days(struct lwm2_db_maria *db, const char *sql, MYSQL_BIND *p,
                            struct reader *r, const char *what, char *err, size_t errlen)
{
	MYSQL_STMT *st = NULL;

	if (prepare(db, sql, &st, err, errlen) < 0) {
		if (st)
			mysql_stmt_close(st);
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

static void bind_i64(MYSQL_BIND *b, long long *v)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_LONGLONG;
	b->buffer = v;
}

static void bind_bytes(MYSQL_BIND *b, const void *s, size_t n, unsigned long *len)
{
	memset(b, 0, sizeof(*b));
	b->buffer_type = MYSQL_TYPE_BLOB;
	b->buffer = (void *)(uintptr_t)s;
	*len = (unsigned long)n;
	b->length = len;
}

static int my_days(struct lwm2_db *base, int64_t d0, int64_t d1, struct lwm2_db_day **out,
                   size_t *n, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	long long lim[2] = {d0, d1};
	MYSQL_BIND p[2];
	struct reader *r = malloc(sizeof(*r));
	MYSQL_STMT *st = NULL;
	size_t cap = 0;
	int f, rc = -1;

	*out = NULL;
	*n = 0;
	bind_i64(&p[0], &lim[0]);
	bind_i64(&p[1], &lim[1]);
	if (!r || reader_days(r, 2, 2) < 0) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		goto done;
	}
	st = run_days(db, "SELECT day, summarized FROM day WHERE day BETWEEN ? AND ? ORDER BY day",
	              p, r, "read the days", err, errlen);
	if (!st)
		goto done;
	while ((f = mysql_stmt_fetch(st)) == 0) {
		if (*n == cap) {
			struct lwm2_db_day *nd =
			    realloc(*out, (cap = cap ? 2 * cap : 64) * sizeof(*nd));

			if (!nd) {
				snprintf(err, errlen, "%s", strerror(ENOMEM));
				goto done;
			}
			*out = nd;
		}
		(*out)[*n].day = (int64_t)r->v[0].i;
		(*out)[(*n)++].summarized = r->v[1].i != 0;
	}
	if (f != MYSQL_NO_DATA)
		stmt_fail(db, st, "read the days", err, errlen);
	else
		rc = 0;
done:
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	if (st)
		mysql_stmt_close(st);
	if (r)
		reader_free(r);
	free(r);
	return rc;
}

static int my_summary_read(struct lwm2_db *base, const char *dim, int64_t d0, int64_t d1,
                           int (*fn)(void *arg, int64_t day, const char *name, const void *data,
                                     size_t len),
                           void *arg, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	long long lim[2] = {d0, d1};
	unsigned long dl;
	MYSQL_BIND p[3];
	struct reader *r = malloc(sizeof(*r));
	MYSQL_STMT *st = NULL;
	int f = 0, rc = 0;

	bind_bytes(&p[0], dim, strlen(dim), &dl);
	bind_i64(&p[1], &lim[0]);
	bind_i64(&p[2], &lim[1]);
	if (!r || reader_days(r, 3, 1) < 0) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		rc = -1;
		goto done;
	}
	st = run_days(db,
	              "SELECT day, name, data FROM summary WHERE dim = ? AND day BETWEEN ? AND ? "
	              "ORDER BY day, name",
	              p, r, "read the summaries", err, errlen);
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
		snprintf(err, errlen, "%s: a summary that cannot be read", db->where);
	else if (!rc && f != MYSQL_NO_DATA)
		rc = stmt_fail(db, st, "read the summaries", err, errlen);
	else
		rc = 0;
done:
	if (st)
		mysql_stmt_close(st);
	if (r)
		reader_free(r);
	free(r);
	return rc;
}

/* The day's summaries of the dims in v replaced, the day marked
 * summarized, in one transaction. */
static int my_summary_store(struct lwm2_db *base, int64_t day, const struct lwm2_db_summary *v,
                            size_t n, char *err, size_t errlen)
{
	struct lwm2_db_maria *db = (struct lwm2_db_maria *)base;
	MYSQL_STMT *del = NULL, *ins = NULL, *mark = NULL;
	MYSQL_BIND p[4];
	long long d = day;
	unsigned long l[4];

	if (my_begin(base, err, errlen) < 0)
		return -1;
	if (prepare(db, "DELETE FROM summary WHERE dim = ? AND day = ?", &del, err, errlen) < 0 ||
	    prepare(db, "INSERT INTO summary VALUES (?, ?, ?, ?)", &ins, err, errlen) < 0 ||
	    prepare(db, "UPDATE day SET summarized = 1 WHERE day = ?", &mark, err, errlen) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(v[i].dim, v[i - 1].dim))
			continue;
		bind_bytes(&p[0], v[i].dim, strlen(v[i].dim), &l[0]);
		bind_i64(&p[1], &d);
		if (mysql_stmt_bind_param(del, p) || mysql_stmt_execute(del)) {
			stmt_fail(db, del, "keep a day's summaries", err, errlen);
			goto fail;
		}
	}
	for (size_t i = 0; i < n; i++) {
		bind_i64(&p[0], &d);
		bind_bytes(&p[1], v[i].dim, strlen(v[i].dim), &l[1]);
		bind_bytes(&p[2], v[i].name, strlen(v[i].name), &l[2]);
		bind_bytes(&p[3], v[i].data, v[i].len, &l[3]);
		if (mysql_stmt_bind_param(ins, p) || mysql_stmt_execute(ins)) {
			stmt_fail(db, ins, "keep a day's summaries", err, errlen);
			goto fail;
		}
	}
	bind_i64(&p[0], &d);
	if (mysql_stmt_bind_param(mark, p) || mysql_stmt_execute(mark)) {
		stmt_fail(db, mark, "keep a day's summaries", err, errlen);
		goto fail;
	}
	mysql_stmt_close(del);
	mysql_stmt_close(ins);
	mysql_stmt_close(mark);
	return my_commit(base, err, errlen);
fail:
	if (del)
		mysql_stmt_close(del);
	if (ins)
		mysql_stmt_close(ins);
	if (mark)
		mysql_stmt_close(mark);
	my_rollback(base);
	return -1;
}

static bool my_writable(struct lwm2_db *base)
{
	return ((struct lwm2_db_maria *)base)->writable;
}

#define MY_BACKEND(scheme)                                                                         \
	{                                                                                          \
		.name = scheme, .open = my_open, .close = my_close, .begin = my_begin,             \
		.commit = my_commit, .rollback = my_rollback, .insert = my_insert,                 \
		.meta_get = my_meta_get, .meta_set = my_meta_set, .jobs = my_jobs,                 \
		.texts = my_texts, .check = my_check, .forget = my_forget, .vacuum = my_vacuum,    \
		.days = my_days, .summary_read = my_summary_read,                                  \
		.summary_store = my_summary_store, .writable = my_writable,                        \
		.patience = my_patience, .busy = my_busy,                                          \
	}

#else /* !HAVE_MARIADB */

static struct lwm2_db *my_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	(void)mode;
	snprintf(err, errlen,
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
