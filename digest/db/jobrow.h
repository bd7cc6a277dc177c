/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One job as the site's questions need it: the row of the central
 * database, and what `lwm2 stats` adds to its groups.  Made from a line of
 * jobcomp/lwm2's JSON-lines log (lwm2_jobrow_fields, then
 * lwm2_jobrow_digest) or read back from the database (db.h), with the
 * same values either way: the database answers what the log answers.
 *
 * Two steps because a reader of the log selects on the job's fields
 * first and parses the digest only for the jobs it takes.
 */
#ifndef LWM2_JOBROW_H
#define LWM2_JOBROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logscan.h"
#include "lwm2_record.h"
#include "lwm2_render.h"
#include "usage.h"

/* The job-wide figures kept per job, by enum lwm2_stats_metric. */
enum lwm2_jobrow_value {
	LWM2_JR_MPI, /* mpi_time's average, % */
	LWM2_JR_IO,  /* posix_io_time's average, % */
	LWM2_JR_TPC, /* threads per allocated core */
	LWM2_JR_CPI, /* cycles per instruction */
	LWM2_JR_N,
};

/* What lwm2_jobrow_digest fills besides the figures (each costs a walk of
 * the digest): the program, the application, the main container image. */
enum {
	LWM2_JR_WANT_EXE = 1,
	LWM2_JR_WANT_APP = 2,
	LWM2_JR_WANT_IMAGE = 4,
	LWM2_JR_WANT_LANGUAGE = 8, /* and the MPI library: the application's */
	LWM2_JR_WANT_MODE = 16,
	LWM2_JR_WANT_CPU = 32, /* the main processor */
	LWM2_JR_WANT_ALL = 63,
};

#define LWM2_JOBROW_NAME_LEN  256
#define LWM2_JOBROW_IMAGE_LEN (4 * LWM2_CONTAINER_IMAGE_LEN)

struct lwm2_jobrow {
	/* the log line's fields (pointers into the line or the database's
	 * row: valid as long as it is) */
	int64_t job_id, uid, submit, start, end, cpus;
	char id[48]; /* as sacct writes it: 12, 12_3 (array), 12+1 (het) */
	const char *cluster, *user, *account, *partition, *qos, *state, *nodes, *name;
	uint32_t node_count;
	/* requested against used (usage.h); the job's core-hours are its
	 * req_core_h */
	struct lwm2_usage use;
	/* from the digest, where the line has one */
	bool digest;
	uint32_t cpus_per_task;
	bool has[LWM2_JR_N];
	double v[LWM2_JR_N];
	uint64_t fired; /* bit r: lwm2_guidance_rules[r] fired */
	bool has_own, has_own_pct;
	double own_s, own_pct; /* lwm2's own cost: seconds, % of CPU time */
	char exe[LWM2_JOBROW_NAME_LEN], app[LWM2_JOBROW_NAME_LEN];
	char image[LWM2_JOBROW_IMAGE_LEN]; /* escaped: \xNN for a control byte */
	/* the application's language and MPI library (its first line),
	 * "" when the digest does not say; how the job ran: "batch" (a
	 * batch script), "interactive" (salloc, srun), "" without a
	 * digest */
	char language[16], mpi_library[LWM2_JOBROW_NAME_LEN], mode[16];
	/* the processor of most of the job's nodes ("" where the digest does
	 * not say) */
	char cpu[LWM2_JOBROW_NAME_LEN];
	/* MPI point-to-point and collective calls a second of the busiest
	 * process for each (0: the job passed no MPI message) */
	bool has_mpi_calls;
	double mpi_calls_per_s;
	struct lwm2_scope scope; /* the digest's job-wide scope */
};

/* The job's fields from the line (no digest yet). */
void lwm2_jobrow_fields(const struct lwm2_logline *l, struct lwm2_jobrow *j);

/* The digest's part (a line without one: the usage figures only), with
 * what want asks for.  0, or -1 with err for a digest that cannot be
 * read. */
int lwm2_jobrow_digest(const struct lwm2_logline *l, struct lwm2_jobrow *j, unsigned want,
                       char *err, size_t errlen);

/* The month a job ended in, as stats --by month names it (local time),
 * "(none)" without an end. */
void lwm2_jobrow_month(int64_t end, char *out, size_t len);

#endif
