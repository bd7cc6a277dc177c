/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The grid index (see grid.h): the time slices of many jobs, one cell per
 * (job step, node, slice) with I/O or MPI, and how a digest's "grid" enters
 * it within the index's bounds.
 */
#include "grid_internal.h"
#include "grow.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

/* Latest slice start taken (9999-12-31), far from overflow with any k. */
#define SLICE_T_MAX 253402300799LL

void lwm2_grid_free(struct lwm2_grid *g)
{
	for (size_t i = 0; i < g->nnodes; i++)
		free(g->nodes[i]);
	free(g->nodes);
	free(g->jobs);
	free(g->cells);
	g->nodes = NULL;
	g->jobs = NULL;
	g->cells = NULL;
	g->nnodes = g->capnodes = g->njobs = g->capjobs = g->ncells = g->capcells = 0;
}

static long node_intern(struct lwm2_grid *g, const char *name)
{
	char *c;

	/* names come together per job and the last ones repeat: look from
	 * the end; a cluster's node count bounds the table */
	for (size_t i = g->nnodes; i-- > 0;)
		if (!strcmp(g->nodes[i], name))
			return (long)i;
	if (LWM2_GROW(g->nodes, g->nnodes, g->capnodes, 64) < 0)
		return -1;
	if (!(c = strdup(name)))
		return -1;
	g->nodes[g->nnodes] = c;
	return (long)g->nnodes++;
}

long lwm2_grid_find(const struct lwm2_grid *g, int64_t job_id)
{
	for (size_t i = g->njobs; i-- > 0;)
		if (g->jobs[i].id == job_id)
			return (long)i;
	return -1;
}

/* Remove jobs [0, k) and job x (x >= k or SIZE_MAX) from the index. */
static void drop_jobs(struct lwm2_grid *g, size_t k, size_t x)
{
	size_t w = 0, cw = 0;

	for (size_t j = 0; j < g->njobs; j++) {
		struct lwm2_gjob jb = g->jobs[j];
		if (j < k || j == x)
			continue;
		/* A job without cells may come with no cell array at all. */
		if (jb.n)
			memmove(&g->cells[cw], &g->cells[jb.first], jb.n * sizeof(*g->cells));
		for (size_t c = 0; c < jb.n; c++)
			g->cells[cw + c].job = (uint32_t)w;
		jb.first = cw;
		cw += jb.n;
		g->jobs[w++] = jb;
	}
	g->njobs = w;
	g->ncells = cw;
}

/* The counters a cell is made of, looked up once per node series. */
enum {
	A_WB,
	A_WNS,
	A_SYNC,
	A_RB,
	A_RNS,
	A_P2PS,
	A_P2PR,
	A_COLLS,
	A_COLLR,
	A_P2PNS,
	A_COLLNS,
	A_IORNS,
	A_IOWNS,
	A_IOMNS,
	A_OTHNS,
	NA
};
static const char *const a_key[NA] = {
    "posix_write_bytes",   "posix_write_ns",     "posix_sync_ns",      "posix_read_bytes",
    "posix_read_ns",       "mpi_p2p_bytes_sent", "mpi_p2p_bytes_recv", "mpi_coll_bytes_sent",
    "mpi_coll_bytes_recv", "mpi_p2p_ns",         "mpi_coll_ns",        "mpiio_read_ns",
    "mpiio_write_ns",      "mpiio_meta_ns",      "mpi_other_ns"};

static double arr_at(json_object *a, int64_t k)
{
	json_object *v;

	if (!a || k < 0 || (size_t)k >= grid_alen(a))
		return 0;
	v = grid_aget(a, (size_t)k);
	return v ? json_object_get_double(v) : 0;
}

/* Processes per (step, node) of the ranks table, counted once per digest. */
struct pcount {
	int64_t step;
	int64_t node;
	double n;
};

static struct pcount *procs_table(json_object *ranks, size_t *np)
{
	json_object *rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
	size_t nr = rows ? grid_alen(rows) : 0, n = 0;
	struct pcount *t = calloc(nr ? nr : 1, sizeof(*t));

	*np = 0;
	if (!t)
		return NULL;
	for (size_t r = 0; r < nr; r++) {
		json_object *rw = grid_aget(rows, r);
		int64_t st = json_object_get_int64(grid_aget(rw, 0));
		int64_t ni = json_object_get_int64(grid_aget(rw, 1));
		size_t i;
		/* rows of one step and node come together: look at the last */
		for (i = n; i-- > 0;)
			if (t[i].step == st && t[i].node == ni)
				break;
		if (i == SIZE_MAX) {
			t[n].step = st;
			t[n].node = ni;
			i = n++;
		}
		t[i].n++;
	}
	*np = n;
	return t;
}

static double procs_of(json_object *ranks, const struct pcount *t, size_t np, int64_t step,
                       const char *node)
{
	json_object *names = ju_get(ranks, LWM2_KEY_NODES, json_type_array);
	size_t nn = names ? grid_alen(names) : 0;
	int64_t ni = -1;

	for (size_t i = 0; i < nn && ni < 0; i++) {
		const char *s = json_object_get_string(grid_aget(names, i));
		if (s && !strcmp(s, node))
			ni = (int64_t)i;
	}
	for (size_t i = 0; i < np && ni >= 0; i++)
		if (t[i].step == step && t[i].node == ni)
			return t[i].n;
	return 0;
}

static int cmp_cell_t(const void *a, const void *b)
{
	const struct lwm2_gcell *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* A series of a digest's grid (one step on one node): slice starts must
 * stay epoch seconds, with no overflow of (first + k) * L. */
static bool series_ok(int64_t first, int64_t ns, int64_t L)
{
	return L > 0 && L <= 86400 && ns > 0 && ns <= 1 << 20 && first >= 0 &&
	       first <= SLICE_T_MAX / L;
}

/* A digest on its way into the index. */
struct adding {
	struct lwm2_grid *g;
	json_object *ranks;
	struct pcount *pt; /* processes per step and node, NULL without ranks */
	size_t npt;
	size_t base, cnt;   /* its cells: from base, cnt of them */
	int64_t dense;      /* summed over its nodes: the first slice ... */
	size_t dense_slots; /* ... and how many (0: cells per node) */
};

/* Room for one more job, once the job itself (added again) and the jobs
 * past the age bound are gone. */
static int job_room(struct lwm2_grid *g, const struct lwm2_gjob *jb)
{
	long old;

	if ((old = lwm2_grid_find(g, jb->id)) >= 0)
		drop_jobs(g, 0, (size_t)old);
	/* age bound: jobs that ended keep_s before this one */
	if (g->keep_s > 0) {
		size_t k = 0;
		while (k < g->njobs && g->jobs[k].end + g->keep_s < jb->end)
			k++;
		if (k)
			drop_jobs(g, k, SIZE_MAX);
	}
	return LWM2_GROW(g->jobs, g->njobs, g->capjobs, 64);
}

/* A job larger than half the bound is kept summed over its nodes; with one
 * slice length (the usual case) straight into one cell per slice, without
 * holding its cells first: those cells, zeroed.  -1: out of memory. */
static int dense_plan(struct adding *ad, json_object *grid, size_t n)
{
	struct lwm2_grid *g = ad->g;
	int64_t total = 0, L0 = 0, lo = INT64_MAX, hi = INT64_MIN;
	bool one = true;
	size_t slots, need;

	for (size_t i = 0; i < n; i++) {
		json_object *e = grid_aget(grid, i);
		int64_t f = ju_int_or(e, LWM2_KEY_FIRST_SLICE, 0), ns = ju_int_or(e, LWM2_KEY_N, 0);
		int64_t L = ju_int_or(e, LWM2_KEY_SLICE_LENGTH_S, 0);
		if (!series_ok(f, ns, L))
			continue;
		total += ns;
		one &= !L0 || L == L0;
		L0 = L;
		lo = f < lo ? f : lo;
		hi = f + ns > hi ? f + ns : hi;
	}
	if (!g->max_cells || (uint64_t)total <= g->max_cells / 2 || !one || hi - lo > 1 << 20)
		return 0;
	slots = (size_t)(hi - lo);
	need = ad->base + slots;
	if (need > g->capcells) {
		struct lwm2_gcell *ncl = realloc(g->cells, need * sizeof(*ncl));
		if (!ncl)
			return -1;
		g->cells = ncl;
		g->capcells = need;
	}
	memset(&g->cells[ad->base], 0, slots * sizeof(*g->cells));
	for (size_t k = 0; k < slots; k++) {
		struct lwm2_gcell *c = &g->cells[ad->base + k];
		c->t = (lo + (int64_t)k) * L0;
		c->len = (uint32_t)L0;
		c->node = LWM2_GRID_ALLNODES;
		c->job = (uint32_t)g->njobs;
	}
	ad->dense = lo;
	ad->dense_slots = slots;
	return 0;
}

/* The values of slice k of a series; false when it has no I/O and no MPI. */
static bool cell_values(struct lwm2_gcell *cell, json_object *const a[NA], int64_t k)
{
	float *v = cell->v;
	bool any = false;

	v[LWM2_GM_WBYTES] = (float)arr_at(a[A_WB], k);
	v[LWM2_GM_WNS] = (float)(arr_at(a[A_WNS], k) + arr_at(a[A_SYNC], k));
	v[LWM2_GM_RBYTES] = (float)arr_at(a[A_RB], k);
	v[LWM2_GM_RNS] = (float)arr_at(a[A_RNS], k);
	v[LWM2_GM_MBYTES] = (float)(arr_at(a[A_P2PS], k) + arr_at(a[A_P2PR], k) +
	                            arr_at(a[A_COLLS], k) + arr_at(a[A_COLLR], k));
	v[LWM2_GM_MNS] = (float)(arr_at(a[A_P2PNS], k) + arr_at(a[A_COLLNS], k));
	v[LWM2_GM_MALLNS] = (float)(v[LWM2_GM_MNS] + arr_at(a[A_IORNS], k) + arr_at(a[A_IOWNS], k) +
	                            arr_at(a[A_IOMNS], k) + arr_at(a[A_OTHNS], k));
	for (int m = 0; m < LWM2_GM_PROCS; m++)
		any |= v[m] > 0;
	return any;
}

/* A cell into the index: summed into its dense slot, or appended.  -1: out
 * of memory. */
static int put_cell(struct adding *ad, const struct lwm2_gcell *cell, int64_t slice)
{
	struct lwm2_grid *g = ad->g;

	if (ad->dense_slots) {
		struct lwm2_gcell *d = &g->cells[ad->base + (size_t)(slice - ad->dense)];
		for (int m = 0; m < LWM2_GM_N; m++)
			d->v[m] += cell->v[m];
		d->step = cell->step;
		return 0;
	}
	if (LWM2_GROW(g->cells, g->ncells, g->capcells, 4096) < 0)
		return -1;
	g->cells[g->ncells++] = *cell;
	ad->cnt++;
	return 0;
}

/* One entry of the digest's grid.  -1: out of memory. */
static int add_series(struct adding *ad, json_object *e)
{
	json_object *c = ju_get(e, LWM2_KEY_C, json_type_object);
	const char *nn = ju_str(e, LWM2_KEY_NODE);
	int64_t first = ju_int_or(e, LWM2_KEY_FIRST_SLICE, 0), ns = ju_int_or(e, LWM2_KEY_N, 0);
	int64_t L = ju_int_or(e, LWM2_KEY_SLICE_LENGTH_S, 0), step = ju_int_or(e, LWM2_KEY_STEP, 0);
	json_object *a[NA];
	double procs;
	long ni;

	if (!c || !nn || !series_ok(first, ns, L))
		return 0;
	if ((ni = node_intern(ad->g, nn)) < 0)
		return -1;
	procs = ad->pt ? procs_of(ad->ranks, ad->pt, ad->npt, step, nn) : 0;
	for (int k = 0; k < NA; k++)
		a[k] = ju_get(c, a_key[k], json_type_array);
	for (int64_t k = 0; k < ns; k++) {
		struct lwm2_gcell cell = {.t = (first + k) * L,
		                          .len = (uint32_t)L,
		                          .node = (uint32_t)ni,
		                          .job = (uint32_t)ad->g->njobs,
		                          .step = (uint32_t)step};

		if (!cell_values(&cell, a, k))
			continue;
		cell.v[LWM2_GM_PROCS] = (float)procs;
		if (put_cell(ad, &cell, first + k) != 0)
			return -1;
	}
	return 0;
}

/* The dense slots without I/O or MPI go. */
static void dense_squeeze(struct adding *ad)
{
	struct lwm2_grid *g = ad->g;
	size_t w = ad->base;

	for (size_t k = 0; k < ad->dense_slots; k++) {
		bool any = false;
		for (int m = 0; m < LWM2_GM_PROCS; m++)
			any |= g->cells[ad->base + k].v[m] > 0;
		if (any)
			g->cells[w++] = g->cells[ad->base + k];
	}
	ad->cnt = w - ad->base;
	g->ncells = w;
}

/* A job of more than half the bound in cells per node (several slice
 * lengths): its cells summed over its nodes. */
static void sum_over_nodes(struct adding *ad)
{
	struct lwm2_grid *g = ad->g;
	size_t base = ad->base, w = base;

	qsort(&g->cells[base], ad->cnt, sizeof(*g->cells), cmp_cell_t);
	for (size_t i = base; i < base + ad->cnt; i++) {
		struct lwm2_gcell *c = &g->cells[i];
		if (w > base && g->cells[w - 1].t == c->t && g->cells[w - 1].len == c->len) {
			for (int m = 0; m < LWM2_GM_N; m++)
				g->cells[w - 1].v[m] += c->v[m];
			continue;
		}
		g->cells[w] = *c;
		g->cells[w].node = LWM2_GRID_ALLNODES;
		w++;
	}
	ad->cnt = w - base;
	g->ncells = w;
}

int lwm2_grid_add(struct lwm2_grid *g, json_object *digest)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *grid = ju_get(digest, LWM2_KEY_GRID, json_type_array);
	struct adding ad = {.g = g, .ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object)};
	size_t n = grid ? grid_alen(grid) : 0;
	struct lwm2_gjob jb = {0};

	if (!job) {
		errno = EINVAL;
		return -1;
	}
	jb.id = ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	jb.start = ju_int_or(job, LWM2_KEY_START, 0);
	jb.end = ju_int_or(job, LWM2_KEY_END, 0);
	if (job_room(g, &jb) != 0)
		return -1;
	if (ad.ranks && !(ad.pt = procs_table(ad.ranks, &ad.npt)))
		return -1;
	ad.base = g->ncells;
	if (dense_plan(&ad, grid, n) != 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (add_series(&ad, grid_aget(grid, i)) != 0)
			goto nomem;
	if (ad.dense_slots)
		dense_squeeze(&ad);
	else if (g->max_cells && ad.cnt > g->max_cells / 2)
		sum_over_nodes(&ad);
	jb.first = ad.base;
	jb.n = ad.cnt;
	g->jobs[g->njobs++] = jb;
	/* size bound: the oldest jobs go, never the one just added */
	if (g->max_cells && g->ncells > g->max_cells) {
		size_t k = 0, drop = 0;
		while (k + 1 < g->njobs && g->ncells - drop > g->max_cells)
			drop += g->jobs[k++].n;
		drop_jobs(g, k, SIZE_MAX);
	}
	free(ad.pt);
	return 0;
nomem:
	free(ad.pt);
	g->ncells = ad.base;
	errno = ENOMEM;
	return -1;
}
