/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Applications across jobs: which application a job ran (the digest's
 * "application"), one history entry per job, the worker's index by
 * application, and the regression rule that compares a job with its
 * application's earlier comparable runs.
 *
 * The rule (doc/lwm2.1, REGRESSION RULE; doc/digest-schema.md, History
 * guidance) is one table, lwm2_history_rules[], in history.c.
 */
#ifndef LWM2_HISTORY_H
#define LWM2_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* ---- the application of a job (built with the digest) ---- */

struct lwm2_app_acc;

struct lwm2_app_acc *lwm2_app_new(void);
void lwm2_app_free(struct lwm2_app_acc *a);
/*
 * One process entry of a node record (p) of step on node, with its
 * computed metrics (values may be NULL/invalid).  Pointers into the node
 * records are kept until lwm2_app_json.  -1 on ENOMEM.
 */
struct lwm2_metrics;
int lwm2_app_add(struct lwm2_app_acc *a, json_object *p, const struct lwm2_metrics *m,
                 const char *node, uint64_t step);
/* The digest's "application" object, or NULL when no process named an
 * executable. */
json_object *lwm2_app_json(const struct lwm2_app_acc *a);

/* ---- one job in an application's history ---- */

#define LWM2_HIST_EXE   64
#define LWM2_HIST_BUILD 48
#define LWM2_HIST_USER  32

struct lwm2_hist_entry {
	uint32_t job_id;
	uint32_t ranks; /* processes of the application in its largest step */
	uint32_t nodes;
	uint32_t flags; /* reserved */
	int64_t start, end;
	double duration;   /* average wall time of the application's processes, s */
	double core_hours; /* CPU time of the application's processes, h */
	double mpi_share;  /* %, NaN: not an MPI application */
	double io_share;   /* POSIX file I/O, % */
	double cpi;        /* NaN: not measured */
	double threads;    /* threads busy on a CPU, average; NaN: not measured */
	char exe[LWM2_HIST_EXE];
	char build_id[LWM2_HIST_BUILD]; /* hex, "" when unknown */
	char user[LWM2_HIST_USER];
};

/*
 * The entry of a digest (its "job" and "application"); -1 when the digest
 * names no application.
 */
int lwm2_hist_from_digest(json_object *digest, struct lwm2_hist_entry *e);

/* ---- the rule ---- */

/* How many earlier runs are compared at most, and needed at least. */
#define LWM2_HIST_LAST     20
#define LWM2_HIST_MIN_RUNS 5
/* Rank counts r, r' are comparable when max/min <= this. */
#define LWM2_HIST_RANK_FACTOR 1.5

enum lwm2_hist_metric {
	LWM2_HM_DURATION,
	LWM2_HM_MPI,
	LWM2_HM_IO,
	LWM2_HM_CPI,
	LWM2_HM_THREADS,
	LWM2_NHM
};

struct lwm2_history_rule {
	const char *id;
	enum lwm2_hist_metric metric;
	int direction;      /* +1: higher is worse, -1: lower is worse */
	double min_z;       /* robust z-score at least (in the bad direction) */
	double min_rel;     /* relative change at least (0.2: 20 %), 0: none */
	double min_abs;     /* absolute change at least (metric's unit) */
	double scale_floor; /* the robust scale is never taken below this */
	const char *meaning;
};

extern const struct lwm2_history_rule lwm2_history_rules[];
extern const size_t lwm2_nhistory_rules;

struct lwm2_hist_finding {
	const struct lwm2_history_rule *rule;
	double value, median, lo, hi, change_rel;
	char text[512];
};

struct lwm2_hist_result {
	size_t compared;                  /* comparable earlier runs used */
	size_t same_app;                  /* earlier runs of the application seen */
	uint32_t rank_lo, rank_hi;        /* rank counts of the compared runs */
	char prev_build[LWM2_HIST_BUILD]; /* build of the latest compared run */
	size_t nfind;
	struct lwm2_hist_finding find[8];
};

/* Whether an earlier run h is comparable with cur. */
bool lwm2_hist_comparable(const struct lwm2_hist_entry *cur, const struct lwm2_hist_entry *h);

/*
 * Judge cur against hist[0..n) (oldest first; entries of cur's job itself
 * or that ended after it are left out).  Pure, no I/O.
 */
void lwm2_history_judge(const struct lwm2_hist_entry *cur, const struct lwm2_hist_entry *hist,
                        size_t n, struct lwm2_hist_result *res);

/* The digest's "history" object of a result. */
json_object *lwm2_hist_result_json(const struct lwm2_hist_entry *cur,
                                   const struct lwm2_hist_result *res);

/* The text of the digest's "application" (after the job's header lines)
 * and of its "history" (after the guidance). */
void lwm2_app_render(json_object *digest, FILE *out);
void lwm2_history_render(json_object *digest, FILE *out);

/* Median of v[0..n) (sorts v). */
double lwm2_median(double *v, size_t n);

/* ---- the worker's index: StateDir/history/<app>.hist ---- */

/*
 * Compare the digest's job with its application's history kept under
 * state_dir, add the digest's "history" (findings as guidance lines), and
 * add the job to the index.  A job already in the index (a retried
 * digest) is judged against the runs before it and not added twice.
 * 0: judged (or no application: nothing to do); -1 with errno and a
 * reason in err: the digest is left as it was.
 */
int lwm2_history_update(const char *state_dir, json_object *digest, char *err, size_t errlen);

/* Entries an index file keeps before its oldest are dropped. */
#define LWM2_HIST_INDEX_MAX  4096
#define LWM2_HIST_INDEX_KEEP 1024
/* Entries read back from the end of an index file per job. */
#define LWM2_HIST_INDEX_TAIL 256

#endif /* LWM2_HISTORY_H */
