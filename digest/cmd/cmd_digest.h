/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside `lwm2 digest`: the jobs and options asked for, one job as either
 * source gives it, and the output it goes to.  cmd_digest.c parses the
 * options and picks the source; digest_log.c reads jobcomp/lwm2's
 * JSON-lines log (--file) or the database, digest_slurmdb.c Slurm
 * accounting; digest_emit.c matches and prints each job they read.
 */
#ifndef LWM2_CMD_DIGEST_H
#define LWM2_CMD_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "lwm2_algebra.h"

#define NONE32 0xfffffffeu /* Slurm's NO_VAL */

struct want {
	uint32_t job_id;
	uint32_t array_task; /* NONE32: any */
	uint32_t het_offset; /* NONE32: any */
	int64_t step;        /* -1: the whole job */
	bool found;          /* printed something for it */
	bool done;           /* has a digest or a final reason */
};

enum out_mode { OUT_TEXT, OUT_TABLE, OUT_PARSABLE, OUT_CSV, OUT_JSON };

struct opts {
	struct want *jobs;
	size_t njobs;
	char **users;
	size_t nusers;
	char **accounts;
	size_t naccounts;
	int64_t start, end; /* 0: not set */
	char *format;
	enum out_mode out;
	const char *file; /* the first --file LOG; NULL: accounting */
	char **files;     /* every --file LOG, read as one log */
	size_t nfiles;
	const char *db; /* --db DATABASE: the central database instead */
	const char *cluster;
	int wait;
	bool steps;
	bool noheader;
	bool all_users;
	struct lwm2_derived_set derived; /* lwm2.conf's DerivedMetric, --metric */
};

/* One job as either source gives it. */
struct entry {
	uint32_t job_id, array_job_id, array_task_id, het_job_id, het_job_offset;
	uint32_t node_count, uid;
	int64_t submit, start, end;
	char user[64];
	const char *account, *partition, *state, *nodes, *exit_code;
	char exit_buf[32];
	const char *status; /* ok, no_records, not_started, running, pending, none */
	const char *reason;
	json_object *digest; /* NULL without one, or not parsed (--file) */
	bool has_digest;
	json_object *logline; /* --file: the whole line */
	int64_t step;         /* step asked for, or -1 */
};

struct out {
	const struct opts *o;
	char **fields;
	size_t nfields;
	int *width;
	bool header_done;
	size_t njson;
	unsigned ok, missing;
	bool quiet; /* --wait: only find out whether the digests are there */
	/* lwm2_digest_last_run: each job handed to collect, not printed */
	void (*collect)(const struct entry *e, void *arg);
	void *collect_arg;
};

/* What of the digest the output needs: lines are parsed only that far. */
enum need { NEED_NONE, NEED_SCOPE, NEED_FULL };
enum need digest_need_of(const struct out *out, const struct opts *o);

/* The member key of o when o is an object, or NULL. */
json_object *digest_get(json_object *o, const char *key);
/* The scope the fields come from: the job, or the step asked for. */
json_object *digest_scope_of(const struct entry *e);
/* Whether a field names a metric (name of len bytes) or a counter. */
bool digest_is_metric(const char *name, size_t len);
bool digest_is_counter(const char *name);
/* Lower-case metric id of a field name, for JSON look-ups. */
void digest_metric_key(const char *f, size_t len, char *buf, size_t blen);

/* Whether a job matches -u, -A, -S/-E. */
bool digest_user_matches(const struct opts *o, const char *user, uint32_t uid);
bool digest_account_matches(const struct opts *o, const char *acct);
bool digest_window_matches(const struct opts *o, int64_t start, int64_t end);
/* Which -j entry (index) the job is, or -1; with no -j, 0 for everything. */
long digest_want_of(const struct opts *o, uint32_t job_id, uint32_t array_job_id,
                    uint32_t array_task, uint32_t het_job_id, uint32_t het_off);
/* out's columns from -o's list ("Field%N" sets a width, as in sacct): 0,
 * or -1 after a message. */
int digest_setup_fields(struct out *out, const char *format);
/* Print e once for every -j entry that names it (each with its step), or
 * once without -j. */
void digest_emit_for_wants(struct out *out, struct opts *o, struct entry *e);

/* The jobs of the log o->file, or of Slurm accounting, printed through
 * digest_emit_for_wants.  0, or -1 after a message. */
int digest_read_log(struct out *out, struct opts *o);
int digest_read_slurmdb(struct out *out, struct opts *o);

/* The digest of the job JOB names (-j's forms: ID, ID_TASK, ID+OFFSET)
 * from Slurm accounting of CLUSTER (NULL: this one), as lwm2 digest --json
 * gives it, of its last run (a requeued job's latest), for a command that
 * needs the digest itself (lwm2 report, lwm2 diff); the caller owns it.
 * NULL without one: after lwm2 digest's message where the job is not
 * found or accounting cannot be read, and with *reason (reason not NULL;
 * the caller frees it) set to why the run has none where accounting says
 * why (else NULL). */
json_object *lwm2_digest_last_run(const char *job, const char *cluster, char **reason);

#endif /* LWM2_CMD_DIGEST_H */
