/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How a job's identity and outcome read from Slurm, written once for every
 * Slurm source lwm2 reads a job from: slurmctld's job_record_t
 * (jobcomp/job_ctld.c), the public job info (jobcomp/job_info.c, for
 * lwm2-jobend), the accounting row (jobcomp/job_acct.c, and `lwm2
 * digest`'s digest/cmd/digest_slurmdb.c).  The rules are sacct's, so the
 * log line says what sacct shows.  The requests (time limit, memory,
 * cpus per task, GPUs) have theirs in lwm2_jc_job_requests
 * (jobcomp/job.c).
 *
 * Only Slurm's public <slurm/slurm.h> is needed (its constants and state
 * flags, the same in 22.05 and 24.11).
 */
#ifndef LWM2_SLURM_RULES_H
#define LWM2_SLURM_RULES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "slurm_compat.h"

/* NO_VAL stands for "none" in lwm2's job too (LWM2_JC_NONE, NONE32). */
_Static_assert(NO_VAL == 0xfffffffeu, "lwm2's NONE is Slurm's NO_VAL");

/* The task id of an array task; NO_VAL for anything else: without an
 * array job id the task field means nothing, and the array's own record
 * (all its tasks still pending) has NO_VAL there already. */
static inline uint32_t lwm2_slurm_array_task(uint32_t array_job_id, uint32_t array_task_id)
{
	return array_job_id ? array_task_id : NO_VAL;
}

/* The offset of a het job component; NO_VAL for anything else (slurmctld
 * leaves 0 in the offset of a job that is no het job, accounting NO_VAL). */
static inline uint32_t lwm2_slurm_het_offset(uint32_t het_job_id, uint32_t het_job_offset)
{
	return het_job_id ? het_job_offset : NO_VAL;
}

/* The node list, NULL for none: accounting's "None assigned" (a job that
 * never ran; sacct prints the same words for it) and "" too. */
static inline const char *lwm2_slurm_nodes(const char *nodes)
{
	return nodes && *nodes && strcmp(nodes, "None assigned") ? nodes : NULL;
}

/* When the run started; 0 for one that never did (a job cancelled while
 * pending has the time it was cancelled as its start). */
static inline int64_t lwm2_slurm_start(int64_t start, uint32_t node_count, const char *nodes)
{
	return node_count && lwm2_slurm_nodes(nodes) ? start : 0;
}

/* The record's cluster, else the configured one ("" counts as none). */
static inline const char *lwm2_slurm_cluster(const char *record, const char *configured)
{
	return record && *record ? record : configured;
}

/* The state accounting records for the run that ended, as slurmctld sends
 * it with the job-complete record: a requeued run is JOB_REQUEUE, a
 * revoked one JOB_REVOKED, else the base state. */
static inline uint32_t lwm2_slurm_acct_state(uint32_t job_state)
{
	if (job_state & JOB_REQUEUE)
		return JOB_REQUEUE;
	if (job_state & JOB_REVOKED)
		return JOB_REVOKED;
	return job_state & JOB_STATE_BASE;
}

/* sacct's name of the state of a run that ended: REQUEUED for a requeued
 * run's row, else the base state's (COMPLETING and the other flags are
 * no end state). */
static inline const char *lwm2_slurm_state_str(uint32_t job_state)
{
	if (job_state & JOB_REQUEUE)
		return "REQUEUED";
	return lwm2_slurm_state_name(job_state & JOB_STATE_BASE);
}

/* The count of TRES id in accounting's id form ("1=8,2=4096,4=2"; 1 is
 * cpu, 4 node, the same on every cluster); *found whether it is there. */
static inline uint64_t lwm2_slurm_tres_id_count(const char *tres, unsigned id, bool *found)
{
	const char *p = tres;

	*found = false;
	while (p && *p) {
		char *e;
		unsigned long long k = strtoull(p, &e, 10);

		if (e != p && *e == '=' && k == id) {
			const char *v = e + 1;
			unsigned long long n = strtoull(v, &e, 10);

			*found = e != v;
			return *found ? n : 0;
		}
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

#endif /* LWM2_SLURM_RULES_H */
