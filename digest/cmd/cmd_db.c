/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 db`: the central database of digests (db.h) kept by hand: logs
 * imported (a job already there is skipped, so importing again changes
 * nothing), the database checked, old jobs forgotten, room given back.
 * jobcomp/lwm2 keeps it up with its log by itself.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_opt.h"
#include "db.h"
#include "live_gather.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "numparse.h"
#include "site_stats.h"
#include "slurmutil.h"

int lwm2_cmd_db_url(const char *cmd, const char *given, char *out, size_t len)
{
	struct lwm2_live_conf *c;
	char err[1024];

	out[0] = '\0';
	if (given) {
		snprintf(out, len, "%s", given);
		return 0;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		lwm2_log_error("%s: %s", cmd, strerror(ENOMEM));
		return -1;
	}
	if (lwm2_live_conf_load(c, err, sizeof(err)) < 0) {
		lwm2_log_error("%s: %s", cmd, err);
		free(c);
		return -1;
	}
	snprintf(out, len, "%s", c->database);
	free(c);
	return 0;
}

enum { OPT_DB = LWM2_OPT_LONG, OPT_KEEP, OPT_BEFORE, OPT_THREADS };

static const struct lwm2_optspec db_spec = {
    .cmd = "db",
    .usage = "Usage: lwm2 db import [OPTIONS] LOG...\n"
             "       lwm2 db check|summarize|vacuum [OPTIONS]\n"
             "       lwm2 db forget (--keep MONTHS | --before TIME) [OPTIONS]\n"
             "The central database of digests: jobcomp/lwm2's JSON-lines logs imported\n"
             "(rotated, gzip, zstd; a job already there is skipped), checked, the whole\n"
             "days summed up for lwm2 stats, old jobs forgotten (their days' summaries\n"
             "stay), room given back.\n\n",
    .footer = LWM2_OPT_SACCT_TIME_HELP
    "DATABASE: a file's path, or sqlite:PATH.  Exit status: 0, 1 on failure (a log\n"
    "unreadable, the database not written or not sound), 2 usage.\n",
    .col = 27,
    .need = "action (import, check, summarize, forget or vacuum)",
    .opts = (const struct lwm2_opt[]){
        {"db", OPT_DB, "DATABASE", "the database (default: lwm2.conf's Database=)"},
        {"keep", OPT_KEEP, "MONTHS", "forget: keep the jobs of the last MONTHS months"},
        {"before", OPT_BEFORE, "TIME", "forget: the jobs that ended before TIME"},
        {"quiet", 'q', NULL, "import: no progress on a terminal"},
        {"threads", OPT_THREADS, "N",
         "import: threads that read the lines (default: the idle CPUs, 0 under 2, at most 8)"},
        {0},
    }};

struct db_cli {
	const char *db, *keep, *before, *threads;
	bool quiet;
};

static const struct lwm2_optstore db_store[] = {
    {OPT_DB, LWM2_OPT_ARG(struct db_cli, db)},
    {OPT_KEEP, LWM2_OPT_ARG(struct db_cli, keep)},
    {OPT_BEFORE, LWM2_OPT_ARG(struct db_cli, before)},
    {OPT_THREADS, LWM2_OPT_ARG(struct db_cli, threads)},
    {'q', LWM2_OPT_TRUE(struct db_cli, quiet)},
    {0},
};

static void progress(void *arg, const struct lwm2_db_count *c)
{
	(void)arg;
	fprintf(stderr, "\rlwm2: db: %lu lines read, %lu jobs added, %lu known", c->lines, c->added,
	        c->known);
}

/* Threads that read the lines of an import, beside the calling thread,
 * which writes the rows and reads lines too while its next one is not
 * ready: one for each idle CPU but the calling thread's (the load
 * average of the last minute), at least one where there are two CPUs,
 * at most THREADS_MAX.  With the calling thread's help one reading
 * thread costs nothing on busy CPUs and is the second CPU's work on idle
 * ones (the bench's 10,000 lines on two CPUs: idle, 0.77 to 0.89 s
 * without it, 0.51 to 0.58 s with it; beside 2 and 4 busy loops, 1.24
 * to 1.34 against 1.08 to 1.32 s and 2.74 to 3.12 against 2.55 to
 * 3.34 s). */
#define THREADS_MAX 8

static unsigned import_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	double idle, load;

	if (n < 2)
		return 0;
	idle = (double)n;
	if (getloadavg(&load, 1) == 1 && load > 0)
		idle -= load;
	idle = idle - 1 + 0.5; /* rounded, less the calling thread's */
	if (idle < 1)
		return 1;
	return idle > THREADS_MAX ? THREADS_MAX : (unsigned)idle;
}

static int do_import(struct lwm2_db *db, struct db_cli *cli, unsigned threads, char **logs,
                     size_t n)
{
	struct lwm2_db_count c = {0};
	bool tty = !cli->quiet && isatty(STDERR_FILENO);
	int rc = lwm2_db_import(db, "db", logs, n, threads, &c, tty ? progress : NULL, NULL);

	if (tty)
		fputc('\n', stderr);
	printf("%lu lines read, %lu jobs added, %lu already there, %lu lines skipped\n", c.lines,
	       c.added, c.known, c.bad);
	return rc < 0 ? 1 : 0;
}

/* The start of the month MONTHS months before this one (local time). */
static int64_t months_ago(unsigned long months)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	tm.tm_mon -= (int)months;
	return (int64_t)mktime(&tm);
}

static int do_forget(struct lwm2_db *db, struct db_cli *cli)
{
	char err[1024];
	int64_t before;
	uint64_t months;
	unsigned long removed, days;

	if (cli->keep) {
		if (lwm2_parse_u64(cli->keep, NULL, 1, 1200, &months) < 0) {
			lwm2_log_error("db: couldn't parse --keep \"%s\": want 1 to 1200 months",
			               cli->keep);
			return 2;
		}
		before = months_ago((unsigned long)months - 1);
	} else if (lwm2_cmd_time_opt("db", cli->before, &before) < 0) {
		return 2;
	}
	/* the days' summaries first: they stay when their jobs leave */
	if (lwm2_stats_summarize_db(db, &days, err, sizeof(err)) < 0 ||
	    lwm2_db_forget(db, before, &removed, err, sizeof(err)) < 0) {
		lwm2_log_error("db: %s", err);
		return 1;
	}
	printf("%lu jobs that ended before @%" PRId64 " forgotten\n", removed, before);
	return 0;
}

int lwm2_cmd_db(int argc, char **argv)
{
	struct db_cli cli = {0};
	char url[1024], err[1024];
	struct lwm2_db *db;
	const char *action;
	unsigned threads = import_threads();
	int first = lwm2_opt_parse_store(&db_spec, db_store, argc, argv, NULL, &cli), rc;
	bool import;

	if (first < 0)
		return lwm2_opt_status(first);
	action = argv[first];
	import = !strcmp(action, "import");
	if (!import && strcmp(action, "check") && strcmp(action, "forget") &&
	    strcmp(action, "vacuum") && strcmp(action, "summarize")) {
		lwm2_log_error(
		    "db: unknown action \"%s\": want import, check, forget, summarize or "
		    "vacuum",
		    action);
		return 2;
	}
	if (import != (first + 1 < argc)) {
		if (import)
			lwm2_log_error("db: import: no LOG given");
		else
			lwm2_log_error("db: %s takes no LOG", action);
		return 2;
	}
	if (!strcmp(action, "forget") == !(cli.keep || cli.before) || (cli.keep && cli.before)) {
		lwm2_log_error("db: forget takes one of --keep and --before, and only it "
		               "does");
		return 2;
	}
	if (cli.threads) {
		uint64_t t;

		if (lwm2_parse_u64(cli.threads, NULL, 0, 64, &t) < 0) {
			lwm2_log_error("db: couldn't parse --threads \"%s\": want 0 to 64",
			               cli.threads);
			return 2;
		}
		threads = (unsigned)t;
	}
	if (lwm2_cmd_db_url("db", cli.db, url, sizeof(url)) < 0)
		return 1;
	if (!url[0]) {
		lwm2_log_error("db: no database: give --db DATABASE, or Database= in "
		               "lwm2.conf");
		return 2;
	}
	db = lwm2_db_open(url, strcmp(action, "check") ? LWM2_DB_WRITE : LWM2_DB_READ, err,
	                  sizeof(err));
	if (!db) {
		lwm2_log_error("db: %s", err);
		return 1;
	}
	if (import) {
		rc = do_import(db, &cli, threads, argv + first + 1, (size_t)(argc - first - 1));
	} else if (!strcmp(action, "check")) {
		rc = lwm2_db_check(db, stdout, err, sizeof(err));
		if (rc < 0)
			lwm2_log_error("db: %s", err);
		rc = rc != 0;
	} else if (!strcmp(action, "forget")) {
		rc = do_forget(db, &cli);
	} else if (!strcmp(action, "summarize")) {
		unsigned long days;

		rc = lwm2_stats_summarize_db(db, &days, err, sizeof(err)) < 0;
		if (rc)
			lwm2_log_error("db: %s", err);
		else
			printf("%lu days summed up\n", days);
	} else {
		rc = lwm2_db_vacuum(db, err, sizeof(err)) < 0;
		if (rc)
			lwm2_log_error("db: %s", err);
	}
	lwm2_db_close(db);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		lwm2_log_error("db: couldn't write the output: %s", strerror(errno));
		rc = 1;
	}
	return rc;
}
