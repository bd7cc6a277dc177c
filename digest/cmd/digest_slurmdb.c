/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 digest` from Slurm accounting: the jobs through libslurmdb, so
 * slurmdbd's PrivateData decides who sees which job, with the digest (or
 * the reason there is none) that jobcomp/lwm2 stored in AdminComment.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "cmd_digest.h"
#include "log.h"
#include "lwm2_digest.h"
#include "slurm_compat.h"
#include "slurm_rules.h"
#include "slurmutil.h"

/*
 * The LWM2 part of an AdminComment: a digest, or a status object from
 * jobcomp/lwm2 telling why there is none ({"status":..,"reason":..}).
 */
static void from_comment(struct entry *e, const char *comment)
{
	const char *p;
	char err[256];

	e->digest = NULL;
	if (!comment || !(p = lwm2_digest_mark(comment, strlen(comment))))
		return;
	e->digest = lwm2_digest_parse(comment, strlen(comment), err, sizeof(err));
	if (e->digest) {
		e->status = "ok";
		e->reason = NULL;
		return;
	}
	{
		json_object *o = json_tokener_parse(p + strlen(LWM2_DIGEST_PREFIX));
		const char *st = json_object_get_string(digest_get(o, "status"));
		const char *why = json_object_get_string(digest_get(o, "reason"));
		static char sbuf[64], rbuf[512];

		if (st) {
			snprintf(sbuf, sizeof(sbuf), "%s", st);
			snprintf(rbuf, sizeof(rbuf), "%s", why ? why : st);
			e->status = sbuf;
			e->reason = rbuf;
		} else {
			snprintf(rbuf, sizeof(rbuf), "the stored digest is unreadable: %s", err);
			e->status = "bad";
			e->reason = rbuf;
		}
		json_object_put(o);
	}
}

/* The row as sacct shows it, on the rules every Slurm source of a job
 * shares (slurm_rules.h). */
static void entry_from_rec(struct entry *e, slurmdb_job_rec_t *r)
{
	struct passwd *pw;
	uint32_t base = r->state & JOB_STATE_BASE;
	unsigned sig = r->exitcode & 0x7f, status = (r->exitcode >> 8) & 0xff;

	memset(e, 0, sizeof(*e));
	e->job_id = r->jobid;
	e->array_job_id = r->array_job_id;
	e->array_task_id = lwm2_slurm_array_task(r->array_job_id, r->array_task_id);
	e->het_job_id = r->het_job_id;
	e->het_job_offset = lwm2_slurm_het_offset(r->het_job_id, r->het_job_offset);
	e->uid = r->uid;
	e->node_count = r->alloc_nodes;
	e->submit = r->submit;
	e->start = r->start;
	e->end = r->end;
	if (r->user)
		snprintf(e->user, sizeof(e->user), "%s", r->user);
	else if ((pw = getpwuid(r->uid)))
		snprintf(e->user, sizeof(e->user), "%s", pw->pw_name);
	else
		snprintf(e->user, sizeof(e->user), "%" PRIu32, r->uid);
	e->account = r->account;
	e->partition = r->partition;
	e->state = lwm2_slurm_state_str(r->state);
	e->nodes = lwm2_slurm_nodes(r->nodes);
	snprintf(e->exit_buf, sizeof(e->exit_buf), "%u:%u", status, sig);
	e->exit_code = e->exit_buf;
	e->step = -1;
	from_comment(e, r->admin_comment);
	e->has_digest = e->digest != NULL;
	if (e->digest || e->reason)
		return;
	if (base == JOB_PENDING) {
		e->status = "pending";
		e->reason = "the job has not started yet";
	} else if (base == JOB_RUNNING || base == JOB_SUSPENDED || !r->end) {
		e->status = "running";
		e->reason = "the job is still running";
	} else if (!r->start || !e->nodes) {
		e->status = "not_started";
		e->reason = "the job never ran";
	} else if (time(NULL) - r->end < 300) {
		/* jobcomp/lwm2 waits for the nodes, then queues the digest
		 * behind the job's own record */
		e->status = "pending";
		e->reason = "the job has just ended and its digest is not stored yet (try --wait)";
	} else {
		e->status = "none";
		e->reason = "no digest stored: lwm2 was off for this job, or jobcomp/lwm2 is not "
		            "the cluster's JobCompType";
	}
}

int digest_read_slurmdb(struct out *out, struct opts *o)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t *sel = NULL;
	char *cluster = NULL;
	void *db;
	list_t *jobs, *users = NULL, *accts = NULL, *clusters = NULL, *steps = NULL;
	list_itr_t *it;
	slurmdb_job_rec_t *r;
	size_t i;
	int rc = 0;

	slurm_init(NULL);
	memset(&cond, 0, sizeof(cond));
	cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
	cond.flags = JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_NO_STEP;

	if (!o->cluster) {
		cluster = lwm2_slurm_cluster_name();
		if (!cluster) {
			lwm2_log_error("digest: couldn't find ClusterName in slurm.conf; "
			               "give --cluster");
			return -1;
		}
	}
	clusters = slurm_list_create(NULL);
	slurm_list_append(clusters, (void *)(o->cluster ? o->cluster : cluster));
	cond.cluster_list = clusters;

	if (o->njobs) {
		if (!(sel = calloc(o->njobs, sizeof(*sel))))
			return -1;
		steps = slurm_list_create(NULL);
		for (i = 0; i < o->njobs; i++) {
			sel[i].step_id.job_id = o->jobs[i].job_id;
			sel[i].step_id.step_id = NO_VAL;
			sel[i].step_id.step_het_comp = NO_VAL;
			sel[i].array_task_id = o->jobs[i].array_task;
			sel[i].het_job_offset = o->jobs[i].het_offset;
			slurm_list_append(steps, &sel[i]);
		}
		cond.step_list = steps;
	}
	if (o->nusers) {
		users = slurm_list_create(NULL);
		for (i = 0; i < o->nusers; i++) {
			struct passwd *pw = getpwnam(o->users[i]);
			static char uidbuf[64][16];
			char *end;

			if (pw) {
				snprintf(uidbuf[i % 64], sizeof(uidbuf[0]), "%u",
				         (unsigned)pw->pw_uid);
				slurm_list_append(users, uidbuf[i % 64]);
			} else if ((void)strtoul(o->users[i], &end, 10), !*end) {
				slurm_list_append(users, o->users[i]);
			} else {
				lwm2_log_error("digest: couldn't find user %s", o->users[i]);
				rc = -1;
				goto out;
			}
		}
		cond.userid_list = users;
	}
	if (o->naccounts) {
		accts = slurm_list_create(NULL);
		for (i = 0; i < o->naccounts; i++)
			slurm_list_append(accts, o->accounts[i]);
		cond.acct_list = accts;
	}
	cond.usage_start = (time_t)o->start;
	cond.usage_end = (time_t)o->end;

	if (!(db = slurmdb_connection_get(NULL))) {
		lwm2_log_error("digest: couldn't connect to slurmdbd: %s", slurm_strerror(errno));
		rc = -1;
		goto out;
	}
	jobs = slurmdb_jobs_get(db, &cond);
	if (!jobs) {
		lwm2_log_error("digest: couldn't read jobs from accounting: %s",
		               slurm_strerror(errno));
		slurmdb_connection_close(&db);
		rc = -1;
		goto out;
	}
	it = slurm_list_iterator_create(jobs);
	while ((r = slurm_list_next(it))) {
		struct entry e;

		entry_from_rec(&e, r);
		/* userid_list and the window are matched by slurmdbd; a -j
		 * without a window still lists every run of a requeued job */
		digest_emit_for_wants(out, o, &e);
		json_object_put(e.digest);
	}
	slurm_list_iterator_destroy(it);
	slurm_list_destroy(jobs);
	slurmdb_connection_close(&db);
out:
	if (steps)
		slurm_list_destroy(steps);
	if (users)
		slurm_list_destroy(users);
	if (accts)
		slurm_list_destroy(accts);
	slurm_list_destroy(clusters);
	free(sel);
	free(cluster);
	return rc;
}
