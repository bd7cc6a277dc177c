/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The VFS that writes a commit's frames of the write-ahead log in one call
 * (db/db_walbuf.c): what it holds back must never be what a commit needs.
 * A reader on its own connection sees each commit as soon as it returns;
 * a writer killed right after its commits loses none of them; a
 * transaction larger than what is held back, spilled to the log before
 * its commit, commits whole, and one rolled back leaves nothing.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db_internal.h"
#include "tap.h"

static char path[256];

static sqlite3 *open_db(const char *vfs)
{
	sqlite3 *h = NULL;

	if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs) !=
	        SQLITE_OK ||
	    sqlite3_exec(h, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;", NULL, NULL,
	                 NULL) != SQLITE_OK) {
		fprintf(stderr, "db_walbuf: %s: %s\n", path, h ? sqlite3_errmsg(h) : "no memory");
		exit(1);
	}
	return h;
}

static long long scalar(sqlite3 *h, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* A transaction of a job's shape: rows in a table and three indexes. */
static int add_row(sqlite3 *h, int i)
{
	char sql[256];
	long long k = i;

	snprintf(sql, sizeof(sql),
	         "BEGIN IMMEDIATE; INSERT INTO t VALUES (%d, 'u%lld', 'a%lld', randomblob(1500)); "
	         "COMMIT;",
	         i, k * 7919 % 1000, k * 31 % 50);
	return sqlite3_exec(h, sql, NULL, NULL, NULL);
}

int main(void)
{
	const char *vfs = lwm2_db_walbuf_vfs();
	sqlite3 *w, *r;
	int seen = 0, n = 200, status = 0;
	pid_t pid;

	tap_plan(7);
	snprintf(path, sizeof(path), "%s/lwm2-walbuf-%ld.db",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
	ok(vfs != NULL, "the VFS is registered");
	w = open_db(vfs);
	r = open_db(NULL);
	sqlite3_exec(w,
	             "CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT, a TEXT, b BLOB); "
	             "CREATE INDEX t_u ON t (u); CREATE INDEX t_a ON t (a); "
	             "CREATE INDEX t_b ON t (b);",
	             NULL, NULL, NULL);
	for (int i = 1; i <= n; i++)
		if (add_row(w, i) == SQLITE_OK && scalar(r, "SELECT count(*) FROM t") == i)
			seen++;
	ok(seen == n, "another connection sees each commit when it returns (%d of %d)", seen, n);

	/* killed after its commits, the log never closed */
	fflush(stdout);
	if ((pid = fork()) == 0) {
		sqlite3 *c = open_db(vfs);

		for (int i = n + 1; i <= 2 * n; i++)
			if (add_row(c, i) != SQLITE_OK)
				_exit(1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	       scalar(r, "SELECT count(*) FROM t") == 2 * n,
	   "a writer gone right after its commits lost none (%lld rows)",
	   scalar(r, "SELECT count(*) FROM t"));

	/* more than the VFS holds back, spilled before the commit (a small
	 * page cache) */
	sqlite3_exec(w, "PRAGMA cache_size = 50;", NULL, NULL, NULL);
	ok(sqlite3_exec(w,
	                "BEGIN IMMEDIATE; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
	                "FROM c WHERE i < 3000) INSERT INTO t SELECT 100000 + i, 'x' || i, 'y', "
	                "randomblob(3000) FROM c; COMMIT;",
	                NULL, NULL, NULL) == SQLITE_OK &&
	       scalar(r, "SELECT count(*) FROM t") == 2 * n + 3000,
	   "a transaction of 9 MB spilled to the log commits whole");
	ok(sqlite3_exec(w,
	                "BEGIN IMMEDIATE; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
	                "FROM c WHERE i < 2000) INSERT INTO t SELECT 200000 + i, 'z', 'z', "
	                "randomblob(3000) FROM c; ROLLBACK;",
	                NULL, NULL, NULL) == SQLITE_OK &&
	       add_row(w, 999999) == SQLITE_OK &&
	       scalar(r, "SELECT count(*) FROM t") == 2 * n + 3001,
	   "one rolled back after its spill leaves nothing, and the next commits");
	sqlite3_close(w);
	ok(scalar(r, "SELECT count(*) FROM t WHERE id <= 400") == 2 * n,
	   "the rows are there after the writer closed");
	sqlite3_exec(r, "PRAGMA wal_checkpoint(TRUNCATE);", NULL, NULL, NULL);
	{
		sqlite3_stmt *st = NULL;
		const char *res = NULL;

		if (sqlite3_prepare_v2(r, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			res = (const char *)sqlite3_column_text(st, 0);
		ok(res && !strcmp(res, "ok"), "the database's integrity: %s", res ? res : "?");
		sqlite3_finalize(st);
	}
	sqlite3_close(r);
	for (size_t i = 0; i < 3; i++) {
		static const char *const suffixes[] = {"", "-wal", "-shm"};
		char p[300];

		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		unlink(p);
	}
	return tap_failed ? 1 : 0;
}
