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

#include "jsonutil.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"
#include "lwm2_render.h"
#include "lwm2_version.h"
#include "numparse.h"
#include "slurm_compat.h"
#include "strhash.h"

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
#define NBINS 1001

#define USERS_MAX 100000

/* One job, as the groups and the top list need it. */
struct job {
	int64_t job_id;
	char id[48];
	const char *user, *account, *partition, *state, *nodes, *name;
	char month[16];
	char exe[256];
	char image[4 * LWM2_CONTAINER_IMAGE_LEN]; /* escaped: \xNN for a control byte */
	int64_t start, end;
	uint32_t node_count;
	double core_h;
	struct lwm2_usage use;
	bool digest;
	bool has[LWM2_SM_N];
	double v[LWM2_SM_N];
	uint64_t fired;
	struct lwm2_scope scope; /* the digest's job-wide scope */
	/* lwm2's own cost (the digest's lwm2_cost): seconds, % of CPU time */
	bool has_own, has_own_pct;
	double own_s, own_pct;
};

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

static void dist_add(struct lwm2_stats_dist *d, double step, double v, double w)
{
	long b;

	if (!d->bins && !(d->bins = calloc(NBINS + 1, sizeof(double))))
		return;
	if (!d->n || v < d->min)
		d->min = v;
	if (!d->n || v > d->max)
		d->max = v;
	d->n++;
	d->w += w;
	d->wx += w * v;
	b = v <= 0 ? 0 : lround(v / step);
	d->bins[b < NBINS ? b : NBINS] += w;
}

double lwm2_stats_dist_q(const struct lwm2_stats_dist *d, int k, double q)
{
	double step = lwm2_stats_metrics[k].step, cum = 0, target = q * d->w - 1e-9 * d->w, v;

	if (!d->bins || !d->n)
		return NAN;
	if (d->w <= 0)
		return d->min;
	for (size_t i = 0; i <= NBINS; i++) {
		cum += d->bins[i];
		if (d->bins[i] > 0 && cum >= target) {
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

static struct lwm2_stats_group *group_of(struct lwm2_stats *st, const char *name)
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

/* Add a job to a group with share frac of its core-hours (a job on n
 * nodes gives each node 1/n). */
static void group_add(struct lwm2_stats_group *g, const struct job *j, double frac)
{
	double ch = j->core_h * frac;

	g->jobs += j->digest;
	g->no_digest += !j->digest;
	lwm2_usage_add(&g->u, &j->use, frac);
	if (j->user && g->nusers < USERS_MAX) {
		size_t i;
		for (i = 0; i < g->nusers && strcmp(g->users[i], j->user); i++)
			;
		if (i == g->nusers) {
			char **nu = (g->nusers & (g->nusers - 1))
			                ? g->users
			                : realloc(g->users, (2 * g->nusers + 1) * sizeof(*nu));
			if (nu && (nu[g->nusers] = strdup(j->user))) {
				g->users = nu;
				g->nusers++;
			} else if (nu) {
				g->users = nu;
			}
		}
	}
	if (!j->digest)
		return;
	g->core_h += ch;
	for (int k = 0; k < LWM2_SM_N; k++)
		if (j->has[k])
			dist_add(&g->d[k], lwm2_stats_metrics[k].step, j->v[k], ch);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++)
		if (j->fired & (1ull << r)) {
			g->rule_jobs[r]++;
			g->rule_ch[r] += ch;
		}
}

static void group_free(struct lwm2_stats_group *g)
{
	for (int k = 0; k < LWM2_SM_N; k++)
		free(g->d[k].bins);
	for (size_t i = 0; i < g->nusers; i++)
		free(g->users[i]);
	free(g->users);
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
static int add_to_nodes(struct lwm2_stats *st, const struct job *j)
{
	struct node_acc a = {0};
	struct lwm2_stats_group *g;
	int rc = 0;

	if (j->nodes && *j->nodes)
		hosts_expand(j->nodes, node_collect, &a, HOSTS_MAX);
	if (!a.n)
		node_collect(&a, "(none)", 6);
	for (size_t i = 0; i < a.n; i++) {
		if ((g = group_of(st, a.names[i])))
			group_add(g, j, 1.0 / (double)a.n);
		else
			rc = -1;
		free(a.names[i]);
	}
	free(a.names);
	return rc;
}

static int add_to_groups(struct lwm2_stats *st, const struct job *j)
{
	/* the group's name by --by; by node: add_to_nodes */
	const char *const keys[] = {
	    [LWM2_BY_USER] = j->user,
	    [LWM2_BY_ACCOUNT] = j->account,
	    [LWM2_BY_PARTITION] = j->partition,
	    [LWM2_BY_EXE] = j->exe,
	    [LWM2_BY_APP] = j->exe,
	    [LWM2_BY_IMAGE] = j->image,
	    [LWM2_BY_MONTH] = j->month,
	    [LWM2_BY_NODE] = NULL,
	};
	const char *key = keys[st->by];
	struct lwm2_stats_group *g;

	group_add(&st->total, j, 1.0);
	if (st->by == LWM2_BY_NONE)
		return 0;
	if (st->by == LWM2_BY_NODE)
		return add_to_nodes(st, j);
	if (!(g = group_of(st, key && *key ? key : "(none)")))
		return -1;
	group_add(g, j, 1.0);
	return 0;
}

/* ------------------------------------------------------------ --top */

/* lwm2's own cost as the digest estimated it (lwm2(1), LWM2'S OWN COST);
 * digests made before lwm2 stated it have none. */
static void own_cost_of(const struct lwm2_logline *l, struct job *j)
{
	const char *oc = lwm2_logline_member(l, LWM2_KEY_LWM2_COST), *v;
	char *x;

	if (!oc || *oc != '{')
		return;
	if ((v = lwm2_json_member(oc, l->end, LWM2_KEY_SECONDS))) {
		j->own_s = strtod(v, &x);
		j->has_own = x != v && isfinite(j->own_s) && j->own_s >= 0;
	}
	if ((v = lwm2_json_member(oc, l->end, LWM2_KEY_COST_SHARE))) {
		j->own_pct = strtod(v, &x);
		j->has_own_pct = x != v && isfinite(j->own_pct) && j->own_pct >= 0;
	}
}

static double sort_value(const struct lwm2_stats *st, const struct job *j, bool *ok)
{
	*ok = true;
	switch (st->sort) {
	case LWM2_SORT_CORE_H:
		return j->core_h;
	case LWM2_SORT_MPI:
		*ok = j->has[LWM2_SM_MPI];
		return j->core_h * j->v[LWM2_SM_MPI] / 100.0;
	case LWM2_SORT_IO:
		*ok = j->has[LWM2_SM_IO];
		return j->core_h * j->v[LWM2_SM_IO] / 100.0;
	case LWM2_SORT_IDLE:
		*ok = j->has[LWM2_SM_TPC];
		return j->v[LWM2_SM_TPC] < 1 ? j->core_h * (1 - j->v[LWM2_SM_TPC]) : 0;
	case LWM2_SORT_CPI:
		*ok = j->has[LWM2_SM_CPI];
		return j->v[LWM2_SM_CPI];
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

static void top_add(struct lwm2_stats *st, const struct job *j)
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
	t.core_h = j->core_h;
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

static const char *fstr(json_object *o, const char *key)
{
	return ju_str(o, key);
}

/* s as a group name: a byte below 0x20 or DEL as \xNN (a group name is
 * printed as a table cell), the rest as it is; cut to fit len. */
static void escape_name(char *out, size_t len, const char *s)
{
	size_t k = 0;

	for (; *s && k + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			k += (size_t)snprintf(out + k, len - k, "\\x%02x", c);
		else
			out[k++] = (char)c;
	}
	out[k] = '\0';
}

/* The job's main container image: the first of the digest's "containers"
 * (most CPU time), "(RUNTIME)" when its image is not known; "" (the group
 * "(none)") when no process ran in a container, or the digest is older
 * than containers in digests. */
static void main_image(const struct lwm2_logline *l, char *out, size_t len)
{
	const char *a = lwm2_logline_member(l, LWM2_KEY_CONTAINERS);
	json_object *arr = a && *a == '[' ? lwm2_json_parse_at(a, l->end) : NULL, *c = NULL;
	const char *im, *rt;

	out[0] = '\0';
	if (arr && json_object_is_type(arr, json_type_array) && json_object_array_length(arr))
		c = json_object_array_get_idx(arr, 0);
	im = c ? ju_str(c, LWM2_KEY_IMAGE) : NULL;
	rt = c ? ju_str(c, LWM2_KEY_RUNTIME) : NULL;
	if (im && *im) {
		escape_name(out, len, im);
	} else if (rt && *rt) {
		char r[4 * LWM2_CONTAINER_RUNTIME_LEN];

		escape_name(r, sizeof(r), rt);
		snprintf(out, len, "(%s)", r);
	}
	json_object_put(arr);
}

/* Whether the line's job is one the options select. */
static bool selected(const struct lwm2_stats *st, json_object *f, const struct job *j)
{
	int64_t uid = ju_int_or(f, "uid", -1);
	char uidbuf[24];

	snprintf(uidbuf, sizeof(uidbuf), "%" PRId64, uid);
	if (st->nusers && !in_list(st->users, st->nusers, j->user, false) &&
	    !(uid >= 0 && in_list(st->users, st->nusers, uidbuf, false)))
		return false;
	if (st->naccounts && !in_list(st->accounts, st->naccounts, j->account, false))
		return false;
	if (st->npartitions && !in_list(st->partitions, st->npartitions, j->partition, false))
		return false;
	if (st->nstates && !in_list(st->states, st->nstates, j->state, true))
		return false;
	return !((st->start && j->end < st->start) || (st->end && j->end > st->end));
}

/* The job's fields from the log line, its id as sacct writes it. */
static void job_of_line(json_object *f, struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->job_id = ju_int_or(f, "job_id", 0);
	j->user = fstr(f, "user");
	j->account = fstr(f, "account");
	j->partition = fstr(f, "partition");
	j->state = fstr(f, "state");
	j->nodes = fstr(f, "nodes");
	j->name = fstr(f, "name");
	j->start = ju_int_or(f, "start", 0);
	j->end = ju_int_or(f, "end", 0);
	j->node_count = (uint32_t)ju_int_or(f, "node_count", 0);
	if (ju_get(f, "array_task_id", json_type_int) && ju_get(f, "array_job_id", json_type_int))
		snprintf(j->id, sizeof(j->id), "%" PRId64 "_%" PRId64,
		         ju_int_or(f, "array_job_id", 0), ju_int_or(f, "array_task_id", 0));
	else if (ju_get(f, "het_job_offset", json_type_int) &&
	         ju_get(f, "het_job_id", json_type_int))
		snprintf(j->id, sizeof(j->id), "%" PRId64 "+%" PRId64,
		         ju_int_or(f, "het_job_id", 0), ju_int_or(f, "het_job_offset", 0));
	else
		snprintf(j->id, sizeof(j->id), "%" PRId64, j->job_id);
}

/* The digest's scope and job fields into j (its cpus_per_task in *cpt);
 * -1 with err for a digest that cannot be read. */
static int digest_of_line(const struct lwm2_logline *l, struct job *j, uint32_t *cpt, char *err,
                          size_t errlen)
{
	const char *v = lwm2_logline_member(l, LWM2_KEY_DIGEST_VERSION);
	const char *sc = lwm2_logline_member(l, LWM2_KEY_SCOPE), *jo, *vend;
	int64_t ver = 0;

	/* no number, or beyond 64 bits: no such version */
	if (v && lwm2_parse_i64(v, &vend, INT64_MIN, INT64_MAX, &ver) < 0)
		ver = 0;
	if (lwm2_version_check("digest", ver, 1, LWM2_DIGEST_VERSION, err, errlen))
		return -1;
	if (!sc || lwm2_scope_from_text(&j->scope, sc, l->end, 0) < 0) {
		snprintf(err, errlen, "the digest's scope is unreadable");
		return -1;
	}
	lwm2_scope_upgrade(&j->scope, ver);
	/* the digest's job fields: only where the log line lacks them */
	if ((jo = lwm2_logline_member(l, LWM2_KEY_JOB)) && *jo == '{') {
		if ((v = lwm2_json_member(jo, l->end, LWM2_KEY_CPUS_PER_TASK)))
			*cpt = (uint32_t)strtoul(v, NULL, 10);
		if (j->start <= 0 && (v = lwm2_json_member(jo, l->end, LWM2_KEY_START)))
			j->start = strtoll(v, NULL, 10);
		if (j->end <= 0 && (v = lwm2_json_member(jo, l->end, LWM2_KEY_END)))
			j->end = strtoll(v, NULL, 10);
	}
	j->scope.cpus_per_task = *cpt;
	j->digest = true;
	own_cost_of(l, j);
	return 0;
}

/* The job-wide figures the groups and --top take from the digest's
 * scope, and the guidance rules that fired. */
static void digest_values(struct job *j, uint32_t cpt, int64_t procs, int64_t cpus)
{
	const struct lwm2_scope *s = &j->scope;
	double cpp = cpt > 0 ? cpt : procs > 0 && cpus > 0 ? (double)cpus / (double)procs : 0;

	if ((j->has[LWM2_SM_MPI] = s->stat[LWM2_M_mpi_time].n > 0))
		j->v[LWM2_SM_MPI] = s->stat[LWM2_M_mpi_time].avg;
	if ((j->has[LWM2_SM_IO] = s->stat[LWM2_M_posix_io_time].n > 0))
		j->v[LWM2_SM_IO] = s->stat[LWM2_M_posix_io_time].avg;
	if ((j->has[LWM2_SM_TPC] = s->stat[LWM2_M_avg_threads].n > 0 && cpp > 0))
		j->v[LWM2_SM_TPC] = s->stat[LWM2_M_avg_threads].avg / cpp;
	if ((j->has[LWM2_SM_CPI] = s->stat[LWM2_M_cpi].n > 0))
		j->v[LWM2_SM_CPI] = s->stat[LWM2_M_cpi].avg;
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++)
		if (lwm2_guidance_fires(&lwm2_guidance_rules[r], s))
			j->fired |= 1ull << r;
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct lwm2_stats *st = arg;
	json_object *f = l->fields;
	struct job j;
	int64_t cpus = ju_int_or(f, "cpus", 0), procs = 0;
	uint32_t cpt = 0;
	time_t tt;
	struct tm tm;

	job_of_line(f, &j);
	if (!selected(st, f, &j))
		return 0;
	if (l->digest) {
		if (digest_of_line(l, &j, &cpt, err, errlen) < 0)
			return -1;
		procs = (int64_t)j.scope.processes;
	}
	tt = (time_t)j.end;
	if (j.end > 0 && localtime_r(&tt, &tm))
		strftime(j.month, sizeof(j.month), "%Y-%m", &tm);
	else
		snprintf(j.month, sizeof(j.month), "(none)");
	/* cores: Slurm's allocation where the log has it, else one per
	 * process (cpus_per_task each), else one per node */
	if (cpus <= 0)
		cpus = procs > 0 ? procs * (cpt > 1 ? cpt : 1) : j.node_count;
	/* requested core-hours as the site report counts them (usage.c) */
	lwm2_usage_of_line(l, &j.use);
	j.core_h = j.use.req_core_h;
	if (j.digest)
		digest_values(&j, cpt, procs, cpus);
	/* the application as the site report ranks it (usage.c) */
	if (st->by == LWM2_BY_APP)
		lwm2_usage_app(l, j.exe, sizeof(j.exe));
	if (st->by == LWM2_BY_IMAGE && l->digest)
		main_image(l, j.image, sizeof(j.image));
	if (st->by == LWM2_BY_EXE)
		lwm2_usage_exe(l, j.exe, sizeof(j.exe));
	st->selected++;
	if (st->top)
		top_add(st, &j);
	else if (add_to_groups(st, &j) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
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

int lwm2_stats_begin(struct lwm2_stats *s)
{
	if (s->top && !(s->heap = calloc(s->top, sizeof(*s->heap))))
		return -1;
	return 0;
}

int lwm2_stats_read(struct lwm2_stats *s, const char *cmd, char *const *files, size_t n)
{
	return lwm2_logscan_files(cmd, files, n, on_line, s, &s->count) < 0 ? -1 : 0;
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
