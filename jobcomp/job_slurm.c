/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job from any Slurm source's numbers: the rules, applied once. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "job_slurm.h"
#include "slurm_rules.h"

/* The job's "none" is Slurm's NO_VAL: a task id or offset passes as is. */
_Static_assert(LWM2_JC_NONE == NO_VAL, "LWM2_JC_NONE is NO_VAL");

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct lwm2_jc_job *lwm2_jc_job_from_slurm(const struct lwm2_jc_slurm *s, const char *cluster)
{
	struct lwm2_jc_job *job = calloc(1, sizeof(*job));
	const char *nodes = lwm2_slurm_nodes(s->nodes);

	if (!job)
		return NULL;
	job->job_id = s->job_id;
	job->array_job_id = s->array_job_id;
	job->array_task_id = lwm2_slurm_array_task(s->array_job_id, s->array_task_id);
	job->het_job_id = s->het_job_id;
	job->het_job_offset = lwm2_slurm_het_offset(s->het_job_id, s->het_job_offset);
	job->uid = s->uid;
	job->gid = s->gid;
	job->node_count = s->node_count;
	job->total_cpus = s->total_cpus;
	job->exit_code = s->exit_code;
	job->restart_count = s->restart_count;
	job->submit = s->submit;
	job->start = lwm2_slurm_start(s->start, s->node_count, nodes);
	job->end = s->end;
	job->queued = time(NULL);
	job->acct_state = lwm2_slurm_acct_state(s->job_state);
	job->cluster = dup_or_null(lwm2_slurm_cluster(s->cluster, cluster));
	job->user = dup_or_null(s->user);
	job->account = dup_or_null(s->account);
	job->partition = dup_or_null(s->partition);
	job->nodes = dup_or_null(nodes);
	job->name = dup_or_null(s->name);
	job->state = dup_or_null(lwm2_slurm_state_str(s->job_state));
	job->admin_comment = dup_or_null(s->admin_comment);
	/* What it asked for, against which the digest's "fit" block sets
	 * what it used: spread over the allocation's nodes. */
	if (s->alloc_nodes)
		job->node_count = s->alloc_nodes;
	lwm2_jc_job_requests(job, s->time_limit, s->pn_min_memory, s->tres_alloc, s->cpus_per_task);
	job->node_count = s->node_count;
	return job;
}
