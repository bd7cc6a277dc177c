/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job (struct lwm2_jc_job) from each Slurm source, one filler a
 * source, all on the rules of digest/util/slurm_rules.h and
 * lwm2_jc_job_requests:
 *
 *   lwm2_jc_job_from_ctld  slurmctld's job_record_t (job_ctld.c, Slurm's
 *                          source headers: jobcomp/lwm2's log_record)
 *   lwm2_jc_job_from_info  the public job info (job_info.c, libslurm:
 *                          lwm2-jobend)
 *   lwm2_jc_job_from_acct  an accounting row (job_acct.c: jobcomp/lwm2's
 *                          lookup of a job slurmctld has forgotten)
 *
 * cluster is the configured ClusterName, for a source without one.  Each
 * returns a job the caller frees with lwm2_jc_job_free, queued now; NULL:
 * no memory.  The test (test/job_slurm.c) builds each source's real
 * struct and checks every field.
 */
#ifndef LWM2_JC_JOB_SLURM_H
#define LWM2_JC_JOB_SLURM_H

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#include "lwm2_jobcomp.h"

/*
 * What every source gives, in Slurm's own numbers: each filler copies its
 * struct's fields here and lwm2_jc_job_from_slurm applies the rules, so
 * the rules are the same whatever the source.
 */
struct lwm2_jc_slurm {
	uint32_t job_id;
	uint32_t array_job_id;
	uint32_t array_task_id;
	uint32_t het_job_id;
	uint32_t het_job_offset;
	uint32_t uid;
	uint32_t gid;
	uint32_t node_count;
	uint32_t total_cpus;
	uint32_t exit_code;
	uint32_t restart_count;
	uint32_t job_state; /* with its flags */
	int64_t submit;
	int64_t start;
	int64_t end;
	const char *cluster; /* NULL or "": the configured one */
	const char *user;
	const char *account;
	const char *partition;
	const char *nodes;
	const char *name;
	const char *admin_comment;
	/* the requests, as lwm2_jc_job_requests takes them */
	uint32_t time_limit;    /* minutes; NO_VAL, INFINITE */
	uint64_t pn_min_memory; /* with MEM_PER_CPU; 0, NO_VAL64 */
	const char *tres_alloc; /* named form; NULL: GPUs unknown */
	uint32_t cpus_per_task; /* NO_VAL16: unknown */
	uint32_t alloc_nodes;   /* the nodes a request is spread over; 0: node_count */
};

/* The job from s, queued now.  NULL: no memory. */
struct lwm2_jc_job *lwm2_jc_job_from_slurm(const struct lwm2_jc_slurm *s, const char *cluster);

struct job_record; /* job_record_t: slurmctld.h, with Slurm's source tree */

struct lwm2_jc_job *lwm2_jc_job_from_ctld(const struct job_record *job_ptr, const char *cluster);

/* nodes: the job's node list where the caller has a better one than the
 * job info's (the epilog's SLURM_JOB_NODELIST: slurmctld lists only the
 * nodes still completing); NULL: the job info's. */
struct lwm2_jc_job *lwm2_jc_job_from_info(const slurm_job_info_t *ji, const char *cluster,
                                          const char *nodes);

struct lwm2_jc_job *lwm2_jc_job_from_acct(const slurmdb_job_rec_t *rec, const char *cluster);

#endif /* LWM2_JC_JOB_SLURM_H */
