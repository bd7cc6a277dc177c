/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a site command reads its jobs (lwm2_cmds.h): the logs it is given
 * (--file), or the central database (--db, or lwm2.conf's Database=),
 * whose rows keep each job's log line.  Either way the command gets the
 * same lines in the same order, so its output is the same; the database
 * reads only the jobs the selection names, through its indexes.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "errmsg.h"
#include "jsonutil.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "numparse.h"

int lwm2_source_resolve(const char *cmd, struct lwm2_source *src, bool conf_default)
{
	src->db[0] = '\0';
	if (src->nfiles && src->db_given) {
		lwm2_log_error("%s: --file and --db exclude each other", cmd);
		return -1;
	}
	if (src->nfiles)
		return 0;
	if (src->db_given || conf_default)
		return lwm2_cmd_db_url(cmd, src->db_given, src->db, sizeof(src->db));
	return 0;
}

int lwm2_source_scan(const char *cmd, const struct lwm2_source *src,
                     const struct lwm2_db_select *sel, bool want_grid, lwm2_logline_fn fn,
                     void *arg)
{
	static const struct lwm2_db_select all = {.metric = -1};
	struct lwm2_db_lines_count c = {0};
	struct lwm2_db *db;
	char err[1024];
	int rc;

	if (!src->db[0])
		return lwm2_logscan_files(cmd, src->files, src->nfiles, fn, arg, NULL) < 0 ? -1 : 0;
	if (!(db = lwm2_db_open(src->db, LWM2_DB_READ, err, sizeof(err)))) {
		lwm2_log_error("%s: %s", cmd, err);
		return -1;
	}
	rc = lwm2_db_lines(db, cmd, sel ? sel : &all, want_grid, fn, arg, &c, err, sizeof(err));
	if (rc < 0)
		lwm2_log_error("%s: %s", cmd, err);
	if (c.missing)
		lwm2_log_error("%s: %lu of the jobs asked for have no log line in %s (stored by an "
		               "lwm2 before schema 2): `lwm2 db import` their logs again",
		               cmd, c.missing, src->db);
	lwm2_db_close(db);
	return rc < 0 || c.missing || c.bad ? -1 : 0;
}

/* The job lwm2_source_job looks for, and its last run's digest. */
struct find {
	int64_t job;
	json_object *digest;
	bool seen;
	const char *reason;
	char reason_buf[256];
};

static int job_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
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
	if (!(d = lwm2_logline_digest(l, why, sizeof(why))))
		return lwm2_errprintf(0, err, errlen, "job %" PRId64 ": %s", fd->job, why);
	/* a requeued job is logged once per run: the last one counts */
	json_object_put(fd->digest);
	fd->digest = d;
	fd->reason = NULL;
	return 0;
}

json_object *lwm2_source_job(const char *cmd, const struct lwm2_source *src, const char *job)
{
	struct find fd = {0};

	if (lwm2_parse_i64(job, NULL, 1, INT64_MAX, &fd.job) < 0) {
		lwm2_log_error("%s: --%s takes a plain job id, not '%s'", cmd,
		               src->db[0] ? "db" : "file", job);
		return NULL;
	}
	/* a file not read may hold the job's last run: no page then */
	if (lwm2_source_scan(
	        cmd, src, &(struct lwm2_db_select){.metric = -1, .job_ids = &fd.job, .njob_ids = 1},
	        true, job_line, &fd) < 0) {
		json_object_put(fd.digest);
		return NULL;
	}
	if (!fd.digest)
		lwm2_log_error("%s: job %s: %s", cmd, job,
		               fd.reason ? fd.reason
		                         : (fd.seen ? "no readable digest" : "not in the log"));
	return fd.digest;
}
