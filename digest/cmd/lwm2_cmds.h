/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Subcommands of the lwm2 command.  Each takes the arguments after the
 * subcommand name (argv[0] is the subcommand) and returns the exit status:
 * 0 success, 1 bad input or a failed operation, 2 usage error.
 */
#ifndef LWM2_CMDS_H
#define LWM2_CMDS_H

int lwm2_cmd_dump(int argc, char **argv);
int lwm2_cmd_run(int argc, char **argv);
int lwm2_cmd_merge(int argc, char **argv);
int lwm2_cmd_render(int argc, char **argv);
/* Accounting retrieval (cmd_digest.c); lwm2.c has a weak fallback
 * so the command builds without it. */
int lwm2_cmd_digest(int argc, char **argv);
/* Site-wide statistics and comparison of digests (cmd_stats.c, cmd_diff.c). */
int lwm2_cmd_stats(int argc, char **argv);
int lwm2_cmd_diff(int argc, char **argv);
/* The runs of an application over time; a job against them (cmd_history.c). */
int lwm2_cmd_history(int argc, char **argv);
#include <stdbool.h>
#include <json-c/json.h>
int lwm2_diff_history(json_object *digest, const char *what, char **files, size_t nfiles,
                      bool json);
/* Export of a log to a time-series engine (cmd_export.c). */
int lwm2_cmd_export(int argc, char **argv);

/* HTML pages of a job and of the site (cmd_report.c). */
int lwm2_cmd_report(int argc, char **argv);

/* The space-time grid, interference and sick nodes (cmd_grid.c). */
int lwm2_cmd_grid(int argc, char **argv);
int lwm2_cmd_nodes(int argc, char **argv);
/* Running jobs: the live view, the site's watch, and the reader they run
 * on the nodes (cmd_top.c, cmd_watch.c, cmd_snapshot.c). */
int lwm2_cmd_top(int argc, char **argv);
int lwm2_cmd_watch(int argc, char **argv);
int lwm2_cmd_snapshot(int argc, char **argv);

#endif /* LWM2_CMDS_H */
