/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 export --file LOG [-S TIME] [-E TIME] [-j JOBS] (--url URL | --dry-run)
 *
 * The jobs of jobcomp/lwm2's JSON-lines log as InfluxDB line protocol
 * (lineproto.h), sent to a time-series engine in batches, or printed.
 * Back-fills what the plugin's export could not send, or serves sites that
 * export from another host.  Points are idempotent, so running it again
 * over the same jobs doubles nothing.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd_io.h"
#include "jsonutil.h"
#include "lineproto.h"
#include "logscan.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "numparse.h"
#include "log.h"
#include "errmsg.h"

struct ctx {
	int64_t start, end;
	char **jobs;
	size_t njobs;
	bool dry_run;
	unsigned retries;
	size_t batch;
	struct lwm2_lp_sender *sender;
	struct lwm2_lp_buf buf;
	struct lwm2_lp_stats stats;
	size_t jobs_done, batches, rejected_batches, bytes, wire;
	bool failed;
	const char *where; /* log path and line of the job being formatted */
	unsigned long lineno;
};

enum { O_URL = LWM2_OPT_LONG, O_DB, O_ORG, O_CRED, O_BATCH, O_TIMEOUT, O_RETRIES, O_NOGZIP };

/* The command line as read. */
struct export_cli {
	struct ctx *c;
	struct lwm2_lp_target t;
	const char *cred;
	char **files;
	size_t nfiles;
};

static const struct lwm2_optspec export_spec = {
    .cmd = "export",
    .usage = "Usage: lwm2 export --file LOG [OPTIONS] (--url URL | --dry-run)\n"
             "Send the jobs of jobcomp/lwm2's JSON-lines log to a time-series engine as\n"
             "InfluxDB line protocol: one point per job, step, node and time slice\n"
             "(lwm2_slice) and one per job (lwm2_job).  Sending a job again overwrites\n"
             "its points with the same values.\n\n",
    .footer = "\n" LWM2_OPT_TIME_HELP ".  See lwm2(1).\n",
    .col = 31,
    .usage_on_error = true,
    .no_operands = true,
    .opts = (const struct lwm2_opt[]){
        {"file", 'f', "LOG",
         "the log (\"-\": standard input; several\nallowed, patterns, gzip and zstd: see "
         "lwm2(1))"},
        {"starttime", 'S', "TIME", "jobs that ran after TIME"},
        {"endtime", 'E', "TIME", "jobs that ran before TIME"},
        {"jobs", 'j', "JOBID[,JOBID...]", "only these jobs"},
        {"url", O_URL, "URL",
         "the engine's write endpoint, e.g.\nhttp://influx:8086/write (see "
         "lwm2(1))"},
        {"database", O_DB, "DB", "db= (bucket= for /api/v2/write)"},
        {"org", O_ORG, "ORG", "org= (InfluxDB 2.x /api/v2/write)"},
        {"credentials", O_CRED, "FILE", "user=, password=, token= lines"},
        {"batch", O_BATCH, "N", "points per request (default 5000)"},
        {"timeout", O_TIMEOUT, "SECONDS", "per request (default 10)"},
        {"retries", O_RETRIES, "N", "tries per batch before giving up (default 5)"},
        {"no-gzip", O_NOGZIP, NULL, "send the text uncompressed"},
        {"dry-run", 'n', NULL, "print the lines instead of sending them"},
        {"help", 'h', NULL, "this text"},
        {0},
    }};

/* --batch, --timeout, --retries */
static int export_opt_number(struct export_cli *cli, int key, const char *arg)
{
	uint64_t v;

	if (lwm2_parse_u64(arg, NULL, 1, 1000000, &v) < 0)
		return lwm2_opt_error(&export_spec, LWM2_OPT_USAGE_HELP, "bad number \"%s\"", arg);
	if (key == O_BATCH)
		cli->c->batch = v;
	else if (key == O_TIMEOUT)
		cli->t.timeout_s = (unsigned)v;
	else
		cli->c->retries = (unsigned)v;
	return 0;
}

static int export_opt(void *ctx, int key, char *arg)
{
	struct export_cli *cli = ctx;
	struct ctx *c = cli->c;

	switch (key) {
	case 'f':
	case 'j':
		if ((key == 'f' ? lwm2_cmd_push_arg(&cli->files, &cli->nfiles, arg)
		                : lwm2_split_list(arg, &c->jobs, &c->njobs)) < 0)
			return lwm2_opt_error(&export_spec, LWM2_OPT_FAIL, "out of memory");
		break;
	case 'S':
	case 'E':
		if (lwm2_parse_time(arg, key == 'S' ? &c->start : &c->end) < 0)
			return lwm2_opt_error(&export_spec, LWM2_OPT_USAGE_HELP, "bad time \"%s\"",
			                      arg);
		break;
	case O_NOGZIP:
		cli->t.gzip = false;
		break;
	case 'n':
		c->dry_run = true;
		break;
	default:
		return export_opt_number(cli, key, arg);
	}
	return 0;
}

static int flush_batch(void *arg, const char *text, size_t len, size_t lines)
{
	struct ctx *c = arg;
	char err[512];
	unsigned delay = 1;

	c->batches++;
	c->bytes += len;
	if (c->dry_run) {
		if (fwrite(text, 1, len, stdout) != len) {
			lwm2_log_error("export: couldn't write the lines: %s", strerror(errno));
			c->failed = true;
			return -1;
		}
		return 0;
	}
	for (unsigned attempt = 1;; attempt++) {
		size_t wire = 0;
		int rc = lwm2_lp_send(c->sender, text, len, &wire, err, sizeof(err));

		if (rc == LWM2_LP_SENT) {
			c->wire += wire;
			return 0;
		}
		if (rc == LWM2_LP_REJECTED) {
			/* the engine kept the good points; the others are bad
			 * text that no retry would mend */
			fprintf(
			    stderr,
			    "lwm2: export: the engine refused part of a batch of %zu points (up "
			    "to %s line %lu): %s\n",
			    lines, c->where, c->lineno, err);
			c->rejected_batches++;
			c->wire += wire;
			return 0;
		}
		if (rc == LWM2_LP_ERROR || attempt >= c->retries) {
			lwm2_log_error("export: couldn't send a batch of %zu points (up to %s line "
			               "%lu): %s; stopped (sending again is harmless)",
			               lines, c->where, c->lineno, err);
			c->failed = true;
			return -1;
		}
		lwm2_log_warning("export: couldn't send a batch: %s; again in %u s", err, delay);
		sleep(delay);
		delay = delay < 30 ? 2 * delay : 60;
	}
}

static bool wanted(const struct ctx *c, json_object *fields)
{
	int64_t id = ju_int_or(fields, "job_id", 0), start = ju_int_or(fields, "start", 0),
	        end = ju_int_or(fields, "end", 0);

	if (c->njobs) {
		char b[32];
		bool hit = false;

		snprintf(b, sizeof(b), "%" PRId64, id);
		for (size_t i = 0; i < c->njobs && !hit; i++)
			hit = !strcmp(c->jobs[i], b);
		if (!hit)
			return false;
	}
	/* as `lwm2 digest` selects */
	return lwm2_cmd_ran_within(c->start, c->end, start, end);
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct ctx *c = arg;
	int rc;

	if (!wanted(c, l->fields))
		return 0;
	c->where = l->path;
	c->lineno = l->lineno;
	/* from the text: a large job's grid is a million numbers */
	rc = lwm2_lp_format_text(l->fields, l->digest, l->end, &c->buf, c->batch, flush_batch, c,
	                         &c->stats);
	if (rc < 0) {
		if (c->failed)
			return 1;
		return lwm2_errprintf(0, err, errlen, "couldn't format the points: %s",
		                      strerror(errno));
	}
	c->jobs_done++;
	return 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore export_store[] = {
    {O_URL, LWM2_OPT_ARG(struct export_cli, t.url)},
    {O_DB, LWM2_OPT_ARG(struct export_cli, t.database)},
    {O_ORG, LWM2_OPT_ARG(struct export_cli, t.org)},
    {O_CRED, LWM2_OPT_ARG(struct export_cli, cred)},
    {0},
};

int lwm2_cmd_export(int argc, char **argv)
{
	struct ctx c = {.retries = 5, .batch = 5000};
	struct export_cli cli = {.c = &c, .t = {.gzip = true, .timeout_s = 10}};
	struct lwm2_lp_target *t = &cli.t;
	char *user = NULL, *password = NULL, *token = NULL, err[512];
	struct lwm2_logscan_count count = {0};
	double t0;
	int rc = 1, scan, first;

	first = lwm2_opt_parse_store(&export_spec, export_store, argc, argv, export_opt, &cli);
	if (first < 0) {
		rc = lwm2_opt_status(first);
		goto out;
	}
	if (!cli.nfiles) {
		lwm2_log_error("export: --file LOG is required");
		goto usage_err;
	}
	if (!c.dry_run && !t->url) {
		lwm2_log_error("export: --url URL or --dry-run is required");
		goto usage_err;
	}
	if (!c.dry_run) {
		if (cli.cred) {
			/* a person's own file: readable by its owner only is still
			 * required, root ownership is not */
			if (lwm2_lp_read_credentials(cli.cred, false, &user, &password, &token, err,
			                             sizeof(err)) < 0) {
				lwm2_log_error("export: %s", err);
				goto out;
			}
			t->user = user;
			t->password = password;
			t->token = token;
		}
		if (!(c.sender = lwm2_lp_sender_new(t, err, sizeof(err)))) {
			lwm2_log_error("export: %s", err);
			goto out;
		}
	}
	t0 = now_s();
	/* The jobs of the files that were read still go out; the exit
	 * status says that one was not. */
	scan = lwm2_logscan_files("export", cli.files, cli.nfiles, on_line, &c, &count);
	if (!c.failed && c.buf.lines && flush_batch(&c, c.buf.p, c.buf.len, c.buf.lines) < 0)
		goto out;
	if (c.failed)
		goto out;
	if (c.dry_run && fflush(stdout) != 0) {
		lwm2_log_error("export: couldn't write the lines: %s", strerror(errno));
		goto out;
	}
	{
		double dt = now_s() - t0;
		size_t points = c.stats.slice_points + c.stats.job_points;

		if (c.dry_run)
			fprintf(
			    stderr,
			    "lwm2: export: %zu jobs, %zu points (%zu slice, %zu job), %zu bytes "
			    "printed in %.3f s (%.0f points/s)\n",
			    c.jobs_done, points, c.stats.slice_points, c.stats.job_points, c.bytes,
			    dt, dt > 0 ? (double)points / dt : 0.0);
		else
			lwm2_log_error(
			    "export: %zu jobs, %zu points (%zu slice, %zu job) in %zu "
			    "batches, %zu bytes (%zu on the wire) sent in %.3f s (%.0f "
			    "points/s)%s",
			    c.jobs_done, points, c.stats.slice_points, c.stats.job_points,
			    c.batches, c.bytes, c.wire, dt, dt > 0 ? (double)points / dt : 0.0,
			    c.rejected_batches ? "; the engine refused points, see above" : "");
	}
	rc = c.rejected_batches || count.bad || scan < 0 ? 1 : 0;
	goto out;
usage_err:
	lwm2_opt_usage(&export_spec, stderr);
	rc = 2;
out:
	free(cli.files);
	lwm2_lp_sender_free(c.sender);
	lwm2_lp_buf_free(&c.buf);
	for (size_t i = 0; i < c.njobs; i++)
		free(c.jobs[i]);
	free(c.jobs);
	if (password)
		explicit_bzero(password, strlen(password));
	if (token)
		explicit_bzero(token, strlen(token));
	free(user);
	free(password);
	free(token);
	return rc;
}
