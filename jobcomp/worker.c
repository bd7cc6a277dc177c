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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lwm2_digest.h"
#include "lwm2_jobcomp.h"

#define BACKOFF_MAX  300
#define LOG_PART_MAX 65535 /* AdminComment is a MySQL text column */

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
};

static void collected_free(struct collected *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		json_object_put(c->nodes[i]);
	free(c->nodes);
	memset(c, 0, sizeof(*c));
}

static int is_node_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 9 && !strcmp(d->d_name + n - 9, ".lwm2node");
}

/* Every node record of the job in the spool, verified; a forged or foreign
 * one is logged and left out, the others count.  -1 only when the spool
 * itself cannot be read (try again later). */
static int collect(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                   const struct lwm2_jc_job *job, struct collected *c)
{
	char dir[4096], err[256];
	struct dirent **list;
	int dirfd, n, i;
	struct lwm2_verify_opts vo = {
	    .uid = 0,
	    .cluster = job->cluster,
	    .munge_socket = conf->munge_socket,
	    .max_size = 0,
	};

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), "%s/%" PRIu32, conf->spool_dir, job->job_id);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT ? 0 : -1;
	if ((n = scandir(dir, &list, is_node_file, alphasort)) < 0) {
		int saved = errno;

		close(dirfd);
		errno = saved;
		return -1;
	}
	for (i = 0; i < n; i++) {
		json_object *rec;

		err[0] = '\0';
		rec = lwm2_node_read_verified(dirfd, list[i]->d_name, job->job_id, &vo, err,
		                              sizeof(err));
		if (!rec) {
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: collect: couldn't accept node record %s/%s of job %" PRIu32
			     ": %s",
			     dir, list[i]->d_name, job->job_id, err[0] ? err : strerror(errno));
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
		free(list[i]);
	}
	free(list);
	close(dirfd);
	return 0;
nomem:
	for (; i < n; i++)
		free(list[i]);
	free(list);
	close(dirfd);
	collected_free(c);
	errno = ENOMEM;
	return -1;
}

static void remove_records(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                           const struct lwm2_jc_job *job)
{
	char dir[4096];
	struct dirent **list;
	int dirfd, n, i;

	snprintf(dir, sizeof(dir), "%s/%" PRIu32, conf->spool_dir, job->job_id);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return;
	if ((n = scandir(dir, &list, is_node_file, alphasort)) >= 0) {
		for (i = 0; i < n; i++) {
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
	if (fstat(fd, &st) < 0)
		goto fail;
	if (lwm2_jc_write_all(fd, text, len) < 0 || lwm2_jc_write_all(fd, "\n", 1) < 0 ||
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
		if (collect(conf, ops, job, &c) < 0) {
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
		reason = c.rejected ? "every node record was rejected"
		                    : "no node records: lwm2 was off for this job, or no step ran";
	} else {
		struct lwm2_job_meta meta = {
		    .cluster = job->cluster,
		    .job_id = job->job_id,
		    .user = job->user,
		    .account = job->account,
		    .partition = job->partition,
		    .nodes = job->nodes,
		    .node_count = job->node_count,
		    .cpus_per_task = 0,
		    .start = job->start,
		    .end = job->end,
		    .state = job->state,
		};

		if (!(digest = lwm2_job_digest_build(&meta, c.nodes, c.n))) {
			jlog(ops, LWM2_JC_ERROR,
			     "lwm2: digest: couldn't build the digest of job %" PRIu32 ": %s",
			     job->job_id, strerror(errno));
			backoff(job, 5);
			goto out;
		}
		status = "ok";
	}

	if (!(line = lwm2_jc_job_to_json(job, false)))
		goto nomem;
	json_object_object_add(line, "status", json_object_new_string(status));
	if (reason)
		json_object_object_add(line, "reason", json_object_new_string(reason));
	json_object_object_add(line, "records_accepted", json_object_new_int64((int64_t)c.n));
	json_object_object_add(line, "records_rejected", json_object_new_int64(c.rejected));
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

int lwm2_jc_process(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    struct lwm2_jc_job *job, const atomic_bool *stop)
{
	enum lwm2_jc_acct_state st;
	char *comment = NULL;
	int rc;

	if (job->end && now_epoch() - job->end > (int64_t)conf->retry_max) {
		jlog(ops, LWM2_JC_ERROR,
		     "lwm2: worker: couldn't finish job %" PRIu32
		     " within RetryMax=%u s: giving up",
		     job->job_id, conf->retry_max);
		return -1;
	}
	if (!job->logged && (rc = make_digest(conf, ops, job, stop)) != 0)
		return rc;
	if (stop && atomic_load(stop))
		return 1;
	if (!job->acct_part || !conf->admin_comment || !ops || !ops->acct_modify)
		goto done;

	if (!job->acct_sent) {
		rc = send_part(ops, job, job->admin_comment, conf);
		if (rc < 0)
			goto done;
		return 1;
	}
	if (!ops->acct_read)
		goto done;

	st = ops->acct_read(job, &comment);
	switch (st) {
	case LWM2_JC_ACCT_ENDED:
		if (has_part(comment, job->acct_part)) {
			jlog(ops, LWM2_JC_DEBUG,
			     "lwm2: accounting: job %" PRIu32 " AdminComment holds the digest",
			     job->job_id);
			free(comment);
			goto done;
		}
		/* Not there: the modification was lost with slurmdbd, or a
		 * tool wrote the field after it.  Merge into what is there
		 * now, so the other text survives. */
		jlog(ops, LWM2_JC_VERBOSE,
		     "lwm2: accounting: job %" PRIu32
		     " AdminComment lacks the digest; queueing it again",
		     job->job_id);
		job->acct_sent = false;
		rc = send_part(ops, job, comment, conf);
		free(comment);
		if (rc < 0)
			goto done;
		backoff(job, conf->verify_delay);
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
	if (!conf->keep_records)
		remove_records(conf, ops, job);
	return 0;
}

/* ------------------------------------------------------------ the thread */

struct pending {
	struct pending *next;
	struct lwm2_jc_job *job;
	bool saved;
};

static struct {
	pthread_mutex_t lock; /* conf.log_path and running */
	struct lwm2_jc_conf conf;
	struct lwm2_jc_ops ops;
	struct lwm2_jc_queue *queue;
	pthread_t thread;
	bool running;
	atomic_bool stop;
	struct pending *pending;
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
	struct pending *p = calloc(1, sizeof(*p)), **tail;

	if (!p) {
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

static void save(struct pending *p)
{
	if (lwm2_jc_state_save(w.conf.state_dir, p->job) < 0) {
		jlog(&w.ops, LWM2_JC_ERROR,
		     "lwm2: state: couldn't save job %" PRIu32 " in %s: %s; kept in memory",
		     p->job->job_id, w.conf.state_dir, strerror(errno));
		p->saved = false;
	} else {
		p->saved = true;
	}
}

static void resume_one(struct lwm2_jc_job *job, void *arg)
{
	(void)arg;
	job->next_try = 0; /* after a restart, try at once */
	job->nodes_done = 0;
	add_pending(job, true);
}

static uint64_t progress(const struct lwm2_jc_job *job)
{
	return (uint64_t)job->logged | (uint64_t)job->acct_sent << 1 |
	       (uint64_t)(job->attempts & 0xffff) << 2 | (uint64_t)(uintptr_t)job->acct_part << 18;
}

static void *worker_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&w.stop)) {
		struct pending **pp, *p;
		struct lwm2_jc_job *job;
		int64_t now = now_epoch(), next = INT64_MAX;
		struct timespec dl;

		/* new jobs: persisted before any other work */
		while ((job = lwm2_jc_queue_pop(w.queue, &(struct timespec){0, 0}))) {
			add_pending(job, false);
		}
		for (p = w.pending; p; p = p->next)
			if (!p->saved)
				save(p);

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
		if (next == INT64_MAX)
			dl.tv_sec += 3600;
		else if (next > now)
			dl.tv_sec += next - now;
		else
			continue;
		job = lwm2_jc_queue_pop(w.queue, &dl);
		if (job)
			add_pending(job, false);
	}
	return NULL;
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
	atomic_store(&w.stop, false);
	if (!(w.queue = lwm2_jc_queue_new(conf->max_queued))) {
		lwm2_jc_conf_free(&w.conf);
		pthread_mutex_unlock(&w.lock);
		return -1;
	}
	if (mkdir(w.conf.state_dir, 0700) < 0 && errno != EEXIST)
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't create StateDir %s: %s",
		     w.conf.state_dir, strerror(errno));
	if (lwm2_jc_state_load(w.conf.state_dir, resume_one, NULL, ops->log) < 0)
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't read StateDir %s: %s",
		     w.conf.state_dir, strerror(errno));
	else if (w.pending)
		jlog(ops, LWM2_JC_INFO, "lwm2: init: resuming pending jobs from %s",
		     w.conf.state_dir);
	lwm2_jc_export_start(&w.conf, ops); /* before the worker queues; errors logged */
	if ((rc = pthread_create(&w.thread, NULL, worker_main, NULL))) {
		jlog(ops, LWM2_JC_ERROR, "lwm2: init: couldn't start the worker thread: %s",
		     strerror(rc));
		lwm2_jc_export_stop();
		lwm2_jc_queue_free(w.queue);
		w.queue = NULL;
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

void lwm2_jc_stop(void)
{
	struct lwm2_jc_job *job;
	struct pending *p, *next;
	struct lwm2_jc_queue *q;
	struct timespec dl;
	int rc;

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
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 60;
	if ((rc = pthread_timedjoin_np(w.thread, NULL, &dl))) {
		/* Stuck in a call into slurmctld (a lock fini's caller holds,
		 * or slurmdbd): leave it be.  Its jobs are in the state dir
		 * already, except those it holds in memory. */
		jlog(&w.ops, LWM2_JC_ERROR,
		     "lwm2: fini: couldn't stop the worker thread within 60 s: %s; leaving it",
		     strerror(rc));
		pthread_detach(w.thread);
		/* what it has not taken yet goes to the state dir; it takes
		 * nothing more once it sees the stop flag */
		while ((job = lwm2_jc_queue_pop(w.queue, &(struct timespec){0, 0}))) {
			if (lwm2_jc_state_save(w.conf.state_dir, job) < 0)
				jlog(&w.ops, LWM2_JC_ERROR,
				     "lwm2: fini: couldn't keep job %" PRIu32
				     " for the next start: lost",
				     job->job_id);
			lwm2_jc_job_free(job);
		}
		return;
	}

	q = w.queue;
	w.queue = NULL;
	while ((job = lwm2_jc_queue_pop(q, &(struct timespec){0, 0})))
		add_pending(job, false);
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
	lwm2_jc_queue_free(q);
	lwm2_jc_conf_free(&w.conf);
}
