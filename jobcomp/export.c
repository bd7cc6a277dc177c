/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Export of logged jobs to a time-series engine (see lwm2_jobcomp.h).
 *
 * The worker writes each job's log line to <StateDir>/export/<job>.<start>.job
 * (the same atomic write as the state files) and goes on; this thread sends
 * the files in job id order, several jobs to a batch, and removes a file
 * only when every batch holding its points was taken.  The engine down for
 * an hour: the files wait, the thread retries with backoff (at most
 * BACKOFF_MAX s apart), nothing is lost.  A file sent again after a crash
 * between the send and the removal doubles nothing: a point is identified
 * by its measurement, tags and timestamp, and carries the same values.
 */
#define _GNU_SOURCE /* pthread_timedjoin_np */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "lineproto.h"
#include "log.h"
#include "lwm2_jobcomp.h"

#define BACKOFF_MAX   60
#define LINE_FILE_MAX (256u << 20) /* a digest line is far smaller */

static struct {
	pthread_mutex_t lock; /* everything below but the thread's own */
	pthread_cond_t cond;
	char dir[4096]; /* set once export is configured: queueing works */
	size_t max_queued, queued;
	bool running, kick;
	atomic_bool stop;
	pthread_t thread;
	struct lwm2_jc_conf conf;
	struct lwm2_jc_ops ops;
	char *user, *password, *token;
} x = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* ------------------------------------------------------------ the queue */

static int is_job_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 && !strcmp(d->d_name + n - 4, ".job");
}

static int by_job_id(const struct dirent **a, const struct dirent **b)
{
	unsigned long ja = strtoul((*a)->d_name, NULL, 10), jb = strtoul((*b)->d_name, NULL, 10);

	return ja < jb ? -1 : ja > jb ? 1 : strcmp((*a)->d_name, (*b)->d_name);
}

void lwm2_jc_export_queue(const struct lwm2_jc_job *job, const char *line)
{
	char name[96], path[4300];
	struct iovec iov[2] = {{(void *)line, strlen(line)}, {(void *)"\n", 1}};
	struct stat st;
	bool existed;

	pthread_mutex_lock(&x.lock);
	if (!x.dir[0]) {
		pthread_mutex_unlock(&x.lock);
		return;
	}
	if (lwm2_jc_job_file_name(job, name, sizeof(name)) < 0)
		goto fail;
	snprintf(path, sizeof(path), "%s/%s", x.dir, name);
	existed = stat(path, &st) == 0;
	if (!existed && x.queued >= x.max_queued) {
		pthread_mutex_unlock(&x.lock);
		lwm2_log_error(
		    "export: %zu jobs wait for export (ExportMaxQueued); job %" PRIu32
		    " is not queued: the log keeps its digest (lwm2 export --file sends it)",
		    x.queued, job->job_id);
		return;
	}
	if (lwm2_atomic_write(path, iov, 2, 0600, NULL, 0) < 0)
		goto fail;
	if (!existed)
		x.queued++;
	x.kick = true;
	pthread_cond_broadcast(&x.cond);
	pthread_mutex_unlock(&x.lock);
	return;
fail:
	pthread_mutex_unlock(&x.lock);
	lwm2_log_error("export: couldn't queue job %" PRIu32
	               " in %s: %s; the log keeps its digest (lwm2 export --file sends it)",
	               job->job_id, x.dir, strerror(errno));
}

/* ------------------------------------------------------------ the thread */

struct done_list {
	char **names;
	uint32_t *ids;
	size_t n, cap;
};

struct sending {
	struct lwm2_lp_sender *sender;
	struct lwm2_lp_buf buf;
	struct done_list ready; /* every point of these is in a batch */
	size_t points_sent;
	bool failed; /* the engine did not take a batch: stop, back off */
	char err[512];
};

static void ready_clear(struct done_list *d, bool remove)
{
	for (size_t i = 0; i < d->n; i++) {
		if (remove) {
			char path[4400];

			snprintf(path, sizeof(path), "%s/%s", x.dir, d->names[i]);
			if (unlink(path) == 0 || errno == ENOENT) {
				pthread_mutex_lock(&x.lock);
				if (x.queued)
					x.queued--;
				pthread_mutex_unlock(&x.lock);
			}
		}
		free(d->names[i]);
	}
	d->n = 0;
	if (remove)
		lwm2_fsync_dir(x.dir);
}

static int ready_add(struct done_list *d, const char *name, uint32_t id)
{
	if (d->n == d->cap) {
		size_t ncap = d->cap ? 2 * d->cap : 64;
		char **nn = realloc(d->names, ncap * sizeof(*nn));
		uint32_t *ni;

		if (!nn)
			return -1;
		d->names = nn;
		if (!(ni = realloc(d->ids, ncap * sizeof(*ni))))
			return -1;
		d->ids = ni;
		d->cap = ncap;
	}
	if (!(d->names[d->n] = strdup(name)))
		return -1;
	d->ids[d->n++] = id;
	return 0;
}

/* One batch to the engine.  On success the jobs whose points were all in
 * batches so far are done. */
static int send_batch(void *arg, const char *text, size_t len, size_t lines)
{
	struct sending *s = arg;
	int rc = lwm2_lp_send(s->sender, text, len, NULL, s->err, sizeof(s->err));

	if (rc == LWM2_LP_REJECTED) {
		/* the good points are stored; the rest is text no retry mends */
		lwm2_log_error("export: the engine refused points of a batch of %zu (jobs %" PRIu32
		               " and after): %s; the log keeps the digests",
		               lines, s->ready.n ? s->ready.ids[0] : 0, s->err);
		rc = LWM2_LP_SENT;
	}
	if (rc != LWM2_LP_SENT) {
		s->failed = true;
		errno = EIO;
		return -1;
	}
	s->points_sent += lines;
	ready_clear(&s->ready, true);
	return 0;
}

static void set_aside(const char *name, const char *why)
{
	char from[4400], to[4500];

	snprintf(from, sizeof(from), "%s/%s", x.dir, name);
	snprintf(to, sizeof(to), "%s/%s.bad", x.dir, name);
	lwm2_log_error("export: couldn't read %s: %s; renamed to .bad", from, why);
	if (rename(from, to) == 0 || errno == ENOENT) {
		pthread_mutex_lock(&x.lock);
		if (x.queued)
			x.queued--;
		pthread_mutex_unlock(&x.lock);
	}
}

/* One pass over the queue.  0: all sent, 1: the engine failed. */
static int pass(struct sending *s)
{
	struct dirent **list;
	int n, i;
	int64_t now = (int64_t)time(NULL);

	if ((n = scandir(x.dir, &list, is_job_file, by_job_id)) < 0) {
		snprintf(s->err, sizeof(s->err), "couldn't read the directory: %s",
		         strerror(errno));
		return 1;
	}
	for (i = 0; i < n && !s->failed && !atomic_load(&x.stop); i++) {
		char path[4400], *line;
		size_t len = 0;
		struct stat st;
		struct lwm2_lp_stats stats = {0};
		uint32_t id = (uint32_t)strtoul(list[i]->d_name, NULL, 10);

		snprintf(path, sizeof(path), "%s/%s", x.dir, list[i]->d_name);
		if (stat(path, &st) == 0 && x.conf.retry_max &&
		    now - (int64_t)st.st_mtime > (int64_t)x.conf.retry_max) {
			lwm2_log_error(
			    "export: couldn't export job %" PRIu32
			    " within RetryMax=%u s: giving up (the log keeps its digest)",
			    id, x.conf.retry_max);
			/* not through the ready list: jobs there wait for
			 * their last batch */
			if (unlink(path) == 0) {
				pthread_mutex_lock(&x.lock);
				if (x.queued)
					x.queued--;
				pthread_mutex_unlock(&x.lock);
			}
			continue;
		}
		if (!(line = lwm2_read_file_at(AT_FDCWD, path, LINE_FILE_MAX, &len, NULL, 0))) {
			if (errno != ENOENT)
				set_aside(list[i]->d_name, strerror(errno));
			continue;
		}
		errno = 0;
		if (lwm2_lp_format_line(line, len, &s->buf, x.conf.export_batch, send_batch, s,
		                        &stats) == 0) {
			if (ready_add(&s->ready, list[i]->d_name, id) < 0)
				s->failed = true;
			lwm2_log_verbose("export: job %" PRIu32 ": %zu points", id,
			                 stats.slice_points + stats.job_points);
		} else if (errno == EINVAL) {
			set_aside(list[i]->d_name, "not a log line");
		} else if (!s->failed) {
			snprintf(s->err, sizeof(s->err), "couldn't format job %" PRIu32 ": %s", id,
			         strerror(errno));
			s->failed = true;
		}
		free(line);
	}
	for (int k = 0; k < n; k++)
		free(list[k]);
	free(list);
	/* the last, partial batch */
	if (!s->failed && !atomic_load(&x.stop)) {
		if (s->buf.lines)
			send_batch(s, s->buf.p, s->buf.len, s->buf.lines);
		else
			ready_clear(&s->ready, true);
	}
	s->buf.len = s->buf.lines = 0;
	if (s->failed || atomic_load(&x.stop)) {
		/* what was not taken stays in the directory for the next pass */
		ready_clear(&s->ready, false);
		return s->failed ? 1 : 0;
	}
	return 0;
}

static void wait_until(int64_t deadline_epoch)
{
	struct timespec dl = {.tv_sec = (time_t)deadline_epoch, .tv_nsec = 0};

	pthread_mutex_lock(&x.lock);
	while (!x.kick && !atomic_load(&x.stop))
		if (pthread_cond_timedwait(&x.cond, &x.lock, &dl) == ETIMEDOUT)
			break;
	x.kick = false;
	pthread_mutex_unlock(&x.lock);
}

static void *export_main(void *arg)
{
	struct sending *s = arg;
	unsigned delay = 1, failures = 0;
	size_t waiting;

	while (!atomic_load(&x.stop)) {
		s->failed = false;
		s->err[0] = '\0';
		s->points_sent = 0;
		pthread_mutex_lock(&x.lock);
		x.kick = false;
		pthread_mutex_unlock(&x.lock);
		if (pass(s) == 0) {
			if (failures)
				lwm2_log_info("export: the engine takes points again (%zu sent)",
				              s->points_sent);
			failures = 0;
			delay = 1;
			/* new jobs kick; a look now and then finds files a
			 * failed removal left */
			wait_until((int64_t)time(NULL) + 300);
			continue;
		}
		pthread_mutex_lock(&x.lock);
		waiting = x.queued;
		pthread_mutex_unlock(&x.lock);
		/* the first failure and then every tenth: an hour down is
		 * a few dozen lines, not one per retry */
		if (failures++ % 10 == 0)
			lwm2_log_error(
			    "export: couldn't send to %s: %s; %zu jobs wait, trying again "
			    "in %u s",
			    x.conf.export_url, s->err, waiting, delay);
		/* retry after the delay, not sooner: a kick (a new job) must
		 * not turn the backoff into a busy loop */
		{
			int64_t until = (int64_t)time(NULL) + delay;

			while (!atomic_load(&x.stop) && (int64_t)time(NULL) < until)
				wait_until(until);
		}
		delay = delay * 2 > BACKOFF_MAX ? BACKOFF_MAX : delay * 2;
	}
	lwm2_lp_sender_free(s->sender);
	lwm2_lp_buf_free(&s->buf);
	ready_clear(&s->ready, false);
	free(s->ready.names);
	free(s->ready.ids);
	free(s);
	return NULL;
}

static size_t count_files(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, is_job_file, NULL);

	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
	return (size_t)n;
}

int lwm2_jc_export_start(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops)
{
	struct lwm2_lp_target t;
	struct sending *s;
	char err[512];
	int rc;

	if (!conf->export_url[0])
		return 0;
	pthread_mutex_lock(&x.lock);
	if (x.running) {
		pthread_mutex_unlock(&x.lock);
		return 0;
	}
	x.conf = *conf;
	/* only the fixed buffers and numbers of the copy are used */
	x.conf.log_path = x.conf.spool_dir = x.conf.state_dir = x.conf.munge_socket = NULL;
	x.ops = *ops;
	snprintf(x.dir, sizeof(x.dir), "%s/export", conf->state_dir);
	if (mkdir(conf->state_dir, 0700) < 0 && errno != EEXIST) {
		/* the worker says so too */
	}
	if (mkdir(x.dir, 0700) < 0 && errno != EEXIST) {
		lwm2_log_error("export: couldn't create %s: %s; no export", x.dir, strerror(errno));
		x.dir[0] = '\0';
		pthread_mutex_unlock(&x.lock);
		return -1;
	}
	x.max_queued = conf->export_max_queued;
	x.queued = count_files(x.dir);
	atomic_store(&x.stop, false);
	pthread_mutex_unlock(&x.lock);

	/* From here on jobs are queued even when nothing can be sent: a
	 * fixed setting and a restart send them. */
	if (!lwm2_lp_can_send()) {
		lwm2_log_error("export: ExportURL is set but this jobcomp/lwm2 was built without "
		               "libcurl; jobs wait in %s",
		               x.dir);
		return -1;
	}
	memset(&t, 0, sizeof(t));
	if (conf->export_cred[0] &&
	    lwm2_lp_read_credentials(conf->export_cred, true, &x.user, &x.password, &x.token, err,
	                             sizeof(err)) < 0) {
		lwm2_log_error("export: ExportCredentials: %s; jobs wait in %s", err, x.dir);
		return -1;
	}
	t.url = conf->export_url;
	t.database = conf->export_db[0] ? conf->export_db : NULL;
	t.org = conf->export_org[0] ? conf->export_org : NULL;
	t.user = x.user;
	t.password = x.password;
	t.token = x.token;
	t.timeout_s = conf->export_timeout;
	t.gzip = conf->export_gzip;
	t.stop = &x.stop;
	if (!(s = calloc(1, sizeof(*s))) ||
	    !(s->sender = lwm2_lp_sender_new(&t, err, sizeof(err)))) {
		lwm2_log_error("export: %s; jobs wait in %s", s ? err : "out of memory", x.dir);
		free(s);
		return -1;
	}
	if ((rc = pthread_create(&x.thread, NULL, export_main, s))) {
		lwm2_log_error("export: couldn't start the thread: %s; jobs wait in %s",
		               strerror(rc), x.dir);
		lwm2_lp_sender_free(s->sender);
		free(s);
		return -1;
	}
	pthread_mutex_lock(&x.lock);
	x.running = true;
	pthread_mutex_unlock(&x.lock);
	lwm2_log_info("export: to %s%s%s, %zu jobs waiting", conf->export_url,
	              conf->export_db[0] ? " database " : "", conf->export_db, x.queued);
	return 0;
}

static void free_secret(char **p)
{
	if (*p)
		explicit_bzero(*p, strlen(*p));
	free(*p);
	*p = NULL;
}

void lwm2_jc_export_stop(void)
{
	struct timespec dl;
	int rc;

	pthread_mutex_lock(&x.lock);
	if (!x.running) {
		pthread_mutex_unlock(&x.lock);
		return;
	}
	x.running = false;
	atomic_store(&x.stop, true);
	pthread_cond_broadcast(&x.cond);
	pthread_mutex_unlock(&x.lock);
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	/* the request in flight sees the stop flag within a second */
	if ((rc = pthread_timedjoin_np(x.thread, NULL, &dl))) {
		lwm2_log_error("export: couldn't stop the thread within 30 s: %s", strerror(rc));
		pthread_detach(x.thread);
		return;
	}
	free_secret(&x.user);
	free_secret(&x.password);
	free_secret(&x.token);
}
