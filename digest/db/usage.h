/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a job asked for against what it used, from one line of
 * jobcomp/lwm2's log: the one definition of requested, used and wasted
 * core-hours that `lwm2 stats --by` and `lwm2 report --site` both print,
 * so the two can never disagree.
 *
 *   requested core-hours = allocated cores x elapsed time
 *   used core-hours      = CPU time (user + system) of the job's processes
 *   wasted core-hours    = requested - used, over the jobs whose CPU time
 *                          is known (those with a digest)
 *
 * Read with the text walkers of jsontext.h: only the few members needed,
 * so a log of 100,000 jobs streams as fast as `lwm2 stats` reads it.
 *
 * Not part of the library: linked into the lwm2 command only.
 */
#ifndef LWM2_USAGE_H
#define LWM2_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "logscan.h"

/* One job.  NaN where not known. */
struct lwm2_usage {
	double req_core_h;  /* allocated cores x elapsed, 0 when either is unknown */
	double used_core_h; /* CPU time / 3600; NaN: no digest */
	double mem_req_mb;  /* the job's requested memory (log line "mem_req_mb") */
	double mem_peak_mb; /* the digest's fit.memory.peak_mb */
};

/* The figures of one log line. */
void lwm2_usage_of_line(const struct lwm2_logline *l, struct lwm2_usage *u);

/* lwm2_usage_of_line for a line whose digest's scope the caller has
 * walked (lwm2_scope_from_text_member): executables is where the scope's
 * "executables" member starts, NULL where it has none. */
void lwm2_usage_of_walked_line(const struct lwm2_logline *l, struct lwm2_usage *u,
                               const char *executables);

/* The job's application as `lwm2 stats --by app` groups it: the digest's
 * application.exe, else the program of its largest step, else the job's
 * name; "" when none is known. */
void lwm2_usage_app(const struct lwm2_logline *l, char *out, size_t len);

/* The program of the job's largest step where the digest names it
 * (version 1 does not), else the job's name: lwm2_usage_app's fallback,
 * and stats --by executable. */
void lwm2_usage_exe(const struct lwm2_logline *l, char *out, size_t len);

/* lwm2_usage_exe's program into exe, and whether one of the steps is the
 * batch script's (*batch), from one walk over the steps: they are most
 * of a digest's text after its grid. */
void lwm2_usage_steps(const struct lwm2_logline *l, char *exe, size_t len, bool *batch);

/* The figures of a group of jobs. */
struct lwm2_usage_sum {
	uint64_t jobs;      /* all jobs added */
	uint64_t measured;  /* jobs whose CPU time is known */
	uint64_t mem_jobs;  /* jobs with both requested and peak memory */
	double req_core_h;  /* of all jobs */
	double meas_req_h;  /* of the measured jobs only */
	double used_core_h; /* of the measured jobs */
	double mem_req_mb;  /* sums over mem_jobs */
	double mem_peak_mb;
};

/* Add one job with share frac of it (a job on n nodes gives each node
 * 1/n). */
void lwm2_usage_add(struct lwm2_usage_sum *s, const struct lwm2_usage *u, double frac);

/* Wasted core-hours: requested - used over the measured jobs; NaN when
 * none is measured. */
double lwm2_usage_waste(const struct lwm2_usage_sum *s);

/* Used / requested core-hours of the measured jobs in percent; NaN when
 * none is measured or none requested any. */
double lwm2_usage_efficiency(const struct lwm2_usage_sum *s);

/* {"requested_core_hours", "used_core_hours", "wasted_core_hours",
 *  "efficiency_pct", "measured_jobs", "mem_req_mb", "mem_peak_mb",
 *  "mem_jobs", "memory"}; a figure not known is null, and "memory" is
 *  "not measured" when no job had both memory figures, else "measured". */
json_object *lwm2_usage_json(const struct lwm2_usage_sum *s);

/* Groups by name, for the site report's tables. */
struct lwm2_usage_group {
	char *name;
	struct lwm2_usage_sum s;
};

struct lwm2_usage_table {
	struct lwm2_usage_group *g;
	size_t n, cap;
	size_t *htab; /* open addressing: index + 1, 0 empty */
	size_t hcap;
};

/* Add u to the group name ("(none)" for NULL or "").  0, or -1 when out
 * of memory. */
int lwm2_usage_table_add(struct lwm2_usage_table *t, const char *name, const struct lwm2_usage *u);

/* The groups ranked by wasted core-hours, most first (unmeasured groups
 * last, then by name); malloc'd array of n pointers into t, or NULL. */
struct lwm2_usage_group **lwm2_usage_table_ranked(const struct lwm2_usage_table *t);

void lwm2_usage_table_free(struct lwm2_usage_table *t);

#endif /* LWM2_USAGE_H */
