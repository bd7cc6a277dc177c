/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Steps 2 and 3 of a job (worker.c has the list): wait until its nodes are
 * done and the shared file system settled, collect and verify its node
 * records (spool.c), build the digest with its interference findings and
 * its application's history, and append the job's line to the JSON-lines
 * log (JobCompLoc).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "lwm2_digest.h"
#include "lwm2_history.h"
#include "worker_int.h"

/* One line, all or nothing: a failed write is cut off again so the file
 * stays one JSON object per line. */
static int append_line(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	struct stat st;
	size_t len = strlen(text);
	int saved;

	if (fd < 0)
		return -1;
	/* lwm2-jobend runs one process per job end, and the line and its
	 * newline are two writes: without the lock two jobs' lines could
	 * interleave, and a cut-off failed write could cut another's line.
	 * Released by close. */
	if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0)
		goto fail;
	if (lwm2_write_all(fd, text, len) < 0 || lwm2_write_all(fd, "\n", 1) < 0 ||
	    fdatasync(fd) < 0) {
		saved = errno;
		if (ftruncate(fd, st.st_size) < 0) {
			/* nothing better to do: the reader skips a bad line */
		}
		errno = saved;
		goto fail;
	}
	return close(fd);
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static char *status_part(const struct lwm2_jc_job *job, const char *status, const char *reason)
{
	json_object *o = json_object_new_object();
	char *s = NULL;
	const char *t;

	if (!o)
		return NULL;
	json_object_object_add(o, "v", json_object_new_int(LWM2_DIGEST_VERSION));
	json_object_object_add(o, "job_id", json_object_new_int64(job->job_id));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	t = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if (t && (s = malloc(strlen(LWM2_DIGEST_PREFIX) + strlen(t) + 1)))
		sprintf(s, "%s%s", LWM2_DIGEST_PREFIX, t);
	json_object_put(o);
	return s;
}

/* slurmctld may not have the user name at hand; looking it up (NSS, maybe
 * LDAP) is for this thread, never for log_record. */
static void resolve_user(struct lwm2_jc_job *job)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (job->user)
		return;
	if (getpwuid_r((uid_t)job->uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		job->user = strdup(res->pw_name);
}

static bool never_ran(const struct lwm2_jc_job *job)
{
	return job->start == 0 || job->node_count == 0 || !job->nodes || !*job->nodes;
}

/* Step 2 and the records of step 3, for a job that ran: 0 when c holds
 * them, 1 when not yet (job->next_try says when). */
static int wait_and_collect(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                            struct lwm2_jc_job *job, const atomic_bool *stop,
                            struct lwm2_jc_collected *c)
{
	int64_t now = lwm2_jc_now();

	if (!job->nodes_done) {
		bool waited_out = now - job->queued >= (int64_t)conf->late_wait;

		/* asking takes slurmctld's job read lock: never while fini
		 * waits for this thread */
		if (stop && atomic_load(stop))
			return 1;
		if (ops && ops->job_completing && !waited_out && ops->job_completing(job->job_id)) {
			job->next_try = now + 1;
			return 1;
		}
		if (waited_out && ops && ops->job_completing)
			lwm2_log_info(
			    "collect: job %" PRIu32
			    " still completing after %u s; digest from the records so far",
			    job->job_id, conf->late_wait);
		job->nodes_done = now;
	}
	if (now < job->nodes_done + (int64_t)conf->settle) {
		job->next_try = job->nodes_done + conf->settle;
		return 1;
	}
	/* asks slurmctld (job read lock) for a later run's start */
	if (stop && atomic_load(stop))
		return 1;
	if (lwm2_jc_collect(conf, ops, job, lwm2_jc_next_start(ops, job), c) < 0) {
		lwm2_log_error("collect: couldn't read %s/%" PRIu32 ": %s; trying again",
		               conf->spool_dir, job->job_id, strerror(errno));
		lwm2_jc_backoff(job, 2);
		return 1;
	}
	return 0;
}

/* Why a job has no digest ("status" and "reason" of its line). */
static const char *no_digest(const struct lwm2_jc_conf *conf, const struct lwm2_jc_job *job,
                             const struct lwm2_jc_collected *c, const char **status)
{
	const char *reason;

	if (never_ran(job)) {
		*status = "not_started";
		return "the job never ran";
	}
	*status = "no_records";
	if (c->rejected)
		return "every node record was rejected";
	if (c->why[0])
		return c->why;
	if (!(reason = lwm2_jc_spool_state(conf)))
		reason = "no node records: lwm2 was off for this job, or no step ran";
	return reason;
}

/* The digest of the job's records, with its interference findings, and
 * the job set against its application's earlier runs.  NULL when it could
 * not be built (logged, job->next_try set). */
static json_object *build_digest(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                                 struct lwm2_jc_job *job, const struct lwm2_jc_collected *c)
{
	struct lwm2_job_meta meta = {
	    .cluster = job->cluster,
	    .job_id = job->job_id,
	    .user = job->user,
	    .account = job->account,
	    .partition = job->partition,
	    .nodes = job->nodes,
	    .node_count = job->node_count,
	    .cpus_per_task = job->cpus_per_task,
	    .start = job->start,
	    .end = job->end,
	    .state = job->state,
	    .have_requests = true,
	    .cpus = job->total_cpus,
	    .time_limit_s = job->time_limit_s,
	    .time_unlimited = job->time_unlimited,
	    .mem_req_mb = job->mem_req_mb,
	    .mem_req_per_node_mb = job->mem_req_per_node_mb,
	    .gpus = job->gpus,
	    .gpus_known = job->gpus_known,
	    .advice_min_runtime_s = conf->advice_min_runtime,
	};
	json_object *digest;
	char why[256];

	if (!(digest = lwm2_job_digest_build(&meta, c->nodes, c->n))) {
		lwm2_log_error("digest: couldn't build the digest of job %" PRIu32 ": %s",
		               job->job_id, strerror(errno));
		lwm2_jc_backoff(job, 5);
		return NULL;
	}
	lwm2_jc_interference(ops, job, digest);
	/* The job against its application's earlier runs: a few entries of
	 * one index file, whatever the size of the log. */
	if (lwm2_history_update(conf->state_dir, digest, why, sizeof(why)) < 0)
		lwm2_log_error("history: couldn't compare job %" PRIu32
		               " with its application's history: %s",
		               job->job_id, why);
	return digest;
}

/* The job's line of the log.  NULL when out of memory. */
static json_object *log_line(const struct lwm2_jc_job *job, const char *status, const char *reason,
                             const struct lwm2_jc_collected *c, json_object *digest)
{
	json_object *line = lwm2_jc_job_to_json(job, false);

	if (!line)
		return NULL;
	json_object_object_add(line, "status", json_object_new_string(status));
	if (reason)
		json_object_object_add(line, "reason", json_object_new_string(reason));
	json_object_object_add(line, "records_accepted", json_object_new_int64((int64_t)c->n));
	json_object_object_add(line, "records_rejected", json_object_new_int64(c->rejected));
	if (c->missing)
		json_object_object_add(line, "records_missing", json_object_get(c->missing));
	if (digest)
		json_object_object_add(line, "digest", json_object_get(digest));
	return line;
}

/* What AdminComment gets: the compact digest, or why there is none (which
 * tells `lwm2 digest`); NULL for a job that never ran, or when it could
 * not be made (logged). */
static char *acct_part_of(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                          const struct lwm2_jc_job *job, json_object *digest, const char *status,
                          const char *reason)
{
	char *part;

	if (!digest)
		return strcmp(status, "not_started") ? status_part(job, status, reason) : NULL;
	part = lwm2_job_digest_compact(digest, conf->cap);
	if (!part)
		lwm2_log_error("digest: couldn't make the compact digest of job %" PRIu32
		               " within %zu bytes: %s; the log keeps the full one",
		               job->job_id, conf->cap, strerror(errno));
	return part;
}

int lwm2_jc_make_digest(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                        struct lwm2_jc_job *job, const atomic_bool *stop)
{
	struct lwm2_jc_collected c = {0};
	json_object *line = NULL, *digest = NULL;
	const char *status = "ok", *reason = NULL, *text;
	char *part;
	int rc = 1;

	resolve_user(job);
	if (!never_ran(job) && wait_and_collect(conf, ops, job, stop, &c) != 0)
		return 1;
	if (never_ran(job) || c.n == 0)
		reason = no_digest(conf, job, &c, &status);
	else if (!(digest = build_digest(conf, ops, job, &c)))
		goto out;
	if (!(line = log_line(job, status, reason, &c, digest)) ||
	    !(text = json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN))) {
		lwm2_log_error("log: couldn't format job %" PRIu32 ": out of memory", job->job_id);
		lwm2_jc_backoff(job, 5);
		goto out;
	}
	part = acct_part_of(conf, ops, job, digest, status, reason);
	if (append_line(conf->log_path, text) < 0) {
		lwm2_log_error("log: couldn't append the digest of job %" PRIu32
		               " to %s: %s; trying again",
		               job->job_id, conf->log_path, strerror(errno));
		free(part);
		lwm2_jc_backoff(job, 2);
		goto out;
	}
	lwm2_jc_export_queue(job, text); /* a file for the export thread; never waits */
	lwm2_jc_db_appended();           /* the worker's loop writes it, with the lines around it */
	free(job->acct_part);
	job->acct_part = part;
	job->logged = true;
	job->attempts = 0;
	job->next_try = 0;
	lwm2_log_verbose("digest: job %" PRIu32 " %s, %zu node records, %u rejected, %zu bytes "
	                 "for AdminComment",
	                 job->job_id, status, c.n, c.rejected, part ? strlen(part) : (size_t)0);
	rc = 0;
out:
	json_object_put(line);
	json_object_put(digest);
	lwm2_jc_collected_free(&c);
	return rc;
}
