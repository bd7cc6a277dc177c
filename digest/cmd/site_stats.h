/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Site-wide statistics over the digests of jobcomp/lwm2's JSON-lines log:
 * the jobs a selection takes, grouped by user, account, partition,
 * program, month, node, application or container image, with their
 * core-hours, the distributions of MPI share, I/O share, threads per
 * allocated core and CPI weighted by core-hours, the guidance rules that
 * fired, requested against used; or the jobs that lose the most.  What
 * `lwm2 stats` prints and `lwm2 report --site` draws.
 *
 * The log is streamed: per group the memory is fixed (one histogram per
 * metric), so a year of jobs costs no more than a day of them.
 *
 * Not part of the library: linked into the lwm2 command only, with the
 * log reader (logscan.h), the usage figures (usage.h) and libslurm's host
 * lists it is built on.
 */
#ifndef LWM2_SITE_STATS_H
#define LWM2_SITE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "histbin.h"
#include "jobrow.h"
#include "logscan.h"
#include "usage.h"

/* The distributions kept per group, weighted by core-hours. */
enum lwm2_stats_metric {
	LWM2_SM_MPI,
	LWM2_SM_IO,
	LWM2_SM_TPC,
	LWM2_SM_CPI,
	LWM2_SM_N,
};

/* Per metric: its id (JSON, CSV headings), table heading, the resolution
 * it is binned at and its printf format. */
extern const struct lwm2_stats_metric_def {
	const char *id;
	const char *head;
	double step;
	const char *fmt;
} lwm2_stats_metrics[LWM2_SM_N];

/* Bins of a distribution below its overflow bin; distinct users kept per
 * group. */
#define LWM2_STATS_NBINS     1001
#define LWM2_STATS_USERS_MAX 100000

/* The guidance rules counted (lwm2_guidance_rules, at most this many). */
#define LWM2_STATS_RULES_MAX 64

/*
 * Sums of core-hours and the like kept exact, as integers of 2^-50 (bins:
 * 2^-24), so that they do not depend on the order the jobs come in: the
 * log's order, or the central database's summaries of each day added up
 * (db.h), give the same figures to the last bit.  The doubles beside them
 * are what is printed, filled when reading ends.
 */
__extension__ typedef __int128 lwm2_stats_xsum;

/* *a += b, held at the type's limits: a hostile log line's 1e300
 * core-hours must not overflow the sum (the figures are then nonsense,
 * as the line is, but the reader goes on). */
__extension__ typedef unsigned __int128 lwm2_stats_uxsum;
#define LWM2_STATS_XSUM_MAX ((lwm2_stats_xsum)(~(lwm2_stats_uxsum)0 >> 1))

static inline void lwm2_stats_xadd(lwm2_stats_xsum *a, lwm2_stats_xsum b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = b > 0 ? LWM2_STATS_XSUM_MAX : -LWM2_STATS_XSUM_MAX - 1;
}

/* The same for the bins' 64-bit weights. */
static inline void lwm2_stats_badd(int64_t *a, int64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = b > 0 ? INT64_MAX : INT64_MIN;
}

/*
 * One metric over a group's jobs.  Values are binned at the metric's
 * step over [0, 1000 steps]; above that one overflow bin holds them and
 * quartiles falling there are given as the group's maximum.  Mean,
 * minimum and maximum are exact.
 */
struct lwm2_stats_dist {
	uint64_t n;
	double w, wx, min, max;
	lwm2_stats_xsum xw, xwx;
	int64_t *bins; /* weights in 2^-24 core-hours; allocated at the first value */
};

/* The smallest value with at least q of the weight at or below it, of
 * metric k; NaN without values. */
double lwm2_stats_dist_q(const struct lwm2_stats_dist *d, int k, double q);

/* The weighted mean; NaN without values. */
double lwm2_stats_dist_mean(const struct lwm2_stats_dist *d);

struct lwm2_stats_group {
	char *name;
	uint64_t jobs, no_digest;
	double core_h;
	struct lwm2_usage_sum u; /* requested against used */
	/* the exact sums behind core_h, rule_ch and u's figures */
	lwm2_stats_xsum xcore_h, xrule_ch[LWM2_STATS_RULES_MAX];
	lwm2_stats_xsum xreq, xmeas_req, xused, xmem_req, xmem_peak;
	struct lwm2_stats_dist d[LWM2_SM_N];
	uint64_t rule_jobs[LWM2_STATS_RULES_MAX];
	double rule_ch[LWM2_STATS_RULES_MAX];
	/* jobs whose digest says whether they passed MPI messages, and
	 * those of them that passed none */
	uint64_t mpi_known, no_mpi_msgs;
	char **users; /* distinct users, up to 100,000 */
	size_t nusers;
	/* users' open addressing by name: index + 1, 0 empty; a group
	 * merged from a year of summaries looks each of its users up in
	 * thousands of them */
	size_t *user_index, user_index_cap;
	/* --histogram: the metric's value of each job (absent: no digest,
	 * or the metric not measured), weighted as hist_core_h says */
	struct lwm2_histbin hist;
	struct lwm2_stats_group *next;
};

/* What the jobs are grouped by. */
enum lwm2_stats_by {
	LWM2_BY_NONE,
	LWM2_BY_USER,
	LWM2_BY_ACCOUNT,
	LWM2_BY_PARTITION,
	LWM2_BY_EXE,
	LWM2_BY_MONTH,
	LWM2_BY_NODE,
	LWM2_BY_APP,
	LWM2_BY_IMAGE,
	LWM2_BY_LANGUAGE, /* the application's language */
	LWM2_BY_MPI,      /* its MPI library */
	LWM2_BY_CLUSTER,
	LWM2_BY_MODE, /* batch or interactive */
	LWM2_BY_QOS,
	LWM2_BY_CPU, /* the main processor of the job's nodes */
	LWM2_BY_N,
};

/* Keys after the first of a combined grouping (--by user,app): a group is
 * one combination of values, named by them joined with ','. */
#define LWM2_STATS_BY_MORE 2

/* What the top list ranks by: core-hours lost to a cause, or a value. */
enum lwm2_stats_sort {
	LWM2_SORT_CORE_H,
	LWM2_SORT_MPI,
	LWM2_SORT_IO,
	LWM2_SORT_IDLE,
	LWM2_SORT_CPI,
	LWM2_SORT_OWN,
	LWM2_SORT_OWN_PCT,
	LWM2_SORT_METRIC, /* the job-wide average of sort_metric */
};

/* Which of a metric's job-wide figures --histogram takes (lwm2 digest -o
 * M.avg, M.min, M.max). */
enum lwm2_stats_hist_stat {
	LWM2_HIST_AVG,
	LWM2_HIST_MIN,
	LWM2_HIST_MAX,
};

/* One job of the top list. */
struct lwm2_stats_top {
	int64_t job_id;
	char id[48], user[64], account[64], partition[64];
	int64_t end;
	double core_h, value;
	uint64_t fired; /* bit r: lwm2_guidance_rules[r] fired */
};

struct lwm2_stats {
	/* the selection: every list empty takes all; owned (freed by
	 * lwm2_stats_free) */
	char **users, **accounts, **partitions, **states;
	size_t nusers, naccounts, npartitions, nstates;
	int64_t start, end; /* window on the end time; 0: open */
	/* groups, or with top > 0 the top list instead; by_more: the
	 * further keys of a combined grouping (never by node) */
	enum lwm2_stats_by by, by_more[LWM2_STATS_BY_MORE];
	size_t nby_more;
	size_t top;
	enum lwm2_stats_sort sort;
	int sort_metric; /* LWM2_SORT_METRIC: lwm2_metric_ids' index */
	/* with hist, each group (and the total) also keeps the values of
	 * one metric for a histogram: lwm2_metric_ids' index, its figure,
	 * each job weighted by its core-hours (else 1); never with top */
	bool hist, hist_core_h;
	int hist_metric;
	enum lwm2_stats_hist_stat hist_stat;
	/* the results */
	struct lwm2_stats_group **table; /* hash table of the groups */
	size_t nbuckets, ngroups;
	struct lwm2_stats_group total; /* all selected jobs; name NULL */
	struct lwm2_stats_top *heap;   /* the top list, lwm2_stats_top_sorted orders it */
	size_t nheap;
	struct lwm2_logscan_count count;
	uint64_t selected; /* jobs the selection took */
};

/* s->hist on the metric named name as `lwm2 digest -o` takes it (any
 * case; .avg, the default, .min or .max), weighted by core-hours when
 * weight is "core-hours", else by jobs ("jobs" or NULL).  0, or -1 said
 * on stderr ("lwm2: <cmd>: ...") for a name or weight it does not know. */
int lwm2_stats_hist_set(struct lwm2_stats *s, const char *cmd, const char *name,
                        const char *weight);

/* The names of enum lwm2_stats_hist_stat: "avg", "min", "max". */
extern const char *const lwm2_stats_hist_stats[3];

/* Ready s (its selection, by, top and sort set) to read: the top list's
 * room.  0, or -1 when out of memory. */
int lwm2_stats_begin(struct lwm2_stats *s);

/* Read the n logs (as lwm2_logscan_files, messages "lwm2: <cmd>: ...")
 * into s.  0, or -1 when a log could not be read: the others are. */
int lwm2_stats_read(struct lwm2_stats *s, const char *cmd, char *const *files, size_t n);

/* The same from the central database at url (db.h; site_summary.c):
 * whole days from their summaries where the question allows, count.lines
 * the jobs read or summed up.  0, -1 (said on stderr), or -2 when the
 * database could not be opened (said; nothing read). */
int lwm2_stats_read_db(struct lwm2_stats *s, const char *cmd, const char *url);

/* Every whole day of the database without summaries summed up and kept
 * (lwm2 db summarize; a reader does it for the days it needs).  0, or -1
 * with err. */
struct lwm2_db;
int lwm2_stats_summarize_db(struct lwm2_db *db, unsigned long *days_done, char *err, size_t errlen);

/* The user (n bytes) among the group's distinct users, while fewer than
 * LWM2_STATS_USERS_MAX; out of memory leaves the list as it was. */
void lwm2_stats_group_add_user(struct lwm2_stats_group *g, const char *u, size_t n);

/* The group of that name, made when new; NULL when out of memory. */
struct lwm2_stats_group *lwm2_stats_group_of(struct lwm2_stats *s, const char *name);

/* The printed figures of every group and the total from their exact sums
 * (the readers call it when reading ends). */
void lwm2_stats_finish(struct lwm2_stats *s);

/* A group's sums as a blob of the database's daily summaries (malloc'd,
 * its length in *len), and a blob added to a group: the same as adding
 * the jobs it sums up.  NULL when out of memory; -1 for a blob that
 * cannot be read (the group is then left as it was). */
unsigned char *lwm2_stats_group_pack(const struct lwm2_stats_group *g, size_t *len);
int lwm2_stats_group_merge(struct lwm2_stats_group *g, const void *blob, size_t len);

/* Add one job (from the log or the database) to s when its selection
 * takes it.  0, or -1 when out of memory. */
int lwm2_stats_add(struct lwm2_stats *s, const struct lwm2_jobrow *j);

/* The groups, by core-hours (most first; by month: by name), in a
 * malloc'd array with room for one more; *n their number.  NULL when out
 * of memory. */
struct lwm2_stats_group **lwm2_stats_groups(const struct lwm2_stats *s, size_t *n);

/* Order the top list: the most first. */
void lwm2_stats_top_sorted(struct lwm2_stats *s);

/* Free what s holds, its selection lists included. */
void lwm2_stats_free(struct lwm2_stats *s);

#endif
