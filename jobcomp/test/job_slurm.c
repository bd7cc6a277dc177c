/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job from every Slurm source (job_slurm.h): each case's values put
 * into each source's real struct (slurmctld's job_record_t where the
 * Slurm source tree is configured, the public job info, the accounting
 * row), the filler run, and every field of the job checked against what
 * sacct would show.  One point a case and source; a mismatch names the
 * field.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurmdb.h>

#ifdef LWM2_TEST_CTLD
#include "src/slurmctld/slurmctld.h"
#endif

#include "job_slurm.h"
#include "tap.h"

#define CLUSTER "conf-cluster" /* the configured ClusterName */
#define NONE    LWM2_JC_NONE

enum src { CTLD, INFO, ACCT, NSRC };
static const char *const src_name[] = {"job_record_t", "job_info", "slurmdb_job_rec_t"};

/* One job in Slurm's numbers, whatever the source. */
struct in {
	uint32_t job_id, array_job_id, array_task_id, het_job_id, het_job_offset;
	uint32_t uid, gid, node_cnt, cpus, req_cpus, exit_code, restart, state;
	uint32_t time_limit, cpus_per_task, alloc_nodes;
	int64_t submit, start, end;
	uint64_t pn_min_memory;
	const char *cluster, *user, *account, *partition, *nodes, *name, *admin_comment;
	const char *tres_named; /* slurmctld's and the job info's form */
	const char *tres_ids;   /* accounting's */
	const char *epilog_nodes;
	bool no_details;
};

static void base(struct in *in, struct lwm2_jc_job *w, enum src s)
{
	*in = (struct in){
	    .job_id = 1234,
	    .array_task_id = NO_VAL,
	    .het_job_offset = NO_VAL,
	    .uid = 1000,
	    .gid = 100,
	    .node_cnt = 2,
	    .cpus = 8,
	    .req_cpus = 8,
	    .state = JOB_COMPLETE,
	    .time_limit = 30,
	    .cpus_per_task = 2,
	    .submit = 1000,
	    .start = 1100,
	    .end = 1700,
	    .pn_min_memory = 2048,
	    .user = "alice",
	    .account = "physics",
	    .partition = "batch",
	    .nodes = "n[1-2]",
	    .name = "sim",
	    .tres_named = "cpu=8,mem=4G,node=2,billing=8",
	    .tres_ids = "1=8,2=4096,4=2,5=8",
	};
	memset(w, 0, sizeof(*w));
	w->job_id = 1234;
	w->array_task_id = NONE;
	w->het_job_offset = NONE;
	w->uid = 1000;
	w->gid = 100;
	w->node_count = 2;
	w->total_cpus = 8;
	w->submit = 1000;
	w->start = 1100;
	w->end = 1700;
	w->acct_state = JOB_COMPLETE;
	w->cluster = CLUSTER;
	w->user = "alice";
	w->account = "physics";
	w->partition = "batch";
	w->nodes = "n[1-2]";
	w->name = "sim";
	w->state = "COMPLETED";
	w->time_limit_s = 1800;
	/* accounting has no cpus per task, and GPUs by the cluster's ids */
	w->cpus_per_task = s == ACCT ? 0 : 2;
	w->mem_req_mb = 4096;
	w->mem_req_per_node_mb = 2048;
	w->gpus_known = s != ACCT;
}

/* Each case changes the base; false: the case is not about source s. */
typedef bool mod_fn(struct in *in, struct lwm2_jc_job *w, enum src s, long arg);

static bool m_none(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)in, (void)w, (void)s, (void)arg;
	return true;
}

static bool m_array(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->array_job_id = 100;
	in->array_task_id = (uint32_t)arg;
	w->array_job_id = 100;
	w->array_task_id = (uint32_t)arg; /* NO_VAL: the array's own record */
	return true;
}

static bool m_no_array_task(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)w, (void)s;
	in->array_task_id = (uint32_t)arg; /* no array job id: means nothing */
	return true;
}

static bool m_het(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->het_job_id = 200;
	in->het_job_offset = (uint32_t)arg;
	w->het_job_id = 200;
	w->het_job_offset = (uint32_t)arg;
	return true;
}

static bool m_no_het_offset(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)w, (void)s;
	in->het_job_offset = (uint32_t)arg; /* slurmctld's non-het job: 0 */
	return true;
}

static bool m_time(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->time_limit = (uint32_t)arg;
	/* backfill's one year (YEAR_MINUTES) for a job that asked for none */
	w->time_unlimited = in->time_limit == INFINITE || in->time_limit == 525600;
	w->time_limit_s =
	    w->time_unlimited || in->time_limit == NO_VAL || in->time_limit > UINT32_MAX / 60
	        ? 0
	        : in->time_limit * 60;
	return true;
}

static bool m_mem_node(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->pn_min_memory = (uint64_t)arg;
	w->mem_req_per_node_mb = (uint64_t)arg;
	w->mem_req_mb = (uint64_t)arg * 2;
	return true;
}

/* per CPU: arg MB a CPU over cpus (set here) on 2 nodes */
static bool m_mem_cpu(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	static char ids[64];

	(void)s;
	in->pn_min_memory = (uint64_t)arg | MEM_PER_CPU;
	in->cpus = in->req_cpus = 5;
	in->tres_ids = (snprintf(ids, sizeof(ids), "1=%u,4=2", in->cpus), ids);
	w->total_cpus = 5;
	w->mem_req_mb = (uint64_t)arg * 5;
	w->mem_req_per_node_mb = ((uint64_t)arg * 5 + 1) / 2; /* rounded up */
	return true;
}

static bool m_mem_cpu_no_cpus(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s, (void)arg;
	in->pn_min_memory = 1024 | MEM_PER_CPU;
	in->cpus = in->req_cpus = 0;
	in->tres_ids = "4=2";
	w->total_cpus = 0;
	w->mem_req_mb = w->mem_req_per_node_mb = 0;
	return true;
}

static bool m_mem_unknown(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->pn_min_memory = arg ? NO_VAL64 : 0; /* 0: --mem=0, the whole node */
	w->mem_req_mb = w->mem_req_per_node_mb = 0;
	return true;
}

static bool m_cpt(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	if (s == ACCT)
		return false;
	in->cpus_per_task = (uint32_t)arg;
	w->cpus_per_task = arg == NO_VAL16 ? 0 : (uint32_t)arg;
	return true;
}

static const char *const gpu_tres[][3] = {
    /* named, ids, GPUs */
    {"cpu=8,mem=4G,node=2,gres/gpu=2", "1=8,2=4096,4=2,1001=2", "2"},
    {"cpu=8,node=2,gres/gpu:a100=3", "1=8,4=2,1002=3", "3"},
    {"cpu=8,node=2,gres/gpu=4,gres/gpu:a100=4", "1=8,4=2,1001=4,1002=4", "4"},
    {"cpu=8,node=2,gres/gpu:a100=1,gres/gpu:v100=2", "1=8,4=2,1002=1,1003=2", "3"},
    {"cpu=8,node=2", "1=8,4=2", "0"},
};

static bool m_gpus(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	in->tres_named = gpu_tres[arg][0];
	in->tres_ids = gpu_tres[arg][1];
	/* accounting names GPUs by ids the cluster chose: unknown */
	w->gpus = s == ACCT ? 0 : (uint32_t)atoi(gpu_tres[arg][2]);
	w->gpus_known = s != ACCT;
	return true;
}

static bool m_tres_unset(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)arg;
	in->tres_named = in->tres_ids = NULL;
	in->req_cpus = 6;
	w->gpus_known = false;
	/* sacct's AllocCPUS is the TRES; without it the row's requested */
	w->total_cpus = s == ACCT ? 6 : 8;
	return true;
}

static bool m_alloc_cpus(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s, (void)arg;
	in->cpus = 16;
	in->req_cpus = 8;
	in->tres_ids = "1=16,2=4096,4=2";
	w->total_cpus = 16;
	return true;
}

static bool m_state(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	static const char *const names[] = {
	    [JOB_PENDING] = "PENDING",     [JOB_RUNNING] = "RUNNING",
	    [JOB_SUSPENDED] = "SUSPENDED", [JOB_COMPLETE] = "COMPLETED",
	    [JOB_CANCELLED] = "CANCELLED", [JOB_FAILED] = "FAILED",
	    [JOB_TIMEOUT] = "TIMEOUT",     [JOB_NODE_FAIL] = "NODE_FAIL",
	    [JOB_PREEMPTED] = "PREEMPTED", [JOB_BOOT_FAIL] = "BOOT_FAIL",
	    [JOB_DEADLINE] = "DEADLINE",   [JOB_OOM] = "OUT_OF_MEMORY",
	};

	(void)s;
	in->state = (uint32_t)arg;
	w->acct_state = (uint32_t)arg;
	w->state = arg < JOB_END ? (char *)names[arg] : "UNKNOWN";
	return true;
}

static bool m_requeued(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)arg;
	/* slurmctld: still completing; accounting's row: the flag alone */
	in->state = s == ACCT ? JOB_REQUEUE : JOB_PENDING | JOB_REQUEUE | JOB_COMPLETING;
	w->acct_state = JOB_REQUEUE;
	w->state = "REQUEUED";
	return true;
}

static bool m_flagged(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->state = (uint32_t)arg;
	w->acct_state = arg & JOB_REVOKED ? JOB_REVOKED : (uint32_t)arg & JOB_STATE_BASE;
	w->state = (uint32_t)(arg & JOB_STATE_BASE) == JOB_COMPLETE ? "COMPLETED" : "CANCELLED";
	return true;
}

/* arg 0: no node list; 1: ""; 2: accounting's "None assigned" */
static bool m_never_ran(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	static const char *const lists[] = {NULL, "", "None assigned"};

	(void)s;
	in->nodes = lists[arg];
	in->node_cnt = 0;
	in->cpus = in->req_cpus = 0;
	in->tres_named = in->tres_ids = NULL;
	in->state = JOB_CANCELLED;
	in->start = 1600; /* the time it was cancelled */
	in->end = 1600;
	w->nodes = NULL;
	w->node_count = 0;
	w->total_cpus = 0;
	w->start = 0;
	w->end = 1600;
	w->acct_state = JOB_CANCELLED;
	w->state = "CANCELLED";
	w->gpus_known = false;
	w->mem_req_mb = w->mem_req_per_node_mb = 2048; /* one node, at least */
	return true;
}

/* lwm2-jobend: slurmctld lists a completing job's unfinished nodes only
 * (arg 0: none left, 1: one); the epilog's list (0) or the job info's
 * (1) is the job's, the allocation spreads a per-CPU request */
static bool m_completing_list(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	if (s != INFO)
		return false;
	in->nodes = arg ? "n2" : NULL;
	in->epilog_nodes = arg ? NULL : "n[1-2]";
	in->alloc_nodes = 2;
	in->pn_min_memory = 1024 | MEM_PER_CPU;
	w->nodes = arg ? "n2" : "n[1-2]";
	w->node_count = arg ? 1 : 2;
	w->mem_req_mb = 8192;
	w->mem_req_per_node_mb = 4096;
	return true;
}

static bool m_cluster(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	in->cluster = arg == 0 ? "rec-cluster" : arg == 1 ? "" : NULL;
	/* slurmctld's job record has no cluster: the configured one */
	w->cluster = arg == 0 && s != CTLD ? "rec-cluster" : CLUSTER;
	return true;
}

static bool m_strings_unset(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s, (void)arg;
	in->user = in->account = in->partition = in->name = in->admin_comment = NULL;
	w->user = w->account = w->partition = w->name = w->admin_comment = NULL;
	return true;
}

static bool m_comment(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s, (void)arg;
	in->admin_comment = w->admin_comment = "site note LWM2:{\"v\":1}";
	return true;
}

static bool m_no_details(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)arg;
	if (s != CTLD)
		return false;
	in->no_details = true;
	w->submit = 0;
	w->cpus_per_task = 0;
	w->mem_req_mb = w->mem_req_per_node_mb = 0;
	return true;
}

static bool m_exit(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	(void)s;
	in->exit_code = w->exit_code = (uint32_t)arg; /* a wait status, kept raw */
	return true;
}

static bool m_restart(struct in *in, struct lwm2_jc_job *w, enum src s, long arg)
{
	in->restart = (uint32_t)arg;
	w->restart_count = s == ACCT ? 0 : (uint32_t)arg; /* the row has no count */
	return true;
}

static const struct kase {
	const char *name;
	mod_fn *mod;
	long arg;
} cases[] = {
    {"every field set", m_none, 0},
    {"array task 7", m_array, 7},
    {"array task 0", m_array, 0},
    {"array's own record (task NO_VAL)", m_array, NO_VAL},
    {"no array, task 5", m_no_array_task, 5},
    {"no array, task 0", m_no_array_task, 0},
    {"het component 1", m_het, 1},
    {"het leader (offset 0)", m_het, 0},
    {"het id, offset NO_VAL", m_het, NO_VAL},
    {"no het, offset 0", m_no_het_offset, 0},
    {"no het, offset 3", m_no_het_offset, 3},
    {"time limit 90 min", m_time, 90},
    {"time limit INFINITE", m_time, INFINITE},
    {"time limit one year (backfill's for none asked)", m_time, 525600},
    {"time limit a year less a minute", m_time, 525599},
    {"time limit NO_VAL", m_time, NO_VAL},
    {"time limit 0", m_time, 0},
    {"time limit largest in seconds", m_time, UINT32_MAX / 60},
    {"time limit past seconds", m_time, UINT32_MAX / 60 + 1},
    {"memory per node 4096", m_mem_node, 4096},
    {"memory per CPU 1000", m_mem_cpu, 1000},
    {"memory per CPU 1", m_mem_cpu, 1},
    {"memory per CPU, no CPUs", m_mem_cpu_no_cpus, 0},
    {"memory NO_VAL64", m_mem_unknown, 1},
    {"memory 0 (--mem=0)", m_mem_unknown, 0},
    {"cpus per task 4", m_cpt, 4},
    {"cpus per task NO_VAL16", m_cpt, NO_VAL16},
    {"cpus per task 0", m_cpt, 0},
    {"gpus untyped", m_gpus, 0},
    {"gpus typed only", m_gpus, 1},
    {"gpus typed and untyped", m_gpus, 2},
    {"gpus two types", m_gpus, 3},
    {"no gpus in the TRES", m_gpus, 4},
    {"TRES unset", m_tres_unset, 0},
    {"allocated CPUs above requested", m_alloc_cpus, 0},
    {"state PENDING", m_state, JOB_PENDING},
    {"state RUNNING", m_state, JOB_RUNNING},
    {"state SUSPENDED", m_state, JOB_SUSPENDED},
    {"state CANCELLED", m_state, JOB_CANCELLED},
    {"state FAILED", m_state, JOB_FAILED},
    {"state TIMEOUT", m_state, JOB_TIMEOUT},
    {"state NODE_FAIL", m_state, JOB_NODE_FAIL},
    {"state PREEMPTED", m_state, JOB_PREEMPTED},
    {"state BOOT_FAIL", m_state, JOB_BOOT_FAIL},
    {"state DEADLINE", m_state, JOB_DEADLINE},
    {"state OUT_OF_MEMORY", m_state, JOB_OOM},
    {"state past the known", m_state, JOB_END},
    {"requeued", m_requeued, 0},
    {"completing", m_flagged, JOB_COMPLETE | JOB_COMPLETING},
    {"revoked", m_flagged, JOB_CANCELLED | JOB_REVOKED},
    {"never ran, no node list", m_never_ran, 0},
    {"never ran, empty node list", m_never_ran, 1},
    {"never ran, None assigned", m_never_ran, 2},
    {"completing, epilog's node list", m_completing_list, 0},
    {"completing, list cut short", m_completing_list, 1},
    {"cluster in the record", m_cluster, 0},
    {"cluster empty in the record", m_cluster, 1},
    {"cluster unset", m_cluster, 2},
    {"strings unset", m_strings_unset, 0},
    {"AdminComment kept", m_comment, 0},
    {"no job details", m_no_details, 0},
    {"exit status 2", m_exit, 2 << 8},
    {"killed by signal 9", m_exit, 9},
    {"restarted 3 times", m_restart, 3},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* ------------------------------------------------------------ the sources */

#ifdef LWM2_TEST_CTLD
static struct lwm2_jc_job *from_ctld(const struct in *in)
{
	job_record_t jr;
	__typeof__(*jr.details) d; /* its struct has no name in 24.11 */

	memset(&jr, 0, sizeof(jr));
	memset(&d, 0, sizeof(d));
	jr.job_id = in->job_id;
	jr.array_job_id = in->array_job_id;
	jr.array_task_id = in->array_task_id;
	jr.het_job_id = in->het_job_id;
	jr.het_job_offset = in->het_job_offset;
	jr.user_id = in->uid;
	jr.group_id = in->gid;
	jr.node_cnt = in->node_cnt;
	jr.total_cpus = in->cpus;
	jr.exit_code = in->exit_code;
	jr.restart_cnt = (uint16_t)in->restart;
	jr.job_state = in->state;
	jr.start_time = (time_t)in->start;
	jr.end_time = (time_t)in->end;
	jr.user_name = (char *)in->user;
	jr.account = (char *)in->account;
	jr.partition = (char *)in->partition;
	jr.nodes = (char *)in->nodes;
	jr.name = (char *)in->name;
	jr.admin_comment = (char *)in->admin_comment;
	jr.time_limit = in->time_limit;
	jr.tres_fmt_alloc_str = (char *)in->tres_named;
	d.submit_time = (time_t)in->submit;
	d.pn_min_memory = in->pn_min_memory;
	d.cpus_per_task = (uint16_t)in->cpus_per_task;
	jr.details = in->no_details ? NULL : &d;
	return lwm2_jc_job_from_ctld(&jr, CLUSTER);
}
#endif

static struct lwm2_jc_job *from_info(const struct in *in)
{
	slurm_job_info_t ji;

	memset(&ji, 0, sizeof(ji));
	ji.job_id = in->job_id;
	ji.array_job_id = in->array_job_id;
	ji.array_task_id = in->array_task_id;
	ji.het_job_id = in->het_job_id;
	ji.het_job_offset = in->het_job_offset;
	ji.user_id = in->uid;
	ji.group_id = in->gid;
	ji.num_nodes = in->alloc_nodes ? in->alloc_nodes : in->node_cnt;
	ji.num_cpus = in->cpus;
	ji.exit_code = in->exit_code;
	ji.restart_cnt = (uint16_t)in->restart;
	ji.job_state = in->state;
	ji.submit_time = (time_t)in->submit;
	ji.start_time = (time_t)in->start;
	ji.end_time = (time_t)in->end;
	ji.cluster = (char *)in->cluster;
	ji.user_name = (char *)in->user;
	ji.account = (char *)in->account;
	ji.partition = (char *)in->partition;
	ji.nodes = (char *)in->nodes;
	ji.name = (char *)in->name;
	ji.admin_comment = (char *)in->admin_comment;
	ji.time_limit = in->time_limit;
	ji.pn_min_memory = in->pn_min_memory;
	ji.tres_alloc_str = (char *)in->tres_named;
	ji.cpus_per_task = (uint16_t)in->cpus_per_task;
	return lwm2_jc_job_from_info(&ji, CLUSTER, in->epilog_nodes);
}

static struct lwm2_jc_job *from_acct(const struct in *in)
{
	slurmdb_job_rec_t rec;

	memset(&rec, 0, sizeof(rec));
	rec.jobid = in->job_id;
	rec.array_job_id = in->array_job_id;
	rec.array_task_id = in->array_task_id;
	rec.het_job_id = in->het_job_id;
	rec.het_job_offset = in->het_job_offset;
	rec.uid = in->uid;
	rec.gid = in->gid;
	rec.alloc_nodes = in->node_cnt;
	rec.req_cpus = in->req_cpus;
	rec.exitcode = in->exit_code;
	rec.state = in->state;
	rec.submit = (time_t)in->submit;
	rec.start = (time_t)in->start;
	rec.end = (time_t)in->end;
	rec.cluster = (char *)in->cluster;
	rec.user = (char *)in->user;
	rec.account = (char *)in->account;
	rec.partition = (char *)in->partition;
	rec.nodes = (char *)in->nodes;
	rec.jobname = (char *)in->name;
	rec.admin_comment = (char *)in->admin_comment;
	rec.timelimit = in->time_limit;
	rec.req_mem = in->pn_min_memory;
	rec.tres_alloc_str = (char *)in->tres_ids;
	return lwm2_jc_job_from_acct(&rec, CLUSTER);
}

static struct lwm2_jc_job *fill(enum src s, const struct in *in)
{
	switch (s) {
#ifdef LWM2_TEST_CTLD
	case CTLD:
		return from_ctld(in);
#endif
	case INFO:
		return from_info(in);
	case ACCT:
		return from_acct(in);
	default:
		return NULL;
	}
}

/* ------------------------------------------------------------ the fields */

enum ft { U32, I64, U64, BOOL, STR };
#define FLD(name, type)                                                                            \
	{                                                                                          \
#name, type, offsetof(struct lwm2_jc_job, name)                                    \
	}
static const struct fld {
	const char *name;
	enum ft type;
	size_t off;
} flds[] = {
    FLD(job_id, U32),
    FLD(array_job_id, U32),
    FLD(array_task_id, U32),
    FLD(het_job_id, U32),
    FLD(het_job_offset, U32),
    FLD(uid, U32),
    FLD(gid, U32),
    FLD(node_count, U32),
    FLD(total_cpus, U32),
    FLD(exit_code, U32),
    FLD(restart_count, U32),
    FLD(submit, I64),
    FLD(start, I64),
    FLD(end, I64),
    FLD(cluster, STR),
    FLD(user, STR),
    FLD(account, STR),
    FLD(partition, STR),
    FLD(nodes, STR),
    FLD(name, STR),
    FLD(state, STR),
    FLD(admin_comment, STR),
    FLD(time_limit_s, U32),
    FLD(time_unlimited, BOOL),
    FLD(cpus_per_task, U32),
    FLD(mem_req_mb, U64),
    FLD(mem_req_per_node_mb, U64),
    FLD(gpus, U32),
    FLD(gpus_known, BOOL),
    FLD(acct_state, U32),
    /* the worker's progress: nothing yet */
    FLD(logged, BOOL),
    FLD(acct_sent, BOOL),
    FLD(attempts, U32),
    FLD(next_try, I64),
    FLD(acct_part, STR),
    FLD(nodes_done, I64),
    FLD(confirmed, BOOL),
    FLD(saved, BOOL),
};
#undef FLD
#define NFLDS (sizeof(flds) / sizeof(flds[0]))

/* Every field of got against want (queued: between t0 and now); each
 * mismatch said.  Whether all matched. */
static bool same(const struct lwm2_jc_job *got, const struct lwm2_jc_job *want, int64_t t0)
{
	bool all = true;
	char g[128], w[128];

	if (got->queued < t0 || got->queued > (int64_t)time(NULL)) {
		diag("  queued: %" PRId64 ", not the time it was filled", got->queued);
		all = false;
	}
	for (size_t i = 0; i < NFLDS; i++) {
		const void *a = (const char *)got + flds[i].off,
		           *b = (const char *)want + flds[i].off;
		bool eq;

		switch (flds[i].type) {
		case U32:
			eq = *(const uint32_t *)a == *(const uint32_t *)b;
			snprintf(g, sizeof(g), "%" PRIu32, *(const uint32_t *)a);
			snprintf(w, sizeof(w), "%" PRIu32, *(const uint32_t *)b);
			break;
		case I64:
			eq = *(const int64_t *)a == *(const int64_t *)b;
			snprintf(g, sizeof(g), "%" PRId64, *(const int64_t *)a);
			snprintf(w, sizeof(w), "%" PRId64, *(const int64_t *)b);
			break;
		case U64:
			eq = *(const uint64_t *)a == *(const uint64_t *)b;
			snprintf(g, sizeof(g), "%" PRIu64, *(const uint64_t *)a);
			snprintf(w, sizeof(w), "%" PRIu64, *(const uint64_t *)b);
			break;
		case BOOL:
			eq = *(const bool *)a == *(const bool *)b;
			snprintf(g, sizeof(g), "%d", *(const bool *)a);
			snprintf(w, sizeof(w), "%d", *(const bool *)b);
			break;
		default: {
			const char *x = *(char *const *)a, *y = *(char *const *)b;

			eq = x == y || (x && y && !strcmp(x, y));
			snprintf(g, sizeof(g), "%s", x ? x : "(null)");
			snprintf(w, sizeof(w), "%s", y ? y : "(null)");
		}
		}
		if (!eq) {
			diag("  %s: got %s, want %s", flds[i].name, g, w);
			all = false;
		}
	}
	return all;
}

int main(void)
{
	for (int s = 0; s < NSRC; s++) {
		for (size_t c = 0; c < NCASES; c++) {
			struct in in;
			struct lwm2_jc_job want, *got;
			int64_t t0 = time(NULL);

			base(&in, &want, (enum src)s);
			if (!cases[c].mod(&in, &want, (enum src)s, cases[c].arg))
				continue;
#ifndef LWM2_TEST_CTLD
			if (s == CTLD) {
				skip("%s: %s: needs Slurm's source tree (--with-slurm-source)",
				     src_name[s], cases[c].name);
				continue;
			}
#endif
			got = fill((enum src)s, &in);
			if (!got) {
				ok(0, "%s: %s: filled", src_name[s], cases[c].name);
				continue;
			}
			ok(same(got, &want, t0), "%s: %s: all %zu fields", src_name[s],
			   cases[c].name, NFLDS + 1);
			lwm2_jc_job_free(got);
		}
	}
	return done_testing();
}
