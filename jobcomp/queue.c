/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pending jobs: an in-memory FIFO between log_record and the worker, and
 * one small state file per job so that nothing is lost when slurmctld
 * stops or the work has to wait for slurmdbd or the disk.
 */
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

#include "fileio.h"
#include "log.h"
#include "lwm2_jobcomp.h"

struct node {
	struct node *next;
	struct lwm2_jc_job *job;
};

struct lwm2_jc_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct node *head, *tail;
	size_t len, max;
	unsigned wakes;
};

struct lwm2_jc_queue *lwm2_jc_queue_new(size_t max)
{
	struct lwm2_jc_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return NULL;
	q->max = max;
	pthread_mutex_init(&q->lock, NULL);
	/* the worker's deadlines are monotonic: clock changes do not matter */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

void lwm2_jc_queue_free(struct lwm2_jc_queue *q)
{
	struct node *n, *next;

	if (!q)
		return;
	for (n = q->head; n; n = next) {
		next = n->next;
		lwm2_jc_job_free(n->job);
		free(n);
	}
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

int lwm2_jc_queue_push(struct lwm2_jc_queue *q, struct lwm2_jc_job *job)
{
	struct node *n;

	pthread_mutex_lock(&q->lock);
	if (q->len >= q->max) {
		pthread_mutex_unlock(&q->lock);
		lwm2_jc_job_free(job);
		errno = ENOSPC;
		return -1;
	}
	if (!(n = malloc(sizeof(*n)))) {
		pthread_mutex_unlock(&q->lock);
		lwm2_jc_job_free(job);
		errno = ENOMEM;
		return -1;
	}
	n->next = NULL;
	n->job = job;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	q->len++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

struct lwm2_jc_job *lwm2_jc_queue_pop(struct lwm2_jc_queue *q, const struct timespec *deadline)
{
	struct lwm2_jc_job *job = NULL;
	struct node *n;
	unsigned wakes;

	pthread_mutex_lock(&q->lock);
	wakes = q->wakes;
	while (!q->head && wakes == q->wakes) {
		if (deadline) {
			if (pthread_cond_timedwait(&q->cond, &q->lock, deadline) == ETIMEDOUT)
				break;
		} else {
			pthread_cond_wait(&q->cond, &q->lock);
		}
	}
	if ((n = q->head)) {
		q->head = n->next;
		if (!q->head)
			q->tail = NULL;
		q->len--;
		job = n->job;
		free(n);
	}
	pthread_mutex_unlock(&q->lock);
	return job;
}

void lwm2_jc_queue_wake(struct lwm2_jc_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->wakes++;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

size_t lwm2_jc_queue_len(struct lwm2_jc_queue *q)
{
	size_t n;

	pthread_mutex_lock(&q->lock);
	n = q->len;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* ------------------------------------------------------------ state files */

int lwm2_jc_state_save(const char *dir, const struct lwm2_jc_job *job)
{
	char name[96], path[4096];
	json_object *o;
	struct iovec iov[2];
	int rc, saved;

	if (lwm2_jc_job_file_name(job, name, sizeof(name)) < 0)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (!(o = lwm2_jc_job_to_json(job, true)))
		return -1;
	iov[0].iov_base = (void *)json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	iov[0].iov_len = strlen(iov[0].iov_base);
	iov[1].iov_base = (void *)"\n";
	iov[1].iov_len = 1;
	rc = lwm2_atomic_write(path, iov, 2, 0600, NULL, 0);
	saved = errno;
	json_object_put(o);
	errno = saved;
	return rc;
}

int lwm2_jc_state_remove(const char *dir, const struct lwm2_jc_job *job)
{
	char name[96], path[4096];

	if (lwm2_jc_job_file_name(job, name, sizeof(name)) < 0)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return -1;
	return lwm2_fsync_dir(dir);
}

static int done_path(const char *dir, const struct lwm2_jc_job *job, char *path, size_t len)
{
	int n =
	    snprintf(path, len, "%s/%" PRIu32 ".%" PRId64 ".done", dir, job->job_id, job->start);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int lwm2_jc_state_mark_done(const char *dir, const struct lwm2_jc_job *job)
{
	char path[4096];
	int fd;

	if (done_path(dir, job, path, sizeof(path)) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	return close(fd);
}

bool lwm2_jc_state_is_done(const char *dir, const struct lwm2_jc_job *job)
{
	char path[4096];
	struct stat st;

	return done_path(dir, job, path, sizeof(path)) == 0 && lstat(path, &st) == 0;
}

/* State files are small (a job's fields and its AdminComment copy). */
#define STATE_FILE_MAX (256 * 1024)

static int by_name(const struct dirent **a, const struct dirent **b)
{
	/* oldest job ids first, so the queue resumes in completion order */
	unsigned long ja = strtoul((*a)->d_name, NULL, 10), jb = strtoul((*b)->d_name, NULL, 10);

	return ja < jb ? -1 : ja > jb;
}

static int is_state_file(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 4 && !strcmp(d->d_name + n - 4, ".job");
}

int lwm2_jc_state_load(const char *dir, void (*fn)(struct lwm2_jc_job *, void *), void *arg)
{
	struct dirent **list;
	int n, i, dirfd;

	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : -1;
	if ((n = scandir(dir, &list, is_state_file, by_name)) < 0) {
		close(dirfd);
		return -1;
	}
	for (i = 0; i < n; i++) {
		size_t len;
		char why[160] = "not a job";
		char *text =
		    lwm2_read_file_at(dirfd, list[i]->d_name, STATE_FILE_MAX, &len, NULL, 0);
		json_object *o = text ? json_tokener_parse(text) : NULL;
		struct lwm2_jc_job *job = o && lwm2_jc_state_version(o, why, sizeof(why)) == 0
		                              ? lwm2_jc_job_from_json(o)
		                              : NULL;

		if (job) {
			fn(job, arg);
		} else {
			/* kept for a person to look at, under a name that is
			 * not loaded again */
			char bad[600];

			lwm2_log_error(
			    "resume: couldn't read state file %s/%s: %s; renamed to .bad", dir,
			    list[i]->d_name, text ? why : strerror(errno));
			snprintf(bad, sizeof(bad), "%s.bad", list[i]->d_name);
			renameat(dirfd, list[i]->d_name, dirfd, bad);
		}
		json_object_put(o);
		free(text);
		free(list[i]);
	}
	free(list);
	close(dirfd);
	return 0;
}
