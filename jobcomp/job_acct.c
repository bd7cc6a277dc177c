/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job from its accounting row (slurmdb_job_rec_t), as sacct shows it:
 * the allocated CPUs (sacct's AllocCPUS: the row's TRES, id form), the
 * time limit and memory asked for.  The row has no restart count and no
 * cpus per task, and names its GPUs by the cluster's own TRES ids: those
 * stay unknown.
 */
#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "job_slurm.h"
#include "slurm_rules.h"

struct lwm2_jc_job *lwm2_jc_job_from_acct(const slurmdb_job_rec_t *rec, const char *cluster)
{
	bool found;
	uint64_t cpus = lwm2_slurm_tres_id_count(rec->tres_alloc_str, 1, &found);
	struct lwm2_jc_slurm s = {
	    .job_id = rec->jobid,
	    .array_job_id = rec->array_job_id,
	    .array_task_id = rec->array_task_id,
	    .het_job_id = rec->het_job_id,
	    .het_job_offset = rec->het_job_offset,
	    .uid = rec->uid,
	    .gid = rec->gid,
	    .node_count = rec->alloc_nodes,
	    .total_cpus = found && cpus <= UINT32_MAX ? (uint32_t)cpus : rec->req_cpus,
	    .exit_code = rec->exitcode,
	    .job_state = rec->state,
	    .submit = rec->submit,
	    .start = rec->start,
	    .end = rec->end,
	    .cluster = rec->cluster,
	    .user = rec->user,
	    .account = rec->account,
	    .partition = rec->partition,
	    .nodes = rec->nodes,
	    .name = rec->jobname,
	    .admin_comment = rec->admin_comment,
	    .time_limit = rec->timelimit,
	    .pn_min_memory = rec->req_mem,
	    .tres_alloc = NULL,
	    .cpus_per_task = NO_VAL16,
	};

	return lwm2_jc_job_from_slurm(&s, cluster);
}
