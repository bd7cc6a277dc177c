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
 *      the digest, append it to the JSON-lines log (JobCompLoc); the
 *      lines go into the central database a group at a time (dbsync.c);
 *   4. queue the AdminComment modification behind slurmctld's own
 *      job-complete record (same FIFO to slurmdbd, so it lands after it);
 *   5. read it back after VerifyDelay; if it is not there (slurmdbd was
 *      down, another tool overwrote the field), merge again into what is
 *      there now and queue again, with backoff, up to RetryMax.
 *
 * No step sleeps: a job that has to wait gets a next_try time and the
 * worker goes on with the others.  One job's steps are lwm2_jc_process
 * (process.c, joblog.c, spool.c); this file has the threads that run them.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "worker_int.h"

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
			lwm2_log_debug("worker: job %" PRIu32 " (start %" PRId64
			               ") is queued already",
			               job->job_id, job->start);
			lwm2_jc_job_free(job);
			return;
		}
	if (!(p = calloc(1, sizeof(*p)))) {
		lwm2_log_error("worker: couldn't keep job %" PRIu32 ": out of memory%s",
		               job->job_id, saved ? "; it stays in the state dir" : "");
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
		lwm2_log_error("state: couldn't save job %" PRIu32 " in %s: %s; kept in memory",
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
		    lwm2_jc_has_suffix(list[i]->d_name, ".job"))
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
		lwm2_log_debug("state: job %" PRIu32 " kept in %.2f ms", job->job_id,
		               (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		                   (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		if (lwm2_jc_queue_push(w.ready, job) < 0)
			lwm2_log_error("worker: couldn't hand a job over: %s%s", strerror(errno),
			               job->saved ? "; it stays in the state dir" : "");
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
	int64_t old = lwm2_jc_now() - (int64_t)w.conf.retry_max;

	if ((dfd = open(w.conf.state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	if ((n = scandir(w.conf.state_dir, &list, NULL, NULL)) >= 0) {
		for (i = 0; i < n; i++) {
			struct stat st;

			if (lwm2_jc_has_suffix(list[i]->d_name, ".done") &&
			    fstatat(dfd, list[i]->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    (int64_t)st.st_mtime < old)
				unlinkat(dfd, list[i]->d_name, 0);
			free(list[i]);
		}
		free(list);
	}
	close(dfd);
}

/* The settings as they are now: JobCompLoc may change under the worker
 * (lwm2_jc_set_log), into log. */
static struct lwm2_jc_conf conf_now(char *log, size_t len)
{
	struct lwm2_jc_conf conf;

	pthread_mutex_lock(&w.lock);
	snprintf(log, len, "%s", w.conf.log_path);
	pthread_mutex_unlock(&w.lock);
	conf = w.conf;
	conf.log_path = log;
	return conf;
}

/* The lines the worker appended go into the database as a group
 * (dbsync.c): now when the group is due or the worker stops; else its
 * deadline (CLOCK_MONOTONIC, ns) is returned, INT64_MAX when no line
 * waits. */
static int64_t db_write_group(void)
{
	char conf_log[4096];
	struct lwm2_jc_conf conf;
	int64_t due = lwm2_jc_db_group_due();

	if (due == INT64_MAX || (due > lwm2_jc_monotonic_ns() && !atomic_load(&w.stop)))
		return due;
	conf = conf_now(conf_log, sizeof(conf_log));
	lwm2_jc_db_sync(&conf, &w.ops);
	return INT64_MAX;
}

/* One pass over the pending jobs: those due are run, those done go.  The
 * earliest next try of the others, or next. */
static int64_t run_due(int64_t now, int64_t next)
{
	struct pending **pp, *p;

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
		conf = conf_now(conf_log, sizeof(conf_log));
		before = progress(p->job);
		rc = lwm2_jc_process(&conf, &w.ops, p->job, &w.stop);
		db_write_group(); /* a long pass writes its groups as they fill */
		if (rc == 1) {
			/* saved only when it changed what a restart would do
			 * (not for every poll of a completing job) */
			if (!p->saved || progress(p->job) != before)
				save(p);
			if (p->job->next_try < next)
				next = p->job->next_try;
			pp = &p->next;
			continue;
		}
		if (lwm2_jc_state_remove(w.conf.state_dir, p->job) < 0 && errno != ENOENT)
			lwm2_log_error("state: couldn't remove the file of job %" PRIu32 ": %s",
			               p->job->job_id, strerror(errno));
		*pp = p->next;
		lwm2_jc_job_free(p->job);
		free(p);
		now = lwm2_jc_now();
	}
	return next;
}

/* A database that is behind the log (full, locked, its server down) is
 * tried again whether or not a job ends: once the fault is gone it
 * catches up by itself.  The earliest of its next try and next. */
static int64_t db_catch_up(int64_t next)
{
	char conf_log[4096];
	struct lwm2_jc_conf conf;
	int64_t due = lwm2_jc_db_retry_at();

	if (due <= lwm2_jc_now() && !atomic_load(&w.stop)) {
		conf = conf_now(conf_log, sizeof(conf_log));
		lwm2_jc_db_sync(&conf, &w.ops);
		due = lwm2_jc_db_retry_at();
	}
	return due < next ? due : next;
}

static void *worker_main(void *arg)
{
	prune_done();
	(void)arg;
	while (!atomic_load(&w.stop)) {
		struct pending *p;
		struct lwm2_jc_job *job;
		int64_t now = lwm2_jc_now(), next = INT64_MAX, group;
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
		next = run_due(now, next);
		group = db_write_group();
		next = db_catch_up(next);
		if (atomic_load(&w.stop))
			break;
		now = lwm2_jc_now();
		clock_gettime(CLOCK_MONOTONIC, &dl);
		/* bounded, like the keeper's wait */
		if (next > now + 5)
			next = now + 5;
		if (next > now)
			dl.tv_sec += next - now;
		else
			continue;
		/* more jobs may join the lines waiting for the database */
		if (group < (int64_t)dl.tv_sec * 1000000000 + dl.tv_nsec)
			dl = (struct timespec){.tv_sec = group / 1000000000,
			                       .tv_nsec = group % 1000000000};
		job = lwm2_jc_queue_pop(w.ready, &dl);
		if (job)
			add_pending(job, job->saved);
	}
	db_write_group(); /* stopping: the lines still waiting */
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
		lwm2_log_error("init: couldn't create StateDir %s: %s", w.conf.state_dir,
		               strerror(errno));
	w.since = mark_start(w.conf.state_dir);
	if (lwm2_jc_state_load(w.conf.state_dir, resume_one, NULL) < 0)
		lwm2_log_error("init: couldn't read StateDir %s: %s", w.conf.state_dir,
		               strerror(errno));
	else if (w.pending)
		lwm2_log_info("init: resuming pending jobs from %s", w.conf.state_dir);
	lwm2_jc_export_start(&w.conf, ops); /* before the worker queues; errors logged */
	if ((rc = pthread_create(&w.keeper, NULL, keeper_main, NULL)) == 0 &&
	    (rc = pthread_create(&w.thread, NULL, worker_main, NULL))) {
		atomic_store(&w.stop, true);
		pthread_join(w.keeper, NULL);
	}
	if (rc) {
		lwm2_log_error("init: couldn't start the worker threads: %s", strerror(rc));
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
			lwm2_log_error("fini: couldn't keep job %" PRIu32
			               " for the next start: lost",
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
		lwm2_log_error(
		    "fini: couldn't stop the worker threads within 60 s: %s; leaving them",
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
			lwm2_log_error("fini: couldn't keep job %" PRIu32
			               " for the next start: lost",
			               p->job->job_id);
		lwm2_jc_job_free(p->job);
		free(p);
	}
	w.pending = NULL;
	lwm2_jc_conf_free(&w.conf);
	/* the worker has ended: nobody else touches the index */
	lwm2_jc_interference_free();
}
