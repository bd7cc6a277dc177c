/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 ranks JOBID`: a job's processes metric by metric, as TOPAS's
 * topasview listed a job's PEs: quartiles, mean, standard deviation and
 * the extremes with the rank and node that had them, and with --groups
 * the ranks banded by value, so that the few that differ stand out by
 * name.  From the per-process table of the job's full digest (the log's,
 * or the central database's copy of its line; report_ptable.c), the
 * values the report's box plots draw.  With --threads, the threads of
 * the processes that had several (the table's "threads"): rank -> thread.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_digest.h"
#include "cmd_opt.h"
#include "jsonutil.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "report.h"
#include "stepname.h"

#define GROUPS_DEFAULT 4
#define GROUPS_MAX     100

enum { OPT_DB = LWM2_OPT_LONG, OPT_JSON, OPT_GROUPS, OPT_BANDS, OPT_METRIC, OPT_THREADS };

static const struct lwm2_optspec ranks_spec = {
    .cmd = "ranks",
    .usage = "Usage: lwm2 ranks JOBID [--file LOG... | --db DATABASE] [OPTIONS]\n"
             "A job's processes metric by metric: quartiles, mean, standard deviation,\n"
             "the extremes and the rank@node that had them; --groups bands the ranks\n"
             "by value; --threads lists the threads of the processes that had several.\n\n",
    .footer = "Exit status: 0, 1 when the job or its per-process table (with --threads:\n"
              "its thread rows) is not found, 2 usage.\n",
    .col = 27,
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"file", 'f', "LOG",
         "jobcomp/lwm2's JSON-lines log (several allowed,\n"
         "patterns, gzip and zstd; see lwm2(1))"},
        {"db", OPT_DB, "DATABASE", "the central database (default: lwm2.conf's\nDatabase=)"},
        {"metric", OPT_METRIC, "M[,M...]", "these metrics only (ids as lwm2 digest\n--helpformat)"},
        {"groups", OPT_GROUPS, NULL,
         "the ranks of each metric by band of value: bands\n"
         "of equal width from its minimum to its maximum"},
        {"bands", OPT_BANDS, "N", "--groups: N bands (default 4, at most 100)"},
        {"threads", OPT_THREADS, NULL,
         "the threads of each process that had several:\n"
         "CPU time, samples per earmark, MPI and I/O"},
        {"json", OPT_JSON, NULL, "one JSON object"},
        {"cluster", 'M', "NAME", "cluster in accounting (default: slurm.conf's)"},
        {0},
    }};

struct ranks_cli {
	struct lwm2_source src;
	char **metrics;
	size_t nmetrics;
	const char *cluster;
	unsigned groups; /* bands; 0: none */
	unsigned bands;  /* --bands, 0: not given */
	bool threads;
	bool json;
};

/* A process's value of one metric, and the row it came from. */
struct pv {
	double v;
	const struct rp_prow *r;
};

static int cmp_pv(const void *a, const void *b)
{
	const struct pv *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	if (x->r->step != y->r->step)
		return x->r->step < y->r->step ? -1 : 1;
	if (x->r->node != y->r->node)
		return x->r->node < y->r->node ? -1 : 1;
	return (x->r->rank > y->r->rank) - (x->r->rank < y->r->rank);
}

/* By node, step and rank: the order a band lists its ranks in. */
static int cmp_where(const void *a, const void *b)
{
	const struct rp_prow *x = ((const struct pv *)a)->r, *y = ((const struct pv *)b)->r;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

/* One metric over the processes. */
struct mstat {
	struct rp_box box;
	double mean, sd;
	const struct rp_prow *min_at, *max_at;
};

static void mstat_of(struct pv *pv, size_t n, double *sorted, struct mstat *m)
{
	double sum = 0, ss = 0;

	qsort(pv, n, sizeof(*pv), cmp_pv);
	for (size_t i = 0; i < n; i++) {
		sorted[i] = pv[i].v;
		sum += pv[i].v;
	}
	rp_box_stats(sorted, n, &m->box);
	m->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (pv[i].v - m->mean) * (pv[i].v - m->mean);
	/* the population's: every process of the job is there */
	m->sd = sqrt(ss / (double)n);
	m->min_at = pv[0].r;
	m->max_at = pv[n - 1].r;
}

/* "3@n1", with the step where the table has several ("3@n1.batch"). */
static void where(const struct rp_ptable *t, const struct rp_prow *r, char *buf, size_t len)
{
	char st[32];

	if (t->multi_step)
		snprintf(buf, len, "%d@%s.%s", r->rank, rp_pnode(t, r),
		         lwm2_step_name(r->step, st, sizeof(st)));
	else
		snprintf(buf, len, "%d@%s", r->rank, rp_pnode(t, r));
}

static json_object *where_json(const struct rp_ptable *t, const struct rp_prow *r)
{
	json_object *o = json_object_new_object();

	ju_add(o, "rank", json_object_new_int(r->rank));
	ju_add(o, "node", json_object_new_string(rp_pnode(t, r)));
	ju_add(o, "step", json_object_new_int64(r->step));
	return o;
}

/* The band of v among n of equal width over [lo, hi]. */
static unsigned band_of(double v, double lo, double hi, unsigned n)
{
	double b = hi > lo ? (v - lo) / (hi - lo) * n : 0;

	return b >= n ? n - 1 : b < 0 ? 0 : (unsigned)b;
}

/* The ranks of one band, by node: consecutive ranks of a node (and step)
 * as a range, "0-2,5@n1 8-11@n2". */
static void band_text(FILE *f, const struct rp_ptable *t, const struct pv *pv, size_t n)
{
	char st[32];

	for (size_t i = 0; i < n;) {
		const struct rp_prow *r = pv[i].r;
		size_t j = i;

		fputs(i ? " " : "", f);
		while (j < n && pv[j].r->node == r->node && pv[j].r->step == r->step) {
			size_t k = j;

			while (k + 1 < n && pv[k + 1].r->node == r->node &&
			       pv[k + 1].r->step == r->step &&
			       pv[k + 1].r->rank == pv[k].r->rank + 1)
				k++;
			fprintf(f, "%s%d", j > i ? "," : "", pv[j].r->rank);
			if (k > j)
				fprintf(f, "-%d", pv[k].r->rank);
			j = k + 1;
		}
		fprintf(f, "@%s", rp_pnode(t, r));
		if (t->multi_step)
			fprintf(f, ".%s", lwm2_step_name(r->step, st, sizeof(st)));
		i = j;
	}
}

/* The bands of one metric's values (pv sorted by value), each band's
 * processes in pv's order by node. */
static void bands(const struct ranks_cli *cli, const struct rp_ptable *t, struct pv *pv, size_t n,
                  const struct mstat *m, json_object *jm)
{
	json_object *a = cli->json ? json_object_new_array() : NULL;
	size_t i = 0;

	for (unsigned b = 0; b < cli->groups && i < n; b++) {
		double lo = m->box.min + (m->box.max - m->box.min) * b / cli->groups,
		       hi = m->box.min + (m->box.max - m->box.min) * (b + 1) / cli->groups;
		size_t j = i;

		while (j < n && band_of(pv[j].v, m->box.min, m->box.max, cli->groups) == b)
			j++;
		if (j == i)
			continue;
		qsort(pv + i, j - i, sizeof(*pv), cmp_where);
		if (a) {
			json_object *g = json_object_new_object(), *rs = json_object_new_array();

			ju_add(g, "from", ju_double(lo));
			ju_add(g, "to", ju_double(hi));
			ju_add(g, "n", ju_u64(j - i));
			for (size_t x = i; x < j; x++)
				json_object_array_add(rs, where_json(t, pv[x].r));
			ju_add(g, "ranks", rs);
			json_object_array_add(a, g);
		} else {
			printf("  %-18s %10.4g .. %-10.4g %6zu  ", "", lo, hi, j - i);
			band_text(stdout, t, pv + i, j - i);
			putchar('\n');
		}
		i = j;
	}
	if (a)
		ju_add(jm, "groups", a);
}

static bool wanted(const struct ranks_cli *cli, int k)
{
	if (!cli->nmetrics)
		return true;
	for (size_t i = 0; i < cli->nmetrics; i++)
		if (!strcmp(cli->metrics[i], lwm2_metric_ids[k]))
			return true;
	return false;
}

static void header(const struct rp_ptable *t, const char *job)
{
	printf("Job %s: %zu processes on %zu nodes%s\n\n", job, t->n, t->nnodes,
	       t->multi_step ? " (several steps: rank@node.step)" : "");
	printf("%-18s %6s %10s %10s %10s %10s %10s %10s %10s %-6s %-14s %s\n", "METRIC", "N", "MIN",
	       "Q1", "MEDIAN", "Q3", "MAX", "MEAN", "STDDEV", "UNIT", "MIN AT", "MAX AT");
}

/* Every metric the processes have: its line (and bands), or its JSON. */
static int print_ranks(const struct ranks_cli *cli, const struct rp_ptable *t, const char *job)
{
	struct pv *pv = calloc(t->n + 1, sizeof(*pv));
	double *sorted = calloc(t->n + 1, sizeof(*sorted));
	json_object *o = NULL, *ms = NULL;

	if (!pv || !sorted) {
		free(pv);
		free(sorted);
		lwm2_log_error("ranks: %s", strerror(ENOMEM));
		return 1;
	}
	if (cli->json) {
		o = json_object_new_object();
		ms = json_object_new_object();
		ju_add(o, "job", json_object_new_string(job));
		ju_add(o, "processes", ju_u64(t->n));
		ju_add(o, "nodes", ju_u64(t->nnodes));
	} else {
		header(t, job);
	}
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		struct mstat m;
		size_t n = 0;
		char a[64], b[64];

		if (!wanted(cli, k))
			continue;
		for (size_t i = 0; i < t->n; i++)
			if (rp_pvalid(&t->rows[i], k))
				pv[n++] = (struct pv){t->rows[i].v[k], &t->rows[i]};
		if (!n)
			continue;
		mstat_of(pv, n, sorted, &m);
		if (cli->json) {
			json_object *jm = json_object_new_object();

			ju_add(jm, "unit", json_object_new_string(lwm2_metric_units[k]));
			ju_add(jm, "n", ju_u64(n));
			ju_add(jm, "min", ju_double(m.box.min));
			ju_add(jm, "q1", ju_double(m.box.q1));
			ju_add(jm, "median", ju_double(m.box.median));
			ju_add(jm, "q3", ju_double(m.box.q3));
			ju_add(jm, "max", ju_double(m.box.max));
			ju_add(jm, "mean", ju_double(m.mean));
			ju_add(jm, "stddev", ju_double(m.sd));
			ju_add(jm, "min_at", where_json(t, m.min_at));
			ju_add(jm, "max_at", where_json(t, m.max_at));
			if (cli->groups)
				bands(cli, t, pv, n, &m, jm);
			ju_add(ms, lwm2_metric_ids[k], jm);
			continue;
		}
		where(t, m.min_at, a, sizeof(a));
		where(t, m.max_at, b, sizeof(b));
		printf("%-18s %6zu %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g %-6s %-14s "
		       "%s\n",
		       lwm2_metric_ids[k], n, m.box.min, m.box.q1, m.box.median, m.box.q3,
		       m.box.max, m.mean, m.sd, lwm2_metric_units[k], a, b);
		if (cli->groups)
			bands(cli, t, pv, n, &m, NULL);
	}
	if (o) {
		ju_add(o, "metrics", ms);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	free(pv);
	free(sorted);
	return 0;
}

/* ------------------------------------------------------------ --threads */

/* A thread's flags as a word. */
static const char *thread_mark(const struct rp_thread *x)
{
	return x->flags & LWM2_TH_MAIN ? "main" : x->flags & LWM2_TH_ENDED ? "ended" : "-";
}

/* Cycles per instruction where both were counted, else NaN. */
static double thread_cpi(const struct rp_thread *x)
{
	int64_t cy = x->counters[LWM2_TC_cycles], in = x->counters[LWM2_TC_instructions];

	return cy > 0 && in > 0 ? (double)cy / (double)in : NAN;
}

static void thread_text(const struct rp_thread *x)
{
	char b[LWM2_NEARMARKS][16];

	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		double s = rp_thread_share(x, e);

		if (isnan(s))
			snprintf(b[e], sizeof(b[e]), "-");
		else
			snprintf(b[e], sizeof(b[e]), "%.1f", s);
	}
	printf("  %-10" PRId64 " %-5s %10.3f %7s %7s %7s %7s %10.3f %10.3f %14" PRId64, x->tid,
	       thread_mark(x), (double)x->cpu_ns / 1e9, b[0], b[1], b[2], b[3],
	       (double)x->counters[LWM2_TC_mpi_ns] / 1e9, (double)x->counters[LWM2_TC_io_ns] / 1e9,
	       x->counters[LWM2_TC_io_bytes]);
	if (x->counters[LWM2_TC_cycles] || x->counters[LWM2_TC_instructions]) {
		printf(" %14" PRId64 " %14" PRId64, x->counters[LWM2_TC_cycles],
		       x->counters[LWM2_TC_instructions]);
		if (!isnan(thread_cpi(x)))
			printf(" %6.2f", thread_cpi(x));
	}
	putchar('\n');
}

static json_object *thread_json(const struct rp_thread *x)
{
	json_object *o = json_object_new_object(), *sh = json_object_new_object(),
	            *sm = json_object_new_object();

	ju_add(o, "tid", json_object_new_int64(x->tid));
	ju_add(o, "main", json_object_new_boolean(x->flags & LWM2_TH_MAIN));
	ju_add(o, "ended", json_object_new_boolean(x->flags & LWM2_TH_ENDED));
	ju_add(o, "cpu_s", ju_double((double)x->cpu_ns / 1e9));
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		double s = rp_thread_share(x, e);

		ju_add(sm, lwm2_earmark_names[e], json_object_new_int64(x->samples[e]));
		ju_add(sh, lwm2_earmark_names[e], isnan(s) ? NULL : ju_double(s));
	}
	ju_add(o, "samples", sm);
	ju_add(o, "share", sh);
	ju_add(o, "mpi_s", ju_double((double)x->counters[LWM2_TC_mpi_ns] / 1e9));
	ju_add(o, "io_s", ju_double((double)x->counters[LWM2_TC_io_ns] / 1e9));
	ju_add(o, "io_bytes", json_object_new_int64(x->counters[LWM2_TC_io_bytes]));
	if (x->counters[LWM2_TC_cycles])
		ju_add(o, "cycles", json_object_new_int64(x->counters[LWM2_TC_cycles]));
	if (x->counters[LWM2_TC_instructions])
		ju_add(o, "instructions", json_object_new_int64(x->counters[LWM2_TC_instructions]));
	if (!isnan(thread_cpi(x)))
		ju_add(o, "cpi", ju_double(thread_cpi(x)));
	return o;
}

/* The threads of each process that had several, by process in the
 * table's order, each process's main thread first. */
static int print_threads(const struct ranks_cli *cli, const struct rp_ptable *t,
                         const struct rp_threads *th, const char *job)
{
	json_object *o = NULL, *procs = NULL, *ts = NULL;
	size_t nprocs = 0;
	char a[96];

	for (size_t i = 0; i < th->n; i++)
		nprocs += !i || th->v[i].proc != th->v[i - 1].proc;
	if (cli->json) {
		o = json_object_new_object();
		procs = json_object_new_array();
		ju_add(o, "job", json_object_new_string(job));
		ju_add(o, "processes", ju_u64(nprocs));
		ju_add(o, "threads", ju_u64(th->n));
		ju_add(o, "omitted", json_object_new_int64(th->omitted));
	} else {
		printf("Job %s: %zu threads of %zu processes that had several%s\n", job, th->n,
		       nprocs, t->multi_step ? " (several steps: rank@node.step)" : "");
	}
	for (size_t i = 0; i < th->n; i++) {
		const struct rp_thread *x = &th->v[i];

		if (!i || x->proc != th->v[i - 1].proc) {
			if (o) {
				json_object *p = where_json(t, x->proc);

				ts = json_object_new_array();
				ju_add(p, "threads", ts);
				json_object_array_add(procs, p);
			} else {
				where(t, x->proc, a, sizeof(a));
				printf(
				    "\n%s\n  %-10s %-5s %10s %7s %7s %7s %7s %10s %10s %14s %14s "
				    "%14s %6s\n",
				    a, "TID", "", "CPU_S", "COMP%", "MPI%", "IO%", "CUDA%", "MPI_S",
				    "IO_S", "IO_BYTES", "CYCLES", "INSTRUCTIONS", "CPI");
			}
		}
		if (o)
			json_object_array_add(ts, thread_json(x));
		else
			thread_text(x);
	}
	if (o) {
		ju_add(o, "ranks", procs);
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (th->omitted > 0) {
		printf("\n%" PRId64 " more thread%s not kept by the digest (it keeps %s)\n",
		       th->omitted, th->omitted == 1 ? "" : "s", "at most 4,096");
	}
	return 0;
}

/* --threads: the digest's thread rows, or why there are none (1). */
static int ranks_threads(const struct ranks_cli *cli, const struct rp_ptable *t, json_object *d,
                         const char *job)
{
	struct rp_threads th;
	int rc;

	if (rp_threads_load(&th, d, t) < 0) {
		lwm2_log_error("ranks: %s", strerror(errno));
		return 1;
	}
	if (!th.n && !th.omitted) {
		lwm2_log_error("ranks: job %s: the digest has no thread rows: no process had more "
		               "than one thread, or an lwm2 before version 5 records wrote it",
		               job);
		rp_threads_free(&th);
		return 1;
	}
	rc = print_threads(cli, t, &th, job);
	rp_threads_free(&th);
	return rc;
}

static int ranks_opt(void *ctx, int key, char *arg)
{
	struct ranks_cli *cli = ctx;
	uint64_t v;

	switch (key) {
	case OPT_GROUPS:
		cli->groups = GROUPS_DEFAULT;
		return 0;
	case OPT_THREADS:
		cli->threads = true;
		return 0;
	case OPT_BANDS:
		if (lwm2_parse_u64(arg, NULL, 1, GROUPS_MAX, &v) < 0)
			return lwm2_opt_error(&ranks_spec, LWM2_OPT_USAGE,
			                      "couldn't parse --bands \"%s\": want 1 to %d", arg,
			                      GROUPS_MAX);
		cli->bands = (unsigned)v;
		return 0;
	default: /* --json */
		cli->json = true;
		return 0;
	}
}

static const struct lwm2_optstore ranks_store[] = {
    {'f', LWM2_OPT_PUSH(struct ranks_cli, src.files, src.nfiles)},
    {OPT_DB, LWM2_OPT_ARG(struct ranks_cli, src.db_given)},
    {OPT_METRIC, LWM2_OPT_LIST(struct ranks_cli, metrics, nmetrics)},
    {'M', LWM2_OPT_ARG(struct ranks_cli, cluster)},
    {0},
};

/* The job's digest: from the log or the database, else accounting's
 * compact form (which has no per-process table: said by the caller). */
static json_object *job_digest(const struct ranks_cli *cli, const char *job)
{
	char *reason = NULL;
	json_object *d;

	if (cli->src.nfiles || cli->src.db[0])
		return lwm2_source_job("ranks", &cli->src, job);
	if (!(d = lwm2_digest_last_run(job, cli->cluster, &reason)))
		lwm2_log_error("ranks: job %s: no digest%s%s", job, reason ? ": " : "",
		               reason ? reason : " (see the message above)");
	free(reason);
	return d;
}

int lwm2_cmd_ranks(int argc, char **argv)
{
	struct ranks_cli cli;
	struct rp_ptable t;
	struct lwm2_derived_set derived = {0};
	json_object *d = NULL;
	int c, rc = 1;

	memset(&cli, 0, sizeof(cli));
	c = lwm2_opt_parse_store(&ranks_spec, ranks_store, argc, argv, ranks_opt, &cli);
	if (c == LWM2_OPT_EXIT) {
		rc = 0;
		goto done;
	}
	if (c < 0) {
		rc = 2;
		goto done;
	}
	if (cli.bands && !cli.groups) {
		lwm2_opt_error(&ranks_spec, LWM2_OPT_USAGE, "--bands is for --groups");
		rc = 2;
		goto done;
	}
	if (cli.bands)
		cli.groups = cli.bands;
	if (cli.threads && (cli.groups || cli.nmetrics)) {
		lwm2_opt_error(&ranks_spec, LWM2_OPT_USAGE,
		               "--threads lists threads, not metrics: drop --groups and --metric");
		rc = 2;
		goto done;
	}
	if (c != argc - 1) {
		lwm2_opt_error(&ranks_spec, LWM2_OPT_USAGE, "give one job id");
		rc = 2;
		goto done;
	}
	for (size_t i = 0; i < cli.nmetrics; i++)
		if (lwm2_metric_index(cli.metrics[i]) < 0) {
			lwm2_opt_error(&ranks_spec, LWM2_OPT_USAGE,
			               "couldn't show metric \"%s\": not a metric id (lwm2 digest "
			               "--helpformat lists them)",
			               cli.metrics[i]);
			rc = 2;
			goto done;
		}
	if (lwm2_source_resolve("ranks", &cli.src, true) < 0) {
		rc = 2;
		goto done;
	}
	if (!(d = job_digest(&cli, argv[c])))
		goto done;
	if (lwm2_cmd_derived_conf("ranks", &derived) < 0)
		goto done;
	lwm2_derived_apply(&derived, d);
	rp_ptable_load(&t, d);
	if (!t.present || !t.n)
		lwm2_log_error("ranks: job %s: %s", argv[c],
		               ju_get(d, LWM2_KEY_COMPACT, json_type_boolean)
		                   ? "the compact digest of AdminComment keeps no per-process "
		                     "values: give --file LOG (jobcomp/lwm2's log) or --db"
		                   : "the digest has no per-process table (written by an older "
		                     "lwm2)");
	else if (cli.threads)
		rc = ranks_threads(&cli, &t, d, argv[c]);
	else if (!(rc = print_ranks(&cli, &t, argv[c])) && !cli.json) {
		/* a digest made of others says so; derived metrics job-wide */
		lwm2_derived_render(d, stdout);
		lwm2_derived_metrics_render(ju_get(d, LWM2_KEY_SCOPE, json_type_object), stdout);
	}
	rp_ptable_free(&t);
	if (!rc && (fflush(stdout) != 0 || ferror(stdout))) {
		lwm2_log_error("ranks: couldn't write the output: %s", strerror(errno));
		rc = 1;
	}
done:
	json_object_put(d);
	lwm2_derived_free(&derived);
	for (size_t i = 0; i < cli.nmetrics; i++)
		free(cli.metrics[i]);
	free(cli.metrics);
	free(cli.src.files);
	return rc;
}
