/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Subcommands of the lwm2 command.  Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the exit status:
 * 0 success, 1 bad input or a failed operation, 2 usage error.
 */
#ifndef LWM2_CMDS_H
#define LWM2_CMDS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "logscan.h"
#include "lwm2_algebra.h"

/*
 * X(name) for every lwm2_cmd_NAME:
 *   dump, run, merge, render: records and digests (cmd_dump.c ... cmd_render.c);
 *   digest: accounting retrieval (cmd_digest.c; lwm2.c has a weak fallback
 *     so the command builds without it);
 *   stats, diff: site-wide statistics and comparison of digests (cmd_stats.c,
 *     cmd_diff.c);
 *   mean, combine: digests made of others, as diff --output (cmd_algebra.c);
 *   history: the runs of an application over time (cmd_history.c);
 *   ranks: a job's processes metric by metric (cmd_ranks.c);
 *   export: export of a log to a time-series engine (cmd_export.c);
 *   report: HTML pages of a job and of the site (cmd_report.c);
 *   grid, nodes: the space-time grid, interference and sick nodes (cmd_grid.c);
 *   top, watch, snapshot: running jobs: the live view, the site's watch, and
 *     the reader they run on the nodes (cmd_top.c, cmd_watch.c, cmd_snapshot.c);
 *   db: the central database (cmd_db.c);
 *   serve: the site portal over the database (cmd_serve.c, serve_*.c);
 *   config: lwm2.conf as lwm2 reads it, for the site and lwm2-mail (cmd_config.c).
 */
#define LWM2_CMDS(X)                                                                               \
	X(dump);                                                                                   \
	X(run);                                                                                    \
	X(merge);                                                                                  \
	X(render);                                                                                 \
	X(digest);                                                                                 \
	X(stats);                                                                                  \
	X(diff);                                                                                   \
	X(mean);                                                                                   \
	X(combine);                                                                                \
	X(history);                                                                                \
	X(ranks);                                                                                  \
	X(export);                                                                                 \
	X(report);                                                                                 \
	X(grid);                                                                                   \
	X(nodes);                                                                                  \
	X(top);                                                                                    \
	X(watch);                                                                                  \
	X(snapshot);                                                                               \
	X(db);                                                                                     \
	X(serve);                                                                                  \
	X(config)

#define LWM2_CMD_DECLARE(name) int lwm2_cmd_##name(int argc, char **argv)
LWM2_CMDS(LWM2_CMD_DECLARE);
#undef LWM2_CMD_DECLARE

/* A job against the runs of its application (cmd_history.c). */
struct lwm2_source;
int lwm2_diff_history(json_object *digest, const char *what, const struct lwm2_source *src,
                      bool json);

/* The database a site command reads: given (--db), else lwm2.conf's
 * Database=; into out ("" when neither).  0, or -1 after a message
 * "lwm2: CMD: ..." (lwm2.conf unreadable). */
int lwm2_cmd_db_url(const char *cmd, const char *given, char *out, size_t len);

/* Where a site command reads its jobs (cmd_source.c): its --file logs, or
 * the central database. */
struct lwm2_source {
	char **files; /* --file, as given */
	size_t nfiles;
	const char *db_given; /* --db, or NULL */
	char db[1024];        /* the database read ("": the files) */
};

/* Fill src->db: none when files are given, else --db, else (conf_default:
 * the commands that need a log) lwm2.conf's Database=.  0, or -1 after a
 * message (both given, lwm2.conf unreadable). */
int lwm2_source_resolve(const char *cmd, struct lwm2_source *src, bool conf_default);

/* The lines of src to fn, as lwm2_logscan_files gives them; sel narrows
 * what the database reads (NULL: every job; the command still applies
 * its own selection), want_grid: the digests' "grid" is needed.  0, or
 * -1 when something could not be read (said on stderr). */
struct lwm2_db_select;
int lwm2_source_scan(const char *cmd, const struct lwm2_source *src,
                     const struct lwm2_db_select *sel, bool want_grid, lwm2_logline_fn fn,
                     void *arg);

/* The full digest of job JOBID's last run in src (the log line's, with
 * its per-process table and grid), NULL after a message "lwm2: CMD: job
 * ...: why" (not in the log, no digest, unreadable). */
json_object *lwm2_source_job(const char *cmd, const struct lwm2_source *src, const char *job);

/* A selection of runs as lwm2 history makes it: an application (the
 * executable's basename), a build-id prefix, users, a period of end times
 * (NULL, 0: any). */
struct lwm2_history_sel {
	const char *app, *build;
	char **users;
	size_t nusers;
	int64_t start, end;
};

/* The job ids of the runs lwm2 history lists for sel in src, oldest first
 * (*ids: the caller frees).  0, or -1 after a message "lwm2: CMD: ...". */
int lwm2_history_job_ids(const char *cmd, const struct lwm2_source *src,
                         const struct lwm2_history_sel *sel, uint32_t **ids, size_t *n);

/* One operand of diff, mean or combine: a digest file or a job id. */
struct lwm2_operand {
	const char *arg;
	char what[300];      /* where it came from, for headings and "derived" */
	int64_t job_id;      /* job id asked for; -1 for a file */
	int64_t array_task;  /* -1: none */
	json_object *digest; /* owned */
};

/* The digests of the n operands (their arg set), from files, else src's
 * logs or database, else Slurm accounting (cmd_diff.c).  0, or -1 after a
 * message "lwm2: CMD: ..." for each that could not be read. */
int lwm2_operands_load(const char *cmd, struct lwm2_operand *ops, size_t n,
                       const struct lwm2_source *src);

/* The digest op makes of d (lwm2_digest_algebra), its derived metrics
 * evaluated, written to path ("-": stdout) as one line of a JSON-lines log
 * (cmd_algebra.c).  0, or -1 after a message "lwm2: CMD: ...". */
int lwm2_algebra_write(const char *cmd, enum lwm2_algebra_op op, json_object *const *d,
                       const char *const *what, size_t n, const struct lwm2_derived_set *derived,
                       const char *path);

/* The derived metrics of lwm2.conf's DerivedMetric lines into s
 * (cmd_algebra.c).  0, or -1 after a message "lwm2: CMD: ...". */
int lwm2_cmd_derived_conf(const char *cmd, struct lwm2_derived_set *s);

#endif /* LWM2_CMDS_H */
