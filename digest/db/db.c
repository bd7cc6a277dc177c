/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The database's interface (db.h) over its backends (db_internal.h): the
 * backend is chosen by the database's address.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_internal.h"
#include "errmsg.h"

static const struct lwm2_db_backend *const backends[] = {
    &lwm2_db_sqlite,
    &lwm2_db_mariadb,
    &lwm2_db_mysql,
};

/* The backend of url: its scheme ("NAME:..."), else SQLite's file. */
static const struct lwm2_db_backend *backend_of(const char *url)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		size_t n = strlen(backends[i]->name);

		if (!strncmp(url, backends[i]->name, n) && url[n] == ':')
			return backends[i];
	}
	return &lwm2_db_sqlite;
}

struct lwm2_db *lwm2_db_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen)
{
	struct lwm2_db *db = backend_of(url)->open(url, mode, err, errlen);

	if (db)
		lwm2_db_url_shown(url, db->shown, sizeof(db->shown));
	return db;
}

void lwm2_db_close(struct lwm2_db *db)
{
	if (!db)
		return;
	lwm2_db_follow_free(db->follow);
	db->be->close(db);
}

/* Where db was opened to read: "... is open for reading only" into err;
 * -1.  Else 0. */
static int refuse_read_only(struct lwm2_db *db, char *err, size_t errlen)
{
	if (db->writable)
		return 0;
	return lwm2_errprintf(0, err, errlen, "%s is open for reading only", db->where);
}

int lwm2_db_begin(struct lwm2_db *db, char *err, size_t errlen)
{
	if (refuse_read_only(db, err, errlen) < 0)
		return -1;
	return db->be->begin(db, err, errlen);
}

int lwm2_db_commit(struct lwm2_db *db, char *err, size_t errlen)
{
	return db->be->commit(db, err, errlen);
}

void lwm2_db_rollback(struct lwm2_db *db)
{
	db->be->rollback(db);
}

int lwm2_db_insert(struct lwm2_db *db, const struct lwm2_jobrow *j, const struct lwm2_db_text *text,
                   bool *added, char *err, size_t errlen)
{
	return db->be->insert(db, j, text, added, err, errlen);
}

int lwm2_db_meta_get(struct lwm2_db *db, const char *key, char *buf, size_t len, char *err,
                     size_t errlen)
{
	return db->be->meta_get(db, key, buf, len, err, errlen);
}

int lwm2_db_meta_set(struct lwm2_db *db, const char *key, const char *value, char *err,
                     size_t errlen)
{
	return db->be->meta_set(db, key, value, err, errlen);
}

int lwm2_db_jobs(struct lwm2_db *db, const struct lwm2_db_select *sel,
                 int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                 size_t errlen)
{
	return db->be->jobs(db, sel, fn, arg, err, errlen);
}

int lwm2_db_check(struct lwm2_db *db, FILE *out, char *err, size_t errlen)
{
	return db->be->check(db, out, err, errlen);
}

/* A forget's jobs a transaction, the oldest first, and the pause after
 * each: a month of a large site (850,000 jobs) in one transaction would
 * hold SQLite's one writer (jobcomp's follow) for a minute and grow
 * MariaDB's undo log by the month's 22 million rows for minutes; in
 * chunks, the follow writes between them (its patience is a quarter of a
 * second), and a forget stopped halfway keeps what it removed. */
#define FORGET_CHUNK    2000
#define FORGET_PAUSE_MS 20

/* The end time after the chunk's oldest FORGET_CHUNK jobs. */
static int chunk_end(void *arg, const struct lwm2_db_value *v)
{
	*(int64_t *)arg = v[0].i + 1;
	return 0;
}

int lwm2_db_forget(struct lwm2_db *db, int64_t before, unsigned long *removed, char *err,
                   size_t errlen)
{
	static const enum lwm2_db_class cls[] = {LWM2_DBC_INT};
	const struct lwm2_db_param p[] = {{.cls = LWM2_DBC_INT, .i = before},
	                                  {.cls = LWM2_DBC_INT, .i = FORGET_CHUNK - 1}};
	int64_t bound;

	*removed = 0;
	do {
		unsigned long n;

		/* jobs of one end time go together: a chunk may hold more */
		bound = before;
		if (db->be->select(db,
		                   "SELECT end_time FROM job WHERE end_time < ? ORDER BY end_time "
		                   "LIMIT 1 OFFSET ?",
		                   p, 2, cls, 1, chunk_end, &bound, err, errlen) < 0 ||
		    db->be->forget(db, bound, &n, err, errlen) < 0)
			return -1;
		*removed += n;
		if (bound < before)
			nanosleep(&(struct timespec){0, FORGET_PAUSE_MS * 1000000L}, NULL);
	} while (bound < before);
	return 0;
}

int lwm2_db_vacuum(struct lwm2_db *db, char *err, size_t errlen)
{
	if (refuse_read_only(db, err, errlen) < 0)
		return -1;
	return db->be->vacuum(db, err, errlen);
}

int lwm2_db_days(struct lwm2_db *db, int64_t d0, int64_t d1, struct lwm2_db_day **out, size_t *n,
                 char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	return db->be->days ? db->be->days(db, d0, d1, out, n, err, errlen) : 1;
}

int lwm2_db_summary_read(struct lwm2_db *db, const char *dim, int64_t d0, int64_t d1,
                         int (*fn)(void *arg, int64_t day, const char *name, const void *data,
                                   size_t len),
                         void *arg, char *err, size_t errlen)
{
	return db->be->summary_read
	           ? db->be->summary_read(db, false, dim, d0, d1, fn, arg, err, errlen)
	           : 0;
}

int lwm2_db_summary_store(struct lwm2_db *db, int64_t day, const struct lwm2_db_summary *v,
                          size_t n, char *err, size_t errlen)
{
	if (!db->be->summary_store)
		return lwm2_errprintf(0, err, errlen, "this database keeps no summaries");
	return db->be->summary_store(db, day, NULL, v, n, err, errlen);
}

/* The monthly summaries came with schema 7: an older database read
 * without migrating (opened to read) has none. */
static bool keeps_months(const struct lwm2_db *db)
{
	return db->be->months && db->schema >= 7;
}

int lwm2_db_months(struct lwm2_db *db, int64_t m0, int64_t m1, struct lwm2_db_month **out,
                   size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	return keeps_months(db) ? db->be->months(db, m0, m1, out, n, err, errlen) : 1;
}

int lwm2_db_month_read(struct lwm2_db *db, const char *dim, int64_t m0, int64_t m1,
                       int (*fn)(void *arg, int64_t month, const char *name, const void *data,
                                 size_t len),
                       void *arg, char *err, size_t errlen)
{
	return keeps_months(db) ? db->be->summary_read(db, true, dim, m0, m1, fn, arg, err, errlen)
	                        : 0;
}

int lwm2_db_month_store(struct lwm2_db *db, const struct lwm2_db_month *m,
                        const struct lwm2_db_summary *v, size_t n, char *err, size_t errlen)
{
	if (!keeps_months(db))
		return lwm2_errprintf(0, err, errlen, "this database keeps no monthly summaries");
	return db->be->summary_store(db, m->month, m, v, n, err, errlen);
}

bool lwm2_db_writable(struct lwm2_db *db)
{
	return db->writable;
}

void lwm2_db_patience(struct lwm2_db *db, int ms)
{
	db->be->patience(db, ms);
}

bool lwm2_db_busy(struct lwm2_db *db)
{
	return db->be->busy(db);
}

void lwm2_db_url_shown(const char *url, char *out, size_t len)
{
	const char *auth = strstr(url, "://"), *at, *colon;

	if (auth && (at = strchr(auth + 3, '@')) &&
	    (colon = memchr(auth + 3, ':', (size_t)(at - auth - 3))))
		snprintf(out, len, "%.*s:***%s", (int)(colon - url), url, at);
	else
		snprintf(out, len, "%s", url);
}
