/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 stats`: site-wide statistics over stored digests, the view TOPAS
 * and PerfMiner gave a site: per user, account, partition, program, month
 * or node, the jobs, their core-hours, how the core-hours split by MPI
 * share, I/O share, threads per allocated core and CPI, and on how much
 * of them each guidance rule fired.  --top lists the jobs that lose the
 * most core-hours, the list a site administrator uses to contact users.
 *
 * The log is streamed: per group the memory is fixed (one histogram per
 * metric), so a year of jobs costs no more than a day of them.
 */
#include "config.h"
#include "lwm2_keys.h"
#include "lwm2_version.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd_io.h"
#include "csv.h"
#include "jsonutil.h"
#include "logscan.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "slurm_compat.h"
#include "slurmutil.h"
#include "strhash.h"
#include "usage.h"

/* ------------------------------------------------------------ metrics */

/* The distributions kept per group, weighted by core-hours. */
enum dmetric { D_MPI, D_IO, D_TPC, D_CPI, ND };

/*
 * Values are binned at a fixed resolution (0.1 percentage points, 0.01
 * threads per core or cycles per instruction) over [0, 1000 steps]; above
 * that one overflow bin holds them and quartiles falling there are given
 * as the group's maximum.  Mean, minimum and maximum are exact.
 */
#define NBINS 1001

static const struct {
	const char *id;
	const char *head; /* table heading */
	double step;
	const char *fmt;
} dm[ND] = {
    [D_MPI] = {"mpi_time", "MPI %", 0.1, "%.1f"},
    [D_IO] = {"posix_io_time", "I/O %", 0.1, "%.1f"},
    [D_TPC] = {"threads_per_core", "threads/core", 0.01, "%.2f"},
    [D_CPI] = {"cpi", "CPI", 0.01, "%.2f"},
};

#define MAX_RULES 64

struct dist {
	uint64_t n;
	double w, wx, min, max;
	double *bins; /* NBINS + 1, allocated at the first value */
};

struct group {
	char *name;
	uint64_t jobs, no_digest;
	double core_h;
	struct lwm2_usage_sum u; /* requested against used */
	struct dist d[ND];
	uint64_t rule_jobs[MAX_RULES];
	double rule_ch[MAX_RULES];
	char **users; /* distinct users, up to USERS_MAX */
	size_t nusers;
	struct group *next;
};
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
	bool has[ND];
	double v[ND];
	uint64_t fired;
	struct lwm2_scope scope; /* the digest's job-wide scope */
	/* lwm2's own cost (the digest's lwm2_cost): seconds, % of CPU time */
	bool has_own, has_own_pct;
	double own_s, own_pct;
};

/* ------------------------------------------------------------ options */

enum by { BY_NONE, BY_USER, BY_ACCOUNT, BY_PARTITION, BY_EXE, BY_MONTH, BY_NODE, BY_APP, BY_IMAGE };
static const char *const by_names[] = {"",      "user", "account", "partition", "executable",
                                       "month", "node", "app",     "image"};
enum out_mode { OUT_TABLE, OUT_PARSABLE, OUT_CSV, OUT_JSON };

/* --sort keys of --top: core-hours lost to a cause, or a metric's value. */
enum sort_kind { S_CORE_H, S_MPI, S_IO, S_IDLE, S_CPI, S_OWN, S_OWN_PCT, S_METRIC };
static const struct {
	const char *name;
	const char *head;
} sort_keys[] = {
    [S_CORE_H] = {"core_hours", "CORE-H"},
    [S_MPI] = {"mpi", "MPI CORE-H"},
    [S_IO] = {"io", "I/O CORE-H"},
    [S_IDLE] = {"idle", "IDLE CORE-H"},
    [S_CPI] = {"cpi", "CPI"},
    [S_OWN] = {"lwm2_cost", "LWM2 S"},
    [S_OWN_PCT] = {"lwm2_share", "LWM2 %CPU"},
    [S_METRIC] = {"", ""},
};

struct topjob {
	int64_t job_id;
	char id[48], user[64], account[64], partition[64];
	int64_t end;
	double core_h, value;
	uint64_t fired;
};

struct stats {
	char **users, **accounts, **partitions, **states;
	size_t nusers, naccounts, npartitions, nstates;
	int64_t start, end; /* window on the end time; 0: open */
	enum by by;
	enum out_mode out;
	bool noheader;
	/* groups */
	struct group **table;
	size_t nbuckets, ngroups;
	struct group total;
	/* --top */
	size_t top;
	enum sort_kind sort;
	int sort_metric;
	struct topjob *heap;
	size_t nheap;
	struct lwm2_logscan_count count;
	uint64_t selected;
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

/* ------------------------------------------------------------ groups */

static void dist_add(struct dist *d, double step, double v, double w)
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

/* The smallest value with at least q of the weight at or below it. */
static double dist_q(const struct dist *d, double step, double q)
{
	double cum = 0, target = q * d->w - 1e-9 * d->w, v;

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

static double dist_mean(const struct dist *d)
{
	if (!d->n)
		return NAN;
	return d->w > 0 ? d->wx / d->w : d->min;
}

static struct group *group_of(struct stats *st, const char *name)
{
	uint64_t h = lwm2_strhash(name);
	struct group *g;

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
static void group_add(struct group *g, const struct job *j, double frac)
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
	for (int k = 0; k < ND; k++)
		if (j->has[k])
			dist_add(&g->d[k], dm[k].step, j->v[k], ch);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++)
		if (j->fired & (1ull << r)) {
			g->rule_jobs[r]++;
			g->rule_ch[r] += ch;
		}
}

static void group_free(struct group *g)
{
	for (int k = 0; k < ND; k++)
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

static int add_to_groups(struct stats *st, const struct job *j)
{
	const char *key = NULL;
	struct group *g;

	group_add(&st->total, j, 1.0);
	switch (st->by) {
	case BY_NONE:
		return 0;
	case BY_USER:
		key = j->user;
		break;
	case BY_ACCOUNT:
		key = j->account;
		break;
	case BY_PARTITION:
		key = j->partition;
		break;
	case BY_EXE:
	case BY_APP:
		key = j->exe;
		break;
	case BY_IMAGE:
		key = j->image;
		break;
	case BY_MONTH:
		key = j->month;
		break;
	case BY_NODE: {
		struct node_acc a = {0};
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
	}
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
	const char *oc = lwm2_json_member(l->digest, l->end, LWM2_KEY_LWM2_COST), *v;
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

static double sort_value(const struct stats *st, const struct job *j, bool *ok)
{
	*ok = true;
	switch (st->sort) {
	case S_CORE_H:
		return j->core_h;
	case S_MPI:
		*ok = j->has[D_MPI];
		return j->core_h * j->v[D_MPI] / 100.0;
	case S_IO:
		*ok = j->has[D_IO];
		return j->core_h * j->v[D_IO] / 100.0;
	case S_IDLE:
		*ok = j->has[D_TPC];
		return j->v[D_TPC] < 1 ? j->core_h * (1 - j->v[D_TPC]) : 0;
	case S_CPI:
		*ok = j->has[D_CPI];
		return j->v[D_CPI];
	case S_OWN:
		*ok = j->has_own;
		return j->own_s;
	case S_OWN_PCT:
		*ok = j->has_own_pct;
		return j->own_pct;
	case S_METRIC:
		break;
	}
	*ok = j->scope.stat[st->sort_metric].n > 0;
	return j->scope.stat[st->sort_metric].avg;
}

/* a ranks below b: smaller value, or the same and a later job */
static bool top_less(const struct topjob *a, const struct topjob *b)
{
	return a->value < b->value || (a->value == b->value && a->job_id > b->job_id);
}

static void heap_down(struct topjob *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct topjob t;

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

static void top_add(struct stats *st, const struct job *j)
{
	struct topjob t;
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
			struct topjob x = st->heap[i];

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
	const char *a = lwm2_json_member(l->digest, l->end, LWM2_KEY_CONTAINERS);
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
static bool selected(const struct stats *st, json_object *f, const struct job *j)
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
	const char *v = lwm2_json_member(l->digest, l->end, LWM2_KEY_DIGEST_VERSION);
	const char *sc = lwm2_json_member(l->digest, l->end, LWM2_KEY_SCOPE), *jo, *vend;
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
	if ((jo = lwm2_json_member(l->digest, l->end, LWM2_KEY_JOB)) && *jo == '{') {
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

	if ((j->has[D_MPI] = s->stat[LWM2_M_mpi_time].n > 0))
		j->v[D_MPI] = s->stat[LWM2_M_mpi_time].avg;
	if ((j->has[D_IO] = s->stat[LWM2_M_posix_io_time].n > 0))
		j->v[D_IO] = s->stat[LWM2_M_posix_io_time].avg;
	if ((j->has[D_TPC] = s->stat[LWM2_M_avg_threads].n > 0 && cpp > 0))
		j->v[D_TPC] = s->stat[LWM2_M_avg_threads].avg / cpp;
	if ((j->has[D_CPI] = s->stat[LWM2_M_cpi].n > 0))
		j->v[D_CPI] = s->stat[LWM2_M_cpi].avg;
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++)
		if (lwm2_guidance_fires(&lwm2_guidance_rules[r], s))
			j->fired |= 1ull << r;
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct stats *st = arg;
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
	if (st->by == BY_APP)
		lwm2_usage_app(l, j.exe, sizeof(j.exe));
	if (st->by == BY_IMAGE && l->digest)
		main_image(l, j.image, sizeof(j.image));
	if (st->by == BY_EXE)
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

static json_object *group_json(const struct group *g)
{
	json_object *o = json_object_new_object(), *ms = json_object_new_object(),
	            *gd = json_object_new_object();

	ju_add(o, "group", json_object_new_string(g->name));
	ju_add(o, "jobs", ju_u64(g->jobs));
	ju_add(o, "no_digest", ju_u64(g->no_digest));
	ju_add(o, "users", ju_u64(g->nusers));
	ju_add(o, "core_hours", ju_double(g->core_h));
	for (int k = 0; k < ND; k++) {
		const struct dist *d = &g->d[k];
		json_object *m;

		if (!d->n)
			continue;
		m = json_object_new_object();
		ju_add(m, "jobs", ju_u64(d->n));
		ju_add(m, "core_hours", ju_double(d->w));
		ju_add(m, "mean", jnum(dist_mean(d)));
		ju_add(m, "min", ju_double(d->min));
		ju_add(m, "q1", jnum(dist_q(d, dm[k].step, 0.25)));
		ju_add(m, "median", jnum(dist_q(d, dm[k].step, 0.5)));
		ju_add(m, "q3", jnum(dist_q(d, dm[k].step, 0.75)));
		ju_add(m, "max", ju_double(d->max));
		ju_add(ms, dm[k].id, m);
	}
	ju_add(o, "metrics", ms);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++) {
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

static void group_row(const struct stats *st, const struct group *g)
{
	char b[64];
	size_t c = 0;

	put_cell(st, c++, g->name);
	snprintf(b, sizeof(b), "%" PRIu64, g->jobs);
	put_cell(st, c++, b);
	snprintf(b, sizeof(b), "%" PRIu64, g->no_digest);
	put_cell(st, c++, b);
	num(b, sizeof(b), g->core_h);
	put_cell(st, c++, b);
	for (int k = 0; k < ND; k++) {
		const struct dist *d = &g->d[k];
		double q[6] = {dist_mean(d),
		               d->n ? d->min : NAN,
		               dist_q(d, dm[k].step, 0.25),
		               dist_q(d, dm[k].step, 0.5),
		               dist_q(d, dm[k].step, 0.75),
		               d->n ? d->max : NAN};

		for (int i = 0; i < 6; i++) {
			num(b, sizeof(b), q[i]);
			put_cell(st, c++, b);
		}
	}
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++) {
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
	putchar('\n');
}

static void group_header(const struct stats *st)
{
	static const char *const q[6] = {"mean", "min", "q1", "median", "q3", "max"};
	char b[128];
	size_t c = 0;

	put_cell(st, c++, st->by == BY_NONE ? "group" : by_names[st->by]);
	put_cell(st, c++, "jobs");
	put_cell(st, c++, "no_digest");
	put_cell(st, c++, "core_hours");
	for (int k = 0; k < ND; k++)
		for (int i = 0; i < 6; i++) {
			snprintf(b, sizeof(b), "%s.%s", dm[k].id, q[i]);
			put_cell(st, c++, b);
		}
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++) {
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
	putchar('\n');
}

/* "mean (q1/median/q3)" in the metric's precision, "-" without data. */
static void dist_cell(const struct dist *d, int k, char *buf, size_t len)
{
	char a[4][24];
	double v[4] = {dist_mean(d), dist_q(d, dm[k].step, 0.25), dist_q(d, dm[k].step, 0.5),
	               dist_q(d, dm[k].step, 0.75)};

	if (!d->n) {
		snprintf(buf, len, "-");
		return;
	}
	for (int i = 0; i < 4; i++)
		snprintf(a[i], sizeof(a[i]), dm[k].fmt, v[i]);
	snprintf(buf, len, "%s (%s/%s/%s)", a[0], a[1], a[2], a[3]);
}

static void table_groups(const struct stats *st, struct group **gs, size_t n)
{
	int w = 5;
	char cells[ND][100];

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(gs[i]->name) > w)
			w = (int)strlen(gs[i]->name);
	if (w > 40)
		w = 40;
	if (!st->noheader) {
		printf("%-*s %8s %9s %10s", w, st->by == BY_NONE ? "GROUP" : by_names[st->by],
		       "JOBS", "NO-DIGEST", "CORE-H");
		if (st->by == BY_APP || st->by == BY_IMAGE)
			printf(" %6s", "USERS");
		for (int k = 0; k < ND; k++)
			printf("  %-22s", dm[k].head);
		printf("\n%-*s %8s %9s %10s", w, "", "", "", "");
		if (st->by == BY_APP || st->by == BY_IMAGE)
			printf(" %6s", "");
		for (int k = 0; k < ND; k++)
			printf("  %-22s", "mean (q1/median/q3)");
		putchar('\n');
	}
	for (size_t i = 0; i < n; i++) {
		const struct group *g = gs[i];

		for (int k = 0; k < ND; k++)
			dist_cell(&g->d[k], k, cells[k], sizeof(cells[k]));
		printf("%-*.*s %8" PRIu64 " %9" PRIu64 " %10.1f", w, w, g->name, g->jobs,
		       g->no_digest, g->core_h);
		if (st->by == BY_APP || st->by == BY_IMAGE)
			printf(" %6zu", g->nusers);
		for (int k = 0; k < ND; k++)
			printf("  %-22s", cells[k]);
		putchar('\n');
	}
	/* guidance: the rules that fired, by share of core-hours */
	{
		bool any = false;

		for (size_t i = 0; i < n; i++)
			for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++) {
				const struct group *g = gs[i];

				if (!g->rule_jobs[r])
					continue;
				if (!any && !st->noheader)
					printf("\nGuidance that fired, share of each group's jobs "
					       "and core-hours:\n%-*s %-20s %8s %6s %10s %7s\n",
					       w, st->by == BY_NONE ? "GROUP" : by_names[st->by],
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

/* v with fmt, or "-" when not known (no digest, memory not measured). */
static const char *cell(char *buf, size_t len, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
	return buf;
}

/* Requested against used: core-hours, efficiency, waste, memory. */
static void table_usage(const struct stats *st, struct group **gs, size_t n)
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
		       st->by == BY_NONE ? "GROUP" : by_names[st->by], "REQ-CORE-H", "USED-CORE-H",
		       "EFF%", "WASTE-CORE-H", "MEM-REQ-GB", "MEM-PEAK-GB");
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

static int cmp_core_h(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;

	if (x->core_h != y->core_h)
		return x->core_h > y->core_h ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct group *const *)a)->name, (*(struct group *const *)b)->name);
}

static void fired_list(uint64_t fired, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES && n < len; r++)
		if (fired & (1ull << r))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
			                      lwm2_guidance_rules[r].id);
}

static int cmp_top(const void *a, const void *b)
{
	const struct topjob *x = a, *y = b;

	return top_less(y, x) ? -1 : top_less(x, y) ? 1 : 0;
}

static void print_top(struct stats *st)
{
	const char *vh =
	    st->sort == S_METRIC ? lwm2_metric_ids[st->sort_metric] : sort_keys[st->sort].name;
	char end[32], rules[1024], b[64];

	qsort(st->heap, st->nheap, sizeof(*st->heap), cmp_top);
	if (st->out == OUT_JSON) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		ju_add(o, "sort", json_object_new_string(vh));
		for (size_t i = 0; i < st->nheap; i++) {
			const struct topjob *t = &st->heap[i];
			json_object *x = json_object_new_object(), *fr = json_object_new_array();

			ju_add(x, "job", json_object_new_string(t->id));
			ju_add(x, "job_id", json_object_new_int64(t->job_id));
			ju_add(x, "user", json_object_new_string(t->user));
			ju_add(x, "account", json_object_new_string(t->account));
			ju_add(x, "partition", json_object_new_string(t->partition));
			ju_add(x, "end", json_object_new_int64(t->end));
			ju_add(x, "core_hours", ju_double(t->core_h));
			ju_add(x, "value", ju_double(t->value));
			for (size_t r = 0; r < lwm2_nguidance_rules && r < MAX_RULES; r++)
				if (t->fired & (1ull << r))
					json_object_array_add(
					    fr, json_object_new_string(lwm2_guidance_rules[r].id));
			ju_add(x, "guidance", fr);
			json_object_array_add(a, x);
		}
		ju_add(o, "top", a);
		ju_add(o, "jobs", ju_u64(st->selected));
		ju_add(o, "skipped_lines", ju_u64(st->count.bad));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		return;
	}
	if (!st->noheader) {
		if (st->out == OUT_TABLE)
			printf("%-14s %-10s %-10s %-10s %-19s %10s %12s  %s\n", "JOBID", "USER",
			       "ACCOUNT", "PARTITION", "END", "CORE-H",
			       st->sort == S_METRIC ? vh : sort_keys[st->sort].head, "GUIDANCE");
		else {
			const char *h[] = {"job", "user",       "account", "partition",
			                   "end", "core_hours", vh,        "guidance"};

			for (size_t i = 0; i < 8; i++)
				put_cell(st, i, h[i]);
			putchar('\n');
		}
	}
	for (size_t i = 0; i < st->nheap; i++) {
		const struct topjob *t = &st->heap[i];
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
	struct group **gs = calloc(st->ngroups + 1, sizeof(*gs));
	size_t n = 0;

	if (!gs) {
		fprintf(stderr, "lwm2: stats: couldn't print the groups: %s\n", strerror(ENOMEM));
		return;
	}
	for (size_t b = 0; st->table && b < st->nbuckets; b++)
		for (struct group *g = st->table[b]; g; g = g->next)
			gs[n++] = g;
	qsort(gs, n, sizeof(*gs), st->by == BY_MONTH ? cmp_name : cmp_core_h);
	st->total.name = (char *)(st->by == BY_NONE ? "all" : "(all)");
	if (st->out == OUT_JSON) {
		json_object *o = json_object_new_object(), *a = json_object_new_array();

		ju_add(o, "by", json_object_new_string(st->by == BY_NONE ? "" : by_names[st->by]));
		for (size_t i = 0; i < n; i++)
			json_object_array_add(a, group_json(gs[i]));
		ju_add(o, "groups", a);
		ju_add(o, "total", group_json(&st->total));
		ju_add(o, "lines", ju_u64(st->count.lines));
		ju_add(o, "skipped_lines", ju_u64(st->count.bad));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else if (st->out == OUT_TABLE) {
		gs[n] = &st->total;
		table_groups(st, gs, st->by == BY_NONE ? 1 : n);
		if (st->by != BY_NONE && !st->noheader) {
			printf("\n");
			table_groups(st, gs + n, 1);
		}
		table_usage(st, gs, st->by == BY_NONE ? 1 : n + 1);
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
		group_row(st, &st->total);
	}
	st->total.name = NULL;
	free(gs);
}

/* ------------------------------------------------------------ main */

enum { OPT_CSV = LWM2_OPT_LONG, OPT_JSON, OPT_TOP, OPT_SORT };

static const struct lwm2_optspec stats_spec = {
    .cmd = "stats",
    .usage = "Usage: lwm2 stats --file LOG [--file LOG...] [OPTIONS]\n"
             "Site-wide statistics over the digests of jobcomp/lwm2's JSON-lines log.\n\n",
    .footer = "TIME: now, now-N[s|m|h|d], YYYY-MM-DD[THH:MM[:SS]], @EPOCH, or as sacct\n"
              "      takes it (MM/DD[/YY], HH:MM, today, now-3days, ...).\n"
              "Exit status: 0, 1 when a log could not be read, 2 usage.\n",
    .col = 31,
    .opts = (const struct lwm2_opt[]){
        {NULL, 0, NULL, "Input and selection:"},
        {"file", 'f', "LOG", "a log to read (several allowed; - is stdin)"},
        {"user", 'u', "USER[,...]", "jobs of these users (names or uids)"},
        {"account", 'A', "ACCOUNT[,...]", "jobs charged to these accounts"},
        {"partition", 'r', "PART[,...]", "jobs of these partitions"},
        {"state", 's', "STATE[,...]", "jobs that ended in these states (COMPLETED, ...)"},
        {"starttime", 'S', "TIME", "jobs that ended at or after TIME"},
        {"endtime", 'E', "TIME", "jobs that ended at or before TIME"},
        {NULL, 0, NULL, "Grouping:"},
        {"by", 'b', "KEY",
         "user, account, partition, executable, month or\n"
         "node (default: all jobs as one group); app:\n"
         "the digest's application, with its users;\n"
         "image: the job's main container image\n"
         "(every group: requested, used and wasted\n"
         "core-hours, memory requested and peak)"},
        {"top", OPT_TOP, "N", "the N jobs that lose the most, instead of groups"},
        {"sort", OPT_SORT, "KEY",
         "for --top: mpi (core-hours in MPI, default), io,\n"
         "idle (core-hours of idle allocated cores),\n"
         "core_hours, cpi, lwm2_cost (lwm2's own seconds),\n"
         "lwm2_share (its % of the job's CPU time), or a metric id"},
        {NULL, 0, NULL, "Output (default: a table):"},
        {"parsable2", 'p', NULL, "fields separated by '|'"},
        {"csv", OPT_CSV, NULL, "comma-separated values"},
        {"json", OPT_JSON, NULL, "one JSON object"},
        {"noheader", 'n', NULL, "no header line"},
        {0},
    }};

/* The command line as read. */
struct stats_cli {
	struct stats *st;
	char **files;
	size_t nfiles;
	int nout;
	const char *sort;
};

static int stats_opt_by(struct stats *st, const char *arg)
{
	size_t i;

	for (i = 1; i < sizeof(by_names) / sizeof(by_names[0]); i++)
		if (!strcmp(arg, by_names[i]))
			break;
	if (i == sizeof(by_names) / sizeof(by_names[0])) {
		fprintf(stderr,
		        "lwm2: stats: couldn't group by \"%s\": want user, account, "
		        "partition, executable, app, image, month or node\n",
		        arg);
		return LWM2_OPT_USAGE;
	}
	st->by = (enum by)i;
	return 0;
}

static int stats_opt(void *ctx, int key, char *arg)
{
	struct stats_cli *cli = ctx;
	struct stats *st = cli->st;
	uint64_t v;
	int r = 0;

	switch (key) {
	case 'f':
		r = lwm2_cmd_push_arg(&cli->files, &cli->nfiles, arg);
		break;
	case 'u':
		r = lwm2_split_list(arg, &st->users, &st->nusers);
		break;
	case 'A':
		r = lwm2_split_list(arg, &st->accounts, &st->naccounts);
		break;
	case 'r':
		r = lwm2_split_list(arg, &st->partitions, &st->npartitions);
		break;
	case 's':
		r = lwm2_split_list(arg, &st->states, &st->nstates);
		break;
	case 'S':
	case 'E':
		r = lwm2_cmd_time_opt("stats", arg, key == 'S' ? &st->start : &st->end);
		break;
	case 'b':
		return stats_opt_by(st, arg);
	case OPT_TOP:
		if (lwm2_parse_u64(arg, NULL, 1, 1000000, &v) < 0) {
			fprintf(stderr,
			        "lwm2: stats: couldn't parse --top \"%s\": want 1 to 1000000\n",
			        arg);
			return LWM2_OPT_USAGE;
		}
		st->top = (size_t)v;
		break;
	case OPT_SORT:
		cli->sort = arg;
		break;
	case 'n':
		st->noheader = true;
		break;
	default: /* -p, --csv, --json */
		st->out = key == 'p' ? OUT_PARSABLE : key == OPT_CSV ? OUT_CSV : OUT_JSON;
		cli->nout++;
		break;
	}
	return r < 0 ? LWM2_OPT_USAGE : 0;
}

int lwm2_cmd_stats(int argc, char **argv)
{
	struct stats st;
	struct stats_cli cli = {.st = &st};
	char **files;
	size_t nfiles;
	int c, rc = 0, nout;
	const char *sort;

	memset(&st, 0, sizeof(st));
	st.sort = S_MPI;
	c = lwm2_opt_parse(&stats_spec, argc, argv, stats_opt, &cli);
	files = cli.files;
	nfiles = cli.nfiles;
	nout = cli.nout;
	sort = cli.sort;
	if (c == LWM2_OPT_EXIT)
		goto done;
	if (c < 0 || lwm2_opt_no_operand(&stats_spec, argc, argv, c) < 0)
		goto usage_err;
	if (nout > 1) {
		fprintf(stderr, "lwm2: stats: --json, --csv and -p exclude each other\n");
		goto usage_err;
	}
	if (!nfiles) {
		fprintf(stderr, "lwm2: stats: couldn't read digests: no --file LOG given "
		                "(jobcomp/lwm2's JSON-lines log)\n");
		goto usage_err;
	}
	if (sort) {
		size_t i;

		if (!st.top) {
			fprintf(stderr,
			        "lwm2: stats: --sort orders the --top list; give --top N\n");
			goto usage_err;
		}
		for (i = 0; i < S_METRIC; i++)
			if (!strcmp(sort, sort_keys[i].name))
				break;
		st.sort = (enum sort_kind)i;
		if (i == S_METRIC && (st.sort_metric = lwm2_metric_index(sort)) < 0) {
			fprintf(stderr,
			        "lwm2: stats: couldn't sort by \"%s\": want mpi, io, idle, "
			        "core_hours, cpi, lwm2_cost, lwm2_share or a metric id\n",
			        sort);
			goto usage_err;
		}
	}
	if (st.top && st.by != BY_NONE) {
		fprintf(stderr, "lwm2: stats: --top lists jobs, --by groups them: give one\n");
		goto usage_err;
	}
	if (st.top && !(st.heap = calloc(st.top, sizeof(*st.heap)))) {
		fprintf(stderr, "lwm2: stats: couldn't keep %zu jobs: %s\n", st.top,
		        strerror(ENOMEM));
		rc = 1;
		goto done;
	}
	if (lwm2_logscan_files("stats", files, nfiles, on_line, &st, &st.count) < 0)
		rc = 1;
	if (st.top)
		print_top(&st);
	else
		print_groups(&st);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "lwm2: stats: couldn't write the output: %s\n", strerror(errno));
		rc = 1;
	}
	goto done;
usage_err:
	if (!rc)
		lwm2_opt_usage(&stats_spec, stderr);
	rc = 2;
done:
	for (size_t b = 0; st.table && b < st.nbuckets; b++)
		for (struct group *g = st.table[b], *nx; g; g = nx) {
			nx = g->next;
			group_free(g);
			free(g);
		}
	free(st.table);
	group_free(&st.total);
	free(st.heap);
	free(files);
	free_list(st.users, st.nusers);
	free_list(st.accounts, st.naccounts);
	free_list(st.partitions, st.npartitions);
	free_list(st.states, st.nstates);
	return rc;
}
