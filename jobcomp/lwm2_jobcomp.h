/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jobcomp/lwm2 without Slurm: the plain job description each Slurm source
 * is copied into (job_slurm.h: slurmctld's job record, the public job
 * info, the accounting row), the settings of lwm2.conf, the persisted queue
 * of pending jobs, the AdminComment part lwm2 owns, and the worker thread.
 *
 * Everything here builds and is unit-tested without a Slurm source tree.
 * Functions return 0 / -1 with errno set unless said otherwise.
 */
#ifndef LWM2_JOBCOMP_H
#define LWM2_JOBCOMP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

/* Slurm's NO_VAL: "no array task", "no het component". */
#define LWM2_JC_NONE 0xfffffffeu

/* ------------------------------------------------------------ the job */

/*
 * What the fillers of job_slurm.h copy out of Slurm.  All strings are
 * owned (malloc'd) and may be NULL.
 */
struct lwm2_jc_job {
	uint32_t job_id;
	uint32_t array_job_id;   /* 0 if not an array task */
	uint32_t array_task_id;  /* LWM2_JC_NONE if not an array task */
	uint32_t het_job_id;     /* 0 if not a het job component */
	uint32_t het_job_offset; /* LWM2_JC_NONE if not a component */
	uint32_t uid;
	uint32_t gid;
	uint32_t node_count;
	uint32_t total_cpus;
	uint32_t exit_code;     /* wait status, as Slurm keeps it */
	uint32_t restart_count; /* requeues so far */
	int64_t submit;         /* epoch seconds; 0 if unknown */
	int64_t start;          /* 0: never started */
	int64_t end;
	int64_t queued; /* when log_record ran */
	char *cluster;
	char *user;
	char *account;
	char *partition;
	char *nodes;
	char *name;
	char *state;         /* "COMPLETED", "CANCELLED", ... */
	char *admin_comment; /* as sent with the job-complete record */
	/* What the job asked for, against which the digest's "fit" block
	 * sets what it used (lwm2_jc_job_requests). */
	uint32_t time_limit_s;        /* 0: unknown or unlimited */
	bool time_unlimited;          /* the limit is INFINITE: none at all */
	uint32_t cpus_per_task;       /* 0: unknown */
	uint64_t mem_req_mb;          /* the job's total; 0: unknown (or --mem=0) */
	uint64_t mem_req_per_node_mb; /* 0: unknown */
	uint32_t gpus;                /* GPUs allocated (TRES gres/gpu) */
	bool gpus_known;              /* gpus read from the job's TRES */
	/* Progress, kept in the state file so a restart resumes where it
	 * stopped. */
	bool logged;        /* line appended to JobCompLoc */
	bool acct_sent;     /* AdminComment modification queued */
	uint32_t attempts;  /* failed tries so far (backoff) */
	int64_t next_try;   /* epoch seconds; 0: now */
	char *acct_part;    /* the LWM2: part that was sent */
	int64_t nodes_done; /* when the nodes were seen done (memory only) */
	/* The state accounting records for this run (slurmdbd's numbering,
	 * JOB_REQUEUE for a requeued run): with end, it selects this run's
	 * row among a requeued job's rows.  0: not known. */
	uint32_t acct_state;
	bool confirmed; /* AdminComment was seen holding the part */
	bool saved;     /* in the state dir (memory only) */
};

void lwm2_jc_job_free(struct lwm2_jc_job *job);

/* The state file name of a job: "<job_id>.<start>.job" (a requeued job's
 * runs differ in start). */
int lwm2_jc_job_file_name(const struct lwm2_jc_job *job, char *buf, size_t len);

/* The job as JSON (state files and the JobCompLoc line) and back.  A
 * state file (with_progress) carries its version, "state_version". */
json_object *lwm2_jc_job_to_json(const struct lwm2_jc_job *job, bool with_progress);
struct lwm2_jc_job *lwm2_jc_job_from_json(json_object *obj);

/* State files of this version and older are read; files from before the
 * version was written are version 1. */
#define LWM2_JC_STATE_VERSION 1

/* 0 when the state file obj is of a version this plugin reads (brought
 * to this version's layout in place); -1 with the reason, naming the
 * version, in err. */
int lwm2_jc_state_version(json_object *obj, char *err, size_t errlen);

/* The time limit (minutes) Slurm's backfill scheduler sets on a job that
 * asked for none, on a partition without one (YEAR_MINUTES): read as no
 * limit, as INFINITE. */
#define LWM2_JC_YEAR_MINUTES (365u * 24 * 60)

/* Slurm's MEM_PER_CPU flag of pn_min_memory (the same bit in 22.05 and
 * 24.11), for the glue to pass on. */
#define LWM2_JC_MEM_PER_CPU 0x8000000000000000ull

/*
 * The job's requests from Slurm's own numbers, for every source
 * (lwm2_jc_job_from_slurm):
 * time_limit_min as Slurm keeps it (minutes; NO_VAL: unknown; INFINITE
 * or backfill's one year, LWM2_JC_YEAR_MINUTES: no limit, time_unlimited),
 * pn_min_memory with its MEM_PER_CPU bit (0 or NO_VAL64: unknown), the
 * allocated TRES in their named form ("cpu=4,mem=2G,node=1,gres/gpu=2":
 * NULL, unknown), cpus_per_task (NO_VAL16: unknown).  Needs total_cpus
 * and node_count set first.  A per-CPU request is per node the CPUs of
 * an average node (Slurm spreads them; uneven allocations differ).
 */
void lwm2_jc_job_requests(struct lwm2_jc_job *job, uint32_t time_limit_min, uint64_t pn_min_memory,
                          const char *tres_alloc, uint32_t cpus_per_task);

/* The GPUs in a named TRES list ("gres/gpu=N"; a typed "gres/gpu:t=N"
 * only when the untyped total is absent); *found whether any was there
 * or the list was given at all (no gpu member: 0 GPUs). */
uint32_t lwm2_jc_tres_gpus(const char *tres, bool *found);

/* "0:0" form of an exit code, as sacct prints it. */
void lwm2_jc_exit_code_str(uint32_t exit_code, char *buf, size_t len);

/* ------------------------------------------------------------ settings */

struct lwm2_jc_conf {
	char *log_path;              /* the JSON-lines log: JobCompLoc for jobcomp/lwm2,
	                                LogFile for lwm2-jobend */
	char *spool_dir;             /* SpoolDir: signed node records */
	char *state_dir;             /* StateDir: one file per pending job */
	char *munge_socket;          /* MungeSocket: NULL for munged's default */
	unsigned late_wait;          /* LateRecordWait: seconds */
	unsigned settle;             /* RecordSettle: seconds after the job's nodes are done */
	unsigned advice_min_runtime; /* AdviceMinRuntime: seconds; shorter jobs get no fit advice */
	size_t cap;                  /* AdminCommentCap: bytes of the LWM2 part */
	bool admin_comment;          /* AdminComment=yes|no */
	bool keep_records;           /* KeepNodeRecords=yes|no */
	unsigned retry_max;          /* RetryMax: seconds before giving up on a job */
	unsigned verify_delay;       /* VerifyDelay: seconds before reading back */
	size_t max_queued;           /* MaxQueued: jobs kept in memory */
	unsigned verify_window;      /* VerifyWindow: seconds after the end to keep checking */
	/* Export to a time-series engine (export.c).  Fixed buffers, so that
	 * the worker's shallow copy of the settings shares nothing. */
	char export_url[1024];    /* ExportURL: the write endpoint; "": no export */
	char export_db[256];      /* ExportDatabase: db= or bucket= */
	char export_org[256];     /* ExportOrg: org= (InfluxDB 2.x API) */
	char export_cred[1024];   /* ExportCredentials: file, root's only */
	unsigned export_batch;    /* ExportBatchSize: points per request */
	unsigned export_timeout;  /* ExportTimeout: seconds per request */
	bool export_gzip;         /* ExportGzip=yes|no */
	size_t export_max_queued; /* ExportMaxQueued: jobs waiting for export */
	/* Database: the central database the log's lines go into (db.h);
	 * "": none.  Default: lwm2.db beside the log. */
	char database[1024];
	bool database_set; /* Database= given (else the default) */
	/* JobEndLog: where lwm2-jobend writes its messages; "": syslog.
	 * A fixed buffer, like the Export* strings. */
	char jobend_log[1024];
	/* The uid that node records must be signed by: 0, slurmstepd's.  Not
	 * a setting (the file cannot lower it); only the unit tests, which
	 * sign as themselves, set it. */
	uid_t signer_uid;
};

/*
 * Defaults, then the file (missing file: defaults only), read by
 * lwm2_conf_load: keys are case-insensitive; '#' starts a comment; a key
 * of no part is an error (a typo must not silently change where data
 * goes), the other parts' keys are left to them.  state_save is Slurm's
 * StateSaveLocation (StateDir defaults to <state_save>/lwm2).
 */
int lwm2_jc_conf_load(struct lwm2_jc_conf *conf, const char *path, const char *state_save,
                      char *err, size_t errlen);
void lwm2_jc_conf_free(struct lwm2_jc_conf *conf);

/* ------------------------------------------------------------ AdminComment */

/*
 * The AdminComment after putting part ("LWM2:{...}") into old: an existing
 * LWM2 part is replaced, everything else is kept byte for byte; part goes
 * last, after one space when old has other text.  NULL part: only remove.
 * If the result would exceed max bytes (NUL included) returns NULL with
 * errno E2BIG.  Returns a malloc'd string.
 */
char *lwm2_jc_comment_merge(const char *old, const char *part, size_t max);

/* Where the LWM2 part is in text: start offset and length, or -1. */
int lwm2_jc_comment_find(const char *text, size_t *off, size_t *len);

/* ------------------------------------------------------------ queue */

/*
 * The pending jobs: an in-memory FIFO fed by log_record (no I/O there),
 * written to one file per job in the state dir by the worker before any
 * other work, removed when the job is done.  Thread-safe.
 */
struct lwm2_jc_queue;

struct lwm2_jc_queue *lwm2_jc_queue_new(size_t max);
void lwm2_jc_queue_free(struct lwm2_jc_queue *q);
/* Takes job.  -1 with ENOSPC when max jobs are waiting (job freed). */
int lwm2_jc_queue_push(struct lwm2_jc_queue *q, struct lwm2_jc_job *job);
/* Waits until a job is there, or until deadline (CLOCK_MONOTONIC, NULL:
 * forever), or until lwm2_jc_queue_wake.  NULL if none. */
struct lwm2_jc_job *lwm2_jc_queue_pop(struct lwm2_jc_queue *q, const struct timespec *deadline);
void lwm2_jc_queue_wake(struct lwm2_jc_queue *q);
size_t lwm2_jc_queue_len(struct lwm2_jc_queue *q);

/* State files: atomic write (temporary, fsync, rename, fsync dir), load
 * all (skipping and logging bad ones), remove. */
int lwm2_jc_state_save(const char *dir, const struct lwm2_jc_job *job);
int lwm2_jc_state_remove(const char *dir, const struct lwm2_jc_job *job);
/* Calls fn for every job found (fn takes the job); a file that is not a
 * job is logged (log.h) and renamed to .bad. */
int lwm2_jc_state_load(const char *dir, void (*fn)(struct lwm2_jc_job *, void *), void *arg);
/* A done run, when its node records stay in the spool (KeepNodeRecords):
 * an empty "<job_id>.<start>.done" file, so that it is not recovered. */
int lwm2_jc_state_mark_done(const char *dir, const struct lwm2_jc_job *job);
bool lwm2_jc_state_is_done(const char *dir, const struct lwm2_jc_job *job);

/* ------------------------------------------------------------ worker */

/* Result of reading a job back from accounting. */
enum lwm2_jc_acct_state {
	LWM2_JC_ACCT_UNREACHABLE, /* slurmdbd down, or an error: try later */
	LWM2_JC_ACCT_NOT_ENDED,   /* job-complete record not yet applied */
	LWM2_JC_ACCT_ENDED,       /* *comment holds the AdminComment now */
	LWM2_JC_ACCT_GONE,        /* no such job in accounting */
};

/*
 * What the worker needs from slurmctld, given by the glue (tests give
 * their own).  Every member may be NULL: no accounting, no way to ask.
 */
struct lwm2_jc_ops {
	/* true while the job's nodes have not all finished (COMPLETING) */
	bool (*job_completing)(uint32_t job_id);
	/* Queue an AdminComment modification behind the job's own records
	 * (in order).  0 when queued. */
	int (*acct_modify)(const struct lwm2_jc_job *job, const char *comment);
	/* Read the job's AdminComment back (*comment malloc'd or NULL). */
	enum lwm2_jc_acct_state (*acct_read)(const struct lwm2_jc_job *job, char **comment);
	/* When a later run of the job (a requeue) started, 0 when none has:
	 * node records written after that belong to the later run. */
	int64_t (*next_run_start)(const struct lwm2_jc_job *job);
	/* The job as slurmctld (or else accounting) has it, for jobs found
	 * in the spool but neither queued nor done: 1 and *job when it has
	 * ended, 0 while it has not (log_record will come), -1 with errno
	 * ENOENT (unknown) or EAGAIN (ask again later). */
	int (*job_lookup)(uint32_t job_id, struct lwm2_jc_job **job);
};

/*
 * Start the worker: load conf, load pending jobs from the state dir, start
 * the thread.  Never blocks on the network.  0 or -1 (logged).
 */
int lwm2_jc_start(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops);
/* New JobCompLoc (reconfigure). */
int lwm2_jc_set_log(const char *path);
/* Hand a job over (takes it).  Memory only: safe under slurmctld's locks. */
int lwm2_jc_enqueue(struct lwm2_jc_job *job);
/*
 * Stop: jobs not yet in the state dir are written there, the worker
 * finishes the job in hand (waits are cut short) and is joined.  What is
 * not done stays in the state dir for the next start.
 */
void lwm2_jc_stop(void);
bool lwm2_jc_running(void);

/*
 * Jobs whose node records are in the spool (written since `since`) but
 * which are neither in pending (queued) nor done: looked up with
 * ops->job_lookup and handed to fn.  is_pending tells whether a job id is
 * queued.  Returns the number handed over; *again is set when a lookup
 * asked to be tried later.
 */
int lwm2_jc_recover(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops, int64_t since,
                    bool (*is_pending)(uint32_t job_id, void *arg),
                    void (*fn)(struct lwm2_jc_job *job, void *arg), void *arg, bool *again);

/*
 * One job, start to end, synchronously (the worker's step; exposed for the
 * tests).  Returns 0 when the job is done
 * (state file may go), 1 when it must be tried again later, -1 when it
 * failed for good.
 */
int lwm2_jc_process(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops,
                    struct lwm2_jc_job *job, const atomic_bool *stop);

/*
 * The lines lwm2_jc_process appended to the log and the database lacks,
 * written to it now, in one transaction (a failure is logged once and
 * caught up later).  The worker thread writes them as a group, up to a
 * quarter of a second after the first; a caller of lwm2_jc_process
 * without the worker (lwm2-jobend) calls this after each pass.
 */
void lwm2_jc_db_write_waiting(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops);

/* ------------------------------------------------------------ export */

/*
 * Export of every logged job to a time-series engine (InfluxDB line
 * protocol over HTTP, digest/site/lineproto.h), in a thread of its own so that
 * a slow or absent engine never holds up the worker: the worker hands the
 * job's log line over with lwm2_jc_export_queue (a file in
 * <StateDir>/export, written atomically), the export thread sends the
 * files in batches and removes them once the engine took their points,
 * with backoff while it is unreachable.  At most ExportMaxQueued jobs
 * wait; beyond that a job is not queued and a line is logged (the
 * JSON-lines log keeps it for `lwm2 export`).
 */
/* Start the export thread when ExportURL is set (errors are logged; the
 * jobs then wait in the export directory).  0 or -1. */
int lwm2_jc_export_start(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *ops);
/* Cut the request in flight short and join the thread. */
void lwm2_jc_export_stop(void);
/* Queue the job's log line (worker only).  Nothing when export is off. */
void lwm2_jc_export_queue(const struct lwm2_jc_job *job, const char *line);

#endif /* LWM2_JOBCOMP_H */
