/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Node records, their munge signature, and job digests (liblwm2digest.la,
 * json-c and libmunge).  Used by the SPANK plugin (merge and sign at step
 * end, as root in slurmstepd), by jobcomp/lwm2 (verify, build the digest,
 * store it in AdminComment) and by the lwm2 command.
 *
 * The JSON layouts are versioned and described in doc/digest-schema.md.
 * All functions return 0 / -1 with errno set (or NULL with errno), and put
 * a one-line reason into err where they take one; none ever exits or
 * aborts on bad input.
 */
#ifndef LWM2_DIGEST_H
#define LWM2_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "lwm2_record.h"
#include "lwm2_render.h"

#define LWM2_NODE_VERSION   1
#define LWM2_DIGEST_VERSION 2

/* The marker before the compact digest in AdminComment ("LWM2:{...}"). */
#define LWM2_DIGEST_PREFIX "LWM2:"
/* Default cap for the compact digest: AdminComment is a MySQL text column
 * (65,535 bytes, silently cut) that other tools share. */
#define LWM2_COMPACT_CAP_DEFAULT (16u << 10)
#define LWM2_COMPACT_CAP_MAX     60000u

/* A signed node record file larger than this is rejected unread. */
#define LWM2_NODE_FILE_MAX (32u << 20)
/* A digest text larger than this is rejected by lwm2_digest_parse. */
#define LWM2_DIGEST_TEXT_MAX (256u << 20)

/* Rank records merged into one node record at most (one per process of
 * a step on a node, forks and execs included); more are logged and
 * skipped. */
#define LWM2_NODE_MAX_RECORDS 65536u

/* Log callback for records that are skipped: one line, no newline. */
typedef void (*lwm2_log_fn)(void *arg, const char *msg);

struct lwm2_node_ident {
	const char *cluster;
	uint64_t job_id;
	uint32_t step_id;
	const char *node;
	uint32_t expected_tasks;   /* the tasks measured here (S_JOB_LOCAL_TASK_COUNT
	                            * without those of unmeasured_tasks); 0 if unknown */
	uint32_t unmeasured_tasks; /* left out by the step's rank subset */
};

/*
 * Merge every "*.lwm2" rank record in dirfd into one node record.  Each
 * file is read with lwm2_record_read_file (O_NOFOLLOW, size limit, full
 * validation); a file that fails, or whose job/step does not match id
 * (when id->job_id is nonzero), is logged through log and skipped, the
 * others are kept.  Slices of processes are summed per absolute slice;
 * series of different lengths (coarsened) are put on the longest length.
 * Returns a new object (json_object_put it) or NULL with errno (ENOMEM,
 * or the error of reading the directory itself).
 */
json_object *lwm2_node_merge(int dirfd, const struct lwm2_node_ident *id, lwm2_log_fn log,
                             void *log_arg);

/* Lines logged one by one for the skipped records of one merge; beyond,
 * one line gives their number. */
#define LWM2_NODE_LOG_MAX 10

/* What one merge of a directory may take (0: no limit of that kind). */
struct lwm2_merge_limits {
	bool check_owner; /* every record must be owner's */
	uid_t owner;
	uint64_t max_bytes; /* read in all; records beyond are skipped */
	size_t max_records; /* 0: LWM2_NODE_MAX_RECORDS */
	unsigned max_ms;    /* records not read by then are skipped */
};

/*
 * lwm2_node_merge within limits, for a directory a hostile user fills:
 * besides the checks of every record, files with more than one link, of
 * another owner, larger than the writer makes or an inode already merged
 * are skipped, and reading stops at the byte, record and time budgets.
 * Records are merged one at a time, never held together.
 */
json_object *lwm2_node_merge_limited(int dirfd, const struct lwm2_node_ident *id,
                                     const struct lwm2_merge_limits *limits, lwm2_log_fn log,
                                     void *log_arg);

/*
 * Merge rank records already in memory (what lwm2_node_merge does after
 * reading; used by `lwm2 merge FILE...`, `lwm2 run` and the tests).
 * Records of another job or step than id (when id->job_id is nonzero) are
 * logged and skipped.  files may be NULL; else files[i] names recs[i] in
 * log lines.
 */
json_object *lwm2_node_merge_records(const struct lwm2_node_ident *id,
                                     struct lwm2_rank_record *const *recs, const char *const *files,
                                     size_t n, lwm2_log_fn log, void *log_arg);

/*
 * Check the structure of a node record (any origin): version, ident
 * fields, every process entry, series lengths.  0, or -1 with a reason.
 */
int lwm2_node_validate(json_object *node, char *err, size_t errlen);

/*
 * Sign and store a node record: a munge credential (made now, by the
 * caller, root in slurmstepd) whose payload binds "lwm2-node v1", the
 * cluster, job, step, node and the SHA-256 of the exact record bytes; the
 * file <spool_dir>/<job_id>/<step_id>.<node>.lwm2node is written
 * atomically (temporary file in the same directory, fsync, rename, fsync of
 * the directory); <spool_dir>/<job_id> is created 0700 if needed.
 *
 * File format (text, framed so the record bytes are hashed exactly as
 * written):
 *     lwm2-node 1 <cred_len> <record_len>\n
 *     <cred: cred_len bytes>\n
 *     <record JSON: record_len bytes>\n
 *
 * munge_socket NULL: munged's default socket.
 */
int lwm2_node_write_signed(const char *spool_dir, const struct lwm2_node_ident *id,
                           json_object *node, char *err, size_t errlen);
int lwm2_node_write_signed_socket(const char *spool_dir, const struct lwm2_node_ident *id,
                                  json_object *node, const char *munge_socket, char *err,
                                  size_t errlen);

/*
 * Markers next to the node records, empty files that tell jobcomp/lwm2
 * what happened to a step that has no record: "<step>.<node>.lwm2start"
 * (error 0: the step started, measured) and "<step>.<node>.<errno>.lwm2fail"
 * (its record could not be written, with that errno).
 */
int lwm2_node_mark(const char *spool_dir, const struct lwm2_node_ident *id, int error, char *err,
                   size_t errlen);

/* The file name of a node record: "<step_id>.<node>.lwm2node". */
int lwm2_node_file_name(const struct lwm2_node_ident *id, char *buf, size_t len);

struct lwm2_verify_opts {
	uid_t uid;                /* the credential's uid must be this (0: root) */
	const char *cluster;      /* if not NULL, the payload's cluster must match */
	const char *munge_socket; /* NULL: default */
	size_t max_size;          /* 0: LWM2_NODE_FILE_MAX */
};

/*
 * Read and verify a signed node record: O_NOFOLLOW, regular file, size
 * limit, munge_decode, credential uid == opts->uid, payload job ==
 * expect_job, payload step and node == those in the file name and in the
 * record, payload hash == SHA-256 of the record bytes.  A credential that
 * munge reports as replayed or expired is accepted when everything else
 * holds: jobcomp may read a record again after a restart, or long after the
 * step ended (jobs can run for days while munge credentials live minutes);
 * what makes the record trustworthy is root's signature over its hash and
 * its identity, not freshness.  Returns the record (json_object_put it), or
 * NULL with errno and the reason in err (EPERM: forged or foreign record).
 */
json_object *lwm2_node_read_verified(int dirfd, const char *name, uint64_t expect_job,
                                     const struct lwm2_verify_opts *opts, char *err, size_t errlen);

/* Job metadata from slurmctld (or `lwm2 run`); strings may be NULL. */
struct lwm2_job_meta {
	const char *cluster;
	uint64_t job_id;
	const char *user;
	const char *account;
	const char *partition;
	const char *nodes;      /* node list, Slurm's compressed form */
	uint32_t node_count;    /* allocated nodes; 0 if unknown */
	uint32_t cpus_per_task; /* 0 if unknown */
	int64_t start;          /* epoch seconds */
	int64_t end;
	const char *state; /* "COMPLETED", "FAILED", ... */
	/* What the job asked for, for the "fit" block (fit.c): only
	 * jobcomp knows it (have_requests); other builders leave it out. */
	bool have_requests;
	uint32_t cpus;                /* allocated cores; 0 if unknown */
	uint32_t time_limit_s;        /* 0: unknown or unlimited */
	bool time_unlimited;          /* the job has no time limit at all */
	uint64_t mem_req_mb;          /* the job's total; 0 if unknown */
	uint64_t mem_req_per_node_mb; /* 0 if unknown */
	uint32_t gpus;                /* GPUs allocated */
	bool gpus_known;
	/* a job that ran shorter gets its fit's figures and verdicts but
	 * no advice (lwm2.conf's AdviceMinRuntime; 0: every job) */
	uint32_t advice_min_runtime_s;
};

/*
 * The "fit" block: what the job asked for against what it used (CPU,
 * memory, time, GPUs), each with a verdict and, where the fit is poor,
 * the request for next time (doc/lwm2.1, "Fit").  NULL when meta has no
 * requests, or with errno on allocation failure.
 */
json_object *lwm2_fit_json(const struct lwm2_job_meta *meta, json_object *const *nodes, size_t n);
/* The advice's forms: "--mem=5G" (whole GiB from 1 GiB, else 128 MiB
 * steps, rounded up) and Slurm's [D-]HH:MM:SS. */
void lwm2_fit_mem_option(uint64_t mb, char *buf, size_t len);
void lwm2_fit_time_str(uint64_t s, char *buf, size_t len);
/* A fit part that was not measured in words, "not measured" and why
 * ("not measured (no memory request known)"), into buf; NULL when part
 * was measured.  The text digest and the HTML report both print it. */
const char *lwm2_fit_not_measured(json_object *part, char *buf, size_t len);

/*
 * Build the job digest from node records (every step of the job): job
 * metadata, per step and for the whole job every metric as min/avg/max
 * across processes with the rank and node of min and max, totals, missing
 * metrics with reasons, flags, and the time-slice series of every node
 * ("grid"; dropped by the compact form).  Linear in the number of
 * processes.  Node records are only read (their series are shared by
 * reference).  Returns NULL with errno on allocation failure.
 */
json_object *lwm2_job_digest_build(const struct lwm2_job_meta *meta, json_object *const *nodes,
                                   size_t n);

/*
 * The compact form for AdminComment: LWM2_DIGEST_PREFIX followed by the
 * digest without "grid", reduced (step details dropped, lists cut, each
 * marked) until it fits in cap bytes including the NUL.  cap 0 means
 * LWM2_COMPACT_CAP_DEFAULT; cap is clamped to LWM2_COMPACT_CAP_MAX.
 * Returns a malloc'd string, or NULL with errno (E2BIG if even the
 * smallest form does not fit).
 */
char *lwm2_job_digest_compact(json_object *digest, size_t cap);

/*
 * Parse a digest from text: bare JSON, "LWM2:" + JSON, an AdminComment
 * that holds "LWM2:{...}" among other text, or a JSON-lines log entry
 * ({"digest": {...}, ...}).  Checks the version and the structure the
 * renderer relies on.  Returns the digest or NULL with errno (EINVAL) and
 * the reason in err.
 */
json_object *lwm2_digest_parse(const char *text, size_t len, char *err, size_t errlen);

/*
 * The lwm2 part of an AdminComment, as jobcomp/lwm2 writes it: the first
 * LWM2_DIGEST_PREFIX at the start of text or after white space that a JSON
 * object ('{') follows.  Other tools' text around it is theirs.  Returns
 * the marker within text[0..len), or NULL.
 */
const char *lwm2_digest_mark(const char *text, size_t len);

/* Structural check of a digest object (what lwm2_digest_parse applies);
 * versions 1 to LWM2_DIGEST_VERSION pass. */
int lwm2_digest_validate(json_object *digest, char *err, size_t errlen);

/*
 * Bring a validated digest of an older version up to LWM2_DIGEST_VERSION in
 * place (lwm2_digest_parse does this): a version 1 metric whose definition
 * changed since moves to the scope's "v1_metrics" and is listed under
 * "missing" with what version 1 measured; "upgraded_from" says it was done.
 * Returns 1 when the digest was changed, else 0.
 */
int lwm2_digest_upgrade(json_object *digest);

/* The metrics whose definition changed after digest version 1. */
struct lwm2_v1_change {
	const char *id;
	const char *why;
};
extern const struct lwm2_v1_change lwm2_v1_changes[];
extern const size_t lwm2_nv1_changes;

/* The same for a scope read without JSON objects (lwm2 stats' fast
 * reader): a scope of a version `from` digest brought to the current
 * version, step by step as lwm2_digest_upgrade does.  Returns 1 when the
 * scope was changed, else 0 (current, or no such version). */
int lwm2_scope_upgrade(struct lwm2_scope *s, long long from);

struct lwm2_render_opts {
	unsigned flags; /* enum lwm2_render_flags */
	int steps;      /* also render every step (default: job only) */
};

/* Render a digest (full or compact) as text with guidance.  0 or -1. */
int lwm2_digest_render(json_object *digest, FILE *out, const struct lwm2_render_opts *opts);

/* The lines of a digest made of others ("Derived: the difference B - A
 * of 2 digests, not a run: A = ..., B = ...") and of a scope's derived
 * metrics ("Derived metrics", a line each, "n/a (why)" without a figure);
 * nothing for a digest or scope without them.  lwm2_digest_render writes
 * both; lwm2 ranks and lwm2 report call them for their own pages. */
void lwm2_derived_render(json_object *d, FILE *out);
void lwm2_derived_metrics_render(json_object *scope, FILE *out);

/* Fill a scope to evaluate guidance on or render from a digest's scope
 * (or step) object, with where the minimum and maximum were measured:
 * what lwm2_digest_render shows and `lwm2 diff` compares.  The strings
 * in s point into js. */
void lwm2_scope_from_json(struct lwm2_scope *s, json_object *js, const char *title,
                          uint32_t cpus_per_task);
/* The events the digest d's counter roles were counted with
 * ("counter_events") into s, whose labels follow them. */
void lwm2_scope_events_from_digest(struct lwm2_scope *s, json_object *d);

/* A rank record as JSON (what `lwm2 dump` prints). */
json_object *lwm2_record_to_json(const struct lwm2_rank_record *r);
/* The application identity of a record (build_id, mpi_library,
 * runtime_libs, cuda_runtime, launch) added to o; nothing when the record
 * has none. */
void lwm2_identity_to_json(const struct lwm2_rank_record *r, json_object *o);
/* The build-id as lowercase hex into out ("" when none). */
void lwm2_build_id_hex(const struct lwm2_rank_record *r, char *out, size_t len);

/*
 * The MPI share (%) of a time slice: MPI time over the processes' time in
 * it (LEN_S seconds times PROCS).  An MPI call's time is credited to the
 * slice in which it returns, so a slice that ends a long wait holds time
 * of the slices before it, and the ratio can pass 100 (107.5 % was seen
 * on a site page): a share of the slice's time is at most all of it.
 */
static inline double lwm2_slice_mpi_share(double mpi_ns, double len_s, double procs)
{
	double v = 100.0 * mpi_ns / (len_s * 1e9 * (procs > 0 ? procs : 1));

	return v > 100.0 ? 100.0 : v > 0 ? v : 0.0;
}

#endif /* LWM2_DIGEST_H */
