/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the worker's files share and nothing else sees (lwm2_jobcomp.h is
 * the interface):
 *
 *   worker.c   the keeper and worker threads, their queues and pending jobs;
 *   process.c  one job's steps (lwm2_jc_process): AdminComment's read,
 *              merge, write and watch, the spool's cleanup, the done mark;
 *   joblog.c   steps 2 and 3: wait for the nodes, the digest, the log line;
 *   spool.c    the node records of a run in the spool, and lost jobs found
 *              there (lwm2_jc_recover);
 *   interf.c   the index of recent jobs for the interference rule.
 */
#ifndef LWM2_JC_WORKER_INT_H
#define LWM2_JC_WORKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>

#include "log.h"
#include "lwm2_jobcomp.h"

static inline int64_t lwm2_jc_now(void)
{
	return (int64_t)time(NULL);
}

/* CLOCK_MONOTONIC in ns: when the database's group of lines is due (the
 * worker waits on its queue until then, the queue's clock). */
static inline int64_t lwm2_jc_monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The job's next try after base << attempts seconds, at most 300. */
void lwm2_jc_backoff(struct lwm2_jc_job *job, unsigned base);

/* name ends in suffix (and is not hidden). */
bool lwm2_jc_has_suffix(const char *name, const char *suffix);

/* ------------------------------------------------------------ spool.c */

/* The node records of one run of a job. */
struct lwm2_jc_collected {
	json_object **nodes;
	size_t n, cap;
	unsigned rejected;
	/* steps that left a marker but no record: [{"step","node","reason"}] */
	json_object *missing;
	char why[512]; /* the first of them, for the reason of a job without records */
};

void lwm2_jc_collected_free(struct lwm2_jc_collected *c);

/* Every node record of this run of the job in the spool, verified; a
 * forged or foreign one is logged and left out, the others count.  Steps
 * whose markers say they started, or failed to write their record, but
 * have no record, are listed with what happened.  -1 only when the spool
 * itself cannot be read (try again later). */
int lwm2_jc_collect(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    const struct lwm2_jc_job *job, int64_t next_start, struct lwm2_jc_collected *c);

/* Why there is no record at all when no marker says, or NULL. */
const char *lwm2_jc_spool_state(const struct lwm2_jc_conf *conf);

/* This run's files in the spool, and the job's directory once empty. */
void lwm2_jc_remove_records(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                            const struct lwm2_jc_job *job, int64_t next_start);

/* When a later run of the job started (ops->next_run_start), 0: none. */
int64_t lwm2_jc_next_start(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job);

/* ------------------------------------------------------------ joblog.c */

/* Steps 2 and 3.  0: logged (job->acct_part set where AdminComment gets
 * something), 1: not yet. */
int lwm2_jc_make_digest(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                        struct lwm2_jc_job *job, const atomic_bool *stop);

/* ------------------------------------------------------------ dbsync.c */

/* The database (conf->database) brought up to the log; a failure is
 * logged once and tried again at a later call.  Never fails the job. */
void lwm2_jc_db_sync(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops);

/* A line was appended to the log: the database is a line behind.  The
 * worker writes such lines as a group (lwm2_jc_db_group_due). */
void lwm2_jc_db_appended(void);

/* When the lines appended and not yet followed are due to go in
 * (CLOCK_MONOTONIC, ns): 0 when enough wait already, INT64_MAX when
 * none waits. */
int64_t lwm2_jc_db_group_due(void);

/* While the database is behind the log: when the worker calls
 * lwm2_jc_db_sync by itself (no job need end for it to catch up);
 * INT64_MAX when it is not behind. */
int64_t lwm2_jc_db_retry_at(void);

/* The wait after a failure to open or write, in seconds (30; the tests
 * shorten it). */
void lwm2_jc_db_retry_after(int seconds);

/* The connection closed (the worker stops). */
void lwm2_jc_db_close(void);

/* ------------------------------------------------------------ interf.c */

/* Add the digest's slices to the index of recent jobs and its interference
 * findings to the digest ("interference"). */
void lwm2_jc_interference(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job,
                          json_object *digest);

/* Empty the index (the worker has ended). */
void lwm2_jc_interference_free(void);

#endif /* LWM2_JC_WORKER_INT_H */
