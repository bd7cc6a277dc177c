/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The central database of digests: one row per job (jobrow.h) with each
 * metric's min/avg/max by name, filled from jobcomp/lwm2's JSON-lines log
 * and queried by the site's commands instead of reading the log again.
 *
 * The log stays the record: the database is an index of it that can be
 * rebuilt from it at any time.  A job is known by its cluster, id, submit
 * and start times, so reading a line twice (a re-import, a log read again
 * after a crash) adds nothing.  jobcomp/lwm2 follows its own log
 * (lwm2_db_follow) after every line it appends, off slurmctld's threads;
 * the offset it has reached is stored with the rows of the same
 * transaction, so a crash between the two loses and repeats nothing.
 *
 * Where: DATABASE is a path, or sqlite:PATH (SQLite, WAL journal).
 */
#ifndef LWM2_DB_H
#define LWM2_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jobrow.h"
#include "logscan.h"

/* The schema this build reads and writes (lwm2_meta's schema_version):
 * an older one is migrated forward when opened for writing, a newer one
 * is read but never written. */
#define LWM2_DB_SCHEMA 8

struct lwm2_db;

enum lwm2_db_mode {
	LWM2_DB_READ,   /* the database must exist */
	LWM2_DB_WRITE,  /* made, or migrated forward, where needed */
	LWM2_DB_UPDATE, /* the database must exist; written where allowed */
};

/* The database at url, or NULL with err ("couldn't open ...: why"). */
struct lwm2_db *lwm2_db_open(const char *url, enum lwm2_db_mode mode, char *err, size_t errlen);
void lwm2_db_close(struct lwm2_db *db);

/* What an import or a follow did. */
struct lwm2_db_count {
	unsigned long lines; /* log lines read */
	unsigned long added; /* jobs new to the database */
	unsigned long known; /* jobs it had already */
	unsigned long bad;   /* lines reported and skipped */
};

/*
 * Every job of the logs (as lwm2_logscan_files reads them: rotated sets,
 * gzip, zstd; messages "lwm2: <cmd>: ...") into the database, in
 * transactions of a few thousand jobs.  threads: how many threads parse
 * the lines and compress them (0: none, the calling thread does it all);
 * the rows are written by the calling thread in the log's order, so the
 * database, the counts and the messages are the same for any number.
 * progress, when set, is called after each transaction.  0, or -1 when a
 * log could not be read or the database could not be written (said on
 * stderr): what was committed stays.
 */
int lwm2_db_import(struct lwm2_db *db, const char *cmd, char *const *paths, size_t n,
                   unsigned threads, struct lwm2_db_count *count,
                   void (*progress)(void *arg, const struct lwm2_db_count *c), void *arg);

/*
 * The lines log has gained since the last follow (the offset and the
 * file's identity are kept in the database; a new file, after a rotation,
 * is read from its start), in one transaction.  Only whole lines: one
 * being written is read next time.  0, or -1 with err; nothing of a failed
 * transaction counts, so the next call reads the same lines again.
 */
int lwm2_db_follow(struct lwm2_db *db, const char *log, struct lwm2_db_count *count, char *err,
                   size_t errlen);

/*
 * What lwm2_db_follow keeps from call to call: the log open, so that a log
 * rotated meanwhile is read to its end before the new one.  Taken from a
 * database about to be closed (a full disk, a server gone) and given to
 * the one opened again at the same address, it keeps that across the
 * failure.  take: NULL where db kept nothing; give: what db kept is
 * freed.  lwm2_db_follow_free(NULL) does nothing.
 */
struct lwm2_db_follow;
struct lwm2_db_follow *lwm2_db_follow_take(struct lwm2_db *db);
void lwm2_db_follow_give(struct lwm2_db *db, struct lwm2_db_follow *f);
void lwm2_db_follow_free(struct lwm2_db_follow *f);

/* Which jobs lwm2_db_jobs gives: ended within [start, end] (0: open), of
 * these users (names), accounts; NULL lists take all.  The caller's
 * selection is applied again to each row it gets, so these only narrow
 * what is read. */
struct lwm2_db_select {
	int64_t start, end;
	char *const *users;
	size_t nusers;
	char *const *accounts;
	size_t naccounts;
	int metric;             /* a metric's index whose min/avg/max each row needs, -1: none */
	const int64_t *job_ids; /* these Slurm job ids only (lwm2_db_lines) */
	size_t njob_ids;
};

/* Every selected job, in the order the log had them, to fn (0: go on, 1:
 * stop, -1: stop with an error).  0, 1 when fn stopped, or -1 with err. */
int lwm2_db_jobs(struct lwm2_db *db, const struct lwm2_db_select *sel,
                 int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                 size_t errlen);

/*
 * The log lines of the selected jobs, as the log had them, in its order,
 * to fn as lwm2_logscan_files gives them (path: the database's address,
 * lineno: the job's row).  Since schema 2 a job's row keeps its line:
 * without the digest's "grid" member, and that member apart (each
 * zstd-compressed), so a reader that needs no grid (want_grid false)
 * reads and unpacks a fraction; its lines then lack the member.
 * count->missing: jobs whose line the database lacks (stored by an lwm2
 * before schema 2: importing their log again adds it).  fn's -1 reports
 * the job on stderr ("lwm2: <cmd>: ...") and goes on; 1 stops.  0, 1
 * when fn stopped, or -1 with err.
 */
struct lwm2_db_lines_count {
	unsigned long jobs;    /* lines given to fn */
	unsigned long missing; /* selected jobs without a line */
	unsigned long bad;     /* lines reported and skipped */
};
int lwm2_db_lines(struct lwm2_db *db, const char *cmd, const struct lwm2_db_select *sel,
                  bool want_grid, lwm2_logline_fn fn, void *arg, struct lwm2_db_lines_count *count,
                  char *err, size_t errlen);

/*
 * The portal's questions (lwm2 serve), answered by the database itself:
 * which jobs (the fields' values, the time range, a figure's range) a
 * viewer may see, one page of them in an order with their number and
 * core-hours, or their groups.  Only what the page shows travels.
 */
enum lwm2_db_field {
	/* texts, compared whole ("" where a job has none) */
	LWM2_DBF_CLUSTER,
	LWM2_DBF_USER,
	LWM2_DBF_ACCOUNT,
	LWM2_DBF_PARTITION,
	LWM2_DBF_APP,
	LWM2_DBF_STATE,
	LWM2_DBF_LANGUAGE,
	LWM2_DBF_MPI_LIBRARY,
	LWM2_DBF_MODE,
	LWM2_DBF_NTEXTS,
	/* orders besides the texts and the figures (enum lwm2_jobrow_value) */
	LWM2_DBF_JOB_ID = LWM2_DBF_NTEXTS,
	LWM2_DBF_END,
	LWM2_DBF_ELAPSED,
	LWM2_DBF_CORE_H,
	LWM2_DBF_FIGURE, /* + enum lwm2_jobrow_value */
};

struct lwm2_db_query {
	const char *text[LWM2_DBF_NTEXTS]; /* NULL or "": any */
	int64_t start, end;                /* ended within [start, end] */
	int figure;                        /* enum lwm2_jobrow_value of the range, -1: none */
	bool has_min, has_max;
	double min, max;
	/* who asks: all, or their own jobs (user) and their accounts' */
	bool all;
	const char *user;
	const char *const *accounts;
	size_t naccounts;
	const char *node; /* jobs that ran on it (lwm2_db_page), NULL: any */
	/* lwm2_db_page's order (by job id after it, the same way; a figure
	 * a job lacks last either way) and page */
	int order; /* enum lwm2_db_field */
	bool desc;
	int64_t offset, limit;
};

/* The selected jobs' number and core-hours, and the page of them in the
 * query's order to fn (0: go on; else it is returned).  0, or -1 with
 * err. */
int lwm2_db_page(struct lwm2_db *db, const struct lwm2_db_query *q, int64_t *total, double *core_h,
                 int (*fn)(void *arg, const struct lwm2_jobrow *j), void *arg, char *err,
                 size_t errlen);

/* One group of lwm2_db_groups: its jobs and core-hours; of the jobs with
 * core-hours and a share (MPI, I/O; the other figures 0), the core-hours
 * (w) and the share weighted by them (wv). */
struct lwm2_db_group {
	const char *name; /* "" for the jobs without */
	int64_t jobs;
	double core_h;
	double w[LWM2_JR_N], wv[LWM2_JR_N];
};

/* The selected jobs grouped by the text by (< LWM2_DBF_NTEXTS), in no
 * order, to fn; the jobs without the text (NULL) and those with ""
 * may come as two groups named "".  0, or -1 with err. */
int lwm2_db_groups(struct lwm2_db *db, const struct lwm2_db_query *q, int by,
                   int (*fn)(void *arg, const struct lwm2_db_group *g), void *arg, char *err,
                   size_t errlen);

/* The database's own check (its integrity, the schema's version, the
 * number of jobs and their time span) on out.  0 when sound, 1 when not,
 * -1 when it could not be checked (err). */
int lwm2_db_check(struct lwm2_db *db, FILE *out, char *err, size_t errlen);

/* The jobs that ended before t leave the database; *removed their number.
 * 0, or -1 with err. */
int lwm2_db_forget(struct lwm2_db *db, int64_t before, unsigned long *removed, char *err,
                   size_t errlen);

/* Give the room of removed rows back to the file system.  0, or -1. */
int lwm2_db_vacuum(struct lwm2_db *db, char *err, size_t errlen);

/*
 * Daily summaries: what `lwm2 stats` adds up per group, kept per day
 * (UTC: the job's end / 86,400 s), per grouping (dim: "all", "user",
 * "account", "partition", "executable", "app", "image") and group name,
 * as an opaque blob (site_stats.c packs and reads them).  A question
 * over whole days adds the day's summaries instead of reading its jobs;
 * a job added to a day marks the day's summaries as stale.  Summaries are
 * made by the first reader that needs them and may write, so the writer
 * in slurmctld adds a row and nothing more.
 */
#define LWM2_DB_DAY_S 86400

struct lwm2_db_day {
	int64_t day;
	int64_t jobs;    /* the jobs it was given (a job forgotten still counts) */
	bool summarized; /* its summaries are those of its jobs */
};

struct lwm2_db_summary {
	const char *dim, *name;
	const void *data;
	size_t len;
};

/* The days within [d0, d1] that have jobs, in order, in a malloc'd *out.
 * 0; 1 when the backend keeps no summaries; -1 with err. */
int lwm2_db_days(struct lwm2_db *db, int64_t d0, int64_t d1, struct lwm2_db_day **out, size_t *n,
                 char *err, size_t errlen);

/* The summaries of dim for the days within [d0, d1] to fn (0: go on, -1:
 * the blob cannot be read).  0, or -1 with err. */
int lwm2_db_summary_read(struct lwm2_db *db, const char *dim, int64_t d0, int64_t d1,
                         int (*fn)(void *arg, int64_t day, const char *name, const void *data,
                                   size_t len),
                         void *arg, char *err, size_t errlen);

/* Replace the day's summaries of the dims in v (ordered by dim) with v,
 * and mark the day summarized, in one transaction.  0, or -1 with err. */
int lwm2_db_summary_store(struct lwm2_db *db, int64_t day, const struct lwm2_db_summary *v,
                          size_t n, char *err, size_t errlen);

/*
 * Monthly summaries (schema 7): a whole month's summaries of each
 * grouping and name, made from its days' (the same blobs, added up), so
 * that a year reads twelve rows per name instead of 365.  A month is
 * known by the day number of its first day (UTC).  Its summaries hold
 * while its days are those they were made from: the number of its days
 * with jobs and their jobs (struct lwm2_db_day's) are kept beside them,
 * and a job added to one of its days, which adds to the day's count,
 * makes them stale; the days' summaries answer then, until a reader that
 * may write makes the month's again.
 */
struct lwm2_db_month {
	int64_t month;      /* its first day */
	int64_t days, jobs; /* its days with jobs and their jobs, when made */
};

/* The month's first day (UTC) of day, and the first day of the next. */
int64_t lwm2_db_month_of(int64_t day);
int64_t lwm2_db_month_next(int64_t month);

/* The months within [m0, m1] that have summaries, in order, in a malloc'd
 * *out.  0; 1 when the backend or the database's schema (before 7) keeps
 * none; -1 with err. */
int lwm2_db_months(struct lwm2_db *db, int64_t m0, int64_t m1, struct lwm2_db_month **out,
                   size_t *n, char *err, size_t errlen);

/* The summaries of dim for the months within [m0, m1] to fn (day: the
 * month), as lwm2_db_summary_read's.  0, or -1 with err. */
int lwm2_db_month_read(struct lwm2_db *db, const char *dim, int64_t m0, int64_t m1,
                       int (*fn)(void *arg, int64_t month, const char *name, const void *data,
                                 size_t len),
                       void *arg, char *err, size_t errlen);

/* Replace the summaries of m->month of the dims in v (ordered by dim)
 * with v, and keep m's days and jobs, in one transaction.  0, or -1 with
 * err. */
int lwm2_db_month_store(struct lwm2_db *db, const struct lwm2_db_month *m,
                        const struct lwm2_db_summary *v, size_t n, char *err, size_t errlen);

/* url as a message may show it: a password in it as ***. */
void lwm2_db_url_shown(const char *url, char *out, size_t len);

/* How long a write waits for another writer (an import, a reader summing
 * days up) before it fails for now (default: 10 s).  jobcomp/lwm2 waits
 * little: its next follow catches up what this one could not write. */
void lwm2_db_patience(struct lwm2_db *db, int ms);

/* Whether the last failure was another writer holding the database (it
 * is sound and open: a later write may succeed). */
bool lwm2_db_busy(struct lwm2_db *db);

/* Whether the database was opened for writing and may be written. */
bool lwm2_db_writable(struct lwm2_db *db);

#endif
