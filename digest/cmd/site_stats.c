/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Site-wide statistics over stored digests (site_stats.h): the jobs of
 * jobcomp/lwm2's log read one line at a time, each added to its groups or
 * to the top list.
 */
#include "config.h"

#include "site_stats.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "errmsg.h"
#include "jsonutil.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"
#include "lwm2_render.h"
#include "lwm2_version.h"
#include "log.h"
#include "numparse.h"
#include "slurm_compat.h"
#include "strhash.h"

_Static_assert((int)LWM2_JR_N == (int)LWM2_SM_N && (int)LWM2_JR_MPI == (int)LWM2_SM_MPI &&
                   (int)LWM2_JR_CPI == (int)LWM2_SM_CPI,
               "a job row's figures are the distributions' metrics");

const struct lwm2_stats_metric_def lwm2_stats_metrics[LWM2_SM_N] = {
    [LWM2_SM_MPI] = {"mpi_time", "MPI %", 0.1, "%.1f"},
    [LWM2_SM_IO] = {"posix_io_time", "I/O %", 0.1, "%.1f"},
    [LWM2_SM_TPC] = {"threads_per_core", "threads/core", 0.01, "%.2f"},
    [LWM2_SM_CPI] = {"cpi", "CPI", 0.01, "%.2f"},
};

/*
 * Values are binned at a fixed resolution (0.1 percentage points, 0.01
 * threads per core or cycles per instruction) over [0, 1000 steps]; above
 * that one overflow bin holds them.
 */
#define NBINS LWM2_STATS_NBINS

#define USERS_MAX LWM2_STATS_USERS_MAX

static void free_list(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

static bool in_list(char *const *l, size_t n, const char *v, bool nocase)
{
	for (size_t i = 0; i < n; i++)
		if (v && (nocase ? !strcasecmp(l[i], v) : !strcmp(l[i], v)))
			return true;
	return false;
}

#define XSCALE 1125899906842624.0 /* 2^50 */
#define BSCALE 16777216.0         /* 2^24 */

/* v in 2^-50 units; NaN as 0, beyond +-1e37 units held there (the
 * conversion of a larger double is undefined) */
static lwm2_stats_xsum xq(double v)
{
	double q = nearbyint(v * XSCALE);

	return q > 1e37    ? (lwm2_stats_xsum)1e37
	       : q < -1e37 ? -(lwm2_stats_xsum)1e37
	       : q == q    ? (lwm2_stats_xsum)q
	                   : 0;
}

/* A bin's weight in 2^-24 units, held within 64 bits. */
static int64_t bq(double w)
{
	double q = nearbyint(w * BSCALE);

	return q > 9e18 ? (int64_t)9e18 : q < -9e18 ? (int64_t)-9e18 : q == q ? (int64_t)q : 0;
}

static double xv(lwm2_stats_xsum q)
{
	return (double)q / XSCALE;
}

static void dist_add(struct lwm2_stats_dist *d, double step, double v, double w)
{
	long b;

	if (!d->bins && !(d->bins = calloc(NBINS + 1, sizeof(*d->bins))))
		return;
	if (!d->n || v < d->min)
		d->min = v;
	if (!d->n || v > d->max)
		d->max = v;
	d->n++;
	lwm2_stats_xadd(&d->xw, xq(w));
	lwm2_stats_xadd(&d->xwx, xq(w * v));
	b = v <= 0 ? 0 : lround(v / step);
	lwm2_stats_badd(&d->bins[b < NBINS ? b : NBINS], bq(w));
}

double lwm2_stats_dist_q(const struct lwm2_stats_dist *d, int k, double q)
{
	double step = lwm2_stats_metrics[k].step, target = q * d->w - 1e-9 * d->w, v;
	int64_t cum = 0;

	if (!d->bins || !d->n)
		return NAN;
	if (d->w <= 0)
		return d->min;
	for (size_t i = 0; i <= NBINS; i++) {
		lwm2_stats_badd(&cum, d->bins[i]);
		if (d->bins[i] > 0 && (double)cum / BSCALE >= target) {
			v = i < NBINS ? (double)i * step : d->max;
			return v < d->min ? d->min : v > d->max ? d->max : v;
		}
	}
	return d->max;
}

double lwm2_stats_dist_mean(const struct lwm2_stats_dist *d)
{
	if (!d->n)
		return NAN;
	return d->w > 0 ? d->wx / d->w : d->min;
}

struct lwm2_stats_group *lwm2_stats_group_of(struct lwm2_stats *st, const char *name)
{
	uint64_t h = lwm2_strhash(name);
	struct lwm2_stats_group *g;

	if (!st->table) {
		st->nbuckets = 4096;
		if (!(st->table = calloc(st->nbuckets, sizeof(*st->table))))
			return NULL;
	}
	for (g = st->table[h % st->nbuckets]; g; g = g->next)
		if (!strcmp(g->name, name))
			return g;
	if (!(g = calloc(1, sizeof(*g))) || !(g->name = strdup(name))) {
		free(g);
		return NULL;
	}
	g->next = st->table[h % st->nbuckets];
	st->table[h % st->nbuckets] = g;
	st->ngroups++;
	return g;
}

/* The slot of user u (n bytes) in g's index: where it is, or the empty
 * one where it would go. */
static size_t user_slot(const struct lwm2_stats_group *g, const char *u, size_t n)
{
	size_t mask = g->user_index_cap - 1, k = lwm2_strnhash(u, n) & mask;

	for (; g->user_index[k]; k = (k + 1) & mask) {
		const char *v = g->users[g->user_index[k] - 1];

		if (strlen(v) == n && !memcmp(v, u, n))
			return k;
	}
	return k;
}

/* The index of g's users twice as large (at most half full): 0, or -1
 * out of memory (the index as it was). */
static int user_index_grow(struct lwm2_stats_group *g)
{
	size_t cap = g->user_index_cap ? 2 * g->user_index_cap : 16, *old = g->user_index;

	if (!(g->user_index = calloc(cap, sizeof(*g->user_index)))) {
		g->user_index = old;
		return -1;
	}
	g->user_index_cap = cap;
	for (size_t i = 0; i < g->nusers; i++)
		g->user_index[user_slot(g, g->users[i], strlen(g->users[i]))] = i + 1;
	free(old);
	return 0;
}

void lwm2_stats_group_add_user(struct lwm2_stats_group *g, const char *u, size_t n)
{
	char **nu;
	size_t k;

	if (g->nusers >= USERS_MAX)
		return;
	if (2 * (g->nusers + 1) > g->user_index_cap && user_index_grow(g) < 0)
		return;
	k = user_slot(g, u, n);
	if (g->user_index[k])
		return;
	/* room doubles at each power of two */
	nu = (g->nusers & (g->nusers - 1)) ? g->users
	                                   : realloc(g->users, (2 * g->nusers + 1) * sizeof(*nu));
	if (!nu)
		return;
	g->users = nu;
	if ((nu[g->nusers] = strndup(u, n))) {
		g->nusers++;
		g->user_index[k] = g->nusers;
	}
}

/* Add a job to a group with share frac of its core-hours (a job on n
 * nodes gives each node 1/n). */
static void group_add(struct lwm2_stats_group *g, const struct lwm2_jobrow *j, double frac)
{
	double ch = j->use.req_core_h * frac;

	g->jobs += j->digest;
	g->no_digest += !j->digest;
	lwm2_usage_add(&g->u, &j->use, frac);
	/* the same sums, exact (lwm2_usage_add's conditions) */
	lwm2_stats_xadd(&g->xreq, xq(j->use.req_core_h * frac));
	if (!isnan(j->use.used_core_h)) {
		lwm2_stats_xadd(&g->xmeas_req, xq(j->use.req_core_h * frac));
		lwm2_stats_xadd(&g->xused, xq(j->use.used_core_h * frac));
	}
	if (!isnan(j->use.mem_req_mb) && !isnan(j->use.mem_peak_mb)) {
		lwm2_stats_xadd(&g->xmem_req, xq(j->use.mem_req_mb * frac));
		lwm2_stats_xadd(&g->xmem_peak, xq(j->use.mem_peak_mb * frac));
	}
	if (j->user)
		lwm2_stats_group_add_user(g, j->user, strlen(j->user));
	if (!j->digest)
		return;
	lwm2_stats_xadd(&g->xcore_h, xq(ch));
	for (int k = 0; k < LWM2_SM_N; k++)
		if (j->has[k])
			dist_add(&g->d[k], lwm2_stats_metrics[k].step, j->v[k], ch);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++)
		if (j->fired & (1ull << r)) {
			g->rule_jobs[r]++;
			lwm2_stats_xadd(&g->xrule_ch[r], xq(ch));
		}
	if (j->has_mpi_calls) {
		g->mpi_known++;
		g->no_mpi_msgs += !(j->mpi_calls_per_s > 0);
	}
}

/* The job's value of the --histogram metric, NaN where it has none (no
 * digest, or the metric not measured), into the group's histogram with
 * the job's share frac of its weight.  -1 when out of memory. */
static int hist_add(const struct lwm2_stats *st, struct lwm2_stats_group *g,
                    const struct lwm2_jobrow *j, double frac)
{
	const struct lwm2_metric_stat *m = &j->scope.stat[st->hist_metric];
	double v = NAN;

	if (!st->hist)
		return 0;
	if (j->digest && m->n > 0)
		v = st->hist_stat == LWM2_HIST_MIN   ? m->min
		    : st->hist_stat == LWM2_HIST_MAX ? m->max
		                                     : m->avg;
	return lwm2_histbin_add(&g->hist, v, st->hist_core_h ? j->use.req_core_h * frac : 1);
}

/* The printed figures from the exact sums. */
static void group_finish(struct lwm2_stats_group *g)
{
	g->core_h = xv(g->xcore_h);
	for (size_t r = 0; r < LWM2_STATS_RULES_MAX; r++)
		g->rule_ch[r] = xv(g->xrule_ch[r]);
	for (int k = 0; k < LWM2_SM_N; k++) {
		g->d[k].w = xv(g->d[k].xw);
		g->d[k].wx = xv(g->d[k].xwx);
	}
	g->u.req_core_h = xv(g->xreq);
	g->u.meas_req_h = xv(g->xmeas_req);
	g->u.used_core_h = xv(g->xused);
	g->u.mem_req_mb = xv(g->xmem_req);
	g->u.mem_peak_mb = xv(g->xmem_peak);
}

void lwm2_stats_finish(struct lwm2_stats *s)
{
	for (size_t b = 0; s->table && b < s->nbuckets; b++)
		for (struct lwm2_stats_group *g = s->table[b]; g; g = g->next)
			group_finish(g);
	group_finish(&s->total);
}

static void group_free(struct lwm2_stats_group *g)
{
	lwm2_histbin_free(&g->hist);
	for (int k = 0; k < LWM2_SM_N; k++)
		free(g->d[k].bins);
	for (size_t i = 0; i < g->nusers; i++)
		free(g->users[i]);
	free(g->users);
	free(g->user_index);
	free(g->name);
}

/* Slurm's compressed host lists ("n[1-3,07],gpu1"): fn for every name, as
 * libslurm expands them.  A list libslurm rejects, or one longer than the
 * cap, is given as it stands (or cut at the cap). */
#define HOSTS_MAX 65536

static size_t hosts_expand(const char *list, void (*fn)(void *, const char *, size_t), void *arg,
                           size_t budget)
{
	/* struct hostlist *: 22.05 spells it hostlist_t, 24.11 hostlist_t * */
	struct hostlist *hl = slurm_hostlist_create(list);
	size_t done = 0;
	char *h;

	if (!hl || slurm_hostlist_count(hl) <= 0) {
		if (hl)
			slurm_hostlist_destroy(hl);
		fn(arg, list, strlen(list));
		return 1;
	}
	while (done < budget && (h = slurm_hostlist_shift(hl))) {
		fn(arg, h, strlen(h));
		free(h);
		done++;
	}
	slurm_hostlist_destroy(hl);
	return done;
}

struct node_acc {
	char **names;
	size_t n, cap;
};

static void node_collect(void *arg, const char *name, size_t len)
{
	struct node_acc *a = arg;

	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		char **nn = realloc(a->names, nc * sizeof(*nn));

		if (!nn)
			return;
		a->names = nn;
		a->cap = nc;
	}
	if ((a->names[a->n] = strndup(name, len)))
		a->n++;
}

/* A job on n nodes adds 1/n of itself to each node's group. */
static int add_to_nodes(struct lwm2_stats *st, const struct lwm2_jobrow *j)
{
	struct node_acc a = {0};
	struct lwm2_stats_group *g;
	int rc = 0;

	if (j->nodes && *j->nodes)
		hosts_expand(j->nodes, node_collect, &a, HOSTS_MAX);
	if (!a.n)
		node_collect(&a, "(none)", 6);
	for (size_t i = 0; i < a.n; i++) {
		if ((g = lwm2_stats_group_of(st, a.names[i]))) {
			group_add(g, j, 1.0 / (double)a.n);
			if (hist_add(st, g, j, 1.0 / (double)a.n) < 0)
				rc = -1;
		} else {
			rc = -1;
		}
		free(a.names[i]);
	}
	free(a.names);
	return rc;
}

/* The job's value of one grouping key (not node); "" when not known. */
static const char *key_of(enum lwm2_stats_by by, const struct lwm2_jobrow *j, char *month,
                          size_t len)
{
	const char *v = NULL;

	switch (by) {
	case LWM2_BY_USER:
		v = j->user;
		break;
	case LWM2_BY_ACCOUNT:
		v = j->account;
		break;
	case LWM2_BY_PARTITION:
		v = j->partition;
		break;
	case LWM2_BY_EXE:
		v = j->exe;
		break;
	case LWM2_BY_APP:
		v = j->app;
		break;
	case LWM2_BY_IMAGE:
		v = j->image;
		break;
	case LWM2_BY_LANGUAGE:
		v = j->language;
		break;
	case LWM2_BY_MPI:
		v = j->mpi_library;
		break;
	case LWM2_BY_CLUSTER:
		v = j->cluster;
		break;
	case LWM2_BY_MODE:
		v = j->mode;
		break;
	case LWM2_BY_QOS:
		v = j->qos;
		break;
	case LWM2_BY_CPU:
		v = j->cpu;
		break;
	case LWM2_BY_MONTH:
		lwm2_jobrow_month(j->end, month, len);
		v = month;
		break;
	case LWM2_BY_NONE:
	case LWM2_BY_NODE:
	case LWM2_BY_N:
		break;
	}
	return v && *v ? v : "(none)";
}

/* The group's name: the keys' values joined with ',' (a value's own ','
 * stays: the name is for reading, not for splitting). */
static void group_name(const struct lwm2_stats *st, const struct lwm2_jobrow *j, char *out,
                       size_t len)
{
	char month[16];
	size_t k = (size_t)snprintf(out, len, "%s", key_of(st->by, j, month, sizeof(month)));

	for (size_t i = 0; i < st->nby_more && k < len; i++)
		k += (size_t)snprintf(out + k, len - k, ",%s",
		                      key_of(st->by_more[i], j, month, sizeof(month)));
}

static int add_to_groups(struct lwm2_stats *st, const struct lwm2_jobrow *j)
{
	char name[(LWM2_STATS_BY_MORE + 1) * (LWM2_JOBROW_IMAGE_LEN + 1)];
	struct lwm2_stats_group *g;

	group_add(&st->total, j, 1.0);
	if (hist_add(st, &st->total, j, 1.0) < 0)
		return -1;
	if (st->by == LWM2_BY_NONE)
		return 0;
	if (st->by == LWM2_BY_NODE)
		return add_to_nodes(st, j);
	group_name(st, j, name, sizeof(name));
	if (!(g = lwm2_stats_group_of(st, name)))
		return -1;
	group_add(g, j, 1.0);
	return hist_add(st, g, j, 1.0);
}

/* ------------------------------------------------------------ --top */

static double sort_value(const struct lwm2_stats *st, const struct lwm2_jobrow *j, bool *ok)
{
	*ok = true;
	switch (st->sort) {
	case LWM2_SORT_CORE_H:
		return j->use.req_core_h;
	case LWM2_SORT_MPI:
		*ok = j->has[LWM2_JR_MPI];
		return j->use.req_core_h * j->v[LWM2_JR_MPI] / 100.0;
	case LWM2_SORT_IO:
		*ok = j->has[LWM2_JR_IO];
		return j->use.req_core_h * j->v[LWM2_JR_IO] / 100.0;
	case LWM2_SORT_IDLE:
		*ok = j->has[LWM2_JR_TPC];
		return j->v[LWM2_JR_TPC] < 1 ? j->use.req_core_h * (1 - j->v[LWM2_JR_TPC]) : 0;
	case LWM2_SORT_CPI:
		*ok = j->has[LWM2_JR_CPI];
		return j->v[LWM2_JR_CPI];
	case LWM2_SORT_OWN:
		*ok = j->has_own;
		return j->own_s;
	case LWM2_SORT_OWN_PCT:
		*ok = j->has_own_pct;
		return j->own_pct;
	case LWM2_SORT_METRIC:
		break;
	}
	*ok = j->scope.stat[st->sort_metric].n > 0;
	return j->scope.stat[st->sort_metric].avg;
}

/* a ranks below b: smaller value, or the same and a later job */
static bool top_less(const struct lwm2_stats_top *a, const struct lwm2_stats_top *b)
{
	return a->value < b->value || (a->value == b->value && a->job_id > b->job_id);
}

static void heap_down(struct lwm2_stats_top *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct lwm2_stats_top t;

		if (l < n && top_less(&h[l], &h[m]))
			m = l;
		if (r < n && top_less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void top_add(struct lwm2_stats *st, const struct lwm2_jobrow *j)
{
	struct lwm2_stats_top t;
	bool ok;

	if (!j->digest)
		return;
	memset(&t, 0, sizeof(t));
	t.value = sort_value(st, j, &ok);
	if (!ok)
		return;
	t.job_id = j->job_id;
	snprintf(t.id, sizeof(t.id), "%s", j->id);
	snprintf(t.user, sizeof(t.user), "%s", j->user ? j->user : "");
	snprintf(t.account, sizeof(t.account), "%s", j->account ? j->account : "");
	snprintf(t.partition, sizeof(t.partition), "%s", j->partition ? j->partition : "");
	t.end = j->end;
	t.core_h = j->use.req_core_h;
	t.fired = j->fired;
	if (st->nheap < st->top) {
		/* sift up */
		size_t i = st->nheap++;

		st->heap[i] = t;
		while (i && top_less(&st->heap[i], &st->heap[(i - 1) / 2])) {
			struct lwm2_stats_top x = st->heap[i];

			st->heap[i] = st->heap[(i - 1) / 2];
			st->heap[(i - 1) / 2] = x;
			i = (i - 1) / 2;
		}
	} else if (st->top && top_less(&st->heap[0], &t)) {
		st->heap[0] = t;
		heap_down(st->heap, st->nheap, 0);
	}
}

/* ------------------------------------------------------------ reading */

/* Whether the job is one the options select. */
static bool selected(const struct lwm2_stats *st, const struct lwm2_jobrow *j)
{
	char uidbuf[24];

	snprintf(uidbuf, sizeof(uidbuf), "%" PRId64, j->uid);
	if (st->nusers && !in_list(st->users, st->nusers, j->user, false) &&
	    !(j->uid >= 0 && in_list(st->users, st->nusers, uidbuf, false)))
		return false;
	if (st->naccounts && !in_list(st->accounts, st->naccounts, j->account, false))
		return false;
	if (st->npartitions && !in_list(st->partitions, st->npartitions, j->partition, false))
		return false;
	if (st->nstates && !in_list(st->states, st->nstates, j->state, true))
		return false;
	return !((st->start && j->end < st->start) || (st->end && j->end > st->end));
}

/* What one grouping key needs of the digest beyond the figures. */
static unsigned wanted_by(enum lwm2_stats_by by)
{
	return by == LWM2_BY_APP        ? LWM2_JR_WANT_APP
	       : by == LWM2_BY_IMAGE    ? LWM2_JR_WANT_IMAGE
	       : by == LWM2_BY_EXE      ? LWM2_JR_WANT_EXE
	       : by == LWM2_BY_LANGUAGE ? LWM2_JR_WANT_LANGUAGE
	       : by == LWM2_BY_MPI      ? LWM2_JR_WANT_LANGUAGE
	       : by == LWM2_BY_MODE     ? LWM2_JR_WANT_MODE
	       : by == LWM2_BY_CPU      ? LWM2_JR_WANT_CPU
	                                : 0;
}

static unsigned wanted(const struct lwm2_stats *st)
{
	unsigned w = wanted_by(st->by);

	for (size_t i = 0; i < st->nby_more; i++)
		w |= wanted_by(st->by_more[i]);
	return w;
}

int lwm2_stats_add(struct lwm2_stats *s, const struct lwm2_jobrow *j)
{
	if (!selected(s, j))
		return 0;
	s->selected++;
	if (s->top) {
		top_add(s, j);
		return 0;
	}
	return add_to_groups(s, j);
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct lwm2_stats *st = arg;
	struct lwm2_jobrow j;

	lwm2_jobrow_fields(l, &j);
	if (!selected(st, &j))
		return 0;
	if (lwm2_jobrow_digest(l, &j, wanted(st), err, errlen) < 0)
		return -1;
	if (lwm2_stats_add(st, &j) < 0)
		return lwm2_errprintf(0, err, errlen, "out of memory");
	return 0;
}

static int cmp_core_h(const void *a, const void *b)
{
	const struct lwm2_stats_group *x = *(struct lwm2_stats_group *const *)a,
	                              *y = *(struct lwm2_stats_group *const *)b;

	if (x->core_h != y->core_h)
		return x->core_h > y->core_h ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct lwm2_stats_group *const *)a)->name,
	              (*(struct lwm2_stats_group *const *)b)->name);
}

static int cmp_top(const void *a, const void *b)
{
	const struct lwm2_stats_top *x = a, *y = b;

	return top_less(y, x) ? -1 : top_less(x, y) ? 1 : 0;
}

/* ------------------------------------------------------------ the API */

const char *const lwm2_stats_hist_stats[3] = {
    [LWM2_HIST_AVG] = "avg",
    [LWM2_HIST_MIN] = "min",
    [LWM2_HIST_MAX] = "max",
};

int lwm2_stats_hist_set(struct lwm2_stats *s, const char *cmd, const char *name, const char *weight)
{
	const char *dot = strchr(name, '.');
	size_t len = dot ? (size_t)(dot - name) : strlen(name);
	int stat = dot ? -1 : LWM2_HIST_AVG;

	s->hist_metric = -1;
	for (int i = 0; i < LWM2_NMETRICS; i++)
		if (strlen(lwm2_metric_ids[i]) == len &&
		    !strncasecmp(name, lwm2_metric_ids[i], len))
			s->hist_metric = i;
	for (int i = 0; dot && i < 3; i++)
		if (!strcasecmp(dot + 1, lwm2_stats_hist_stats[i]))
			stat = i;
	if (s->hist_metric < 0 || stat < 0) {
		lwm2_log_error("%s: couldn't draw a histogram of \"%s\": not a metric of the "
		               "digests (lwm2 digest --helpformat lists them, under \"Metrics\"; "
		               "add .min or .max for the smallest or largest process's)",
		               cmd, name);
		return -1;
	}
	if (weight && strcmp(weight, "jobs") && strcmp(weight, "core-hours")) {
		lwm2_log_error("%s: couldn't weight by \"%s\": want jobs or core-hours", cmd,
		               weight);
		return -1;
	}
	s->hist = true;
	s->hist_stat = (enum lwm2_stats_hist_stat)stat;
	s->hist_core_h = weight && !strcmp(weight, "core-hours");
	return 0;
}

int lwm2_stats_begin(struct lwm2_stats *s)
{
	if (s->top && !(s->heap = calloc(s->top, sizeof(*s->heap))))
		return -1;
	return 0;
}

int lwm2_stats_read(struct lwm2_stats *s, const char *cmd, char *const *files, size_t n)
{
	int rc = lwm2_logscan_files(cmd, files, n, on_line, s, &s->count) < 0 ? -1 : 0;

	lwm2_stats_finish(s);
	return rc;
}

struct lwm2_stats_group **lwm2_stats_groups(const struct lwm2_stats *s, size_t *n)
{
	struct lwm2_stats_group **gs = calloc(s->ngroups + 1, sizeof(*gs));

	*n = 0;
	if (!gs)
		return NULL;
	for (size_t b = 0; s->table && b < s->nbuckets; b++)
		for (struct lwm2_stats_group *g = s->table[b]; g; g = g->next)
			gs[(*n)++] = g;
	qsort(gs, *n, sizeof(*gs), s->by == LWM2_BY_MONTH ? cmp_name : cmp_core_h);
	return gs;
}

void lwm2_stats_top_sorted(struct lwm2_stats *s)
{
	qsort(s->heap, s->nheap, sizeof(*s->heap), cmp_top);
}

void lwm2_stats_free(struct lwm2_stats *s)
{
	for (size_t b = 0; s->table && b < s->nbuckets; b++)
		for (struct lwm2_stats_group *g = s->table[b], *nx; g; g = nx) {
			nx = g->next;
			group_free(g);
			free(g);
		}
	free(s->table);
	group_free(&s->total);
	free(s->heap);
	free_list(s->users, s->nusers);
	free_list(s->accounts, s->naccounts);
	free_list(s->partitions, s->npartitions);
	free_list(s->states, s->nstates);
}
