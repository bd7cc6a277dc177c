/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2: the command line of the lightweight measurement module.
 *   lwm2 run [--slice S] [--keep DIR] -- CMD ARGS...   measure one command
 *   lwm2 dump FILE...                                 rank or node record as JSON
 *   lwm2 merge DIR|FILE...                            node record from rank records
 *   lwm2 render FILE                                  digest JSON as text
 *   lwm2 digest ...                                   digests from accounting
 *   lwm2 stats --file LOG [--by KEY | --top N]        site-wide statistics
 *   lwm2 diff A B                                     two digests side by side
 *   lwm2 ranks JOB [--groups]                         a job's processes metric by metric
 *   lwm2 report -j JOB | --site --file LOG -o DIR     HTML pages with plots
 *   lwm2 export --file LOG --url URL                  slices into InfluxDB & co.
 *   lwm2 grid --file LOG [--interference]             the space-time grid of a period
 *   lwm2 nodes --file LOG                             nodes slow in many jobs
 *   lwm2 top -j JOB[.STEP] [--once] [--json]          a running job, live
 *   lwm2 watch [--dry-run] [--json]                   stuck and idle jobs (site)
 *   lwm2 db import|check|... [--db DATABASE]          the central database
 *   lwm2 config [--get KEY] [--file PATH]             lwm2.conf's effective settings
 */
#include "config.h"

#include "log.h"
#include "lwm2_cmds.h"

#include <stdio.h>
#include <string.h>

/* `lwm2 digest` lives in cmd_digest.c; until it is linked in, say so. */
__attribute__((weak)) int lwm2_cmd_digest(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	lwm2_log_error("digest: not built into this lwm2");
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} cmds[] = {
    {"run", lwm2_cmd_run, "run a command under measurement and print its digest"},
    {"dump", lwm2_cmd_dump, "print rank records or signed node records as JSON"},
    {"merge", lwm2_cmd_merge, "merge rank records into a node record (JSON)"},
    {"render", lwm2_cmd_render, "render a digest (JSON, AdminComment or log line) as text"},
    {"digest", lwm2_cmd_digest, "show the digests of jobs from Slurm accounting"},
    {"stats", lwm2_cmd_stats, "site-wide statistics over the digests of a log"},
    {"diff", lwm2_cmd_diff, "compare two digests, per step, with guidance"},
    {"mean", lwm2_cmd_mean, "the mean of digests, as a digest (log line)"},
    {"combine", lwm2_cmd_combine, "digests of runs merged into one digest (log line)"},
    {"history", lwm2_cmd_history, "the runs of an application over time"},
    {"ranks", lwm2_cmd_ranks, "a job's processes: quartiles, extremes, bands"},
    {"report", lwm2_cmd_report, "HTML pages with plots of a job or of the site"},
    {"export", lwm2_cmd_export, "send the digests of a log to a time-series engine"},
    {"grid", lwm2_cmd_grid, "the space-time grid of a log's jobs, with interference"},
    {"nodes", lwm2_cmd_nodes, "nodes that were slow in the multi-node jobs of a period"},
    {"top", lwm2_cmd_top, "the current state of a running job, refreshed like top"},
    {"watch", lwm2_cmd_watch, "check running jobs for being stuck or idle (site, as root)"},
    {"db", lwm2_cmd_db, "the central database: import logs, check, forget old jobs"},
    {"serve", lwm2_cmd_serve, "the site portal: web pages and an API over the database"},
    {"config", lwm2_cmd_config, "lwm2.conf's settings as lwm2 reads them"},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: lwm2 COMMAND [OPTIONS] [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "  %-8s %s\n", "help", "this text; `lwm2 COMMAND --help` for a command");
	fprintf(f, "\nOptions: --version, --help.  See lwm2(1).\n");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	lwm2_log_open("lwm2");
	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0 ||
	    strcmp(cmd, "version") == 0) {
		printf("lwm2 %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		if (argc > 2) {
			for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
				if (strcmp(argv[2], cmds[i].name) == 0) {
					char *av[] = {argv[2], "--help", NULL};
					return cmds[i].fn(2, av);
				}
			}
		}
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(cmd, cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	/* not listed: what top and watch run on the nodes */
	if (strcmp(cmd, "snapshot") == 0)
		return lwm2_cmd_snapshot(argc - 1, argv + 1);
	lwm2_log_error("unknown command '%s'", cmd);
	usage(stderr);
	return 2;
}
