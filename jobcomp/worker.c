/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The worker thread of jobcomp/lwm2: everything slow happens here, never
 * under slurmctld's locks.  Per job:
 *
 *   1. persist: the job goes to the state dir before anything else;
 *   2. wait for the nodes: until slurmctld no longer holds the job as
 *      COMPLETING (every node's stepds are gone, so every node record that
 *      will ever come is in the spool), at most LateRecordWait, plus
 *      RecordSettle for the shared file system;
 *   3. collect and verify the node records (munge, root, this job), build
 *      the digest, append it to the JSON-lines log (JobCompLoc);
 *   4. queue the AdminComment modification behind slurmctld's own
 *      job-complete record (same FIFO to slurmdbd, so it lands after it);
 *   5. read it back after VerifyDelay; if it is not there (slurmdbd was
 *      down, another tool overwrote the field), merge again into what is
 *      there now and queue again, with backoff, up to RetryMax.
 *
 * No step sleeps: a job that has to wait gets a next_try time and the
 * worker goes on with the others.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "grid.h"
#include "lwm2_digest.h"
#include "lwm2_history.h"
#include "lwm2_jobcomp.h"
#include "numparse.h"

#define BACKOFF_MAX  300
#define LOG_PART_MAX 65535 /* AdminComment is a MySQL text column */
/* Slurm starts a requeued job no sooner than its credential lifetime (at
 * least 5 s) plus one second after the requeue: a node record written
 * more than this before a run's start belongs to an earlier run. */
#define RUN_SLACK  3
#define BATCH_STEP 0xfffffffbu

/* ------------------------------------------------------------ logging */

__attribute__((format(printf, 3, 4))) static void jlog(const struct lwm2_jc_ops *ops, int level,
                                                       const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!ops || !ops->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ops->log(level, msg);
}

static int64_t now_epoch(void)
{
	return (int64_t)time(NULL);
}

static void backoff(struct lwm2_jc_job *job, unsigned base)
{
	unsigned shift = job->attempts < 16 ? job->attempts : 16;
	uint64_t d = (uint64_t)(base ? base : 1) << shift;

	if (d > BACKOFF_MAX)
		d = BACKOFF_MAX;
	job->attempts++;
	job->next_try = now_epoch() + (int64_t)d;
}

/* ------------------------------------------------------------ collect */

struct collected {
	json_object **nodes;
	size_t n, cap;
	unsigned rejected;
	/* steps that left a marker but no record: [{"step","node","reason"}] */
	json_object *missing;
	char why[512]; /* the first of them, for the reason of a job without records */
};

static void collected_free(struct collected *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		json_object_put(c->nodes[i]);
	free(c->nodes);
	json_object_put(c->missing);
	memset(c, 0, sizeof(*c));
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), l = strlen(suffix);

	return name[0] != '.' && n > l && !strcmp(name + n - l, suffix);
}

/* What slurmstepd leaves for a step in <spool>/<job>: the signed node
 * record, and the markers spank_lwm2 writes (empty files) when a step
 * starts and when its record could not be written. */
static int is_spool_file(const struct dirent *d)
{
	return has_suffix(d->d_name, ".lwm2node") || has_suffix(d->d_name, ".lwm2start") ||
	       has_suffix(d->d_name, ".lwm2fail");
}

/*
 * Does a file written at mtime belong to this run of the job?  Node record
 * file names carry no run, so a requeued job's runs are told apart by
 * time: a run's records are written after it started and before its nodes
 * were done, and the next run starts only after that.
 */
static bool in_run(const struct lwm2_jc_job *job, int64_t mtime, int64_t next_start)
{
	if (job->restart_count > 0 && job->start && mtime < job->start - RUN_SLACK)
		return false;
	if (next_start > 0 && mtime >= next_start - RUN_SLACK)
		return false;
	return true;
}

static int64_t next_start_of(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job)
{
	return ops && ops->next_run_start ? ops->next_run_start(job) : 0;
}

/* "<step>.<node>" of a spool file name, and the errno of a fail marker
 * ("<step>.<node>.<errno>.lwm2fail"). */
static void stem_of(const char *name, char *stem, size_t len, int *err)
{
	const char *dot = strrchr(name, '.');
	size_t n = dot ? (size_t)(dot - name) : strlen(name);

	*err = 0;
	if (dot && !strcmp(dot, ".lwm2fail")) {
		const char *e = n ? memrchr(name, '.', n) : NULL;

		if (e) {
			*err = atoi(e + 1);
			n = (size_t)(e - name);
		}
	}
	if (n >= len)
		n = len - 1;
	memcpy(stem, name, n);
	stem[n] = '\0';
}

static void add_missing(struct collected *c, const char *stem, const char *reason)
{
	char step[32] = "", node[256] = "", text[512];
	const char *dot = strchr(stem, '.');
	unsigned long sid;
	json_object *o;

	if (!dot)
		return;
	snprintf(node, sizeof(node), "%s", dot + 1);
	sid = strtoul(stem, NULL, 10);
	if (sid == BATCH_STEP)
		snprintf(step, sizeof(step), "batch");
	else
		snprintf(step, sizeof(step), "%lu", sid);
	if (!c->missing && !(c->missing = json_object_new_array()))
		return;
	if (!(o = json_object_new_object()))
		return;
	json_object_object_add(o, "step", json_object_new_string(step));
	json_object_object_add(o, "node", json_object_new_string(node));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_array_add(c->missing, o);
	if (!c->why[0]) {
		snprintf(text, sizeof(text), "step %s on %s: %s", step, node, reason);
		snprintf(c->why, sizeof(c->why), "%s", text);
	}
}

static bool stem_listed(char **stems, size_t n, const char *stem)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(stems[i], stem))
			return true;
	return false;
}

/* Every node record of this run of the job in the spool, verified; a
 * forged or foreign one is logged and left out, the others count.  Steps
 * whose markers say they started, or failed to write their record, but
 * have no record, are listed with what happened.  -1 only when the spool
 * itself cannot be read (try again later). */
static int collect(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                   const struct lwm2_jc_job *job, int64_t next_start, struct collected *c)
{
	char dir[4096], err[256], stem[300];
	struct dirent **list;
	int dirfd, n, i;
	char **seen = NULL, **started = NULL, **failed = NULL;
	int *fail_err = NULL;
	size_t nseen = 0, nstarted = 0, nfailed = 0;
	struct lwm2_verify_opts vo = {
	    .uid = conf->signer_uid,
	    .cluster = job->cluster,
	    .munge_socket = conf->munge_socket,
	    .max_size = 0,
	};

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), "%s/%" PRIu32, conf->spool_dir, job->job_id);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT ? 0 : -1;
	if ((n = scandir(dir, &list, is_spool_file, alphasort)) < 0) {
		int saved = errno;

		close(dirfd);
		errno = saved;
		return -1;
	}
	/* at most n of each */
	seen = calloc((size_t)n + 1, sizeof(*seen));
	started = calloc((size_t)n + 1, sizeof(*started));
	failed = calloc((size_t)n + 1, sizeof(*failed));
	fail_err = calloc((size_t)n + 1, sizeof(*fail_err));
	if (!seen || !started || !failed || !fail_err)
		goto nomem;
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;
		json_object *rec;
		struct stat st;
		int e;

		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !in_run(job, (int64_t)st.st_mtime, next_start))
			continue;
		stem_of(name, stem, sizeof(stem), &e);
		if (has_suffix(name, ".lwm2start")) {
			if (!(started[nstarted++] = strdup(stem)))
				goto nomem;
			continue;
		}
		if (has_suffix(name, ".lwm2fail")) {
			fail_err[nfailed] = e;
			if (!(failed[nfailed++] = strdup(stem)))
				goto nomem;
			continue;
		}
		if (!(seen[nseen++] = strdup(stem)))
			goto nomem;
		err[0] = '\0';
		rec = lwm2_node_read_verified(dirfd, name, job->job_id, &vo, err, sizeof(err));
		if (!rec) {
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: collect: couldn't accept node record %s/%s of job %" PRIu32
			     ": %s",
			     dir, name, job->job_id, err[0] ? err : strerror(errno));
			c->rejected++;
		} else {
			if (c->n == c->cap) {
				size_t ncap = c->cap ? 2 * c->cap : 16;
				json_object **nn = realloc(c->nodes, ncap * sizeof(*nn));

				if (!nn) {
					json_object_put(rec);
					goto nomem;
				}
				c->nodes = nn;
				c->cap = ncap;
			}
			c->nodes[c->n++] = rec;
		}
	}
	for (size_t k = 0; k < nfailed; k++) {
		char reason[300];
		int e = fail_err[k];

		if (stem_listed(seen, nseen, failed[k]))
			continue;
		snprintf(reason, sizeof(reason),
		         "node record could not be written: %s (%s) on the spool",
		         e > 0 ? strerror(e) : "unknown error",
		         e > 0 && strerrorname_np(e) ? strerrorname_np(e) : "?");
		add_missing(c, failed[k], reason);
	}
	for (size_t k = 0; k < nstarted; k++)
		if (!stem_listed(seen, nseen, started[k]) &&
		    !stem_listed(failed, nfailed, started[k]))
			add_missing(
			    c, started[k],
			    "step ended without its node record (its slurmstepd was killed, or "
			    "the node failed)");
	i = 0;
	goto out;
nomem:
	collected_free(c);
	errno = ENOMEM;
	i = -1;
out:
	for (int k = 0; k < n; k++)
		free(list[k]);
	free(list);
	for (size_t k = 0; seen && k < nseen; k++)
		free(seen[k]);
	for (size_t k = 0; started && k < nstarted; k++)
		free(started[k]);
	for (size_t k = 0; failed && k < nfailed; k++)
		free(failed[k]);
	free(seen);
	free(started);
	free(failed);
	free(fail_err);
	close(dirfd);
	if (i < 0)
		errno = ENOMEM;
	return i;
}

/* Why there is no record at all when no marker says: what the spool looks
 * like from here (the same file system the nodes write to). */
static const char *spool_state(const struct lwm2_jc_conf *conf)
{
	struct statvfs sv;

	if (statvfs(conf->spool_dir, &sv) < 0)
		return NULL;
	if (sv.f_flag & ST_RDONLY)
		return "no node records: the spool is read-only (EROFS), node records could not "
		       "be written";
	if (sv.f_bavail == 0 || (sv.f_files && sv.f_favail == 0))
		return "no node records: the spool is full (ENOSPC), node records could not be "
		       "written";
	return NULL;
}

/* This run's files in the spool, and the job's directory once empty.  A
 * later run's files stay. */
static void remove_records(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                           const struct lwm2_jc_job *job, int64_t next_start)
{
	char dir[4096];
	struct dirent **list;
	int dirfd, n, i;

	snprintf(dir, sizeof(dir), "%s/%" PRIu32, conf->spool_dir, job->job_id);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return;
	if ((n = scandir(dir, &list, is_spool_file, alphasort)) >= 0) {
		for (i = 0; i < n; i++) {
			struct stat st;

			if (fstatat(dirfd, list[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    in_run(job, (int64_t)st.st_mtime, next_start))
				unlinkat(dirfd, list[i]->d_name, 0);
			free(list[i]);
		}
		free(list);
	}
	close(dirfd);
	/* fails while something else (a requeued run) is in there: fine */
	if (rmdir(dir) < 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
		jlog(ops, LWM2_JC_VERBOSE, "lwm2: cleanup: couldn't remove %s: %s", dir,
		     strerror(errno));
}

/* ------------------------------------------------------------ the log */

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

/* ------------------------------------------------------------ one job */

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

/* ------------------------------------------------------------ grid */

/* The slices of recent jobs, for the interference rule (grid.h): bounded
 * in cells and age, so slurmctld's memory does not grow with the log.  It
 * starts empty: after a restart, jobs that ended before it are not seen
 * (`lwm2 grid --interference` over the log sees them). */
static pthread_mutex_t grid_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lwm2_grid recent = {.max_cells = LWM2_GRID_WORKER_CELLS,
                                  .keep_s = LWM2_GRID_WORKER_KEEP_S};

/* Add the digest's slices to the index and its interference findings to
 * the digest ("interference", kept in the compact form too). */
static void add_interference(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job,
                             json_object *digest)
{
	struct timespec a, b;
	json_object *f = NULL;
	size_t nf = 0, jobs, cells;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_mutex_lock(&grid_mu);
	if (lwm2_grid_add(&recent, digest) == 0)
		f = lwm2_grid_interference(&recent, job->job_id, NULL);
	jobs = recent.njobs;
	cells = recent.ncells;
	pthread_mutex_unlock(&grid_mu);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (f && (nf = json_object_array_length(f)))
		json_object_object_add(digest, "interference", f);
	else
		json_object_put(f);
	jlog(ops, LWM2_JC_VERBOSE,
	     "lwm2: grid: job %" PRIu32 ": %zu interference findings in %.1f ms (%zu jobs, %zu "
	     "cells in the index)",
	     job->job_id, nf,
	     (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6, jobs,
	     cells);
}

/* Steps 2 and 3.  0: logged (job->acct_part set where AdminComment gets
 * something), 1: not yet. */
static int make_digest(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                       struct lwm2_jc_job *job, const atomic_bool *stop)
{
	struct collected c = {0};
	json_object *line = NULL, *digest = NULL;
	const char *status, *reason = NULL, *text;
	char *part = NULL;
	int64_t now = now_epoch();
	int rc = 1;

	resolve_user(job);
	if (!never_ran(job)) {
		if (!job->nodes_done) {
			bool waited_out = now - job->queued >= (int64_t)conf->late_wait;

			/* asking takes slurmctld's job read lock: never while
			 * fini waits for this thread */
			if (stop && atomic_load(stop))
				return 1;
			if (ops && ops->job_completing && !waited_out &&
			    ops->job_completing(job->job_id)) {
				job->next_try = now + 1;
				return 1;
			}
			if (waited_out && ops && ops->job_completing)
				jlog(ops, LWM2_JC_INFO,
				     "lwm2: collect: job %" PRIu32
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
		if (collect(conf, ops, job, next_start_of(ops, job), &c) < 0) {
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: collect: couldn't read %s/%" PRIu32 ": %s; trying again",
			     conf->spool_dir, job->job_id, strerror(errno));
			backoff(job, 2);
			return 1;
		}
	}

	if (never_ran(job)) {
		status = "not_started";
		reason = "the job never ran";
	} else if (c.n == 0) {
		status = "no_records";
		if (c.rejected)
			reason = "every node record was rejected";
		else if (c.why[0])
			reason = c.why;
		else if (!(reason = spool_state(conf)))
			reason = "no node records: lwm2 was off for this job, or no step ran";
	} else {
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
		    .mem_req_mb = job->mem_req_mb,
		    .mem_req_per_node_mb = job->mem_req_per_node_mb,
		    .gpus = job->gpus,
		    .gpus_known = job->gpus_known,
		};

		if (!(digest = lwm2_job_digest_build(&meta, c.nodes, c.n))) {
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: digest: couldn't build the digest of job %" PRIu32 ": %s",
			     job->job_id, strerror(errno));
			backoff(job, 5);
			goto out;
		}
		add_interference(ops, job, digest);
		status = "ok";
		/* The job against its application's earlier runs: a few
		 * entries of one index file, whatever the size of the log. */
		{
			char why[256];
			if (lwm2_history_update(conf->state_dir, digest, why, sizeof(why)) < 0)
				jlog(ops, LWM2_JC_ERROR,
				     "lwm2: history: couldn't compare job %" PRIu32
				     " with its application's history: %s",
				     job->job_id, why);
		}
	}

	if (!(line = lwm2_jc_job_to_json(job, false)))
		goto nomem;
	json_object_object_add(line, "status", json_object_new_string(status));
	if (reason)
		json_object_object_add(line, "reason", json_object_new_string(reason));
	json_object_object_add(line, "records_accepted", json_object_new_int64((int64_t)c.n));
	json_object_object_add(line, "records_rejected", json_object_new_int64(c.rejected));
	if (c.missing)
		json_object_object_add(line, "records_missing", json_object_get(c.missing));
	if (digest)
		json_object_object_add(line, "digest", json_object_get(digest));
	if (!(text = json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN)))
		goto nomem;

	if (digest) {
		part = lwm2_job_digest_compact(digest, conf->cap);
		if (!part)
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: digest: couldn't make the compact digest of job %" PRIu32
			     " within %zu bytes: %s; the log keeps the full one",
			     job->job_id, conf->cap, strerror(errno));
	} else if (strcmp(status, "not_started")) {
		/* tells `lwm2 digest` why there is no digest */
		part = status_part(job, status, reason);
	}

	if (append_line(conf->log_path, text) < 0) {
		jlog(ops, LWM2_JC_ERROR,
		     "lwm2: log: couldn't append the digest of job %" PRIu32 " to %s: %s; trying "
		     "again",
		     job->job_id, conf->log_path, strerror(errno));
		free(part);
		backoff(job, 2);
		goto out;
	}
	lwm2_jc_export_queue(job, text); /* a file for the export thread; never waits */
	free(job->acct_part);
	job->acct_part = part;
	job->logged = true;
	job->attempts = 0;
	job->next_try = 0;
	jlog(ops, LWM2_JC_VERBOSE,
	     "lwm2: digest: job %" PRIu32 " %s, %zu node records, %u rejected, %zu bytes for "
	     "AdminComment",
	     job->job_id, status, c.n, c.rejected, part ? strlen(part) : (size_t)0);
	rc = 0;
	goto out;
nomem:
	jlog(ops, LWM2_JC_ERROR, "lwm2: log: couldn't format job %" PRIu32 ": out of memory",
	     job->job_id);
	backoff(job, 5);
out:
	json_object_put(line);
	json_object_put(digest);
	collected_free(&c);
	return rc;
}

/* Does comment hold exactly our part? */
static bool has_part(const char *comment, const char *part)
{
	size_t off, len;

	return comment && lwm2_jc_comment_find(comment, &off, &len) == 0 && len == strlen(part) &&
	       !memcmp(comment + off, part, len);
}

static int send_part(const struct lwm2_jc_ops *ops, struct lwm2_jc_job *job, const char *base,
                     const struct lwm2_jc_conf *conf)
{
	char *merged = lwm2_jc_comment_merge(base, job->acct_part, LOG_PART_MAX);

	if (!merged) {
		jlog(ops, LWM2_JC_ERROR,
		     "lwm2: accounting: couldn't put the digest of job %" PRIu32
		     " into AdminComment: %s; the log keeps it",
		     job->job_id, errno == E2BIG ? "other text leaves no room" : strerror(errno));
		return -1;
	}
	if (ops->acct_modify(job, merged) < 0) {
		jlog(ops, LWM2_JC_ERROR,
		     "lwm2: accounting: couldn't queue the AdminComment of job %" PRIu32
		     ": %s; trying again",
		     job->job_id, strerror(errno));
		free(merged);
		backoff(job, 5);
		return 1;
	}
	free(merged);
	job->acct_sent = true;
	job->next_try = now_epoch() + conf->verify_delay;
	return 1;
}

/* The part is in the field: keep looking until VerifyWindow seconds after
 * the job's end, since another tool (jobstats from EpilogSlurmctld) may
 * still write the whole field and wipe it. */
static int watch(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                 struct lwm2_jc_job *job, const atomic_bool *stop)
{
	int64_t now = now_epoch(),
	        until = (job->end ? job->end : job->queued) + conf->verify_window;

	if (!job->confirmed) {
		jlog(ops, LWM2_JC_DEBUG,
		     "lwm2: accounting: job %" PRIu32 " AdminComment holds the digest",
		     job->job_id);
		job->confirmed = true;
		job->attempts = 0;
		/* the part is all that is needed from here on: the spool
		 * need not wait for the window (asks slurmctld, so not while
		 * stopping) */
		if (!conf->keep_records && !(stop && atomic_load(stop)))
			remove_records(conf, ops, job, next_start_of(ops, job));
	}
	if (now >= until)
		return 0;
	backoff(job, conf->verify_delay ? conf->verify_delay : 1);
	if (job->next_try > until)
		job->next_try = until;
	return 1;
}

/* Seconds the worker waits between its read of AdminComment and the
 * re-check before its write: only for the tests, which make another tool
 * write the whole field in that window (LWM2_JC_TEST_WRITE_DELAY). */
static unsigned test_write_delay(void)
{
	const char *v = getenv("LWM2_JC_TEST_WRITE_DELAY");
	uint64_t n;

	return v && lwm2_parse_u64(v, NULL, 0, 60, &n) == 0 ? (unsigned)n : 0;
}

#define RECHECK_MAX 3

/*
 * Another tool may write the whole field between the read and the write
 * (jobstats from EpilogSlurmctld): read it again right before the write
 * and merge into what it holds then, as long as it keeps changing (at most
 * RECHECK_MAX times).  Returns the value to merge into; takes comment.
 */
static char *recheck(const struct lwm2_jc_ops *ops, struct lwm2_jc_job *job, char *comment,
                     const atomic_bool *stop)
{
	unsigned delay = test_write_delay();
	int i;

	if (delay) {
		jlog(ops, LWM2_JC_INFO,
		     "lwm2: accounting: job %" PRIu32
		     " waits %u s between reading and writing AdminComment (test)",
		     job->job_id, delay);
		for (unsigned s = 0; s < delay * 10 && !(stop && atomic_load(stop)); s++)
			nanosleep(&(struct timespec){.tv_nsec = 100000000}, NULL);
	}
	for (i = 0; i < RECHECK_MAX; i++) {
		char *now = NULL;

		if (ops->acct_read(job, &now) != LWM2_JC_ACCT_ENDED) {
			free(now);
			break;
		}
		if ((!now && !comment) || (now && comment && !strcmp(now, comment))) {
			free(now);
			break;
		}
		jlog(ops, LWM2_JC_VERBOSE,
		     "lwm2: accounting: job %" PRIu32
		     " AdminComment changed since it was read (another tool); merging into the "
		     "new value",
		     job->job_id);
		free(comment);
		comment = now;
	}
	return comment;
}

int lwm2_jc_process(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    struct lwm2_jc_job *job, const atomic_bool *stop)
{
	enum lwm2_jc_acct_state st;
	char *comment = NULL;
	bool again;
	int rc;

	if (job->end && now_epoch() - job->end > (int64_t)conf->retry_max) {
		jlog(ops, LWM2_JC_ERROR,
		     "lwm2: worker: couldn't finish job %" PRIu32
		     " within RetryMax=%u s: giving up",
		     job->job_id, conf->retry_max);
		return -1;
	}
	/* slurmctld may report a run's end twice (killed after log_record,
	 * it comes back with the job still running, and ends it again) */
	if (!job->logged && lwm2_jc_state_is_done(conf->state_dir, job)) {
		jlog(ops, LWM2_JC_INFO,
		     "lwm2: worker: job %" PRIu32 " (start %" PRId64
		     ") has its digest already; its end reported again is left out",
		     job->job_id, job->start);
		return 0;
	}
	if (!job->logged && (rc = make_digest(conf, ops, job, stop)) != 0)
		return rc;
	if (stop && atomic_load(stop))
		return 1;
	if (!job->acct_part || !conf->admin_comment || !ops || !ops->acct_modify)
		goto done;

	if (!ops->acct_read) {
		/* no way to read the field: merge into what the job had */
		if (!job->acct_sent && send_part(ops, job, job->admin_comment, conf) > 0 &&
		    !job->acct_sent)
			return 1;
		goto done;
	}

	/*
	 * Read, merge, write: the part goes into what the field holds when the
	 * job's record is in accounting, never into the copy log_record took
	 * (another tool may have written the field since).  Reading first
	 * also means the job-complete record is applied, so nothing of
	 * slurmctld's comes after the change.
	 */
	st = ops->acct_read(job, &comment);
	switch (st) {
	case LWM2_JC_ACCT_ENDED:
		if (has_part(comment, job->acct_part)) {
			free(comment);
			rc = watch(conf, ops, job, stop);
			if (rc == 0)
				goto done;
			return rc;
		}
		/* Not there: not sent yet, the modification was lost with
		 * slurmdbd, or a tool wrote the whole field after it.  Merge
		 * into what is there now, so the other text survives. */
		if (job->acct_sent)
			jlog(ops, LWM2_JC_VERBOSE,
			     "lwm2: accounting: job %" PRIu32
			     " AdminComment lacks the digest%s; queueing it again",
			     job->job_id, job->confirmed ? " (written over by another tool)" : "");
		again = job->acct_sent;
		job->acct_sent = false;
		job->confirmed = false;
		comment = recheck(ops, job, comment, stop);
		rc = send_part(ops, job, comment, conf);
		free(comment);
		if (rc < 0)
			goto done;
		if (again && job->acct_sent)
			backoff(job, conf->verify_delay ? conf->verify_delay : 1);
		return 1;
	case LWM2_JC_ACCT_GONE:
		jlog(ops, LWM2_JC_INFO,
		     "lwm2: accounting: job %" PRIu32
		     " is not in accounting; the log keeps its digest",
		     job->job_id);
		free(comment);
		goto done;
	case LWM2_JC_ACCT_NOT_ENDED:
	case LWM2_JC_ACCT_UNREACHABLE:
	default:
		free(comment);
		backoff(job, conf->verify_delay);
		return 1;
	}
done:
	if (!conf->keep_records) {
		/* asks slurmctld for a later run's start: not while stopping */
		if (stop && atomic_load(stop))
			return 1;
		remove_records(conf, ops, job, next_start_of(ops, job));
	}
	/* Without the mark, a restart would take a job whose records stay
	 * (KeepNodeRecords) for one that was lost, and an end reported again
	 * would overwrite the digest with one of no records. */
	if (lwm2_jc_state_mark_done(conf->state_dir, job) < 0) {
		jlog(ops, LWM2_JC_VERBOSE,
		     "lwm2: state: couldn't mark job %" PRIu32 " done in %s: %s", job->job_id,
		     conf->state_dir, strerror(errno));
	}
	return 0;
}

/* ------------------------------------------------------------ recovery */

static bool has_evidence(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	bool found = false;

	if (!d) {
		close(dfd);
		return false;
	}
	while (!found && (de = readdir(d)))
		found = is_spool_file(de);
	closedir(d);
	return found;
}

int lwm2_jc_recover(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops, int64_t since,
                    bool (*is_pending)(uint32_t job_id, void *arg),
                    void (*fn)(struct lwm2_jc_job *job, void *arg), void *arg, bool *again)
{
	DIR *d;
	struct dirent *de;
	int64_t now = now_epoch();
	int handed = 0;

	*again = false;
	if (!ops || !ops->job_lookup)
		return 0;
	if (!(d = opendir(conf->spool_dir)))
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		struct lwm2_jc_job *job = NULL;
		unsigned long id;
		struct stat st;
		char *end;
		int dfd, rc;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		errno = 0;
		id = strtoul(de->d_name, &end, 10);
		if (errno || *end || id == 0 || id > UINT32_MAX)
			continue;
		/* older than RetryMax: it would be given up at once; last
		 * written before the previous start: not lost by a crash
		 * since, but done (records kept) or left by an older version */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || (int64_t)st.st_mtime < since ||
		    (conf->retry_max && (int64_t)st.st_mtime < now - (int64_t)conf->retry_max))
			continue;
		dfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd < 0 || !has_evidence(dfd))
			continue;
		if (is_pending((uint32_t)id, arg))
			continue;
		rc = ops->job_lookup((uint32_t)id, &job);
		if (rc < 0) {
			if (errno == EAGAIN)
				*again = true;
			else
				jlog(ops, LWM2_JC_INFO,
				     "lwm2: recover: %s/%lu holds node records of a job neither "
				     "slurmctld nor accounting knows; left as it is",
				     conf->spool_dir, id);
			continue;
		}
		if (rc == 0 || !job)
			continue;
		if (lwm2_jc_state_is_done(conf->state_dir, job)) {
			lwm2_jc_job_free(job);
			continue;
		}
		jlog(ops, LWM2_JC_INFO,
		     "lwm2: recover: job %" PRIu32 " (start %" PRId64
		     ") has node records in the spool but was neither queued nor done "
		     "(slurmctld stopped before it was kept): digesting it now",
		     job->job_id, job->start);
		fn(job, arg);
		handed++;
	}
	closedir(d);
	return handed;
}

/* ------------------------------------------------------------ the thread */

struct pending {
	struct pending *next;
	struct lwm2_jc_job *job;
	bool saved;
};

/*
 * Two threads: the keeper writes each job log_record hands over to the
 * state dir at once, and only then passes it to the worker; the worker
 * does everything slow (waiting for the nodes, munge, the log, slurmdbd).
 * A worker stuck in a call to a hung slurmdbd thus never leaves a finished
 * job in memory only.
 */
static struct {
	pthread_mutex_t lock; /* conf.log_path and running */
	struct lwm2_jc_conf conf;
	struct lwm2_jc_ops ops;
	struct lwm2_jc_queue *queue; /* log_record -> keeper */
	struct lwm2_jc_queue *ready; /* keeper -> worker, in the state dir */
	pthread_t thread, keeper;
	bool running;
	atomic_bool stop;
	struct pending *pending;
	int64_t rescan; /* when to look for lost jobs in the spool again */
	int64_t since;  /* the previous start: lost jobs ended after it */
} w = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int dup_conf(struct lwm2_jc_conf *dst, const struct lwm2_jc_conf *src)
{
	*dst = *src;
	dst->log_path = src->log_path ? strdup(src->log_path) : NULL;
	dst->spool_dir = src->spool_dir ? strdup(src->spool_dir) : NULL;
	dst->state_dir = src->state_dir ? strdup(src->state_dir) : NULL;
	dst->munge_socket = src->munge_socket ? strdup(src->munge_socket) : NULL;
	if ((src->log_path && !dst->log_path) || (src->spool_dir && !dst->spool_dir) ||
	    (src->state_dir && !dst->state_dir) || (src->munge_socket && !dst->munge_socket)) {
		lwm2_jc_conf_free(dst);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void add_pending(struct lwm2_jc_job *job, bool saved)
{
	struct pending *p, **tail;

	/* the same run twice (recovered from the spool, then handed over
	 * again by slurmctld): one is enough */
	for (p = w.pending; p; p = p->next)
		if (p->job->job_id == job->job_id && p->job->start == job->start) {
			jlog(&w.ops, LWM2_JC_DEBUG,
			     "lwm2: worker: job %" PRIu32 " (start %" PRId64 ") is queued already",
			     job->job_id, job->start);
			lwm2_jc_job_free(job);
			return;
		}
	if (!(p = calloc(1, sizeof(*p)))) {
		jlog(&w.ops, LWM2_JC_ERROR,
		     "lwm2: worker: couldn't keep job %" PRIu32 ": out of memory%s", job->job_id,
		     saved ? "; it stays in the state dir" : "");
		lwm2_jc_job_free(job);
		return;
	}
	p->job = job;
	p->saved = saved;
	for (tail = &w.pending; *tail; tail = &(*tail)->next)
		;
	*tail = p;
}

static bool save_job(struct lwm2_jc_job *job)
{
	if (lwm2_jc_state_save(w.conf.state_dir, job) < 0) {
		jlog(&w.ops, LWM2_JC_ERROR,
		     "lwm2: state: couldn't save job %" PRIu32 " in %s: %s; kept in memory",
		     job->job_id, w.conf.state_dir, strerror(errno));
		return false;
	}
	return true;
}

static void save(struct pending *p)
{
	p->saved = save_job(p->job);
}

static void resume_one(struct lwm2_jc_job *job, void *arg)
{
	(void)arg;
	job->next_try = 0; /* after a restart, try at once */
	job->nodes_done = 0;
	add_pending(job, true);
}

static bool is_pending(uint32_t job_id, void *arg)
{
	struct pending *p;
	char prefix[16];
	struct dirent **list;
	int n, i;
	bool found = false;

	(void)arg;
	/* the lookup takes slurmctld's job read lock: never while stopping */
	if (atomic_load(&w.stop))
		return true;
	for (p = w.pending; p; p = p->next)
		if (p->job->job_id == job_id)
			return true;
	/* kept by the keeper, not yet taken by the worker */
	snprintf(prefix, sizeof(prefix), "%" PRIu32 ".", job_id);
	if ((n = scandir(w.conf.state_dir, &list, NULL, NULL)) < 0)
		return false;
	for (i = 0; i < n; i++) {
		if (!found && !strncmp(list[i]->d_name, prefix, strlen(prefix)) &&
		    has_suffix(list[i]->d_name, ".job"))
			found = true;
		free(list[i]);
	}
	free(list);
	return found;
}

static void recover_one(struct lwm2_jc_job *job, void *arg)
{
	(void)arg;
	job->saved = save_job(job);
	add_pending(job, job->saved);
}

static uint64_t progress(const struct lwm2_jc_job *job)
{
	return (uint64_t)job->logged | (uint64_t)job->acct_sent << 1 |
	       (uint64_t)job->confirmed << 2 | (uint64_t)(job->attempts & 0xffff) << 3 |
	       (uint64_t)(uintptr_t)job->acct_part << 19;
}

static void *keeper_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&w.stop)) {
		struct timespec dl, t0, t1;
		struct lwm2_jc_job *job;

		/* a bounded wait: a wake-up that comes just before the wait
		 * begins is not lost for long */
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += 1;
		if (!(job = lwm2_jc_queue_pop(w.queue, &dl)))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		job->saved = save_job(job);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		jlog(&w.ops, LWM2_JC_DEBUG, "lwm2: state: job %" PRIu32 " kept in %.2f ms",
		     job->job_id,
		     (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		         (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		if (lwm2_jc_queue_push(w.ready, job) < 0)
			jlog(&w.ops, LWM2_JC_ERROR, "lwm2: worker: couldn't hand a job over: %s%s",
			     strerror(errno), job->saved ? "; it stays in the state dir" : "");
	}
	return NULL;
}

static void take_ready(void)
{
	struct lwm2_jc_job *job;

	while ((job = lwm2_jc_queue_pop(w.ready, &(struct timespec){0, 0})))
		add_pending(job, job->saved);
}

/* Done marks older than RetryMax: a report of such a job would be given
 * up anyway. */
static void prune_done(void)
{
	struct dirent **list;
	int n, i, dfd;
	int64_t old = now_epoch() - (int64_t)w.conf.retry_max;

	if ((dfd = open(w.conf.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((n = scandir(w.conf.state_dir, &list, NULL, NULL)) >= 0) {
		for (i = 0; i < n; i++) {
			struct stat st;

			if (has_suffix(list[i]->d_name, ".done") &&
			    fstatat(dfd, list[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (int64_t)st.st_mtime < old)
				unlinkat(dfd, list[i]->d_name, 0);
			free(list[i]);
		}
		free(list);
	}
	close(dfd);
}

static void *worker_main(void *arg)
{
	prune_done();
	(void)arg;
	while (!atomic_load(&w.stop)) {
		struct pending **pp, *p;
		struct lwm2_jc_job *job;
		int64_t now = now_epoch(), next = INT64_MAX;
		struct timespec dl;

		take_ready();
		for (p = w.pending; p; p = p->next)
			if (!p->saved)
				save(p);

		/* at start (and again while a lookup asks for it): jobs whose
		 * records are in the spool but that nobody kept */
		if (now >= w.rescan && w.ops.job_lookup) {
			bool again = false;

			lwm2_jc_recover(&w.conf, &w.ops, w.since, is_pending, recover_one, NULL,
			                &again);
			w.rescan = again ? now + 30 : INT64_MAX;
		}
		if (w.rescan < next)
			next = w.rescan;

		for (pp = &w.pending; (p = *pp) && !atomic_load(&w.stop);) {
			int rc;
			uint64_t before;
			char conf_log[4096];
			struct lwm2_jc_conf conf;

			if (p->job->next_try > now) {
				if (p->job->next_try < next)
					next = p->job->next_try;
				pp = &p->next;
				continue;
			}
			pthread_mutex_lock(&w.lock);
			snprintf(conf_log, sizeof(conf_log), "%s", w.conf.log_path);
			pthread_mutex_unlock(&w.lock);
			conf = w.conf;
			conf.log_path = conf_log;
			before = progress(p->job);
			rc = lwm2_jc_process(&conf, &w.ops, p->job, &w.stop);
			if (rc == 1) {
				/* saved only when it changed what a restart would
				 * do (not for every poll of a completing job) */
				if (!p->saved || progress(p->job) != before)
					save(p);
				if (p->job->next_try < next)
					next = p->job->next_try;
				pp = &p->next;
				continue;
			}
			if (lwm2_jc_state_remove(w.conf.state_dir, p->job) < 0 && errno != ENOENT)
				jlog(&w.ops, LWM2_JC_ERROR,
				     "lwm2: state: couldn't remove the file of job %" PRIu32 ": %s",
				     p->job->job_id, strerror(errno));
			*pp = p->next;
			lwm2_jc_job_free(p->job);
			free(p);
			now = now_epoch();
		}
		if (atomic_load(&w.stop))
			break;
		now = now_epoch();
		clock_gettime(CLOCK_MONOTONIC, &dl);
		/* bounded, like the keeper's wait */
		if (next > now + 5)
			next = now + 5;
		if (next > now)
			dl.tv_sec += next - now;
		else
			continue;
		job = lwm2_jc_queue_pop(w.ready, &dl);
		if (job)
			add_pending(job, job->saved);
	}
	return NULL;
}

/*
 * When the plugin started last (StateDir/.started, touched now), less a
 * minute for clocks: jobs lost by a crash of slurmctld ended after it.
 * INT64_MAX at the first start: no job can be told lost then.
 */
static int64_t mark_start(const char *dir)
{
	char path[4096];
	struct stat st;
	int64_t since = INT64_MAX;
	int fd;

	snprintf(path, sizeof(path), "%s/.started", dir);
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		since = (int64_t)st.st_mtime - 60;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	return since;
}

int lwm2_jc_start(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops)
{
	int rc;

	pthread_mutex_lock(&w.lock);
	if (w.running) {
		pthread_mutex_unlock(&w.lock);
		return 0;
	}
	if (dup_conf(&w.conf, conf) < 0) {
		pthread_mutex_unlock(&w.lock);
		return -1;
	}
	w.ops = *ops;
	w.rescan = 0;
	atomic_store(&w.stop, false);
	w.queue = lwm2_jc_queue_new(conf->max_queued);
	w.ready = lwm2_jc_queue_new(SIZE_MAX);
	if (!w.queue || !w.ready) {
		lwm2_jc_queue_free(w.queue);
		lwm2_jc_queue_free(w.ready);
		w.queue = w.ready = NULL;
		lwm2_jc_conf_free(&w.conf);
		pthread_mutex_unlock(&w.lock);
		return -1;
	}
	if (mkdir(w.conf.state_dir, 0700) < 0 && errno != EEXIST)
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't create StateDir %s: %s",
		     w.conf.state_dir, strerror(errno));
	w.since = mark_start(w.conf.state_dir);
	if (lwm2_jc_state_load(w.conf.state_dir, resume_one, NULL, ops->log) < 0)
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't read StateDir %s: %s",
		     w.conf.state_dir, strerror(errno));
	else if (w.pending)
		jlog(ops, LWM2_JC_INFO, "lwm2: init: resuming pending jobs from %s",
		     w.conf.state_dir);
	lwm2_jc_export_start(&w.conf, ops); /* before the worker queues; errors logged */
	if ((rc = pthread_create(&w.keeper, NULL, keeper_main, NULL)) == 0 &&
	    (rc = pthread_create(&w.thread, NULL, worker_main, NULL))) {
		atomic_store(&w.stop, true);
		pthread_join(w.keeper, NULL);
	}
	if (rc) {
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't start the worker threads: %s",
		     strerror(rc));
		lwm2_jc_export_stop();
		lwm2_jc_queue_free(w.queue);
		lwm2_jc_queue_free(w.ready);
		w.queue = w.ready = NULL;
		lwm2_jc_conf_free(&w.conf);
		pthread_mutex_unlock(&w.lock);
		errno = rc;
		return -1;
	}
	w.running = true;
	pthread_mutex_unlock(&w.lock);
	return 0;
}

int lwm2_jc_set_log(const char *path)
{
	char *p;

	if (!path || !*path)
		return 0;
	if (!(p = strdup(path)))
		return -1;
	pthread_mutex_lock(&w.lock);
	free(w.conf.log_path);
	w.conf.log_path = p;
	pthread_mutex_unlock(&w.lock);
	return 0;
}

bool lwm2_jc_running(void)
{
	bool r;

	pthread_mutex_lock(&w.lock);
	r = w.running;
	pthread_mutex_unlock(&w.lock);
	return r;
}

int lwm2_jc_enqueue(struct lwm2_jc_job *job)
{
	/* w.queue is set before running and cleared after the join: a job
	 * that arrives outside that window has nowhere to go */
	if (!w.queue) {
		lwm2_jc_job_free(job);
		errno = ESRCH;
		return -1;
	}
	return lwm2_jc_queue_push(w.queue, job);
}

/* What the threads have not taken goes to the state dir. */
static void drain_to_state(struct lwm2_jc_queue *q)
{
	struct lwm2_jc_job *job;

	while ((job = lwm2_jc_queue_pop(q, &(struct timespec){0, 0}))) {
		if (!job->saved && lwm2_jc_state_save(w.conf.state_dir, job) < 0)
			jlog(&w.ops, LWM2_JC_ERROR,
			     "lwm2: fini: couldn't keep job %" PRIu32 " for the next start: lost",
			     job->job_id);
		lwm2_jc_job_free(job);
	}
}

void lwm2_jc_stop(void)
{
	struct pending *p, *next;
	struct lwm2_jc_queue *q;
	struct timespec dl;
	int rc, rk;

	pthread_mutex_lock(&w.lock);
	if (!w.running) {
		pthread_mutex_unlock(&w.lock);
		return;
	}
	w.running = false;
	pthread_mutex_unlock(&w.lock);
	lwm2_jc_export_stop(); /* jobs the worker still logs are queued on disk */

	atomic_store(&w.stop, true);
	lwm2_jc_queue_wake(w.queue);
	lwm2_jc_queue_wake(w.ready);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 60;
	rk = pthread_timedjoin_np(w.keeper, NULL, &dl);
	rc = pthread_timedjoin_np(w.thread, NULL, &dl);
	if (rc || rk) {
		/* Stuck in a call into slurmctld (a lock fini's caller holds),
		 * slurmdbd or the disk: leave it be.  Its jobs are in the
		 * state dir already, except those it holds in memory. */
		jlog(&w.ops, LWM2_JC_ERROR,
		     "lwm2: fini: couldn't stop the worker threads within 60 s: %s; leaving them",
		     strerror(rc ? rc : rk));
		if (rc)
			pthread_detach(w.thread);
		if (rk)
			pthread_detach(w.keeper);
		/* what they have not taken yet goes to the state dir; they
		 * take nothing more once they see the stop flag */
		if (!rk)
			drain_to_state(w.queue);
		if (!rc)
			drain_to_state(w.ready);
		return;
	}

	q = w.queue;
	w.queue = NULL;
	drain_to_state(q);
	drain_to_state(w.ready);
	lwm2_jc_queue_free(q);
	lwm2_jc_queue_free(w.ready);
	w.ready = NULL;
	for (p = w.pending; p; p = next) {
		next = p->next;
		if (!p->saved)
			save(p);
		if (!p->saved)
			jlog(&w.ops, LWM2_JC_ERROR,
			     "lwm2: fini: couldn't keep job %" PRIu32 " for the next start: lost",
			     p->job->job_id);
		lwm2_jc_job_free(p->job);
		free(p);
	}
	w.pending = NULL;
	lwm2_jc_conf_free(&w.conf);
	/* the worker has ended: nobody else touches the index */
	pthread_mutex_lock(&grid_mu);
	lwm2_grid_free(&recent);
	pthread_mutex_unlock(&grid_mu);
}
