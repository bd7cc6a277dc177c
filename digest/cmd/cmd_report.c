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

enum { OPT_SITE = LWM2_OPT_LONG, OPT_METRIC, OPT_SIZE, OPT_DB };

static const struct lwm2_optspec report_spec = {
    .cmd = "report",
    .usage = "Usage: lwm2 report -j JOBID [--file LOG | --db DATABASE] [-o FILE]\n"
             "       lwm2 report --site [--file LOG... | --db DATABASE] [-S TIME] [-E TIME]\n"
             "                   [--metric mpi|io|cpu] -o DIR\n"
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
		fprintf(stderr, "lwm2: report: job %s: no digest%s%s\n", job, reason ? ": " : "",
		        reason ? reason : " (see the message above)");
	free(reason);
	return d;
}

struct find {
	int64_t job;
	json_object *digest;
	bool seen;
	const char *reason;
	char reason_buf[256];
};

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct find *fd = arg;
	json_object *d;
	char why[256];

	if (ju_int_or(l->fields, "job_id", -1) != fd->job)
		return 0;
	fd->seen = true;
	if (!l->digest) {
		snprintf(fd->reason_buf, sizeof(fd->reason_buf), "%s",
		         ju_str(l->fields, "reason") ? ju_str(l->fields, "reason") : "no digest");
		fd->reason = fd->reason_buf;
		return 0;
	}
	if (!(d = lwm2_json_parse_at(l->digest, l->end))) {
		snprintf(err, errlen, "job %" PRId64 ": the digest is not JSON", fd->job);
		return -1;
	}
	if (lwm2_digest_validate(d, why, sizeof(why)) != 0) {
		snprintf(err, errlen, "job %" PRId64 ": %s", fd->job, why);
		json_object_put(d);
		return -1;
	}
	/* a requeued job is logged once per run: the last one counts */
	json_object_put(fd->digest);
	fd->digest = d;
	fd->reason = NULL;
	return 0;
}

static json_object *from_log(const struct lwm2_source *src, const char *job)
{
	struct find fd = {0};

	if (lwm2_parse_i64(job, NULL, 1, INT64_MAX, &fd.job) < 0) {
		fprintf(stderr, "lwm2: report: --%s takes a plain job id, not '%s'\n",
		        src->db[0] ? "db" : "file", job);
		return NULL;
	}
	/* a file not read may hold the job's last run: no page then */
	if (lwm2_source_scan(
	        "report", src,
	        &(struct lwm2_db_select){.metric = -1, .job_ids = &fd.job, .njob_ids = 1}, true,
	        on_line, &fd) < 0) {
		json_object_put(fd.digest);
		return NULL;
	}
	if (!fd.digest)
		fprintf(stderr, "lwm2: report: job %s: %s\n", job,
		        fd.reason ? fd.reason
		                  : (fd.seen ? "no readable digest" : "not in the log"));
	return fd.digest;
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
	default:
		if (sscanf(arg, "%dx%d", &cli->so.width, &cli->so.height) != 2 ||
		    cli->so.width < 10 || cli->so.height < 10 || cli->so.width > 10000 ||
		    cli->so.height > 10000) {
			fprintf(stderr, "lwm2: report: --size takes WxH, 10 to 10000 each\n");
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
		fprintf(stderr, "lwm2: report: --site needs --file LOG or a database (--db, or "
		                "lwm2.conf's Database=), and -o DIR, and no -j\n");
		return 2;
	}
	if (strcmp(so->metric, "mpi") && strcmp(so->metric, "io") && strcmp(so->metric, "cpu")) {
		fprintf(stderr, "lwm2: report: --metric is mpi, io or cpu\n");
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
		fprintf(stderr, "lwm2: report: unexpected argument '%s'\n", argv[first]);
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
		fprintf(stderr, "lwm2: report: give one job with -j; -S and -E are for --site\n");
		free(cli.src.files);
		return 2;
	}
	if (lwm2_source_resolve("report", &cli.src, false) < 0) {
		free(cli.src.files);
		return 2;
	}
	digest = cli.src.nfiles || cli.src.db[0] ? from_log(&cli.src, job)
	                                         : from_accounting(job, cli.cluster);
	free(cli.src.files);
	if (!digest)
		return 1;
	if (!out) {
		snprintf(defout, sizeof(defout), "lwm2-%.40s.html", job);
		out = defout;
	}
	f = strcmp(out, "-") ? fopen(out, "we") : stdout;
	if (!f) {
		fprintf(stderr, "lwm2: report: couldn't write %s: %s\n", out, strerror(errno));
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
		fprintf(stderr, "lwm2: report: couldn't write %s: %s\n", out, strerror(errno));
	json_object_put(digest);
	return rc;
}
