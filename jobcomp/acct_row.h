/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job's row in Slurm accounting: the condition that selects exactly it
 * (this run's, for a requeued job), its AdminComment written and read
 * back.  One piece for both glue paths, over Slurm's public slurmdb types
 * and slurm_list_* (exported by libslurm and by slurmctld alike): the
 * plugin (jobcomp_lwm2.c) reaches slurmdbd through slurmctld's accounting
 * agent, lwm2-jobend (lwm2_jobend.c) through the public slurmdb_* calls;
 * struct lwm2_jc_db is that difference.  Included by those two files only
 * (each builds it against its own Slurm headers).
 */
#ifndef LWM2_JC_ACCT_ROW_H
#define LWM2_JC_ACCT_ROW_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "lwm2_jobcomp.h"
#include "slurm_compat.h"

/* How one glue path reaches slurmdbd. */
struct lwm2_jc_db {
	/* The rows cond selects (freed with slurm_list_destroy), or NULL
	 * when slurmdbd did not answer. */
	list_t *(*jobs_get)(slurmdb_job_cond_t *cond);
	/* rec's set fields onto the rows cond selects: 0, or -1 (errno). */
	int (*job_modify)(slurmdb_job_cond_t *cond, slurmdb_job_rec_t *rec);
	/* ClusterName, for a job that does not name its cluster */
	const char *cluster;
	/* JOBCOND_FLAG_* the modification adds (the plugin's: queued on
	 * slurmctld's agent behind the job-complete record, NO_WAIT) */
	uint32_t modify_flags;
};

/*
 * Select exactly this job's row: a bare job id also matches het job
 * components (het_job_id) and array tasks (id_array_job) in slurmdbd's
 * _setup_job_cond_selected_steps.  Free with lwm2_jc_row_cond_free.
 */
static inline void lwm2_jc_row_cond(slurmdb_job_cond_t *cond, slurm_selected_step_t *sel,
                                    const struct lwm2_jc_job *job, const char *cluster)
{
	memset(cond, 0, sizeof(*cond));
	memset(sel, 0, sizeof(*sel));
	sel->array_task_id = NO_VAL;
	sel->het_job_offset = NO_VAL;
	sel->step_id.step_id = NO_VAL;
	sel->step_id.step_het_comp = NO_VAL;
	if (job->array_task_id != LWM2_JC_NONE) {
		sel->step_id.job_id = job->array_job_id;
		sel->array_task_id = job->array_task_id;
	} else if (job->het_job_offset != LWM2_JC_NONE) {
		sel->step_id.job_id = job->het_job_id;
		sel->het_job_offset = job->het_job_offset;
	} else {
		sel->step_id.job_id = job->job_id;
		cond->flags |= JOBCOND_FLAG_NO_WHOLE_HETJOB;
	}
	cond->step_list = slurm_list_create(NULL);
	slurm_list_append(cond->step_list, sel);
	cond->cluster_list = slurm_list_create(NULL);
	slurm_list_append(cond->cluster_list, (void *)(job->cluster ? job->cluster
	                                               : cluster    ? cluster
	                                                            : ""));
	cond->db_flags = SLURMDB_JOB_FLAG_NOTSET;
	cond->flags |= JOBCOND_FLAG_NO_DEFAULT_USAGE;
	cond->usage_start = job->submit ? job->submit : 1;
}

static inline void lwm2_jc_row_cond_free(slurmdb_job_cond_t *cond)
{
	if (cond->step_list)
		slurm_list_destroy(cond->step_list);
	if (cond->cluster_list)
		slurm_list_destroy(cond->cluster_list);
	if (cond->state_list)
		slurm_list_destroy(cond->state_list);
	cond->step_list = cond->cluster_list = cond->state_list = NULL;
}

/*
 * A requeued job has one row per run, and a bare job id selects only the
 * newest (the next run's, made at the requeue).  slurmdbd selects rows by
 * state and end time (time_end between usage_start and usage_end, for a
 * state in state_list), so this run's row is the one that ended when this
 * run did, in the state slurmctld recorded for it.  state_str holds the
 * list's element.
 */
static inline void lwm2_jc_row_cond_this_run(slurmdb_job_cond_t *cond,
                                             const struct lwm2_jc_job *job, char state_str[16])
{
	if (!job->acct_state || !job->end)
		return;
	snprintf(state_str, 16, "%" PRIu32, job->acct_state);
	cond->state_list = slurm_list_create(NULL);
	slurm_list_append(cond->state_list, state_str);
	cond->usage_start = job->end;
	cond->usage_end = job->end;
	cond->flags |= JOBCOND_FLAG_DUP;
}

/* A requeued run's row has the state JOB_REQUEUE, a flag whose base state
 * is PENDING: it ended all the same. */
static inline bool lwm2_jc_row_ended(const slurmdb_job_rec_t *rec)
{
	uint32_t base = rec->state & JOB_STATE_BASE;

	if (!rec->end)
		return false;
	return (rec->state & JOB_REQUEUE) || (base != JOB_PENDING && base != JOB_RUNNING);
}

/* The AdminComment of this run's row set to comment: 0, or -1. */
static inline int lwm2_jc_row_modify(const struct lwm2_jc_db *db, const struct lwm2_jc_job *job,
                                     const char *comment)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	slurmdb_job_rec_t rec;
	char state_str[16];
	int rc;

	lwm2_jc_row_cond(&cond, &sel, job, db->cluster);
	lwm2_jc_row_cond_this_run(&cond, job, state_str);
	cond.flags |= db->modify_flags;
	memset(&rec, 0, sizeof(rec));
	rec.derived_ec = NO_VAL;
	rec.admin_comment = (char *)comment;
	rc = db->job_modify(&cond, &rec);
	lwm2_jc_row_cond_free(&cond);
	return rc;
}

/* This run's row among the job's: the one that started when this run did;
 * a job that was never requeued has one. */
static inline slurmdb_job_rec_t *lwm2_jc_row_pick(list_t *rows, const struct lwm2_jc_job *job)
{
	slurmdb_job_rec_t *rec, *pick = NULL;
	list_itr_t *it = slurm_list_iterator_create(rows);
	int n = 0;

	while ((rec = slurm_list_next(it))) {
		if (rec->jobid != job->job_id)
			continue;
		n++;
		if (rec->start == job->start)
			pick = rec;
	}
	/* a start that differs, on the same submission (never seen, but
	 * then the row is still this job's): a job id used again after
	 * slurmctld lost its state has another submit time */
	if (!pick && n == 1 && !job->restart_count && job->submit) {
		slurm_list_iterator_reset(it);
		while ((rec = slurm_list_next(it)))
			if (rec->jobid == job->job_id && rec->submit == job->submit)
				pick = rec;
	}
	slurm_list_iterator_destroy(it);
	return pick;
}

/* Whether this run's row has ended, and its AdminComment (*comment,
 * malloc'd, NULL without one). */
static inline enum lwm2_jc_acct_state
lwm2_jc_row_read(const struct lwm2_jc_db *db, const struct lwm2_jc_job *job, char **comment)
{
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	slurmdb_job_rec_t *pick;
	enum lwm2_jc_acct_state st = LWM2_JC_ACCT_NOT_ENDED;
	list_t *rows;

	*comment = NULL;
	lwm2_jc_row_cond(&cond, &sel, job, db->cluster);
	/* every run's row (JOBCOND_FLAG_DUP), not only the newest */
	cond.flags |= JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC | JOBCOND_FLAG_DUP;
	rows = db->jobs_get(&cond);
	lwm2_jc_row_cond_free(&cond);
	if (!rows)
		return LWM2_JC_ACCT_UNREACHABLE;
	pick = lwm2_jc_row_pick(rows, job);
	if (pick && lwm2_jc_row_ended(pick)) {
		st = LWM2_JC_ACCT_ENDED;
		if (pick->admin_comment && !(*comment = strdup(pick->admin_comment)))
			st = LWM2_JC_ACCT_UNREACHABLE;
	}
	slurm_list_destroy(rows);
	return st;
}

#endif /* LWM2_JC_ACCT_ROW_H */
