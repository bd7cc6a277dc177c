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

/*
 * X(name) for every lwm2_cmd_NAME:
 *   dump, run, merge, render: records and digests (cmd_dump.c ... cmd_render.c);
 *   digest: accounting retrieval (cmd_digest.c; lwm2.c has a weak fallback
 *     so the command builds without it);
 *   stats, diff: site-wide statistics and comparison of digests (cmd_stats.c,
 *     cmd_diff.c);
 *   history: the runs of an application over time (cmd_history.c);
 *   export: export of a log to a time-series engine (cmd_export.c);
 *   report: HTML pages of a job and of the site (cmd_report.c);
 *   grid, nodes: the space-time grid, interference and sick nodes (cmd_grid.c);
 *   top, watch, snapshot: running jobs: the live view, the site's watch, and
 *     the reader they run on the nodes (cmd_top.c, cmd_watch.c, cmd_snapshot.c).
 */
#define LWM2_CMDS(X)                                                                               \
	X(dump);                                                                                   \
	X(run);                                                                                    \
	X(merge);                                                                                  \
	X(render);                                                                                 \
	X(digest);                                                                                 \
	X(stats);                                                                                  \
	X(diff);                                                                                   \
	X(history);                                                                                \
	X(export);                                                                                 \
	X(report);                                                                                 \
	X(grid);                                                                                   \
	X(nodes);                                                                                  \
	X(top);                                                                                    \
	X(watch);                                                                                  \
	X(snapshot);                                                                               \
	X(db)

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

#endif /* LWM2_CMDS_H */
