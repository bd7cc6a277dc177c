/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sick-node rule (see grid.h; documented in lwm2(1), "INTERFERENCE AND
 * SICK NODES"): over the multi-node jobs of a period, the nodes that held
 * the slowest rank of their job more often than chance allows, or whose
 * compute time was well above their jobs' median node's.
 */
#include "grid_internal.h"
#include "grow.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

const struct lwm2_nodes_params lwm2_nodes_defaults = {
    .min_slowest = 3,
    .min_share = 0.5,
    .max_p = 0.01,
    .iqr_k = 1.5,
    .min_excess = 1.1,
    .wait_gap = 10.0,
    .slow_ratio = 1.5,
    .ratio_jobs = 3,
};

/* A node in one job. */
struct nev {
	int64_t job;
	int rank;
	const char *how; /* static */
	double ratio;
	bool slowest;
};

/* A node over the period. */
struct nstat {
	char *name;
	size_t jobs, slowest;
	double expected;
	double *pj; /* chance per job of holding the slowest rank */
	double *ratios;
	struct nev *ev;
	size_t cap;
	char apps[256];
};

struct lwm2_nodes {
	struct lwm2_nodes_params p;
	struct nstat *n;
	size_t nn, capn;
	size_t jobs; /* multi-node jobs seen */
};

struct lwm2_nodes *lwm2_nodes_new(const struct lwm2_nodes_params *p)
{
	struct lwm2_nodes *ns = calloc(1, sizeof(*ns));

	if (ns)
		ns->p = p ? *p : lwm2_nodes_defaults;
	return ns;
}

void lwm2_nodes_free(struct lwm2_nodes *ns)
{
	if (!ns)
		return;
	for (size_t i = 0; i < ns->nn; i++) {
		free(ns->n[i].name);
		free(ns->n[i].pj);
		free(ns->n[i].ratios);
		free(ns->n[i].ev);
	}
	free(ns->n);
	free(ns);
}

static struct nstat *nstat_of(struct lwm2_nodes *ns, const char *name)
{
	for (size_t i = 0; i < ns->nn; i++)
		if (!strcmp(ns->n[i].name, name))
			return &ns->n[i];
	if (LWM2_GROW(ns->n, ns->nn, ns->capn, 64) < 0)
		return NULL;
	memset(&ns->n[ns->nn], 0, sizeof(ns->n[ns->nn]));
	if (!(ns->n[ns->nn].name = strdup(name)))
		return NULL;
	return &ns->n[ns->nn++];
}

static int nstat_push(struct nstat *st, double pj, const struct nev *e)
{
	if (st->jobs == st->cap) {
		size_t nc = st->cap ? 2 * st->cap : 16;
		double *a = realloc(st->pj, nc * sizeof(*a));
		if (!a)
			return -1;
		st->pj = a;
		if (!(a = realloc(st->ratios, nc * sizeof(*a))))
			return -1;
		st->ratios = a;
		struct nev *ev = realloc(st->ev, nc * sizeof(*ev));
		if (!ev)
			return -1;
		st->ev = ev;
		st->cap = nc;
	}
	st->pj[st->jobs] = pj;
	st->ratios[st->jobs] = e->ratio;
	st->ev[st->jobs] = *e;
	st->jobs++;
	st->expected += pj;
	if (e->slowest)
		st->slowest++;
	return 0;
}

static int col_of(json_object *cols, const char *name)
{
	for (size_t i = 0; cols && i < grid_alen(cols); i++)
		if (json_object_get_string(grid_aget(cols, i)) &&
		    !strcmp(json_object_get_string(grid_aget(cols, i)), name))
			return (int)i;
	return -1;
}

static double cell_num(json_object *row, int col)
{
	json_object *v = col >= 0 ? grid_aget(row, (size_t)col) : NULL;

	return v ? json_object_get_double(v) : NAN;
}

/* The step with the most processes on two or more nodes: the main run (the
 * batch step has one node).  Its processes, 0 when there is none, -1 when
 * out of memory. */
static long main_step(json_object *rows, size_t nnames, int64_t *step)
{
	size_t nr = rows ? grid_alen(rows) : 0, nsteps = 0, best = 0;
	int64_t steps[64];

	for (size_t r = 0; r < nr; r++) {
		int64_t st = json_object_get_int64(grid_aget(grid_aget(rows, r), 0));
		size_t i;
		for (i = 0; i < nsteps && steps[i] != st; i++)
			;
		if (i == nsteps && nsteps < 64)
			steps[nsteps++] = st;
	}
	for (size_t i = 0; i < nsteps; i++) {
		size_t cnt = 0, nodes = 0;
		unsigned char *seen = calloc(nnames ? nnames : 1, 1);
		if (!seen)
			return -1;
		for (size_t r = 0; r < nr; r++) {
			json_object *rw = grid_aget(rows, r);
			int64_t ni = json_object_get_int64(grid_aget(rw, 1));
			if (json_object_get_int64(grid_aget(rw, 0)) != steps[i])
				continue;
			cnt++;
			if (ni >= 0 && (size_t)ni < nnames && !seen[ni]++)
				nodes++;
		}
		free(seen);
		if (nodes >= 2 && cnt > best) {
			best = cnt;
			*step = steps[i];
		}
	}
	return (long)best;
}

/* One process of the main step. */
struct proc {
	int node, rank;
	double comp, mpi;
};

/* One multi-node job under study. */
struct njob {
	json_object *rows, *names;
	size_t nnames;
	int cdur, cmpi, cio, ccuda; /* columns of the ranks table */
	int64_t step;               /* the main step */
	struct proc *pr;            /* its processes */
	size_t np;
	double *v;               /* scratch, one per process */
	double *nodec, *nodecnt; /* compute time and processes per node */
	int hold, hrank;         /* the node with the slowest rank, and the rank */
	const char *how;
};

/* The processes of the main step, their compute time (what is not MPI, I/O
 * or CUDA) and MPI share, and the compute time per node. */
static void gather_procs(struct njob *nj, size_t best)
{
	size_t nr = grid_alen(nj->rows);

	for (size_t r = 0; r < nr && nj->np < best; r++) {
		json_object *rw = grid_aget(nj->rows, r);
		int64_t ni = json_object_get_int64(grid_aget(rw, 1));
		double dur = cell_num(rw, nj->cdur), share = 0, m = cell_num(rw, nj->cmpi);
		struct proc *pr = &nj->pr[nj->np];
		if (json_object_get_int64(grid_aget(rw, 0)) != nj->step || ni < 0 ||
		    (size_t)ni >= nj->nnames || !isfinite(dur))
			continue;
		if (isfinite(m))
			share += m;
		if (isfinite(cell_num(rw, nj->cio)))
			share += cell_num(rw, nj->cio);
		if (isfinite(cell_num(rw, nj->ccuda)))
			share += cell_num(rw, nj->ccuda);
		pr->node = (int)ni;
		pr->rank = (int)json_object_get_int64(grid_aget(rw, 2));
		pr->comp = dur * fmax(0, 1 - share / 100);
		pr->mpi = m;
		nj->nodec[ni] += pr->comp;
		nj->nodecnt[ni]++;
		nj->np++;
	}
}

/* Which node held the slowest rank, if one stands out: a compute-time
 * outlier, else the rank with the lowest MPI share (the others waited for
 * it). */
static void find_holder(struct njob *nj, const struct lwm2_nodes_params *p)
{
	const struct proc *pr = nj->pr;
	size_t imax = 0, imin = SIZE_MAX, nm = 0, np = nj->np;
	double *v = nj->v, mmed = NAN;

	nj->hold = nj->hrank = -1;
	for (size_t i = 0; i < np; i++) {
		v[i] = pr[i].comp;
		if (pr[i].comp > pr[imax].comp)
			imax = i;
	}
	qsort(v, np, sizeof(*v), grid_cmp_double);
	if (np >= 3) {
		double med = grid_quantile(v, np, 0.5), q1 = grid_quantile(v, np, 0.25),
		       q3 = grid_quantile(v, np, 0.75);
		if (pr[imax].comp > q3 + p->iqr_k * (q3 - q1) &&
		    pr[imax].comp >= p->min_excess * med) {
			nj->hold = pr[imax].node;
			nj->hrank = pr[imax].rank;
			nj->how = "compute-time outlier";
		}
	}
	for (size_t i = 0; i < np; i++)
		if (isfinite(pr[i].mpi)) {
			v[nm++] = pr[i].mpi;
			if (imin == SIZE_MAX || pr[i].mpi < pr[imin].mpi)
				imin = i;
		}
	if (nm >= 2)
		mmed = grid_median(v, nm);
	if (nj->hold < 0 && nm >= 2 && mmed - pr[imin].mpi >= p->wait_gap) {
		nj->hold = pr[imin].node;
		nj->hrank = pr[imin].rank;
		nj->how = "lowest MPI share (the others waited)";
	}
}

/* The job into each of its nodes' counts: each node's mean compute time
 * against the median node's, and which held the slowest rank.  -1: out of
 * memory. */
static int count_nodes(struct lwm2_nodes *ns, struct njob *nj, int64_t jid, const char *app)
{
	size_t nodes = 0;
	double nmed;

	for (size_t i = 0; i < nj->nnames; i++)
		if (nj->nodecnt[i] > 0)
			nj->v[nodes++] = nj->nodec[i] / nj->nodecnt[i];
	nmed = grid_median(nj->v, nodes);
	ns->jobs++;
	for (size_t i = 0; i < nj->nnames; i++) {
		struct nev e = {.job = jid, .rank = -1};
		struct nstat *st;
		const char *name = json_object_get_string(grid_aget(nj->names, i));
		if (nj->nodecnt[i] <= 0 || !name)
			continue;
		if (!(st = nstat_of(ns, name)))
			return -1;
		e.ratio = nmed > 0 ? nj->nodec[i] / nj->nodecnt[i] / nmed : 1;
		if ((int)i == nj->hold) {
			e.slowest = true;
			e.rank = nj->hrank;
			e.how = nj->how;
		}
		if (nstat_push(st, 1.0 / (double)nodes, &e) != 0)
			return -1;
		if (app && !strstr(st->apps, app) &&
		    strlen(st->apps) + strlen(app) + 2 < sizeof(st->apps)) {
			if (st->apps[0])
				strcat(st->apps, ",");
			strcat(st->apps, app);
		}
	}
	return 0;
}

int lwm2_nodes_add(struct lwm2_nodes *ns, json_object *digest)
{
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *cols = ju_get(ranks, LWM2_KEY_COLS, json_type_array);
	json_object *ex = ju_get(ju_get(digest, LWM2_KEY_SCOPE, json_type_object),
	                         LWM2_KEY_EXECUTABLES, json_type_object);
	json_object *bycpu = ju_get(ex, LWM2_KEY_BY_CPU, json_type_array);
	const char *app =
	    bycpu && grid_alen(bycpu) ? ju_str(grid_aget(bycpu, 0), LWM2_KEY_EXE) : NULL;
	int64_t jid = ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	struct njob nj = {.rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array),
	                  .names = ju_get(ranks, LWM2_KEY_NODES, json_type_array),
	                  .cdur = col_of(cols, "duration"),
	                  .cmpi = col_of(cols, "mpi_time"),
	                  .cio = col_of(cols, "posix_io_time"),
	                  .ccuda = col_of(cols, "cuda_time")};
	long best;
	int rc = -1;

	if (!nj.rows || !nj.names || nj.cdur < 0)
		return 0;
	nj.nnames = grid_alen(nj.names);
	if ((best = main_step(nj.rows, nj.nnames, &nj.step)) <= 0)
		return (int)best;
	if (!(nj.pr = calloc((size_t)best, sizeof(*nj.pr))) ||
	    !(nj.v = calloc((size_t)best, sizeof(*nj.v))) ||
	    !(nj.nodec = calloc(nj.nnames, sizeof(*nj.nodec))) ||
	    !(nj.nodecnt = calloc(nj.nnames, sizeof(*nj.nodecnt))))
		goto out;
	gather_procs(&nj, (size_t)best);
	find_holder(&nj, &ns->p);
	rc = count_nodes(ns, &nj, jid, app);
out:
	free(nj.pr);
	free(nj.v);
	free(nj.nodec);
	free(nj.nodecnt);
	if (rc)
		errno = ENOMEM;
	return rc;
}

struct verdict {
	const struct nstat *st;
	double p, ratio;
	size_t ratio_jobs;
	bool out;
};

static int cmp_verdict(const void *a, const void *b)
{
	const struct verdict *x = a, *y = b;

	if (x->out != y->out)
		return x->out ? -1 : 1;
	return strcmp(x->st->name, y->st->name);
}

/* The verdict on each node.  -1: out of memory. */
static int judge_nodes(const struct lwm2_nodes *ns, struct verdict *vd)
{
	double *tmp = NULL;

	for (size_t i = 0; i < ns->nn; i++) {
		const struct nstat *st = &ns->n[i];
		size_t nr = 0;
		vd[i].st = st;
		vd[i].p = grid_tail(st->pj, st->jobs, st->slowest);
		free(tmp);
		if (!(tmp = malloc((st->jobs ? st->jobs : 1) * sizeof(*tmp))))
			return -1;
		for (size_t j = 0; j < st->jobs; j++)
			if (isfinite(st->ratios[j]))
				tmp[nr++] = st->ratios[j];
		vd[i].ratio = nr ? grid_median(tmp, nr) : NAN;
		vd[i].ratio_jobs = nr;
		vd[i].out = (st->slowest >= ns->p.min_slowest &&
		             (double)st->slowest >= ns->p.min_share * (double)st->jobs &&
		             vd[i].p < ns->p.max_p) ||
		            (nr >= ns->p.ratio_jobs && vd[i].ratio >= ns->p.slow_ratio);
	}
	free(tmp);
	qsort(vd, ns->nn, sizeof(*vd), cmp_verdict);
	return 0;
}

/* A node's entry of the result.  NULL when out of memory. */
static json_object *node_entry(const struct verdict *vd)
{
	const struct nstat *st = vd->st;
	double ratio = isfinite(vd->ratio) ? vd->ratio : 0;
	json_object *e, *ev;
	char why[512];

	if (!(e = json_object_new_object()) || !(ev = json_object_new_array())) {
		json_object_put(e);
		return NULL;
	}
	ju_add(e, "node", json_object_new_string(st->name));
	ju_add(e, "jobs", json_object_new_int64((int64_t)st->jobs));
	ju_add(e, "slowest", json_object_new_int64((int64_t)st->slowest));
	ju_add(e, "expected", ju_double(st->expected));
	ju_add(e, "p", ju_double(vd->p));
	ju_add(e, "ratio", ju_double(ratio));
	ju_add(e, "ratio_jobs", json_object_new_int64((int64_t)vd->ratio_jobs));
	ju_add(e, "apps", json_object_new_string(st->apps));
	ju_add(e, "stands_out", json_object_new_boolean(vd->out));
	grid_nodes_why(why, sizeof(why), st->name, st->slowest, st->jobs, st->expected, vd->p,
	               ratio, vd->ratio_jobs);
	ju_add(e, "why", json_object_new_string(why));
	ju_add(e, "evidence", ev);
	for (size_t j = 0; j < st->jobs; j++) {
		json_object *x = json_object_new_object();
		if (!x) {
			json_object_put(e);
			return NULL;
		}
		ju_add(x, "job", json_object_new_int64(st->ev[j].job));
		ju_add(x, "slowest", json_object_new_boolean(st->ev[j].slowest));
		if (st->ev[j].slowest) {
			ju_add(x, "rank", json_object_new_int(st->ev[j].rank));
			ju_add(x, "how", json_object_new_string(st->ev[j].how));
		}
		ju_add(x, "ratio", ju_double(st->ev[j].ratio));
		json_object_array_add(ev, x);
	}
	return e;
}

json_object *lwm2_nodes_result(const struct lwm2_nodes *ns, bool all)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct verdict *vd = calloc(ns->nn ? ns->nn : 1, sizeof(*vd));

	if (!o || !arr || !vd || judge_nodes(ns, vd) != 0)
		goto nomem;
	for (size_t i = 0; i < ns->nn; i++) {
		json_object *e;

		if (!all && !vd[i].out)
			continue;
		if (!(e = node_entry(&vd[i])))
			goto nomem;
		json_object_array_add(arr, e);
	}
	ju_add(o, "jobs", json_object_new_int64((int64_t)ns->jobs));
	ju_add(o, "nodes", arr);
	free(vd);
	return o;
nomem:
	free(vd);
	json_object_put(o);
	json_object_put(arr);
	errno = ENOMEM;
	return NULL;
}
