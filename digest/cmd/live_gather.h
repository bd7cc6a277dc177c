/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `lwm2 top` and `lwm2 watch` share: the Watch* and live settings of
 * lwm2.conf, a running job as slurmctld knows it, and the gathering of
 * the job's snapshots from its nodes through srun --overlap.
 */
#ifndef LWM2_LIVE_GATHER_H
#define LWM2_LIVE_GATHER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "live.h"

#define LWM2_SNAP_CHUNK 900

/* lwm2.conf, the keys the lwm2 command reads (jobcomp reads the others). */
enum lwm2_watch_action { LWM2_WATCH_REPORT, LWM2_WATCH_LOG, LWM2_WATCH_MAIL };
struct lwm2_live_conf {
	char path[4096];
	char basedir[1024];            /* BaseDir: the SPANK plugin's basedir= */
	char lwm2_cmd[1024];           /* LwmCommand: the lwm2 command on the nodes */
	char database[1024];           /* Database: the central database, "": none given */
	char mail_prog[1024];          /* WatchMailProg: the job-end mail path (lwm2-mail) */
	char state_dir[1024];          /* WatchStateDir */
	struct lwm2_live_rule rule;    /* WatchStuckTime, WatchMpiWaitShare, ... */
	enum lwm2_watch_action action; /* WatchAction */
	bool cancel;                   /* WatchCancel */
	unsigned cancel_after_s;       /* WatchCancelAfter: after the notice */
	unsigned job_interval_s;       /* WatchJobInterval: notices per job */
	unsigned user_interval_s;      /* WatchUserInterval: mails per user */
	unsigned gather_timeout_s;     /* WatchGatherTimeout */
};
/* lwm2.conf where lwm2_conf_path finds it beside $SLURM_CONF, read by
 * lwm2_conf_load; a missing file means the defaults.  The values of
 * jobcomp's and lwm2-mail's keys are theirs to check, a bad value of ours
 * or a key of no part is an error.  0 or -1 with err. */
int lwm2_live_conf_load(struct lwm2_live_conf *c, char *err, size_t errlen);

/* A running job (slurmctld's view). */
struct lwm2_live_job {
	uint64_t job_id;
	uid_t uid;
	char user[64];
	char nodes[1024]; /* compressed host list */
	uint32_t node_count;
	uint32_t cpus_per_task;
	uint32_t cpus; /* allocated cores of the whole job, 0 if unknown */
	int64_t start;
	char steps[2048]; /* running steps, by name, comma-separated */
	uint32_t nsteps;
};

/* The job (running, else an error with a reason) and its running steps;
 * step_filter NULL for all, else one step's name.  0 or -1 with err. */
int lwm2_live_job_get(uint64_t job_id, const char *step_filter, struct lwm2_live_job *j, char *err,
                      size_t errlen);
/* Every running job's id; malloc'd array, *n set.  0 or -1. */
int lwm2_live_running_jobs(uint64_t **ids, size_t *n, char *err, size_t errlen);

/* Print a snapshot document in chunk lines
 * ("LWM2SNAP <node> <seq> <i> <n> <part>"). */
int lwm2_snap_emit(FILE *f, const char *node, uint64_t seq, const char *doc);

/*
 * Run `lwm2 snapshot` on every node of the job through
 * srun --jobid --overlap -N<nodes> --ntasks-per-node=1 (the job's own
 * allocation, Slurm's access rules), not measured itself, killed after
 * timeout_s.  Returns a JSON array of the node documents that answered
 * (an empty one if none did), with srun's error text in err when it
 * failed; NULL only without memory.
 */
json_object *lwm2_live_gather(const struct lwm2_live_conf *c, const struct lwm2_live_job *j,
                              unsigned timeout_s, char *err, size_t errlen);

/*
 * The same as a stream, for `lwm2 top`: one step for the whole session,
 * whose readers send a document every interval seconds, so that a refresh
 * costs the nodes one read of the records and not the start of a step.
 * next waits (at most timeout_s) until every node sent a document of round
 * seq (0, 1, ...) and returns the newest document of each node that ever
 * answered (a node that fell silent keeps its old one: its age shows it).
 */
struct lwm2_live_stream;
struct lwm2_live_stream *lwm2_live_stream_start(const struct lwm2_live_conf *c,
                                                const struct lwm2_live_job *j, unsigned interval,
                                                char *err, size_t errlen);
json_object *lwm2_live_stream_next(struct lwm2_live_stream *s, const struct lwm2_live_job *j,
                                   uint64_t seq, unsigned timeout_s, char *err, size_t errlen);
void lwm2_live_stream_stop(struct lwm2_live_stream *s);

/* The counters of a snapshot's rank after its samples, by their names and
 * places in lwm2_live_rank (uint64_t each); ends with {0}. */
struct lwm2_live_counter {
	const char *name;
	size_t off;
};
extern const struct lwm2_live_counter lwm2_live_counters[];

/* A rank of a snapshot's "ranks" into o; node from the document. */
void lwm2_live_rank_from_json(struct lwm2_live_rank *o, json_object *jr, const char *node);

#endif
