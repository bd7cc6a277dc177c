/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 stats`: site-wide statistics over stored digests, the view TOPAS
 * and PerfMiner gave a site: per user, account, partition, program, month
 * or node, the jobs, their core-hours, how the core-hours split by MPI
 * share, I/O share, threads per allocated core and CPI, and on how much
 * of them each guidance rule fired.  --top lists the jobs that lose the
 * most core-hours, the list a site administrator uses to contact users.
 *
 * The figures are site_stats.h's; here the options and the output.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_io.h"
#include "csv.h"
#include "jsonutil.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "site_stats.h"
#include "slurmutil.h"
#include "log.h"

/* ------------------------------------------------------------ options */

/* --by keys, by enum lwm2_stats_by */
static const char *const by_names[] = {
    [LWM2_BY_NONE] = "",           [LWM2_BY_USER] = "user",
    [LWM2_BY_ACCOUNT] = "account", [LWM2_BY_PARTITION] = "partition",
    [LWM2_BY_EXE] = "executable",  [LWM2_BY_MONTH] = "month",
    [LWM2_BY_NODE] = "node",       [LWM2_BY_APP] = "app",
    [LWM2_BY_IMAGE] = "image",     [LWM2_BY_LANGUAGE] = "language",
    [LWM2_BY_MPI] = "mpi",         [LWM2_BY_CLUSTER] = "cluster",
    [LWM2_BY_MODE] = "mode",       [LWM2_BY_QOS] = "qos",
    [LWM2_BY_CPU] = "cpu",
};
_Static_assert(sizeof(by_names) / sizeof(by_names[0]) == LWM2_BY_N, "a name for every --by key");
enum out_mode { OUT_TABLE, OUT_PARSABLE, OUT_CSV, OUT_JSON };

/* --sort keys of --top: core-hours lost to a cause, or a metric's value. */
static const struct {
	const char *name;
	const char *head;
} sort_keys[] = {
    [LWM2_SORT_CORE_H] = {"core_hours", "CORE-H"},
    [LWM2_SORT_MPI] = {"mpi", "MPI CORE-H"},
    [LWM2_SORT_IO] = {"io", "I/O CORE-H"},
    [LWM2_SORT_IDLE] = {"idle", "IDLE CORE-H"},
    [LWM2_SORT_CPI] = {"cpi", "CPI"},
    [LWM2_SORT_OWN] = {"lwm2_cost", "LWM2 S"},
    [LWM2_SORT_OWN_PCT] = {"lwm2_share", "LWM2 %CPU"},
    [LWM2_SORT_METRIC] = {"", ""},
};

/* The statistics and how they are printed. */
struct stats {
	struct lwm2_stats s;
	enum out_mode out;
	bool noheader;
	char by_head[64]; /* the --by keys as given, "user,app" */
	double bucket;    /* --bucket; 0: chosen from the values' range */
};

static const char *by_head(const struct stats *st)
{
	return st->s.by == LWM2_BY_NONE ? "group" : st->by_head;
}

/* ------------------------------------------------------------ output */

static void put_cell(const struct stats *st, size_t i, const char *s)
{
	char sep = st->out == OUT_CSV ? ',' : '|';

	if (i)
		putchar(sep);
	if (st->out == OUT_CSV)
		lwm2_csv_field(stdout, s);
	else
		fputs(s, stdout);
}

static void num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%.6g", v);
}

static json_object *jnum(double v)
{
	return isnan(v) ? NULL : ju_double(v);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* The group's share of the selection's jobs and core-hours (TOPAS's Num%
 * and Time%), and of its jobs that passed no MPI message (NaN where no
 * job's digest says). */
struct shares {
	double jobs_pct, time_pct, no_mpi_pct;
};

static struct shares shares_of(const struct lwm2_stats_group *g, const struct lwm2_stats_group *all)
{
	return (struct shares){pct((double)g->jobs, (double)all->jobs), pct(g->core_h, all->core_h),
	                       g->mpi_known ? pct((double)g->no_mpi_msgs, (double)g->mpi_known)
	                                    : NAN};
}

static json_object *group_json(const struct lwm2_stats_group *g, const struct lwm2_stats_group *all)
{
	struct shares sh = shares_of(g, all);

	json_object *o = json_object_new_object(), *ms = json_object_new_object(),
	            *gd = json_object_new_object();

	ju_add(o, "group", json_object_new_string(g->name));
	ju_add(o, "jobs", ju_u64(g->jobs));
	ju_add(o, "no_digest", ju_u64(g->no_digest));
	ju_add(o, "users", ju_u64(g->nusers));
	ju_add(o, "core_hours", ju_double(g->core_h));
	ju_add(o, "jobs_pct", ju_double(sh.jobs_pct));
	ju_add(o, "core_hours_pct", ju_double(sh.time_pct));
	ju_add(o, "mpi_known", ju_u64(g->mpi_known));
	ju_add(o, "no_mpi_msgs", ju_u64(g->no_mpi_msgs));
	ju_add(o, "no_mpi_msgs_pct", jnum(sh.no_mpi_pct));
	for (int k = 0; k < LWM2_SM_N; k++) {
		const struct lwm2_stats_dist *d = &g->d[k];
		json_object *m;

		if (!d->n)
			continue;
		m = json_object_new_object();
		ju_add(m, "jobs", ju_u64(d->n));
		ju_add(m, "core_hours", ju_double(d->w));
		ju_add(m, "mean", jnum(lwm2_stats_dist_mean(d)));
		ju_add(m, "min", ju_double(d->min));
		ju_add(m, "q1", jnum(lwm2_stats_dist_q(d, k, 0.25)));
		ju_add(m, "median", jnum(lwm2_stats_dist_q(d, k, 0.5)));
		ju_add(m, "q3", jnum(lwm2_stats_dist_q(d, k, 0.75)));
		ju_add(m, "max", ju_double(d->max));
		ju_add(ms, lwm2_stats_metrics[k].id, m);
	}
	ju_add(o, "metrics", ms);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++) {
		json_object *x;

		if (!g->rule_jobs[r])
			continue;
		x = json_object_new_object();
		ju_add(x, "jobs", ju_u64(g->rule_jobs[r]));
		ju_add(x, "jobs_pct", ju_double(pct((double)g->rule_jobs[r], (double)g->jobs)));
		ju_add(x, "core_hours", ju_double(g->rule_ch[r]));
		ju_add(x, "core_hours_pct", ju_double(pct(g->rule_ch[r], g->core_h)));
		ju_add(gd, lwm2_guidance_rules[r].id, x);
	}
	ju_add(o, "guidance", gd);
	ju_add(o, "usage", lwm2_usage_json(&g->u));
	return o;
}

static void group_row(const struct stats *st, const struct lwm2_stats_group *g)
{
	struct shares sh = shares_of(g, &st->s.total);
	char b[64];
	size_t c = 0;

	put_cell(st, c++, g->name);
	snprintf(b, sizeof(b), "%" PRIu64, g->jobs);
	put_cell(st, c++, b);
	snprintf(b, sizeof(b), "%" PRIu64, g->no_digest);
	put_cell(st, c++, b);
	num(b, sizeof(b), g->core_h);
	put_cell(st, c++, b);
	for (int k = 0; k < LWM2_SM_N; k++) {
		const struct lwm2_stats_dist *d = &g->d[k];
		double q[6] = {lwm2_stats_dist_mean(d),       d->n ? d->min : NAN,
		               lwm2_stats_dist_q(d, k, 0.25), lwm2_stats_dist_q(d, k, 0.5),
		               lwm2_stats_dist_q(d, k, 0.75), d->n ? d->max : NAN};

		for (int i = 0; i < 6; i++) {
			num(b, sizeof(b), q[i]);
			put_cell(st, c++, b);
		}
	}
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++) {
		snprintf(b, sizeof(b), "%" PRIu64, g->rule_jobs[r]);
		put_cell(st, c++, b);
		num(b, sizeof(b), pct(g->rule_ch[r], g->core_h));
		put_cell(st, c++, b);
	}
	{
		double u[] = {g->u.req_core_h,
		              g->u.measured ? g->u.used_core_h : NAN,
		              lwm2_usage_waste(&g->u),
		              lwm2_usage_efficiency(&g->u),
		              g->u.mem_jobs ? g->u.mem_req_mb : NAN,
		              g->u.mem_jobs ? g->u.mem_peak_mb : NAN};

		for (size_t i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
			num(b, sizeof(b), u[i]);
			put_cell(st, c++, b);
		}
	}
	/* after the columns of earlier versions: a reader by position keeps
	 * its columns */
	num(b, sizeof(b), sh.jobs_pct);
	put_cell(st, c++, b);
	num(b, sizeof(b), sh.time_pct);
	put_cell(st, c++, b);
	num(b, sizeof(b), sh.no_mpi_pct);
	put_cell(st, c++, b);
	putchar('\n');
}

static void group_header(const struct stats *st)
{
	static const char *const q[6] = {"mean", "min", "q1", "median", "q3", "max"};
	char b[128];
	size_t c = 0;

	put_cell(st, c++, by_head(st));
	put_cell(st, c++, "jobs");
	put_cell(st, c++, "no_digest");
	put_cell(st, c++, "core_hours");
	for (int k = 0; k < LWM2_SM_N; k++)
		for (int i = 0; i < 6; i++) {
			snprintf(b, sizeof(b), "%s.%s", lwm2_stats_metrics[k].id, q[i]);
			put_cell(st, c++, b);
		}
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++) {
		snprintf(b, sizeof(b), "%s.jobs", lwm2_guidance_rules[r].id);
		put_cell(st, c++, b);
		snprintf(b, sizeof(b), "%s.core_hours_pct", lwm2_guidance_rules[r].id);
		put_cell(st, c++, b);
	}
	put_cell(st, c++, "requested_core_hours");
	put_cell(st, c++, "used_core_hours");
	put_cell(st, c++, "wasted_core_hours");
	put_cell(st, c++, "efficiency_pct");
	put_cell(st, c++, "mem_req_mb");
	put_cell(st, c++, "mem_peak_mb");
	put_cell(st, c++, "jobs_pct");
	put_cell(st, c++, "core_hours_pct");
	put_cell(st, c++, "no_mpi_msgs_pct");
	putchar('\n');
}

/* v with fmt, or "-" when not known (no digest, memory not measured). */
static const char *cell(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
	return buf;
}

/* "mean (q1/median/q3)" in the metric's precision, "-" without data. */
static void dist_cell(const struct lwm2_stats_dist *d, int k, char *buf, size_t len)
{
	char a[4][24];
	double v[4] = {lwm2_stats_dist_mean(d), lwm2_stats_dist_q(d, k, 0.25),
	               lwm2_stats_dist_q(d, k, 0.5), lwm2_stats_dist_q(d, k, 0.75)};

	if (!d->n) {
		snprintf(buf, len, "-");
		return;
	}
	for (int i = 0; i < 4; i++)
		snprintf(a[i], sizeof(a[i]), lwm2_stats_metrics[k].fmt, v[i]);
	snprintf(buf, len, "%s (%s/%s/%s)", a[0], a[1], a[2], a[3]);
}

static void table_groups(const struct stats *st, struct lwm2_stats_group **gs, size_t n)
{
	int w = 5;
	char cells[LWM2_SM_N][100], nomsg[16];
	bool users = st->s.by == LWM2_BY_APP || st->s.by == LWM2_BY_IMAGE;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(gs[i]->name) > w)
			w = (int)strlen(gs[i]->name);
	if (w > 40)
		w = 40;
	if (!st->noheader) {
		printf("%-*s %8s %9s %10s", w, st->s.by == LWM2_BY_NONE ? "GROUP" : st->by_head,
		       "JOBS", "NO-DIGEST", "CORE-H");
		if (users)
			printf(" %6s", "USERS");
		printf(" %6s %6s %7s", "NUM%", "TIME%", "NOMSG%");
		for (int k = 0; k < LWM2_SM_N; k++)
			printf("  %-22s", lwm2_stats_metrics[k].head);
		printf("\n%-*s %8s %9s %10s", w, "", "", "", "");
		if (users)
			printf(" %6s", "");
		printf(" %6s %6s %7s", "", "", "");
		for (int k = 0; k < LWM2_SM_N; k++)
			printf("  %-22s", "mean (q1/median/q3)");
		putchar('\n');
	}
	for (size_t i = 0; i < n; i++) {
		const struct lwm2_stats_group *g = gs[i];

		for (int k = 0; k < LWM2_SM_N; k++)
			dist_cell(&g->d[k], k, cells[k], sizeof(cells[k]));
		struct shares sh = shares_of(g, &st->s.total);

		printf("%-*.*s %8" PRIu64 " %9" PRIu64 " %10.1f", w, w, g->name, g->jobs,
		       g->no_digest, g->core_h);
		if (users)
			printf(" %6zu", g->nusers);
		printf(" %6.1f %6.1f %7s", sh.jobs_pct, sh.time_pct,
		       cell(nomsg, sizeof(nomsg), "%.1f", sh.no_mpi_pct));
		for (int k = 0; k < LWM2_SM_N; k++)
			printf("  %-22s", cells[k]);
		putchar('\n');
	}
	/* guidance: the rules that fired, by share of core-hours */
	{
		bool any = false;

		for (size_t i = 0; i < n; i++)
			for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX;
			     r++) {
				const struct lwm2_stats_group *g = gs[i];

				if (!g->rule_jobs[r])
					continue;
				if (!any && !st->noheader)
					printf("\nGuidance that fired, share of each group's jobs "
					       "and core-hours:\n%-*s %-20s %8s %6s %10s %7s\n",
					       w, st->s.by == LWM2_BY_NONE ? "GROUP" : st->by_head,
					       "RULE", "JOBS", "%JOBS", "CORE-H", "%CORE-H");
				else if (!any)
					putchar('\n');
				any = true;
				printf("%-*.*s %-20s %8" PRIu64 " %6.1f %10.1f %7.1f\n", w, w,
				       g->name, lwm2_guidance_rules[r].id, g->rule_jobs[r],
				       pct((double)g->rule_jobs[r], (double)g->jobs), g->rule_ch[r],
				       pct(g->rule_ch[r], g->core_h));
			}
	}
}

/* Requested against used: core-hours, efficiency, waste, memory. */
static void table_usage(const struct stats *st, struct lwm2_stats_group **gs, size_t n)
{
	int w = 5;
	char c[6][32];

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(gs[i]->name) > w)
			w = (int)strlen(gs[i]->name);
	if (w > 40)
		w = 40;
	if (!st->noheader)
		printf("\nRequested against used:\n%-*s %12s %12s %6s %12s %12s %12s\n", w,
		       st->s.by == LWM2_BY_NONE ? "GROUP" : st->by_head, "REQ-CORE-H",
		       "USED-CORE-H", "EFF%", "WASTE-CORE-H", "MEM-REQ-GB", "MEM-PEAK-GB");
	else
		putchar('\n');
	for (size_t i = 0; i < n; i++) {
		const struct lwm2_usage_sum *u = &gs[i]->u;

		printf("%-*.*s %12.1f %12s %6s %12s %12s %12s\n", w, w, gs[i]->name, u->req_core_h,
		       cell(c[0], sizeof(c[0]), "%.1f", u->measured ? u->used_core_h : NAN),
		       cell(c[1], sizeof(c[1]), "%.1f", lwm2_usage_efficiency(u)),
		       cell(c[2], sizeof(c[2]), "%.1f", lwm2_usage_waste(u)),
		       cell(c[3], sizeof(c[3]), "%.1f", u->mem_jobs ? u->mem_req_mb / 1024 : NAN),
		       cell(c[4], sizeof(c[4]), "%.1f", u->mem_jobs ? u->mem_peak_mb / 1024 : NAN));
	}
}

static void fired_list(uint64_t fired, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX && n < len; r++)
		if (fired & (1ull << r))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
			                      lwm2_guidance_rules[r].id);
}

static void print_top(struct stats *st)
{
	const char *vh = st->s.sort == LWM2_SORT_METRIC ? lwm2_metric_ids[st->s.sort_metric]
	                                                : sort_keys[st->s.sort].name;
	char end[32], rules[1024], b[64];

	lwm2_stats_top_sorted(&st->s);
	if (st->out == OUT_JSON) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		ju_add(o, "sort", json_object_new_string(vh));
		for (size_t i = 0; i < st->s.nheap; i++) {
			const struct lwm2_stats_top *t = &st->s.heap[i];
			json_object *x = json_object_new_object(), *fr = json_object_new_array();

			ju_add(x, "job", json_object_new_string(t->id));
			ju_add(x, "job_id", json_object_new_int64(t->job_id));
			ju_add(x, "user", json_object_new_string(t->user));
			ju_add(x, "account", json_object_new_string(t->account));
			ju_add(x, "partition", json_object_new_string(t->partition));
			ju_add(x, "end", json_object_new_int64(t->end));
			ju_add(x, "core_hours", ju_double(t->core_h));
			ju_add(x, "value", ju_double(t->value));
			for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX;
			     r++)
				if (t->fired & (1ull << r))
					json_object_array_add(
					    fr, json_object_new_string(lwm2_guidance_rules[r].id));
			ju_add(x, "guidance", fr);
			json_object_array_add(a, x);
		}
		ju_add(o, "top", a);
		ju_add(o, "jobs", ju_u64(st->s.selected));
		ju_add(o, "skipped_lines", ju_u64(st->s.count.bad));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	if (!st->noheader) {
		if (st->out == OUT_TABLE)
			printf("%-14s %-10s %-10s %-10s %-19s %10s %12s  %s\n", "JOBID", "USER",
			       "ACCOUNT", "PARTITION", "END", "CORE-H",
			       st->s.sort == LWM2_SORT_METRIC ? vh : sort_keys[st->s.sort].head,
			       "GUIDANCE");
		else {
			const char *h[] = {"job", "user",       "account", "partition",
			                   "end", "core_hours", vh,        "guidance"};

			for (size_t i = 0; i < 8; i++)
				put_cell(st, i, h[i]);
			putchar('\n');
		}
	}
	for (size_t i = 0; i < st->s.nheap; i++) {
		const struct lwm2_stats_top *t = &st->s.heap[i];
		time_t tt = (time_t)t->end;
		struct tm tm;

		if (t->end > 0 && localtime_r(&tt, &tm))
			strftime(end, sizeof(end), "%Y-%m-%dT%H:%M:%S", &tm);
		else
			snprintf(end, sizeof(end), "Unknown");
		fired_list(t->fired, rules, sizeof(rules));
		if (st->out == OUT_TABLE) {
			printf("%-14s %-10s %-10s %-10s %-19s %10.1f %12.4g  %s\n", t->id, t->user,
			       t->account, t->partition, end, t->core_h, t->value, rules);
			continue;
		}
		put_cell(st, 0, t->id);
		put_cell(st, 1, t->user);
		put_cell(st, 2, t->account);
		put_cell(st, 3, t->partition);
		put_cell(st, 4, end);
		num(b, sizeof(b), t->core_h);
		put_cell(st, 5, b);
		num(b, sizeof(b), t->value);
		put_cell(st, 6, b);
		put_cell(st, 7, rules);
		putchar('\n');
	}
}

static void print_groups(struct stats *st)
{
	size_t n;
	struct lwm2_stats_group **gs = lwm2_stats_groups(&st->s, &n);

	if (!gs) {
		lwm2_log_error("stats: couldn't print the groups: %s", strerror(ENOMEM));
		return;
	}
	st->s.total.name = (char *)(st->s.by == LWM2_BY_NONE ? "all" : "(all)");
	if (st->out == OUT_JSON) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		ju_add(o, "by",
		       json_object_new_string(st->s.by == LWM2_BY_NONE ? "" : st->by_head));
		for (size_t i = 0; i < n; i++)
			json_object_array_add(a, group_json(gs[i], &st->s.total));
		ju_add(o, "groups", a);
		ju_add(o, "total", group_json(&st->s.total, &st->s.total));
		ju_add(o, "lines", ju_u64(st->s.count.lines));
		ju_add(o, "skipped_lines", ju_u64(st->s.count.bad));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (st->out == OUT_TABLE) {
		gs[n] = &st->s.total;
		table_groups(st, gs, st->s.by == LWM2_BY_NONE ? 1 : n);
		if (st->s.by != LWM2_BY_NONE && !st->noheader) {
			printf("\n");
			table_groups(st, gs + n, 1);
		}
		table_usage(st, gs, st->s.by == LWM2_BY_NONE ? 1 : n + 1);
		if (!st->noheader)
			printf(
			    "\nCore-hours: allocated cores x elapsed time; quartiles weighted by "
			    "core-hours.\nUsed: CPU time of the job's processes; waste: "
			    "requested - used, over jobs with a digest; memory: \"-\" where not "
			    "measured.\n");
	} else {
		if (!st->noheader)
			group_header(st);
		for (size_t i = 0; i < n; i++)
			group_row(st, gs[i]);
		group_row(st, &st->s.total);
	}
	st->s.total.name = NULL;
	free(gs);
}

/* ------------------------------------------------------------ --histogram */

/* Characters of the longest bar. */
#define HIST_BAR 40

/* One group's buckets at the width, and its share of the weight. */
struct hist_rows {
	int64_t first;
	size_t nb;
	uint64_t *count;
	double *weight, total; /* total: the weight of every bucket */
};

/* An edge as printed: enough digits for a round width's multiples,
 * never "0.30000000000000004". */
static void edge(char *buf, size_t len, int64_t k, double width)
{
	double v = lwm2_histbin_edge(k, width);

	snprintf(buf, len, "%.10g", v == 0 ? 0 : v);
}

static int hist_rows_of(const struct lwm2_stats_group *g, double width, struct hist_rows *r)
{
	memset(r, 0, sizeof(*r));
	if (!g->hist.n)
		return 0;
	if (lwm2_histbin_buckets(&g->hist, width, &r->first, &r->nb, &r->count, &r->weight) < 0)
		return -1;
	for (size_t i = 0; i < r->nb; i++)
		r->total += r->weight[i];
	return 0;
}

static void hist_rows_free(struct hist_rows *r)
{
	free(r->count);
	free(r->weight);
}

static double hist_share(const struct stats *st, const struct hist_rows *r, size_t i)
{
	uint64_t n = 0;

	if (st->s.hist_core_h)
		return pct(r->weight[i], r->total);
	for (size_t k = 0; k < r->nb; k++)
		n += r->count[k];
	return pct((double)r->count[i], (double)n);
}

static json_object *hist_group_json(const struct stats *st, const struct lwm2_stats_group *g,
                                    const struct hist_rows *r, double width)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	ju_add(o, "group", json_object_new_string(g->name));
	ju_add(o, "jobs", ju_u64(g->hist.n));
	ju_add(o, "no_value", ju_u64(g->hist.absent));
	if (g->hist.n) {
		ju_add(o, "min", ju_double(g->hist.min));
		ju_add(o, "max", ju_double(g->hist.max));
	}
	for (size_t i = 0; i < r->nb; i++) {
		json_object *b = json_object_new_object();

		ju_add(b, "from", ju_double(lwm2_histbin_edge(r->first + (int64_t)i, width)));
		ju_add(b, "to", ju_double(lwm2_histbin_edge(r->first + (int64_t)i + 1, width)));
		ju_add(b, "jobs", ju_u64(r->count[i]));
		ju_add(b, "core_hours", jnum(st->s.hist_core_h ? r->weight[i] : NAN));
		ju_add(b, "share_pct", ju_double(hist_share(st, r, i)));
		json_object_array_add(a, b);
	}
	ju_add(o, "buckets", a);
	return o;
}

static void hist_group_table(const struct stats *st, const struct lwm2_stats_group *g,
                             const struct hist_rows *r, double width)
{
	double top = 0;
	char lo[32], hi[32], range[80], bar[HIST_BAR + 1];

	printf("\n%s%s%s: %zu jobs", st->s.by == LWM2_BY_NONE ? "" : st->by_head,
	       st->s.by == LWM2_BY_NONE ? "" : " ", g->name, g->hist.n);
	if (g->hist.absent)
		printf(", %" PRIu64 " without a value (no digest, or not measured)",
		       g->hist.absent);
	putchar('\n');
	if (!r->nb)
		return;
	for (size_t i = 0; i < r->nb; i++) {
		double w = st->s.hist_core_h ? r->weight[i] : (double)r->count[i];

		top = w > top ? w : top;
	}
	if (!st->noheader)
		printf("%-25s %8s%s %7s\n", "RANGE", "JOBS", st->s.hist_core_h ? "     CORE-H" : "",
		       "SHARE%");
	for (size_t i = 0; i < r->nb; i++) {
		double w = st->s.hist_core_h ? r->weight[i] : (double)r->count[i];
		int n = top > 0 ? (int)lround(HIST_BAR * w / top) : 0;

		edge(lo, sizeof(lo), r->first + (int64_t)i, width);
		edge(hi, sizeof(hi), r->first + (int64_t)i + 1, width);
		snprintf(range, sizeof(range), "[%s, %s)", lo, hi);
		memset(bar, '#', (size_t)n);
		bar[n] = '\0';
		printf("%-25s %8" PRIu64, range, r->count[i]);
		if (st->s.hist_core_h)
			printf(" %10.4g", r->weight[i]);
		printf(" %7.1f%s%s\n", hist_share(st, r, i), n ? "  " : "", bar);
	}
}

static void hist_group_rows(const struct stats *st, const struct lwm2_stats_group *g,
                            const struct hist_rows *r, double width)
{
	char b[64];

	for (size_t i = 0; i < r->nb; i++) {
		put_cell(st, 0, g->name);
		num(b, sizeof(b), lwm2_histbin_edge(r->first + (int64_t)i, width));
		put_cell(st, 1, b);
		num(b, sizeof(b), lwm2_histbin_edge(r->first + (int64_t)i + 1, width));
		put_cell(st, 2, b);
		snprintf(b, sizeof(b), "%" PRIu64, r->count[i]);
		put_cell(st, 3, b);
		num(b, sizeof(b), st->s.hist_core_h ? r->weight[i] : NAN);
		put_cell(st, 4, b);
		num(b, sizeof(b), hist_share(st, r, i));
		put_cell(st, 5, b);
		putchar('\n');
	}
}

/* The groups' histograms (the total last), at --bucket or one width
 * chosen over every value, so that the groups' buckets line up.  0, or
 * -1 when the width gives too many buckets (said). */
static int print_histograms(struct stats *st)
{
	const struct lwm2_histbin *all = &st->s.total.hist;
	const char *mid = lwm2_metric_ids[st->s.hist_metric];
	const char *stat = lwm2_stats_hist_stats[st->s.hist_stat];
	double width = st->bucket > 0 ? st->bucket
	               : all->n       ? lwm2_histbin_width(all->min, all->max)
	                              : 1;
	size_t n, ng;
	struct lwm2_stats_group **gs = lwm2_stats_groups(&st->s, &n);
	json_object *o = NULL, *a = NULL;
	int rc = 0;

	if (!gs) {
		lwm2_log_error("stats: couldn't print the histograms: %s", strerror(ENOMEM));
		return -1;
	}
	st->s.total.name = (char *)(st->s.by == LWM2_BY_NONE ? "all" : "(all)");
	gs[n] = &st->s.total;
	ng = st->s.by == LWM2_BY_NONE ? 1 : n + 1;
	if (st->out == OUT_JSON) {
		o = json_object_new_object();
		a = json_object_new_array();
		ju_add(o, "metric", json_object_new_string(mid));
		ju_add(o, "stat", json_object_new_string(stat));
		ju_add(o, "weight",
		       json_object_new_string(st->s.hist_core_h ? "core-hours" : "jobs"));
		ju_add(o, "bucket", ju_double(width));
		ju_add(o, "by",
		       json_object_new_string(st->s.by == LWM2_BY_NONE ? "" : st->by_head));
	} else if (st->out == OUT_TABLE) {
		printf("Histogram of %s.%s (%s%s%s), each job weighted by %s; bucket width "
		       "%.10g\n",
		       mid, stat, lwm2_metric_labels[st->s.hist_metric],
		       *lwm2_metric_units[st->s.hist_metric] ? ", " : "",
		       lwm2_metric_units[st->s.hist_metric],
		       st->s.hist_core_h ? "its core-hours" : "1", width);
	} else if (!st->noheader) {
		const char *h[] = {by_head(st), "from", "to", "jobs", "core_hours", "share_pct"};

		for (size_t i = 0; i < 6; i++)
			put_cell(st, i, h[i]);
		putchar('\n');
	}
	for (size_t i = 0; i < ng && rc == 0; i++) {
		struct hist_rows r;

		if (hist_rows_of(gs[i], width, &r) < 0) {
			if (errno == ERANGE)
				lwm2_log_error(
				    "stats: couldn't draw the histogram of %s: bucket width "
				    "%.10g gives %zu buckets over [%.10g, %.10g], more than "
				    "%d; give a wider --bucket",
				    mid, width, r.nb, gs[i]->hist.min, gs[i]->hist.max,
				    LWM2_HISTBIN_MAX);
			else
				lwm2_log_error("stats: couldn't draw the histogram of %s: %s", mid,
				               strerror(errno));
			rc = -1;
			break;
		}
		if (o && gs[i] != &st->s.total)
			json_object_array_add(a, hist_group_json(st, gs[i], &r, width));
		else if (o)
			ju_add(o, "total", hist_group_json(st, gs[i], &r, width));
		else if (st->out == OUT_TABLE)
			hist_group_table(st, gs[i], &r, width);
		else
			hist_group_rows(st, gs[i], &r, width);
		hist_rows_free(&r);
	}
	if (o) {
		ju_add(o, "groups", a);
		ju_add(o, "lines", ju_u64(st->s.count.lines));
		ju_add(o, "skipped_lines", ju_u64(st->s.count.bad));
		if (rc == 0)
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	st->s.total.name = NULL;
	free(gs);
	return rc;
}

/* ------------------------------------------------------------ main */

enum {
	OPT_CSV = LWM2_OPT_LONG,
	OPT_JSON,
	OPT_TOP,
	OPT_SORT,
	OPT_DB,
	OPT_HIST,
	OPT_BUCKET,
	OPT_WEIGHT
};

static const struct lwm2_optspec stats_spec = {
    .cmd = "stats",
    .usage = "Usage: lwm2 stats [--file LOG... | --db DATABASE] [OPTIONS]\n"
             "Site-wide statistics over the digests of jobcomp/lwm2's JSON-lines log,\n"
             "or of the central database (default: lwm2.conf's Database=).\n\n",
    .footer = LWM2_OPT_SACCT_TIME_HELP "Exit status: 0, 1 when a log could not be read, 2 usage.\n",
    .col = 31,
    .no_operands = true,
    .opts = (const struct lwm2_opt[]){
        {NULL, 0, NULL, "Input and selection:"},
        {"file", 'f', "LOG", "a log to read (several allowed; - is stdin)"},
        {"db", OPT_DB, "DATABASE", "the central database instead (lwm2 db)"},
        {"user", 'u', "USER[,...]", "jobs of these users (names or uids)"},
        {"account", 'A', "ACCOUNT[,...]", "jobs charged to these accounts"},
        {"partition", 'r', "PART[,...]", "jobs of these partitions"},
        {"state", 's', "STATE[,...]", "jobs that ended in these states (COMPLETED, ...)"},
        {"starttime", 'S', "TIME", "jobs that ended at or after TIME"},
        {"endtime", 'E', "TIME", "jobs that ended at or before TIME"},
        {NULL, 0, NULL, "Grouping:"},
        {"by", 'b', "KEY[,KEY...]",
         "user, account, partition, executable, month or\n"
         "node (default: all jobs as one group); app:\n"
         "the digest's application, with its users;\n"
         "image: the job's main container image;\n"
         "language, mpi (the application's MPI library),\n"
         "cluster, mode (batch or interactive), qos,\n"
         "cpu (the processor of most of its nodes);\n"
         "up to three keys joined with ',' (not node)\n"
         "(every group: its share of the jobs and\n"
         "core-hours, of jobs without MPI messages,\n"
         "requested, used and wasted core-hours,\n"
         "memory requested and peak)"},
        {"top", OPT_TOP, "N", "the N jobs that lose the most, instead of groups"},
        {"sort", OPT_SORT, "KEY",
         "for --top: mpi (core-hours in MPI, default), io,\n"
         "idle (core-hours of idle allocated cores),\n"
         "core_hours, cpi, lwm2_cost (lwm2's own seconds),\n"
         "lwm2_share (its % of the job's CPU time), or a metric id"},
        {"histogram", OPT_HIST, "METRIC",
         "how the jobs spread over a metric's job-wide\n"
         "average (METRIC.min, METRIC.max: the smallest,\n"
         "the largest process's), instead of the tables;\n"
         "with --by one histogram per group, the buckets\n"
         "of all alike (lwm2 digest --helpformat lists\n"
         "the metrics)"},
        {"bucket", OPT_BUCKET, "WIDTH",
         "--histogram's bucket width (default: a round\n"
         "width that gives at most 10 buckets)"},
        {"weight", OPT_WEIGHT, "jobs|core-hours",
         "what --histogram's shares and bars count\n"
         "(default: jobs)"},
        {NULL, 0, NULL, "Output (default: a table):"},
        {"parsable2", 'p', NULL, "fields separated by '|'"},
        {"csv", OPT_CSV, NULL, "comma-separated values"},
        {"json", OPT_JSON, NULL, "one JSON object"},
        {"noheader", 'n', NULL, "no header line"},
        {0},
    }};

/* The command line as read. */
struct stats_cli {
	struct stats st;
	char **files;
	size_t nfiles;
	int nout;
	const char *sort, *db, *hist, *weight, *bucket;
};

static int by_key(const char *name, size_t len, enum lwm2_stats_by *by)
{
	for (size_t i = 1; i < sizeof(by_names) / sizeof(by_names[0]); i++)
		if (strlen(by_names[i]) == len && !strncmp(name, by_names[i], len)) {
			*by = (enum lwm2_stats_by)i;
			return 0;
		}
	return -1;
}

/* One key, or up to three joined with ',' (never node: a job's share of
 * each node is no combination of values). */
static int stats_opt_by(struct stats *st, const char *arg)
{
	const char *p = arg;
	size_t nkeys = 0;

	st->s.nby_more = 0;
	for (;;) {
		size_t n = strcspn(p, ",");
		enum lwm2_stats_by by;

		if (by_key(p, n, &by) < 0 || nkeys > LWM2_STATS_BY_MORE ||
		    (by == LWM2_BY_NODE && (nkeys || p[n])))
			return lwm2_opt_error(
			    &stats_spec, LWM2_OPT_USAGE,
			    "couldn't group by \"%s\": want user, account, "
			    "partition, executable, app, image, language, mpi, "
			    "cluster, mode, qos, cpu, month or node, or up to three of "
			    "them but node joined with ','",
			    arg);
		if (nkeys++)
			st->s.by_more[st->s.nby_more++] = by;
		else
			st->s.by = by;
		if (!p[n])
			break;
		p += n + 1;
	}
	snprintf(st->by_head, sizeof(st->by_head), "%s", arg);
	return 0;
}

/* -S, -E, --by, --top and the output forms; the others are in stats_store */
static int stats_opt(void *ctx, int key, char *arg)
{
	struct stats_cli *cli = ctx;
	struct stats *st = &cli->st;
	uint64_t v;

	switch (key) {
	case 'S':
	case 'E':
		return lwm2_cmd_time_opt("stats", arg, key == 'S' ? &st->s.start : &st->s.end) < 0
		           ? LWM2_OPT_USAGE
		           : 0;
	case 'b':
		return stats_opt_by(st, arg);
	case OPT_TOP:
		if (lwm2_parse_u64(arg, NULL, 1, 1000000, &v) < 0)
			return lwm2_opt_error(&stats_spec, LWM2_OPT_USAGE,
			                      "couldn't parse --top \"%s\": want 1 to 1000000",
			                      arg);
		st->s.top = (size_t)v;
		return 0;
	default: /* -p, --csv, --json */
		st->out = key == 'p' ? OUT_PARSABLE : key == OPT_CSV ? OUT_CSV : OUT_JSON;
		cli->nout++;
		return 0;
	}
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore stats_store[] = {
    {'f', LWM2_OPT_PUSH(struct stats_cli, files, nfiles)},
    {'u', LWM2_OPT_LIST(struct stats_cli, st.s.users, st.s.nusers)},
    {'A', LWM2_OPT_LIST(struct stats_cli, st.s.accounts, st.s.naccounts)},
    {'r', LWM2_OPT_LIST(struct stats_cli, st.s.partitions, st.s.npartitions)},
    {'s', LWM2_OPT_LIST(struct stats_cli, st.s.states, st.s.nstates)},
    {OPT_SORT, LWM2_OPT_ARG(struct stats_cli, sort)},
    {OPT_DB, LWM2_OPT_ARG(struct stats_cli, db)},
    {OPT_HIST, LWM2_OPT_ARG(struct stats_cli, hist)},
    {OPT_BUCKET, LWM2_OPT_ARG(struct stats_cli, bucket)},
    {OPT_WEIGHT, LWM2_OPT_ARG(struct stats_cli, weight)},
    {'n', LWM2_OPT_TRUE(struct stats_cli, st.noheader)},
    {0},
};

/* --histogram M[.avg|.min|.max], --bucket and --weight into st; -1 when
 * one is wrong (said). */
static int stats_hist_opts(struct stats_cli *cli)
{
	struct stats *st = &cli->st;
	const char *m = cli->hist;

	if (!m) {
		if (cli->bucket || cli->weight) {
			lwm2_log_error("stats: --bucket and --weight shape a --histogram; give "
			               "--histogram METRIC");
			return -1;
		}
		return 0;
	}
	if (st->s.top) {
		lwm2_log_error("stats: --top lists jobs, --histogram spreads them: give one");
		return -1;
	}
	if (lwm2_stats_hist_set(&st->s, "stats", m, cli->weight) < 0)
		return -1;
	if (cli->bucket) {
		char *end;

		errno = 0;
		st->bucket = strtod(cli->bucket, &end);
		if (errno || end == cli->bucket || *end || !(st->bucket > 0) || isinf(st->bucket)) {
			lwm2_log_error("stats: couldn't parse --bucket \"%s\": want a width "
			               "greater than 0",
			               cli->bucket);
			return -1;
		}
	}
	return 0;
}

int lwm2_cmd_stats(int argc, char **argv)
{
	struct stats_cli cli;
	struct stats *st = &cli.st;
	const char *sort;
	char url[1024] = "";
	int c, rc = 0;

	memset(&cli, 0, sizeof(cli));
	st->s.sort = LWM2_SORT_MPI;
	c = lwm2_opt_parse_store(&stats_spec, stats_store, argc, argv, stats_opt, &cli);
	sort = cli.sort;
	if (c == LWM2_OPT_EXIT)
		goto done;
	if (c < 0)
		goto usage_err;
	if (cli.nout > 1) {
		lwm2_log_error("stats: --json, --csv and -p exclude each other");
		goto usage_err;
	}
	if (cli.nfiles && cli.db) {
		lwm2_log_error("stats: --file and --db exclude each other");
		goto usage_err;
	}
	if (!cli.nfiles && lwm2_cmd_db_url("stats", cli.db, url, sizeof(url)) < 0) {
		rc = 1;
		goto done;
	}
	if (!cli.nfiles && !url[0]) {
		lwm2_log_error("stats: couldn't read digests: no --file LOG given "
		               "(jobcomp/lwm2's JSON-lines log), no --db and no Database= in "
		               "lwm2.conf");
		goto usage_err;
	}
	if (sort) {
		size_t i;

		if (!st->s.top) {
			lwm2_log_error("stats: --sort orders the --top list; give --top N");
			goto usage_err;
		}
		for (i = 0; i < LWM2_SORT_METRIC; i++)
			if (!strcmp(sort, sort_keys[i].name))
				break;
		st->s.sort = (enum lwm2_stats_sort)i;
		if (i == LWM2_SORT_METRIC && (st->s.sort_metric = lwm2_metric_index(sort)) < 0) {
			lwm2_log_error("stats: couldn't sort by \"%s\": want mpi, io, idle, "
			               "core_hours, cpi, lwm2_cost, lwm2_share or a metric id",
			               sort);
			goto usage_err;
		}
	}
	if (st->s.top && st->s.by != LWM2_BY_NONE) {
		lwm2_log_error("stats: --top lists jobs, --by groups them: give one");
		goto usage_err;
	}
	if (stats_hist_opts(&cli) < 0)
		goto usage_err;
	if (lwm2_stats_begin(&st->s) < 0) {
		lwm2_log_error("stats: couldn't keep %zu jobs: %s", st->s.top, strerror(ENOMEM));
		rc = 1;
		goto done;
	}
	c = cli.nfiles ? lwm2_stats_read(&st->s, "stats", cli.files, cli.nfiles)
	               : lwm2_stats_read_db(&st->s, "stats", url);
	if (c < 0)
		rc = 1;
	if (c == -2)
		goto done; /* no database: nothing to show */
	if (st->s.top)
		print_top(st);
	else if (st->s.hist && print_histograms(st) < 0)
		rc = 1;
	else if (!st->s.hist)
		print_groups(st);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		lwm2_log_error("stats: couldn't write the output: %s", strerror(errno));
		rc = 1;
	}
	goto done;
usage_err:
	if (!rc)
		lwm2_opt_usage(&stats_spec, stderr);
	rc = 2;
done:
	lwm2_stats_free(&st->s);
	free(cli.files);
	return rc;
}
