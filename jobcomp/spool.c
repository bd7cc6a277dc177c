/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The spool as the worker reads it (worker_int.h): what slurmstepd leaves
 * for a step in <spool>/<job>, the signed node record, and the markers
 * spank_lwm2 writes (empty files) when a step starts and when its record
 * could not be written.  A requeued job's runs share the directory and are
 * told apart by time.  Jobs whose records are there but that nobody kept
 * (slurmctld stopped first) are found again by lwm2_jc_recover.
 */
#define _GNU_SOURCE /* memrchr, strerrorname_np */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "lwm2_digest.h"
#include "numparse.h"
#include "worker_int.h"

/* Slurm starts a requeued job no sooner than its credential lifetime (at
 * least 5 s) plus one second after the requeue: a node record written
 * more than this before a run's start belongs to an earlier run. */
#define RUN_SLACK  3
#define BATCH_STEP 0xfffffffbu

void lwm2_jc_collected_free(struct lwm2_jc_collected *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		json_object_put(c->nodes[i]);
	free(c->nodes);
	json_object_put(c->missing);
	memset(c, 0, sizeof(*c));
}

bool lwm2_jc_has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), l = strlen(suffix);

	return name[0] != '.' && n > l && !strcmp(name + n - l, suffix);
}

static int is_spool_file(const struct dirent *d)
{
	return lwm2_jc_has_suffix(d->d_name, ".lwm2node") ||
	       lwm2_jc_has_suffix(d->d_name, ".lwm2start") ||
	       lwm2_jc_has_suffix(d->d_name, ".lwm2fail");
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

int64_t lwm2_jc_next_start(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job)
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

static void add_missing(struct lwm2_jc_collected *c, const char *stem, const char *reason)
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

/* The files of a run's directory, by kind: the stems of its records, of
 * its start markers and of its fail markers (with their errno). */
struct spool_scan {
	const struct lwm2_jc_conf *conf;
	const struct lwm2_jc_ops *ops;
	const struct lwm2_jc_job *job;
	const char *dir;
	int dirfd;
	char **seen, **started, **failed;
	int *fail_err;
	size_t nseen, nstarted, nfailed;
};

static void scan_free(struct spool_scan *sc)
{
	for (size_t k = 0; sc->seen && k < sc->nseen; k++)
		free(sc->seen[k]);
	for (size_t k = 0; sc->started && k < sc->nstarted; k++)
		free(sc->started[k]);
	for (size_t k = 0; sc->failed && k < sc->nfailed; k++)
		free(sc->failed[k]);
	free(sc->seen);
	free(sc->started);
	free(sc->failed);
	free(sc->fail_err);
}

/* A verified node record into c; a rejected one logged and counted.  -1:
 * out of memory. */
static int take_record(struct spool_scan *sc, const char *name, struct lwm2_jc_collected *c)
{
	struct lwm2_verify_opts vo = {
	    .uid = sc->conf->signer_uid,
	    .cluster = sc->job->cluster,
	    .munge_socket = sc->conf->munge_socket,
	    .max_size = 0,
	};
	char err[256] = "";
	json_object *rec;

	rec = lwm2_node_read_verified(sc->dirfd, name, sc->job->job_id, &vo, err, sizeof(err));
	if (!rec) {
		lwm2_log_error("collect: couldn't accept node record %s/%s of job %" PRIu32 ": %s",
		               sc->dir, name, sc->job->job_id, err[0] ? err : strerror(errno));
		c->rejected++;
		return 0;
	}
	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 16;
		json_object **nn = realloc(c->nodes, ncap * sizeof(*nn));

		if (!nn) {
			json_object_put(rec);
			return -1;
		}
		c->nodes = nn;
		c->cap = ncap;
	}
	c->nodes[c->n++] = rec;
	return 0;
}

/* One file of the run's directory.  -1: out of memory. */
static int scan_file(struct spool_scan *sc, const char *name, int64_t next_start,
                     struct lwm2_jc_collected *c)
{
	char stem[300];
	struct stat st;
	int e;

	if (fstatat(sc->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !in_run(sc->job, (int64_t)st.st_mtime, next_start))
		return 0;
	stem_of(name, stem, sizeof(stem), &e);
	if (lwm2_jc_has_suffix(name, ".lwm2start"))
		return (sc->started[sc->nstarted++] = strdup(stem)) ? 0 : -1;
	if (lwm2_jc_has_suffix(name, ".lwm2fail")) {
		sc->fail_err[sc->nfailed] = e;
		return (sc->failed[sc->nfailed++] = strdup(stem)) ? 0 : -1;
	}
	if (!(sc->seen[sc->nseen++] = strdup(stem)))
		return -1;
	return take_record(sc, name, c);
}

/* The steps with a marker but no record, with what happened. */
static void list_missing(const struct spool_scan *sc, struct lwm2_jc_collected *c)
{
	for (size_t k = 0; k < sc->nfailed; k++) {
		char reason[300];
		int e = sc->fail_err[k];

		if (stem_listed(sc->seen, sc->nseen, sc->failed[k]))
			continue;
		snprintf(reason, sizeof(reason),
		         "node record could not be written: %s (%s) on the spool",
		         e > 0 ? strerror(e) : "unknown error",
		         e > 0 && strerrorname_np(e) ? strerrorname_np(e) : "?");
		add_missing(c, sc->failed[k], reason);
	}
	for (size_t k = 0; k < sc->nstarted; k++)
		if (!stem_listed(sc->seen, sc->nseen, sc->started[k]) &&
		    !stem_listed(sc->failed, sc->nfailed, sc->started[k]))
			add_missing(
			    c, sc->started[k],
			    "step ended without its node record (its slurmstepd was killed, or "
			    "the node failed)");
}

int lwm2_jc_collect(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    const struct lwm2_jc_job *job, int64_t next_start, struct lwm2_jc_collected *c)
{
	char dir[4096];
	struct dirent **list;
	struct spool_scan sc = {.conf = conf, .ops = ops, .job = job, .dir = dir};
	int n, rc = 0;

	memset(c, 0, sizeof(*c));
	snprintf(dir, sizeof(dir), "%s/%" PRIu32, conf->spool_dir, job->job_id);
	if ((sc.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return errno == ENOENT ? 0 : -1;
	if ((n = scandir(dir, &list, is_spool_file, alphasort)) < 0) {
		int saved = errno;

		close(sc.dirfd);
		errno = saved;
		return -1;
	}
	/* at most n of each */
	sc.seen = calloc((size_t)n + 1, sizeof(*sc.seen));
	sc.started = calloc((size_t)n + 1, sizeof(*sc.started));
	sc.failed = calloc((size_t)n + 1, sizeof(*sc.failed));
	sc.fail_err = calloc((size_t)n + 1, sizeof(*sc.fail_err));
	if (!sc.seen || !sc.started || !sc.failed || !sc.fail_err)
		rc = -1;
	for (int i = 0; i < n && !rc; i++)
		rc = scan_file(&sc, list[i]->d_name, next_start, c);
	if (!rc)
		list_missing(&sc, c);
	else
		lwm2_jc_collected_free(c);
	for (int k = 0; k < n; k++)
		free(list[k]);
	free(list);
	scan_free(&sc);
	close(sc.dirfd);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* What the spool looks like from here (the same file system the nodes
 * write to). */
const char *lwm2_jc_spool_state(const struct lwm2_jc_conf *conf)
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

/* A later run's files stay. */
void lwm2_jc_remove_records(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
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
		lwm2_log_verbose("cleanup: couldn't remove %s: %s", dir, strerror(errno));
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

/* The job id of a directory of the spool that may hold a lost job's
 * records, 0 when it cannot. */
static uint32_t lost_candidate(const struct lwm2_jc_conf *conf, DIR *d, const char *name,
                               int64_t since, int64_t now)
{
	uint64_t id;
	struct stat st;
	int dfd;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	if (lwm2_parse_u64(name, NULL, 1, UINT32_MAX, &id) < 0)
		return 0;
	/* older than RetryMax: it would be given up at once; last written
	 * before the previous start: not lost by a crash since, but done
	 * (records kept) or left by an older version */
	if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	    (int64_t)st.st_mtime < since ||
	    (conf->retry_max && (int64_t)st.st_mtime < now - (int64_t)conf->retry_max))
		return 0;
	dfd = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0 || !has_evidence(dfd))
		return 0;
	return (uint32_t)id;
}

int lwm2_jc_recover(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops, int64_t since,
                    bool (*is_pending)(uint32_t job_id, void *arg),
                    void (*fn)(struct lwm2_jc_job *job, void *arg), void *arg, bool *again)
{
	DIR *d;
	struct dirent *de;
	int64_t now = lwm2_jc_now();
	int handed = 0;

	*again = false;
	if (!ops || !ops->job_lookup)
		return 0;
	if (!(d = opendir(conf->spool_dir)))
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d))) {
		struct lwm2_jc_job *job = NULL;
		uint32_t id = lost_candidate(conf, d, de->d_name, since, now);
		int rc;

		if (!id || is_pending(id, arg))
			continue;
		rc = ops->job_lookup(id, &job);
		if (rc < 0) {
			if (errno == EAGAIN)
				*again = true;
			else
				lwm2_log_info("recover: %s/%" PRIu32
				              " holds node records of a job neither "
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
		lwm2_log_info("recover: job %" PRIu32 " (start %" PRId64
		              ") has node records in the spool but was neither queued nor done "
		              "(slurmctld stopped before it was kept): digesting it now",
		              job->job_id, job->start);
		fn(job, arg);
		handed++;
	}
	closedir(d);
	return handed;
}
