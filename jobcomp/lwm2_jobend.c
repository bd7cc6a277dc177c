/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2-jobend: lwm2's job-end work outside Slurm's one JobCompType slot,
 * run by slurmctld as EpilogSlurmctld (or as one line of the site's own
 * EpilogSlurmctld script).  The glue between the worker (worker.c) and
 * Slurm's public API only (<slurm/slurm.h>, <slurm/slurmdb.h>, libslurm):
 * libslurm's soname changes with Slurm's major releases only, so a point
 * release needs no rebuild, where a jobcomp plugin is refused by any Slurm
 * of another micro version.
 *
 * slurmctld waits for the epilog, and the job stays COMPLETING until it
 * returns, so the program returns at once: it reads the job (one RPC),
 * persists it into the state dir exactly as the plugin's keeper does, and
 * hands the rest to a detached child (its own session, stdio on
 * /dev/null: slurmctld's script runner reads the output until EOF).  The
 * child waits for the nodes, digests, logs and writes AdminComment like
 * the plugin's worker, then takes up the state files that no live process
 * holds (one whose child died).
 *
 * Each state file has a lock file beside it ("<name>.lock", flock) held
 * by the process that works on it, from before the state file is written
 * until after it is removed: a held lock is a job in hand.
 */
#include "config.h"

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "acct_row.h"
#include "errmsg.h"
#include "job_slurm.h"
#include "log.h"
#include "lwm2_jobcomp.h"
#include "lwm2conf.h"
#include "numparse.h"
#include "slurm_compat.h"

/* libslurm's parsed slurm.conf (checked by configure, see
 * digest/cmd/slurmutil.c). */
#ifdef HAVE_SLURM_CONF_GLOBAL
extern slurm_conf_t slurm_conf;
#endif

static struct lwm2_jc_conf conf;
static char *cluster_name;
static bool accounting;
static atomic_bool stopping;
static FILE *msg_file; /* JobEndLog; NULL: syslog */
static int last_slurm_errno;

/* ------------------------------------------------------------ messages */

/* The sink of the log module (log.h): JobEndLog, else syslog. */
static void jobend_log(enum lwm2_log_level level, const char *msg)
{
	static const int prio[] = {
	    [LWM2_LOG_ERROR] = LOG_ERR,   [LWM2_LOG_WARNING] = LOG_WARNING,
	    [LWM2_LOG_INFO] = LOG_INFO,   [LWM2_LOG_VERBOSE] = LOG_INFO,
	    [LWM2_LOG_DEBUG] = LOG_DEBUG,
	};

	if (level == LWM2_LOG_DEBUG && !getenv("LWM2_JOBEND_DEBUG"))
		return;
	if (msg_file) {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;

		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
		/* one write per line (line buffered), O_APPEND: several
		 * children share the file */
		fprintf(msg_file, "%s lwm2-jobend[%ld]: %s\n", ts, (long)getpid(), msg);
		fflush(msg_file);
	} else {
		syslog(prio[level], "%s", msg);
	}
}

/* ------------------------------------------------------------ slurmctld */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The job's record in slurmctld (a het job leader's id also brings its
 * components): *msg to free with slurm_free_job_info_msg.  NULL when
 * slurmctld does not know it (errno ENOENT) or cannot be asked (EAGAIN). */
static slurm_job_info_t *load_job(uint32_t job_id, job_info_msg_t **msg)
{
	uint32_t i;

	*msg = NULL;
	/* libslurm leaves its error in errno (24.11 has no slurm_get_errno) */
	if (slurm_load_job(msg, job_id, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS || !*msg) {
		last_slurm_errno = errno;
		errno = last_slurm_errno == ESLURM_INVALID_JOB_ID ? ENOENT : EAGAIN;
		return NULL;
	}
	for (i = 0; i < (*msg)->record_count; i++)
		if ((*msg)->job_array[i].job_id == job_id)
			return &(*msg)->job_array[i];
	slurm_free_job_info_msg(*msg);
	*msg = NULL;
	errno = ENOENT;
	return NULL;
}

/* Polled by the worker until the nodes are done.  The job is COMPLETING
 * while this program's parent runs as the epilog too: the child asks only
 * after the parent has returned. */
static bool ops_job_completing(uint32_t job_id)
{
	job_info_msg_t *msg;
	slurm_job_info_t *ji = load_job(job_id, &msg);
	bool completing;

	if (!ji)
		return errno == EAGAIN; /* slurmctld unreachable: ask again */
	completing = ji->job_state & JOB_COMPLETING;
	slurm_free_job_info_msg(msg);
	return completing;
}

static int64_t ops_next_run_start(const struct lwm2_jc_job *job)
{
	job_info_msg_t *msg;
	slurm_job_info_t *ji = load_job(job->job_id, &msg);
	int64_t t = 0;

	if (!ji)
		return 0;
	if ((ji->job_state & JOB_STATE_BASE) != JOB_PENDING && ji->start_time > job->start)
		t = ji->start_time;
	slurm_free_job_info_msg(msg);
	return t;
}

/* ------------------------------------------------------------ slurmdbd */

/*
 * slurmdb_job_modify goes to slurmdbd directly, not behind slurmctld's
 * job-complete record (the plugin's way, through slurmctld's agent): the
 * worker reads the row back first (NOT_ENDED until that record is
 * applied) and again after, and sends again if the record came after and
 * overwrote the field (acct_row.h).
 */
static int db_job_modify(slurmdb_job_cond_t *cond, slurmdb_job_rec_t *rec)
{
	void *db;
	list_t *ret;
	int rc = -1;

	if (!(db = slurmdb_connection_get(NULL))) {
		errno = ECONNREFUSED;
		return -1;
	}
	ret = slurmdb_job_modify(db, cond, rec);
	if (ret) {
		slurm_list_destroy(ret);
		rc = 0;
	} else {
		errno = EIO;
	}
	slurmdb_connection_commit(db, rc == 0);
	slurmdb_connection_close(&db);
	return rc;
}

static list_t *db_jobs_get(slurmdb_job_cond_t *cond)
{
	void *db = slurmdb_connection_get(NULL);
	list_t *jobs;

	if (!db)
		return NULL;
	jobs = slurmdb_jobs_get(db, cond);
	slurmdb_connection_close(&db);
	return jobs;
}

static int ops_acct_modify(const struct lwm2_jc_job *job, const char *comment)
{
	struct lwm2_jc_db db = {
	    .jobs_get = db_jobs_get, .job_modify = db_job_modify, .cluster = cluster_name};

	return lwm2_jc_row_modify(&db, job, comment);
}

static enum lwm2_jc_acct_state ops_acct_read(const struct lwm2_jc_job *job, char **comment)
{
	struct lwm2_jc_db db = {
	    .jobs_get = db_jobs_get, .job_modify = db_job_modify, .cluster = cluster_name};

	return lwm2_jc_row_read(&db, job, comment);
}

static const struct lwm2_jc_ops ops_acct = {
    .job_completing = ops_job_completing,
    .acct_modify = ops_acct_modify,
    .acct_read = ops_acct_read,
    .next_run_start = ops_next_run_start,
};

static const struct lwm2_jc_ops ops_noacct = {
    .job_completing = ops_job_completing,
    .next_run_start = ops_next_run_start,
};

/* ------------------------------------------------------------ state files */

/* Open and lock "<state file>.lock" without waiting; -1 when another
 * process holds it (EWOULDBLOCK) or it cannot be made.  The fd carries the
 * lock. */
static int lock_job(const struct lwm2_jc_job *job, char *path, size_t len)
{
	char name[256];
	struct stat a, b;
	int fd;

	if (lwm2_jc_job_file_name(job, name, sizeof(name)) < 0)
		return -1;
	snprintf(path, len, "%s/%s.lock", conf.state_dir, name);
	for (;;) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		/* the holder removes the file when done: a lock on a file
		 * that is gone from the directory guards nothing */
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			return fd;
		close(fd);
	}
}

/* fd -1: the job was never locked (kept in memory only). */
static void unlock_job(int fd, const char *path)
{
	if (fd < 0)
		return;
	unlink(path);
	close(fd);
}

/* ------------------------------------------------------------ the child */

struct held {
	struct held *next;
	struct lwm2_jc_job *job;
	int lock_fd;
	char lock_path[4096];
	uint64_t progress;
};

static struct held *held;

static uint64_t progress_of(const struct lwm2_jc_job *job)
{
	return (uint64_t)job->logged | (uint64_t)job->acct_sent << 1 |
	       (uint64_t)job->confirmed << 2 | (uint64_t)(job->attempts & 0xffff) << 3;
}

static void hold(struct lwm2_jc_job *job, int fd, const char *path)
{
	struct held *h = calloc(1, sizeof(*h));

	if (!h) {
		/* the state file stays for the next process */
		lwm2_jc_job_free(job);
		if (fd >= 0)
			close(fd);
		return;
	}
	h->job = job;
	h->lock_fd = fd;
	snprintf(h->lock_path, sizeof(h->lock_path), "%s", path);
	h->progress = progress_of(job);
	h->next = held;
	held = h;
}

/* A state file left by a process that is gone: its lock is free. */
static void take_stale(struct lwm2_jc_job *job, void *arg)
{
	char path[4096], jf[4096], name[256];
	int fd;

	(void)arg;
	if ((fd = lock_job(job, path, sizeof(path))) < 0) {
		lwm2_jc_job_free(job);
		return;
	}
	/* done by its owner between the scan and the lock */
	if (lwm2_jc_job_file_name(job, name, sizeof(name)) < 0 ||
	    snprintf(jf, sizeof(jf), "%s/%s", conf.state_dir, name) >= (int)sizeof(jf) ||
	    access(jf, F_OK) < 0) {
		unlock_job(fd, path);
		lwm2_jc_job_free(job);
		return;
	}
	lwm2_log_info("recover: job %" PRIu32
	              " was left in %s by a process that is gone: taking it up",
	              job->job_id, conf.state_dir);
	job->next_try = 0;
	job->nodes_done = 0;
	hold(job, fd, path);
}

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
}

/* The worker's loop for the jobs this process holds: each until done (or
 * given up), waiting for the earliest next try between rounds. */
static void work(const struct lwm2_jc_ops *ops)
{
	while (held && !atomic_load(&stopping)) {
		struct held **pp, *h;
		int64_t now = time(NULL), next = INT64_MAX;

		for (pp = &held; (h = *pp) && !atomic_load(&stopping);) {
			int rc;

			if (h->job->next_try > now) {
				if (h->job->next_try < next)
					next = h->job->next_try;
				pp = &h->next;
				continue;
			}
			rc = lwm2_jc_process(&conf, ops, h->job, &stopping);
			if (rc == 1) {
				if (progress_of(h->job) != h->progress &&
				    lwm2_jc_state_save(conf.state_dir, h->job) == 0)
					h->progress = progress_of(h->job);
				if (h->job->next_try < next)
					next = h->job->next_try;
				pp = &h->next;
				continue;
			}
			if (lwm2_jc_state_remove(conf.state_dir, h->job) < 0 && errno != ENOENT)
				lwm2_log_error("state: couldn't remove the file of job %" PRIu32
				               ": %s",
				               h->job->job_id, strerror(errno));
			unlock_job(h->lock_fd, h->lock_path);
			*pp = h->next;
			lwm2_jc_job_free(h->job);
			free(h);
			now = time(NULL);
		}
		/* the lines this pass appended go into the database together */
		lwm2_jc_db_write_waiting(&conf, ops);
		now = time(NULL);
		if (held && next > now && !atomic_load(&stopping)) {
			/* short naps: SIGTERM (shutdown) is seen within one */
			int64_t wait = next - now > 5 ? 5 : next - now;

			nanosleep(&(struct timespec){.tv_sec = wait}, NULL);
		}
	}
	/* stopping: what is held is in the state dir already; progress too */
	for (struct held *h = held; h; h = h->next)
		if (progress_of(h->job) != h->progress)
			lwm2_jc_state_save(conf.state_dir, h->job);
}

static void child_main(const struct lwm2_jc_ops *ops)
{
	struct sigaction sa = {.sa_handler = on_term};
	int fd;

	setsid();
	/* a long-lived child must not keep the epilog's directory busy */
	if (chdir("/") < 0) {
		/* nothing uses relative paths: harmless */
	}
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	work(ops);
	/* then whatever a dead process left (its lock is free) */
	if (!atomic_load(&stopping)) {
		lwm2_jc_state_load(conf.state_dir, take_stale, NULL);
		work(ops);
	}
}

/* ------------------------------------------------------------ main */

static int setup(char *err, size_t errlen)
{
	const char *state_save = NULL, *slurm_conf_path = getenv("SLURM_CONF");
	char *path;

	slurm_init(NULL);
#ifdef HAVE_SLURM_CONF_GLOBAL
	if (slurm_conf.slurm_conf)
		slurm_conf_path = slurm_conf.slurm_conf;
	state_save = slurm_conf.state_save_location;
	cluster_name = dup_or_null(slurm_conf.cluster_name);
	accounting = slurm_conf.accounting_storage_type &&
	             !strcmp(slurm_conf.accounting_storage_type, "accounting_storage/slurmdbd");
#else
	{
		slurm_conf_t *c = NULL;

		if (slurm_load_ctl_conf((time_t)0, &c) == 0 && c) {
			static char save[4096];

			snprintf(save, sizeof(save), "%s",
			         c->state_save_location ? c->state_save_location : "");
			state_save = *save ? save : NULL;
			cluster_name = dup_or_null(c->cluster_name);
			accounting =
			    c->accounting_storage_type &&
			    !strcmp(c->accounting_storage_type, "accounting_storage/slurmdbd");
			slurm_free_ctl_conf(c);
		}
	}
#endif
	if (!(path = lwm2_conf_path(slurm_conf_path)))
		return lwm2_errprintf(0, err, errlen, "out of memory");
	if (lwm2_jc_conf_load(&conf, path, state_save, err, errlen) < 0) {
		free(path);
		return -1;
	}
	free(path);
	if (*conf.jobend_log) {
		int fd = open(conf.jobend_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

		if (fd >= 0 && !(msg_file = fdopen(fd, "a")))
			close(fd);
	}
	return 0;
}

static int job_id_arg(int argc, char **argv, uint32_t *id)
{
	const char *s = argc > 1 ? argv[1] : getenv("SLURM_JOB_ID");
	uint64_t v;

	if (!s || lwm2_parse_u64(s, NULL, 1, UINT32_MAX, &v) < 0)
		return -1;
	*id = (uint32_t)v;
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * Exit status 0 whatever happens: the site's epilog script goes on, and a
 * failed EpilogSlurmctld is only logged by slurmctld anyway.  What went
 * wrong is logged (JobEndLog or syslog).
 */
int main(int argc, char **argv)
{
	struct timespec t0;
	double t_setup, t_load;
	char err[512] = "", lock_path[4096];
	job_info_msg_t *msg;
	slurm_job_info_t *ji;
	struct lwm2_jc_job *job;
	uint32_t job_id;
	bool foreground = getenv("LWM2_JOBEND_FOREGROUND") != NULL;
	int lock_fd;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	openlog("lwm2-jobend", LOG_PID, LOG_DAEMON);
	lwm2_log_open("lwm2");
	lwm2_log_set_sink(jobend_log);
	if (job_id_arg(argc, argv, &job_id) < 0) {
		syslog(LOG_ERR, "lwm2: jobend: no job id (SLURM_JOB_ID, or the first argument)");
		fprintf(stderr, "usage: %s [JOB_ID]  (or SLURM_JOB_ID in the environment)\n",
		        argv[0]);
		return 0;
	}
	if (setup(err, sizeof(err)) < 0) {
		syslog(LOG_ERR,
		       "lwm2: jobend: couldn't read settings: %s; job %" PRIu32 " not digested",
		       err, job_id);
		return 0;
	}
	t_setup = ms_since(&t0);
	if (!(ji = load_job(job_id, &msg))) {
		lwm2_log_error("jobend: couldn't load job %" PRIu32 " from slurmctld: %s", job_id,
		               errno == ENOENT ? "no such job" : slurm_strerror(last_slurm_errno));
		return 0;
	}
	{
		/* While the job is COMPLETING, slurmctld reports only the
		 * nodes that have not finished yet (often none by the time
		 * the epilog runs); the epilog's SLURM_JOB_NODELIST has all
		 * of them. */
		const char *nl = argc < 2 ? getenv("SLURM_JOB_NODELIST") : NULL;

		job = lwm2_jc_job_from_info(ji, cluster_name, nl && *nl ? nl : NULL);
	}
	slurm_free_job_info_msg(msg);
	if (!job) {
		lwm2_log_error("jobend: job %" PRIu32 ": out of memory", job_id);
		return 0;
	}
	t_load = ms_since(&t0);
	if (mkdir(conf.state_dir, 0700) < 0 && errno != EEXIST)
		lwm2_log_error("init: couldn't create StateDir %s: %s", conf.state_dir,
		               strerror(errno));
	/* Locked before the file exists: no other process takes it for a
	 * stale one in between.  Never waited for: a process holding it has
	 * this run in hand already (slurmctld runs the epilog again for
	 * jobs still completing when it restarts), for up to VerifyWindow
	 * seconds, and slurmctld must not wait that long. */
	lock_fd = lock_job(job, lock_path, sizeof(lock_path));
	if (lock_fd < 0 && errno == EWOULDBLOCK) {
		lwm2_log_info("jobend: job %" PRIu32 " (start %" PRId64
		              ") is in hand by another lwm2-jobend already",
		              job_id, job->start);
		lwm2_jc_job_free(job);
		return 0;
	}
	if (lock_fd < 0 || lwm2_jc_state_save(conf.state_dir, job) < 0)
		lwm2_log_error("state: couldn't save job %" PRIu32
		               " in %s: %s; kept in memory only",
		               job_id, conf.state_dir, strerror(errno));
	lwm2_log_debug("jobend: job %" PRIu32
	               " kept in %.2f ms (settings %.2f, slurm_load_job %.2f, state file %.2f)",
	               job_id, ms_since(&t0), t_setup, t_load - t_setup, ms_since(&t0) - t_load);

	if (!foreground && (pid = fork()) != 0) {
		if (pid < 0)
			lwm2_log_error("jobend: couldn't fork for job %" PRIu32
			               ": %s; its state file waits for the next job end",
			               job_id, strerror(errno));
		/* the child holds the lock now (the same open file) */
		return 0;
	}
	hold(job, lock_fd, lock_path);
	if (!foreground)
		child_main(accounting && conf.admin_comment ? &ops_acct : &ops_noacct);
	else
		work(accounting && conf.admin_comment ? &ops_acct : &ops_noacct);
	lwm2_jc_conf_free(&conf);
	free(cluster_name);
	slurm_fini();
	return 0;
}
