/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2_db_follow (db/db_import.c), as jobcomp/lwm2's worker calls it after
 * each line it appends: only whole lines, each once; a line being written
 * waits for its newline; unreadable lines are counted and passed; a log
 * rotated or cut shorter is read from its start, the rest of a rotated
 * one first; a line longer than one
 * read; the offset kept in the database, so a new connection goes on
 * where the last stopped.  The lines are mkdigestlog's (run from the build
 * directory).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "tap.h"

static char dir[64], logp[128], dbp[128];
static char *lines[12];
static size_t nlines;

static void take_lines(void)
{
	FILE *p = popen("./mkdigestlog 12 1701000000", "r");
	char *line = NULL;
	size_t cap = 0;

	while (p && nlines < 12 && getline(&line, &cap, p) > 0)
		lines[nlines++] = strdup(line);
	free(line);
	if (!p || pclose(p) != 0 || nlines != 12) {
		printf("Bail out! ./mkdigestlog gave %zu lines\n", nlines);
		exit(1);
	}
}

static void append(const char *mode, const char *text, size_t len)
{
	FILE *f = fopen(logp, mode);

	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		printf("Bail out! couldn't write %s\n", logp);
		exit(1);
	}
}

static void append_line(size_t i)
{
	append("a", lines[i], strlen(lines[i]));
}

/* The log renamed to LOG.1, as logrotate does (the new one made by the
 * next append). */
static void rotate(void)
{
	char old[160];

	snprintf(old, sizeof(old), "%s.1", logp);
	if (rename(logp, old) != 0) {
		printf("Bail out! couldn't rename %s\n", logp);
		exit(1);
	}
}

static void unlink_rotated(void)
{
	char old[160];

	snprintf(old, sizeof(old), "%s.1", logp);
	unlink(old);
}

static struct lwm2_db *open_db(void)
{
	char err[1024];
	struct lwm2_db *db = lwm2_db_open(dbp, LWM2_DB_WRITE, err, sizeof(err));

	if (!db) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	return db;
}

/* One follow: its counts as "lines added known bad", or "failed: why". */
static const char *follow(struct lwm2_db *db)
{
	static char out[1200];
	char err[1024];
	struct lwm2_db_count c = {0};

	if (lwm2_db_follow(db, logp, &c, err, sizeof(err)) < 0)
		snprintf(out, sizeof(out), "failed: %s", err);
	else
		snprintf(out, sizeof(out), "%lu %lu %lu %lu", c.lines, c.added, c.known, c.bad);
	return out;
}

int main(void)
{
	struct lwm2_db *db;

	snprintf(dir, sizeof(dir), "%s/lwm2-follow.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	snprintf(logp, sizeof(logp), "%s/lwm2.jsonl", dir);
	snprintf(dbp, sizeof(dbp), "%s/site.db", dir);
	take_lines();
	tap_plan(20);
	db = open_db();
	is_str(follow(db), "0 0 0 0", "no log yet: nothing, no error");

	append_line(0);
	append_line(1);
	append("a", lines[2], strlen(lines[2]) - 1); /* its newline not yet written */
	is_str(follow(db), "2 2 0 0", "two whole lines added, the third waits for its newline");
	append("a", "\n", 1);
	is_str(follow(db), "1 1 0 0",
	       "its newline written: the third added, the first two not again");
	is_str(follow(db), "0 0 0 0", "nothing new: nothing read");

	append("a", "{\"not\": \"a digest\"}\n\n", 21);
	append("a", "x\0y\n", 4);
	append_line(3);
	is_str(follow(db), "4 1 0 2",
	       "a line that is no job and one with a NUL counted bad, an empty one passed, the "
	       "job after them added");

	{
		/* CRLF, as a log copied from elsewhere may have */
		size_t n = strlen(lines[4]);
		char *crlf = malloc(n + 2);

		memcpy(crlf, lines[4], n - 1);
		memcpy(crlf + n - 1, "\r\n", 3);
		append("a", crlf, n + 1);
		free(crlf);
	}
	is_str(follow(db), "1 1 0 0", "a line ending in CR LF added");

	{
		/* longer than one read of the log (4 MiB) */
		size_t n = (5u << 20) + 1;
		char *big = malloc(n);

		memset(big, 'x', n - 1);
		big[n - 1] = '\n';
		append("a", big, n);
		free(big);
	}
	append_line(5);
	is_str(follow(db), "2 1 0 1",
	       "a line of 5 MiB read whole (and counted bad), the job after it added");

	/* the log rotated: the new file from its start */
	rotate();
	append("w", lines[0], strlen(lines[0]));
	append_line(6);
	is_str(follow(db), "2 1 1 0",
	       "rotated: the new log read from its start (a job already there known)");
	unlink_rotated();

	/* a line the follow had not brought in when the log was rotated (the
	 * database could not be written): the rest of the log before first */
	append_line(8);
	rotate();
	append("w", lines[9], strlen(lines[9]));
	is_str(follow(db), "2 2 0 0",
	       "rotated with a line not yet in: the rest of the log before, then the new log");
	unlink_rotated();

	/* the same across the database closed and opened again (a full disk,
	 * a server gone: jobcomp/lwm2 keeps what the follow kept) */
	{
		struct lwm2_db_follow *kept;

		append_line(10);
		kept = lwm2_db_follow_take(db);
		lwm2_db_close(db);
		rotate();
		db = open_db();
		append("w", lines[11], strlen(lines[11]));
		lwm2_db_follow_give(db, kept);
		is_str(follow(db), "2 2 0 0",
		       "rotated while the database was closed: the rest of the log before, kept "
		       "across it, then the new log");
		unlink_rotated();
	}

	/* cut shorter in place (the same file): from its start */
	append("w", "\n", 1);
	is_str(follow(db), "1 0 0 0", "cut shorter: read from its start");
	append_line(7);
	is_str(follow(db), "1 1 0 0", "and on from there");

	/* a new connection goes on where the last one stopped */
	lwm2_db_close(db);
	db = open_db();
	is_str(follow(db), "0 0 0 0", "opened again: nothing read again");
	append_line(1);
	is_str(follow(db), "1 0 1 0", "opened again: the next line read (a job already there)");

	/* the log gone (rotated away, nothing new written yet): the rest of
	 * the one open, then the new log from its start */
	append_line(3);
	unlink(logp);
	is_str(follow(db), "1 0 1 0", "the log removed: the rest of the one open read");
	is_str(follow(db), "0 0 0 0", "  and nothing again");
	append_line(2);
	is_str(follow(db), "1 0 1 0", "a new log: read from its start");

	/* two followers of one log (slurmctld and its backup): each
	 * keeps the offset it committed, and one that lags reads again lines
	 * the other brought in, which adds nothing */
	{
		struct lwm2_db *other = open_db();

		append_line(4);
		is_str(follow(other), "1 0 1 0", "another follower: on from the offset committed");
		append_line(5);
		is_str(follow(db), "2 0 2 0",
		       "the first one on from its own offset: the other's line again, known");
		is_str(follow(other), "1 0 1 0", "  and the other on from its own");
		lwm2_db_close(other);
	}
	lwm2_db_close(db);

	unlink(dbp);
	{
		char p[160];

		snprintf(p, sizeof(p), "%s-wal", dbp);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", dbp);
		unlink(p);
	}
	unlink(logp);
	rmdir(dir);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	return tap_failed ? 1 : 0;
}
