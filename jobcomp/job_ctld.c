/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job from slurmctld's job record: needs Slurm's source tree, like
 * jobcomp_lwm2.c, and nothing of slurmctld's code (the test links it
 * without slurmctld).
 */
#include "slurm/slurm.h"

#include "src/slurmctld/slurmctld.h"

#include "job_slurm.h"

struct lwm2_jc_job *lwm2_jc_job_from_ctld(const struct job_record *jp, const char *cluster)
{
	/* struct job_details in 22.05, an anonymous job_details_t in 24.11 */
	const __typeof__(*jp->details) *d = jp->details;
	struct lwm2_jc_slurm s = {
	    .job_id = jp->job_id,
	    .array_job_id = jp->array_job_id,
	    .array_task_id = jp->array_task_id,
	    .het_job_id = jp->het_job_id,
	    .het_job_offset = jp->het_job_offset,
	    .uid = jp->user_id,
	    .gid = jp->group_id,
	    .node_count = jp->node_cnt,
	    .total_cpus = jp->total_cpus,
	    .exit_code = jp->exit_code,
	    .restart_count = jp->restart_cnt,
	    .job_state = jp->job_state,
	    .submit = d ? d->submit_time : 0,
	    .start = jp->start_time,
	    .end = jp->end_time,
	    .cluster = NULL, /* slurmctld's is the configured one */
	    .user = jp->user_name,
	    .account = jp->account,
	    .partition = jp->partition,
	    .nodes = jp->nodes,
	    .name = jp->name,
	    .admin_comment = jp->admin_comment,
	    .time_limit = jp->time_limit,
	    .pn_min_memory = d ? d->pn_min_memory : 0,
	    .tres_alloc = jp->tres_fmt_alloc_str,
	    .cpus_per_task = d ? d->cpus_per_task : NO_VAL16,
	};

	return lwm2_jc_job_from_slurm(&s, cluster);
}
