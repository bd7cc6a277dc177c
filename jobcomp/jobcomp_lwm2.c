/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobcomp/lwm2: the glue to slurmctld, and the only file that includes
 * Slurm's internal headers.  jobcomp_p_log_record runs with slurmctld's job
 * write lock held: it copies the job's fields into a plain struct and hands
 * it to the worker (worker.c), nothing else.
 *
 * Ordering with slurmctld's own job-complete record: jobcomp_g_write runs
 * right before jobacct_storage_g_job_complete, which queues DBD_JOB_COMPLETE
 * (with the job's AdminComment as it is now) on slurmctld's slurmdbd agent.
 * The worker's AdminComment change goes through the same agent
 * (acct_storage_g_modify_job with JOBCOND_FLAG_NO_WAIT, as slurmctld's
 * burst buffer code does for SystemComment), so slurmdbd applies it after
 * the job-complete record, and the agent keeps it across slurmdbd outages
 * and slurmctld restarts (dbd.messages).  The worker reads the field back
 * later and queues the change again if it is missing.
 */
#define _GNU_SOURCE /* dladdr, RTLD_NODELETE */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/slurm_protocol_defs.h"
/* configure's X_AC_SLURM_SOURCE_API says which tree this is. */
#ifdef LWM2_SLURM_INTERFACES
#include "src/interfaces/accounting_storage.h"
#include "src/interfaces/jobcomp.h"
#else
#include "src/common/slurm_accounting_storage.h"
#include "src/common/slurm_jobcomp.h"
#endif
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "acct_row.h"
#include "job_slurm.h"
#include "log.h"
#include "lwm2_jobcomp.h"
#include "lwm2conf.h"
#include "slurm_compat.h"

/* The plugin interface: slurmctld looks these up by name. */
extern int init(void);
extern int fini(void);
#ifdef LWM2_JOBCOMP_SET_LOCATION_VOID
extern int jobcomp_p_set_location(void);
#else
extern int jobcomp_p_set_location(char *location);
#endif
extern int jobcomp_p_log_record(job_record_t *job_ptr);
extern list_t *jobcomp_p_get_jobs(slurmdb_job_cond_t *job_cond);

const char plugin_name[] = "lwm2 job digest (Lightweight Measurement Module)";
const char plugin_type[] = "jobcomp/lwm2";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * sacct -c loads jobcomp plugins too: what only slurmctld has is referenced
 * weakly, and nothing starts where it is missing.
 */
#pragma weak acct_db_conn
#pragma weak lock_slurmctld
#pragma weak unlock_slurmctld
#pragma weak find_job_record

static struct lwm2_jc_conf conf;
static bool conf_ok;
static bool accounting;

static bool in_slurmctld(void)
{
	return &acct_db_conn && lock_slurmctld && unlock_slurmctld && find_job_record;
}

/* The sink of the log module (log.h): slurmctld's log, whose own level
 * decides what is written; Slurm's functions are safe from any thread. */
static void glue_log(enum lwm2_log_level level, const char *msg)
{
	switch (level) {
	case LWM2_LOG_ERROR:
	case LWM2_LOG_WARNING: /* Slurm 22.05 has no warning level */
		error("%s", msg);
		break;
	case LWM2_LOG_INFO:
		info("%s", msg);
		break;
	case LWM2_LOG_VERBOSE:
		verbose("%s", msg);
		break;
	default:
		debug("%s", msg);
		break;
	}
}

static int64_t elapsed_ns(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (int64_t)(b.tv_sec - a->tv_sec) * 1000000000 + (b.tv_nsec - a->tv_nsec);
}

/* Takes slurmctld's job read lock: called by the worker only, never while
 * fini is waiting for it. */
static bool glue_job_completing(uint32_t job_id)
{
	slurmctld_lock_t lk = {.job = READ_LOCK};
	job_record_t *job_ptr;
	bool completing;

	lock_slurmctld(lk);
	job_ptr = find_job_record(job_id);
	completing = job_ptr && IS_JOB_COMPLETING(job_ptr);
	unlock_slurmctld(lk);
	return completing;
}

/* slurmdbd through slurmctld's accounting agent (acct_row.h). */
static list_t *glue_jobs_get(slurmdb_job_cond_t *cond)
{
	return jobacct_storage_g_get_jobs_cond(acct_db_conn, slurm_conf.slurm_user_id, cond);
}

static int glue_job_modify(slurmdb_job_cond_t *cond, slurmdb_job_rec_t *rec)
{
	list_t *ret = acct_storage_g_modify_job(acct_db_conn, slurm_conf.slurm_user_id, cond, rec);

	FREE_NULL_LIST(ret);
	return 0;
}

static struct lwm2_jc_db glue_db(void)
{
	/* onto slurmctld's slurmdbd agent, behind the job-complete record */
	return (struct lwm2_jc_db){.jobs_get = glue_jobs_get,
	                           .job_modify = glue_job_modify,
	                           .cluster = slurm_conf.cluster_name,
	                           .modify_flags = JOBCOND_FLAG_NO_WAIT};
}

static int glue_acct_modify(const struct lwm2_jc_job *job, const char *comment)
{
	struct lwm2_jc_db db = glue_db();

	return lwm2_jc_row_modify(&db, job, comment);
}

static enum lwm2_jc_acct_state glue_acct_read(const struct lwm2_jc_job *job, char **comment)
{
	struct lwm2_jc_db db = glue_db();

	return lwm2_jc_row_read(&db, job, comment);
}

/* When a later run of the job started (a requeue), 0 when none has.  A
 * pending job's start_time is only the scheduler's guess. */
static int64_t glue_next_run_start(const struct lwm2_jc_job *job)
{
	slurmctld_lock_t lk = {.job = READ_LOCK};
	job_record_t *job_ptr;
	int64_t t = 0;

	lock_slurmctld(lk);
	job_ptr = find_job_record(job->job_id);
	if (job_ptr && !IS_JOB_PENDING(job_ptr) && job_ptr->start_time > job->start)
		t = job_ptr->start_time;
	unlock_slurmctld(lk);
	return t;
}

/* A job accounting has (slurmctld no longer does): its newest row. */
static int acct_lookup(uint32_t job_id, struct lwm2_jc_job **out)
{
	struct lwm2_jc_job key = {
	    .job_id = job_id, .array_task_id = LWM2_JC_NONE, .het_job_offset = LWM2_JC_NONE};
	slurmdb_job_cond_t cond;
	slurm_selected_step_t sel;
	slurmdb_job_rec_t *rec, *pick = NULL;
	struct lwm2_jc_job *job;
	list_itr_t *it;
	list_t *jobs;
	int rc = 0;

	lwm2_jc_row_cond(&cond, &sel, &key, slurm_conf.cluster_name);
	cond.flags |= JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC;
	jobs = glue_jobs_get(&cond);
	lwm2_jc_row_cond_free(&cond);
	if (!jobs) {
		errno = EAGAIN;
		return -1;
	}
	it = list_iterator_create(jobs);
	while ((rec = list_next(it)))
		if (rec->jobid == job_id)
			pick = rec;
	list_iterator_destroy(it);
	if (!pick) {
		errno = ENOENT;
		rc = -1;
	} else if (lwm2_jc_row_ended(pick)) {
		if (!(job = lwm2_jc_job_from_acct(pick, slurm_conf.cluster_name))) {
			FREE_NULL_LIST(jobs);
			errno = EAGAIN;
			return -1;
		}
		*out = job;
		rc = 1;
	}
	FREE_NULL_LIST(jobs);
	return rc;
}

/* A job found in the spool that nobody kept: as slurmctld has it if it
 * still does, else as accounting has it. */
static int glue_job_lookup(uint32_t job_id, struct lwm2_jc_job **out)
{
	slurmctld_lock_t lk = {.job = READ_LOCK};
	job_record_t *job_ptr;
	int rc = 0;

	*out = NULL;
	lock_slurmctld(lk);
	job_ptr = find_job_record(job_id);
	if (job_ptr && IS_JOB_FINISHED(job_ptr) && !IS_JOB_COMPLETING(job_ptr)) {
		if ((*out = lwm2_jc_job_from_ctld(job_ptr, slurm_conf.cluster_name)))
			rc = 1;
		else {
			errno = EAGAIN;
			rc = -1;
		}
	} else if (!job_ptr) {
		rc = 2;
	}
	unlock_slurmctld(lk);
	if (rc != 2)
		return rc;
	if (!accounting) {
		errno = ENOENT;
		return -1;
	}
	return acct_lookup(job_id, out);
}

/* Keep the plugin mapped after dlclose: a worker that fini could not join
 * (stuck in a call into slurmctld) must not run on unmapped code. */
static void pin_self(void)
{
	Dl_info di;

	if (dladdr((void *)pin_self, &di) && di.dli_fname)
		dlopen(di.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

extern int init(void)
{
	char err[512] = "";
	char *path;

	if (!in_slurmctld())
		return SLURM_SUCCESS;
	lwm2_log_open("lwm2");
	lwm2_log_set_sink(glue_log);
	pin_self();
	if (!(path = lwm2_conf_path(slurm_conf.slurm_conf)))
		return SLURM_ERROR;
	if (lwm2_jc_conf_load(&conf, path, slurm_conf.state_save_location, err, sizeof(err)) < 0) {
		lwm2_log_error("init: couldn't read settings: %s", err);
		free(path);
		return SLURM_ERROR;
	}
	conf_ok = true;
	accounting = slurm_conf.accounting_storage_type &&
	             !strcmp(slurm_conf.accounting_storage_type, "accounting_storage/slurmdbd");
	lwm2_log_verbose("init: settings from %s; spool %s, state %s, AdminComment %s", path,
	                 conf.spool_dir, conf.state_dir,
	                 conf.admin_comment && accounting ? "yes" : "no");
	free(path);
	return SLURM_SUCCESS;
}

/*
 * Called right after init and again on reconfigure: the worker starts here
 * so that jobs resumed from the state dir go to the configured log.
 */
/* Newer Slurm passes no location: it is JobCompLoc, in slurm_conf. */
#ifdef LWM2_JOBCOMP_SET_LOCATION_VOID
extern int jobcomp_p_set_location(void)
{
	const char *location = slurm_conf.job_comp_loc;
#else
extern int jobcomp_p_set_location(char *location)
{
#endif
	struct lwm2_jc_ops ops = {
	    .job_completing = glue_job_completing,
	    .acct_modify = accounting ? glue_acct_modify : NULL,
	    .acct_read = accounting ? glue_acct_read : NULL,
	    .next_run_start = glue_next_run_start,
	    .job_lookup = glue_job_lookup,
	};

	if (!conf_ok)
		return SLURM_SUCCESS;
	if (lwm2_jc_running())
		return lwm2_jc_set_log(location) < 0 ? SLURM_ERROR : SLURM_SUCCESS;
	if (location && *location) {
		char *p = strdup(location);

		if (!p)
			return SLURM_ERROR;
		free(conf.log_path);
		conf.log_path = p;
	}
	if (lwm2_jc_start(&conf, &ops) < 0)
		return SLURM_ERROR;
	return SLURM_SUCCESS;
}

extern int jobcomp_p_log_record(job_record_t *job_ptr)
{
	struct timespec t0;
	struct lwm2_jc_job *job;
	int rc;

	if (!conf_ok)
		return SLURM_SUCCESS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!(job = lwm2_jc_job_from_ctld(job_ptr, slurm_conf.cluster_name)))
		return SLURM_ERROR;
	rc = lwm2_jc_enqueue(job);
	lwm2_log_debug("log_record: job %u %s in %" PRId64 " ns", job_ptr->job_id,
	               rc < 0 ? "dropped" : "queued", elapsed_ns(&t0));
	if (rc < 0) {
		lwm2_log_error("log_record: couldn't queue job %u: %s", job_ptr->job_id,
		               errno == ENOSPC ? "MaxQueued jobs are waiting" : strerror(errno));
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	lwm2_jc_stop();
	if (conf_ok)
		lwm2_jc_conf_free(&conf);
	conf_ok = false;
	return SLURM_SUCCESS;
}

/* sacct -c: the digests are in AdminComment and the log; `lwm2 digest`
 * reads them. */
extern list_t *jobcomp_p_get_jobs(slurmdb_job_cond_t *job_cond)
{
	(void)job_cond;
	return NULL;
}
