/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job from Slurm's public job info (slurm_load_job): lwm2-jobend. */
#include <slurm/slurm.h>

#include "job_slurm.h"
#include "slurm_rules.h"

/* The nodes of a list (hostlist_t is a pointer in 22.05, a struct in
 * 24.11). */
static uint32_t count_nodes(const char *nodes)
{
	__typeof__(slurm_hostlist_create(NULL)) hl;
	int n;

	if (!nodes || !*nodes || !(hl = slurm_hostlist_create(nodes)))
		return 0;
	n = slurm_hostlist_count(hl);
	slurm_hostlist_destroy(hl);
	return n > 0 ? (uint32_t)n : 0;
}

/*
 * The node count is the list's, not num_nodes: slurmctld counts a
 * completing job's nodes down as each one finishes, so by the time the
 * epilog asks it is often 0, and the job would look as if it never ran.
 * num_nodes is the allocation's, which a per-CPU request is spread over.
 */
struct lwm2_jc_job *lwm2_jc_job_from_info(const slurm_job_info_t *ji, const char *cluster,
                                          const char *nodes)
{
	struct lwm2_jc_slurm s = {
	    .job_id = ji->job_id,
	    .array_job_id = ji->array_job_id,
	    .array_task_id = ji->array_task_id,
	    .het_job_id = ji->het_job_id,
	    .het_job_offset = ji->het_job_offset,
	    .uid = ji->user_id,
	    .gid = ji->group_id,
	    .total_cpus = ji->num_cpus,
	    .exit_code = ji->exit_code,
	    .restart_count = ji->restart_cnt,
	    .job_state = ji->job_state,
	    .submit = ji->submit_time,
	    .start = ji->start_time,
	    .end = ji->end_time,
	    .cluster = ji->cluster,
	    .user = ji->user_name,
	    .account = ji->account,
	    .partition = ji->partition,
	    .nodes = nodes ? nodes : ji->nodes,
	    .name = ji->name,
	    .admin_comment = ji->admin_comment,
	    .time_limit = ji->time_limit,
	    .pn_min_memory = ji->pn_min_memory,
	    .tres_alloc = ji->tres_alloc_str,
	    .cpus_per_task = ji->cpus_per_task,
	    .alloc_nodes = ji->num_nodes,
	};

	s.node_count = count_nodes(lwm2_slurm_nodes(s.nodes));
	return lwm2_jc_job_from_slurm(&s, cluster);
}
