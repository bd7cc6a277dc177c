/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The central database kept up with the JSON-lines log (Database= in
 * lwm2.conf, db.h): the lines the worker appends go in as a group, the
 * lines the database lacks in one transaction (lwm2_jc_db_group_due: a
 * burst of job ends shares a commit, its pages and the server's round
 * trips; a lone job goes in within GROUP_MS).  The log is written first and
 * stays the record, so a database that is locked, full, corrupt or gone
 * loses nothing: a later call reads the same lines again, and `lwm2 db
 * import` rebuilds it.  While the database is behind, the worker calls
 * again by itself (lwm2_jc_db_retry_at), so it catches up when the fault
 * is gone even if no job ends then.  slurmctld's log hears of a failure
 * once, and once when the database has caught up.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "worker_int.h"

/* After a failure to open or to write (a missing directory, a full disk,
 * a server that is down), the next try waits this long (seconds): a fault
 * must not cost every job of a burst an open and a pass over every line
 * behind.  The worker makes that try by itself. */
#define RETRY_S 30

/* After another writer held the database: the next job tries at once,
 * and the worker by itself after this long (seconds). */
#define RETRY_HELD_S 1

/* How long a follow waits for another writer of the database (an import,
 * a reader summing days up): the worker then goes on with the next job,
 * whose follow catches up what this one could not write. */
#define PATIENCE_MS 250

/* A group of lines waits at most this long (milliseconds) after its first
 * line for more, and at most this many lines: a burst's lines share one
 * transaction; a quiet site's job is in the database within a quarter of
 * a second of its line. */
#define GROUP_MS    250
#define GROUP_LINES 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct lwm2_db *db;
static char db_url[1024];
static int64_t next_open;
static int64_t next_try; /* the worker's own try while failing */
static int retry_s = RETRY_S;
static bool failing;      /* said so; say when it works again */
static size_t behind;     /* lines appended since the last follow */
static int64_t behind_ns; /* when the first of them was (monotonic) */
/* the follow's log, kept while the database is closed after a failure:
 * a log rotated meanwhile is still read to its end */
static struct lwm2_db_follow *kept;

/* Database= where given, else lwm2.db in the log's directory (written by
 * the same user, so no setup); "" for none. */
static void url_of(const struct lwm2_jc_conf *conf, char *out, size_t len)
{
	const char *slash = strrchr(conf->log_path, '/');

	if (conf->database_set)
		snprintf(out, len, "%s", conf->database);
	else if (slash)
		snprintf(out, len, "%.*s/lwm2.db", (int)(slash - conf->log_path), conf->log_path);
	else
		snprintf(out, len, "lwm2.db");
}

void lwm2_jc_db_appended(void)
{
	pthread_mutex_lock(&lock);
	if (!behind++)
		behind_ns = lwm2_jc_monotonic_ns();
	pthread_mutex_unlock(&lock);
}

int64_t lwm2_jc_db_group_due(void)
{
	int64_t due;

	pthread_mutex_lock(&lock);
	if (!behind)
		due = INT64_MAX;
	else if (behind >= GROUP_LINES)
		due = 0;
	else
		due = behind_ns + (int64_t)GROUP_MS * 1000000;
	pthread_mutex_unlock(&lock);
	return due;
}

void lwm2_jc_db_sync(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops)
{
	struct lwm2_db_count c = {0};
	char err[1024], url[sizeof(db_url)];
	int64_t now = lwm2_jc_now(), t0;
	size_t lines;

	url_of(conf, url, sizeof(url));
	pthread_mutex_lock(&lock);
	/* a failure below is tried again by lwm2_jc_db_retry_at's time, which
	 * catches up these lines too */
	lines = behind;
	behind = 0;
	t0 = lwm2_jc_monotonic_ns();
	if (!url[0]) {
		failing = false; /* Database=none: nothing to catch up */
		goto out;
	}
	if (db && strcmp(db_url, url)) {
		lwm2_db_close(db); /* Database= changed (reconfigure) */
		db = NULL;
	}
	if (!db) {
		/* a new Database= is tried at once */
		if (now < next_open && !strcmp(db_url, url))
			goto out;
		snprintf(db_url, sizeof(db_url), "%s", url);
		if (!(db = lwm2_db_open(db_url, LWM2_DB_WRITE, err, sizeof(err)))) {
			next_try = next_open = now + retry_s;
			goto fail;
		}
		lwm2_db_patience(db, PATIENCE_MS);
		lwm2_db_follow_give(db, kept);
		kept = NULL;
	}
	if (lwm2_db_follow(db, conf->log_path, &c, err, sizeof(err)) < 0) {
		/* held by another writer: the next follow tries again; a broken
		 * connection, a full disk, a damaged file: opened again after
		 * retry_s */
		if (lwm2_db_busy(db)) {
			next_try = now + RETRY_HELD_S;
		} else {
			lwm2_db_follow_free(kept);
			kept = lwm2_db_follow_take(db);
			lwm2_db_close(db);
			db = NULL;
			next_try = next_open = now + retry_s;
		}
		goto fail;
	}
	/* not "database:", which names trouble (the tests count those) */
	if (c.added)
		lwm2_log_debug("database group: %lu jobs in one transaction (%zu lines appended "
		               "since the last), %.1f ms",
		               c.added, lines, (double)(lwm2_jc_monotonic_ns() - t0) / 1e6);
	if (failing) {
		char shown[sizeof(db_url)];

		lwm2_db_url_shown(db_url, shown, sizeof(shown));
		lwm2_log_info("database: %s is written again (%lu jobs caught up from %s)", shown,
		              c.added, conf->log_path);
	}
	failing = false;
	goto out;
fail:
	if (!failing)
		lwm2_log_error("database: %s; the digests stay in %s and go in once it can be "
		               "written (or with lwm2 db import)",
		               err, conf->log_path);
	failing = true;
out:
	pthread_mutex_unlock(&lock);
}

void lwm2_jc_db_write_waiting(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops)
{
	if (lwm2_jc_db_group_due() != INT64_MAX)
		lwm2_jc_db_sync(conf, ops);
}

int64_t lwm2_jc_db_retry_at(void)
{
	int64_t t;

	pthread_mutex_lock(&lock);
	t = failing ? next_try : INT64_MAX;
	pthread_mutex_unlock(&lock);
	return t;
}

void lwm2_jc_db_retry_after(int seconds)
{
	pthread_mutex_lock(&lock);
	retry_s = seconds;
	pthread_mutex_unlock(&lock);
}

void lwm2_jc_db_close(void)
{
	pthread_mutex_lock(&lock);
	lwm2_db_close(db);
	db = NULL;
	lwm2_db_follow_free(kept);
	kept = NULL;
	next_open = 0;
	pthread_mutex_unlock(&lock);
}
