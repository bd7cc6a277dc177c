/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 report`: the digest of a job as one self-contained HTML page, or
 * the site pages (statistics, space-time grid, users, jobs, nodes) as a
 * directory of static files.
 *
 * A job's digest comes from Slurm accounting by default, read through
 * `lwm2 digest` so that slurmdbd's PrivateData decides exactly as it does
 * there; that is the compact form, and the page says what it cannot show.
 * With --file the full digest comes from jobcomp/lwm2's log.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_digest.h"
#include "cmd_io.h"
#include "db.h"
#include "jsonutil.h"
#include "logscan.h"
#include "lwm2_cmds.h"
#include "cmd_opt.h"
#include "lwm2_digest.h"
#include "numparse.h"
#include "report.h"
#include "site_stats.h"
#include "log.h"
#include "errmsg.h"

enum { OPT_SITE = LWM2_OPT_LONG, OPT_METRIC, OPT_SIZE, OPT_DB, OPT_HIST };

static const struct lwm2_optspec report_spec = {
    .cmd = "report",
    .usage = "Usage: lwm2 report -j JOBID [--file LOG | --db DATABASE] [-o FILE]\n"
             "       lwm2 report --site [--file LOG... | --db DATABASE] [-S TIME] [-E TIME]\n"
             "                   [--metric mpi|io|cpu] [--histogram METRIC] -o DIR\n"
             "The digest of a job as one self-contained HTML page with plots, or the\n"
             "site pages (statistics, space-time grid, users, jobs, nodes).\n\n",
    .footer = "TIME: now, now-N[s|m|h|d], YYYY-MM-DD[THH:MM[:SS]], or @EPOCH.\n"
              "Exit status: 0, 1 when the job has no digest or a file could not be\n"
              "read or written, 2 usage.\n",
    .col = 25,
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"job", 'j', "JOBID", "the job (from Slurm accounting unless --file)"},
        {"jobs", 'j', "JOBID", NULL},
        {"file", 'f', "LOG",
         "read jobcomp/lwm2's JSON-lines log: the full digest\n"
         "with per-process values and time slices (several\n"
         "allowed, patterns, gzip and zstd: see lwm2(1))"},
        {"db", OPT_DB, "DATABASE",
         "read the central database instead (lwm2 db);\n"
         "--site: lwm2.conf's Database= without --file"},
        {"output", 'o', "FILE|DIR",
         "job: the page (default lwm2-JOBID.html, - for\n"
         "stdout); --site: the directory (made if needed)"},
        {"cluster", 'M', "NAME", "cluster in accounting (default: slurm.conf's)"},
        {"site", OPT_SITE, NULL, "the site pages from the log(s) or the database"},
        {"starttime", 'S', "TIME", "site: jobs that ended at or after TIME"},
        {"endtime", 'E', "TIME", "site: jobs that ended at or before TIME"},
        {"metric", OPT_METRIC, "M",
         "site grid colour: mpi (MPI share, default), io (file\n"
         "I/O bytes/s) or cpu (CPU cycles/s)"},
        {"histogram", OPT_HIST, "METRIC",
         "site: a histogram of the jobs over a digest metric\n"
         "(as lwm2 stats --histogram) below the distributions"},
        {"size", OPT_SIZE, "WxH",
         "site grid: at most W slices by H node rows drawn\n"
         "(default 1000x600); more are aggregated"},
        {0},
    }};

/* ------------------------------------------------------------ sources */

/* The job's last run as accounting has it: its digest, else its reason. */
static json_object *from_accounting(const char *job, const char *cluster)
{
	char *reason = NULL;
	json_object *d = lwm2_digest_last_run(job, cluster, &reason);

	if (!d)
		lwm2_log_error("report: job %s: no digest%s%s", job, reason ? ": " : "",
		               reason ? reason : " (see the message above)");
	free(reason);
	return d;
}

/* ------------------------------------------------------------ main */

/* The command line as read. */
struct report_cli {
	const char *job, *out, *cluster;
	struct rp_site_opts so;
	struct lwm2_source src;
	bool site;
};

static int report_opt(void *ctx, int key, char *arg)
{
	struct report_cli *cli = ctx;

	switch (key) {
	case 'j':
		cli->job = arg;
		break;
	case 'f':
		return lwm2_cmd_push_arg(&cli->src.files, &cli->src.nfiles, arg) < 0 ? LWM2_OPT_FAIL
		                                                                     : 0;
	case OPT_DB:
		cli->src.db_given = arg;
		break;
	case 'o':
		cli->out = arg;
		break;
	case 'M':
		cli->cluster = arg;
		break;
	case 'S':
		cli->so.start = arg;
		break;
	case 'E':
		cli->so.end = arg;
		break;
	case OPT_SITE:
		cli->site = true;
		break;
	case OPT_METRIC:
		cli->so.metric = arg;
		break;
	case OPT_HIST:
		cli->so.histogram = arg;
		break;
	default:
		if (sscanf(arg, "%dx%d", &cli->so.width, &cli->so.height) != 2 ||
		    cli->so.width < 10 || cli->so.height < 10 || cli->so.width > 10000 ||
		    cli->so.height > 10000) {
			lwm2_log_error("report: --size takes WxH, 10 to 10000 each");
			return LWM2_OPT_USAGE;
		}
		break;
	}
	return 0;
}

/* --site: the site pages (exit status). */
static int report_site(struct report_cli *cli)
{
	struct rp_site_opts *so = &cli->so;

	if (lwm2_source_resolve("report", &cli->src, true) < 0)
		return 2;
	if ((!cli->src.nfiles && !cli->src.db[0]) || !cli->out || cli->job) {
		lwm2_log_error("report: --site needs --file LOG or a database (--db, or "
		               "lwm2.conf's Database=), and -o DIR, and no -j");
		return 2;
	}
	if (strcmp(so->metric, "mpi") && strcmp(so->metric, "io") && strcmp(so->metric, "cpu")) {
		lwm2_log_error("report: --metric is mpi, io or cpu");
		return 2;
	}
	if (so->histogram) {
		struct lwm2_stats probe = {0};

		if (lwm2_stats_hist_set(&probe, "report", so->histogram, NULL) < 0)
			return 2;
	}
	so->src = &cli->src;
	so->outdir = cli->out;
	return rp_site(so);
}

int lwm2_cmd_report(int argc, char **argv)
{
	struct report_cli cli = {.so = {.metric = "mpi", .width = 1000, .height = 600}};
	const char *job, *out;
	char defout[64];
	int rc = 0, first = lwm2_opt_parse(&report_spec, argc, argv, report_opt, &cli);
	json_object *digest;
	FILE *f;

	if (first >= 0 && first < argc) {
		lwm2_log_error("report: unexpected argument '%s'", argv[first]);
		first = LWM2_OPT_USAGE;
	}
	if (first < 0 || cli.site) {
		rc = first < 0 ? lwm2_opt_status(first) : report_site(&cli);
		free(cli.src.files);
		return rc;
	}
	job = cli.job;
	out = cli.out;
	if (!job || cli.so.start || cli.so.end) {
		lwm2_log_error("report: give one job with -j; -S and -E are for --site");
		free(cli.src.files);
		return 2;
	}
	if (lwm2_source_resolve("report", &cli.src, false) < 0) {
		free(cli.src.files);
		return 2;
	}
	digest = cli.src.nfiles || cli.src.db[0] ? lwm2_source_job("report", &cli.src, job)
	                                         : from_accounting(job, cli.cluster);
	free(cli.src.files);
	if (!digest)
		return 1;
	{
		struct lwm2_derived_set derived = {0};
		int bad = lwm2_cmd_derived_conf("report", &derived);

		lwm2_derived_apply(&derived, digest);
		lwm2_derived_free(&derived);
		if (bad < 0) {
			json_object_put(digest);
			return 1;
		}
	}
	if (!out) {
		snprintf(defout, sizeof(defout), "lwm2-%.40s.html", job);
		out = defout;
	}
	f = strcmp(out, "-") ? fopen(out, "we") : stdout;
	if (!f) {
		lwm2_log_error("report: couldn't write %s: %s", out, strerror(errno));
		json_object_put(digest);
		return 1;
	}
	{
		struct rp_job_opts jo = {.source = cli.src.nfiles  ? "log"
		                                   : cli.src.db[0] ? "database"
		                                                   : "accounting"};
		if (rp_job_page(f, digest, &jo) != 0)
			rc = 1;
	}
	if (f != stdout ? fclose(f) != 0 : fflush(f) != 0)
		rc = 1;
	if (rc)
		lwm2_log_error("report: couldn't write %s: %s", out, strerror(errno));
	json_object_put(digest);
	return rc;
}
