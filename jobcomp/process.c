/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One job, start to end (lwm2_jc_process, the worker's step; worker.c has
 * the list of steps): its digest and log line (joblog.c), then steps 4 and
 * 5, the AdminComment modification behind slurmctld's own job-complete
 * record, read back and merged again while something else overwrites it,
 * and at the end the spool's cleanup and the done mark.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numparse.h"
#include "worker_int.h"

#define BACKOFF_MAX  300
#define LOG_PART_MAX 65535 /* AdminComment is a MySQL text column */

void lwm2_jc_backoff(struct lwm2_jc_job *job, unsigned base)
{
	unsigned shift = job->attempts < 16 ? job->attempts : 16;
	uint64_t d = (uint64_t)(base ? base : 1) << shift;

	if (d > BACKOFF_MAX)
		d = BACKOFF_MAX;
	job->attempts++;
	job->next_try = lwm2_jc_now() + (int64_t)d;
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
		lwm2_log_error("accounting: couldn't put the digest of job %" PRIu32
		               " into AdminComment: %s; the log keeps it",
		               job->job_id,
		               errno == E2BIG ? "other text leaves no room" : strerror(errno));
		return -1;
	}
	if (ops->acct_modify(job, merged) < 0) {
		lwm2_log_error("accounting: couldn't queue the AdminComment of job %" PRIu32
		               ": %s; trying again",
		               job->job_id, strerror(errno));
		free(merged);
		lwm2_jc_backoff(job, 5);
		return 1;
	}
	free(merged);
	job->acct_sent = true;
	job->next_try = lwm2_jc_now() + conf->verify_delay;
	return 1;
}

/* The part is in the field: keep looking until VerifyWindow seconds after
 * the job's end, since another tool (jobstats from EpilogSlurmctld) may
 * still write the whole field and wipe it. */
static int watch(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                 struct lwm2_jc_job *job, const atomic_bool *stop)
{
	int64_t now = lwm2_jc_now(),
	        until = (job->end ? job->end : job->queued) + conf->verify_window;

	if (!job->confirmed) {
		lwm2_log_debug("accounting: job %" PRIu32 " AdminComment holds the digest",
		               job->job_id);
		job->confirmed = true;
		job->attempts = 0;
		/* the part is all that is needed from here on: the spool
		 * need not wait for the window (asks slurmctld, so not while
		 * stopping) */
		if (!conf->keep_records && !(stop && atomic_load(stop)))
			lwm2_jc_remove_records(conf, ops, job, lwm2_jc_next_start(ops, job));
	}
	if (now >= until)
		return 0;
	lwm2_jc_backoff(job, conf->verify_delay ? conf->verify_delay : 1);
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
		lwm2_log_info("accounting: job %" PRIu32
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
		lwm2_log_verbose(
		    "accounting: job %" PRIu32
		    " AdminComment changed since it was read (another tool); merging into "
		    "the new value",
		    job->job_id);
		free(comment);
		comment = now;
	}
	return comment;
}

/* The field holds what it held when read (comment, taken): the part there
 * is watched, else merged in and queued again.  0: done with the field,
 * 1: again later. */
static int acct_ended(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                      struct lwm2_jc_job *job, char *comment, const atomic_bool *stop)
{
	bool again;
	int rc;

	if (has_part(comment, job->acct_part)) {
		free(comment);
		return watch(conf, ops, job, stop);
	}
	/* Not there: not sent yet, the modification was lost with slurmdbd,
	 * or a tool wrote the whole field after it.  Merge into what is there
	 * now, so the other text survives. */
	if (job->acct_sent)
		lwm2_log_verbose("accounting: job %" PRIu32
		                 " AdminComment lacks the digest%s; queueing it again",
		                 job->job_id,
		                 job->confirmed ? " (written over by another tool)" : "");
	again = job->acct_sent;
	job->acct_sent = false;
	job->confirmed = false;
	comment = recheck(ops, job, comment, stop);
	rc = send_part(ops, job, comment, conf);
	free(comment);
	if (rc < 0)
		return 0;
	if (again && job->acct_sent)
		lwm2_jc_backoff(job, conf->verify_delay ? conf->verify_delay : 1);
	return 1;
}

/*
 * Steps 4 and 5.  Read, merge, write: the part goes into what the field
 * holds when the job's record is in accounting, never into the copy
 * log_record took (another tool may have written the field since).
 * Reading first also means the job-complete record is applied, so nothing
 * of slurmctld's comes after the change.  0: done with the field, 1: again
 * later.
 */
static int acct_step(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                     struct lwm2_jc_job *job, const atomic_bool *stop)
{
	char *comment = NULL;

	if (!ops->acct_read) {
		/* no way to read the field: merge into what the job had */
		if (!job->acct_sent && send_part(ops, job, job->admin_comment, conf) > 0 &&
		    !job->acct_sent)
			return 1;
		return 0;
	}
	switch (ops->acct_read(job, &comment)) {
	case LWM2_JC_ACCT_ENDED:
		return acct_ended(conf, ops, job, comment, stop);
	case LWM2_JC_ACCT_GONE:
		lwm2_log_info("accounting: job %" PRIu32
		              " is not in accounting; the log keeps its digest",
		              job->job_id);
		free(comment);
		return 0;
	case LWM2_JC_ACCT_NOT_ENDED:
	case LWM2_JC_ACCT_UNREACHABLE:
	default:
		free(comment);
		lwm2_jc_backoff(job, conf->verify_delay);
		return 1;
	}
}

int lwm2_jc_process(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    struct lwm2_jc_job *job, const atomic_bool *stop)
{
	int rc;

	if (job->end && lwm2_jc_now() - job->end > (int64_t)conf->retry_max) {
		lwm2_log_error("worker: couldn't finish job %" PRIu32
		               " within RetryMax=%u s: giving up",
		               job->job_id, conf->retry_max);
		return -1;
	}
	/* slurmctld may report a run's end twice (killed after log_record,
	 * it comes back with the job still running, and ends it again) */
	if (!job->logged && lwm2_jc_state_is_done(conf->state_dir, job)) {
		lwm2_log_info("worker: job %" PRIu32 " (start %" PRId64
		              ") has its digest already; its end reported again is left out",
		              job->job_id, job->start);
		return 0;
	}
	if (!job->logged && (rc = lwm2_jc_make_digest(conf, ops, job, stop)) != 0)
		return rc;
	if (stop && atomic_load(stop))
		return 1;
	if (job->acct_part && conf->admin_comment && ops && ops->acct_modify &&
	    (rc = acct_step(conf, ops, job, stop)) != 0)
		return rc;
	if (!conf->keep_records) {
		/* asks slurmctld for a later run's start: not while stopping */
		if (stop && atomic_load(stop))
			return 1;
		lwm2_jc_remove_records(conf, ops, job, lwm2_jc_next_start(ops, job));
	}
	/* Without the mark, a restart would take a job whose records stay
	 * (KeepNodeRecords) for one that was lost, and an end reported again
	 * would overwrite the digest with one of no records. */
	if (lwm2_jc_state_mark_done(conf->state_dir, job) < 0) {
		lwm2_log_verbose("state: couldn't mark job %" PRIu32 " done in %s: %s", job->job_id,
		                 conf->state_dir, strerror(errno));
	}
	return 0;
}
