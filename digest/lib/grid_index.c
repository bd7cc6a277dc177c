/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The grid index and its rules (see grid.h; the rules are documented in
 * lwm2(1), "INTERFERENCE AND SICK NODES").
 *
 * Why robust statistics: a job's slices are few (tens to hundreds), its
 * own phases differ, and the nodes are shared with other work.  A median
 * and the median absolute deviation (MAD) of the job's own rates are not
 * moved by the slow slices they are meant to find, and a finding needs a
 * large fall (several times) well outside the job's own spread, several
 * slices of it, other jobs' volume in exactly those slices, and more of
 * it there than in the job's normal slices: a job that is merely noisy,
 * or that has a slow phase of its own while a neighbour streams all the
 * time, stays silent.
 */
#include "grid.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonutil.h"
#include "lwm2_digest.h"

/* Array access that takes any value: the log's digests are read back from
 * a file, and json-c asserts on an index into what is not an array. */
static size_t alen(json_object *a)
{
	return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

static json_object *aget(json_object *a, size_t i)
{
	return i < alen(a) ? json_object_array_get_idx(a, i) : NULL;
}

const struct lwm2_interf_params lwm2_interf_defaults = {
    .min_slices = 6,
    .min_slow = 2,
    .fall = 3.0,
    .mad_k = 3.0,
    .active_frac = 0.01,
    .min_slice_bytes = 65536,
    .min_other_bytes = 256e6,
    .contrast = 2.0,
    .share_jump = 20.0,
    .share_floor = 30.0,
};

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

const char *lwm2_fmt_bytes(double v, char *buf, size_t len)
{
	static const char *const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
	int i = 0;

	while (v >= 1000 && i < 5) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, "%.3g %s", v, u[i]);
	return buf;
}

/* ------------------------------------------------------------ index */

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
	if (g->nnodes == g->capnodes) {
		size_t nc = g->capnodes ? 2 * g->capnodes : 64;
		char **nn = realloc(g->nodes, nc * sizeof(*nn));
		if (!nn)
			return -1;
		g->nodes = nn;
		g->capnodes = nc;
	}
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

	if (!a || k < 0 || (size_t)k >= alen(a))
		return 0;
	v = aget(a, (size_t)k);
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
	size_t nr = rows ? alen(rows) : 0, n = 0;
	struct pcount *t = calloc(nr ? nr : 1, sizeof(*t));

	*np = 0;
	if (!t)
		return NULL;
	for (size_t r = 0; r < nr; r++) {
		json_object *rw = aget(rows, r);
		int64_t st = json_object_get_int64(aget(rw, 0));
		int64_t ni = json_object_get_int64(aget(rw, 1));
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
	size_t nn = names ? alen(names) : 0;
	int64_t ni = -1;

	for (size_t i = 0; i < nn && ni < 0; i++) {
		const char *s = json_object_get_string(aget(names, i));
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

int lwm2_grid_add(struct lwm2_grid *g, json_object *digest)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *grid = ju_get(digest, LWM2_KEY_GRID, json_type_array);
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	size_t n = grid ? alen(grid) : 0, base, cnt = 0, npt = 0;
	struct lwm2_gjob jb = {0};
	struct pcount *pt = NULL;
	int64_t dense = 0;
	size_t dense_slots = 0;
	long old;

	if (!job) {
		errno = EINVAL;
		return -1;
	}
	jb.id = ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	jb.start = ju_int_or(job, LWM2_KEY_START, 0);
	jb.end = ju_int_or(job, LWM2_KEY_END, 0);
	if ((old = lwm2_grid_find(g, jb.id)) >= 0)
		drop_jobs(g, 0, (size_t)old);
	/* age bound: jobs that ended keep_s before this one */
	if (g->keep_s > 0) {
		size_t k = 0;
		while (k < g->njobs && g->jobs[k].end + g->keep_s < jb.end)
			k++;
		if (k)
			drop_jobs(g, k, SIZE_MAX);
	}
	if (g->njobs == g->capjobs) {
		size_t nc = g->capjobs ? 2 * g->capjobs : 64;
		struct lwm2_gjob *nj = realloc(g->jobs, nc * sizeof(*nj));
		if (!nj)
			return -1;
		g->jobs = nj;
		g->capjobs = nc;
	}
	if (ranks && !(pt = procs_table(ranks, &npt)))
		return -1;
	base = g->ncells;
	/* a job larger than half the bound is kept summed over its nodes;
	 * with one slice length (the usual case) straight into one cell per
	 * slice, without holding its cells first */
	{
		int64_t total = 0, L0 = 0, lo = INT64_MAX, hi = INT64_MIN;
		bool one = true;
		for (size_t i = 0; i < n; i++) {
			json_object *e = aget(grid, i);
			int64_t f = ju_int_or(e, LWM2_KEY_FIRST_SLICE, 0),
			        ns = ju_int_or(e, LWM2_KEY_N, 0);
			int64_t L = ju_int_or(e, LWM2_KEY_SLICE_LENGTH_S, 0);
			if (L <= 0 || L > 86400 || ns <= 0 || ns > 1 << 20 || f < 0 ||
			    f > SLICE_T_MAX / L)
				continue;
			total += ns;
			one &= !L0 || L == L0;
			L0 = L;
			lo = f < lo ? f : lo;
			hi = f + ns > hi ? f + ns : hi;
		}
		if (g->max_cells && (uint64_t)total > g->max_cells / 2 && one &&
		    hi - lo <= 1 << 20) {
			size_t slots = (size_t)(hi - lo), need = base + slots;
			if (need > g->capcells) {
				struct lwm2_gcell *ncl = realloc(g->cells, need * sizeof(*ncl));
				if (!ncl)
					goto nomem;
				g->cells = ncl;
				g->capcells = need;
			}
			memset(&g->cells[base], 0, slots * sizeof(*g->cells));
			for (size_t k = 0; k < slots; k++) {
				g->cells[base + k].t = (lo + (int64_t)k) * L0;
				g->cells[base + k].len = (uint32_t)L0;
				g->cells[base + k].node = LWM2_GRID_ALLNODES;
				g->cells[base + k].job = (uint32_t)g->njobs;
			}
			dense = lo;
			dense_slots = slots;
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = aget(grid, i);
		json_object *c = ju_get(e, LWM2_KEY_C, json_type_object);
		const char *nn = ju_str(e, LWM2_KEY_NODE);
		int64_t first = ju_int_or(e, LWM2_KEY_FIRST_SLICE, 0),
		        ns = ju_int_or(e, LWM2_KEY_N, 0);
		int64_t L = ju_int_or(e, LWM2_KEY_SLICE_LENGTH_S, 0),
		        step = ju_int_or(e, LWM2_KEY_STEP, 0);
		json_object *a[NA];
		double procs;
		long ni;

		/* slice starts must stay epoch seconds: no overflow of (first + k) * L */
		if (!c || !nn || L <= 0 || L > 86400 || ns <= 0 || ns > 1 << 20 || first < 0 ||
		    first > SLICE_T_MAX / L)
			continue;
		if ((ni = node_intern(g, nn)) < 0)
			goto nomem;
		procs = pt ? procs_of(ranks, pt, npt, step, nn) : 0;
		for (int k = 0; k < NA; k++)
			a[k] = ju_get(c, a_key[k], json_type_array);
		for (int64_t k = 0; k < ns; k++) {
			struct lwm2_gcell cell = {.t = (first + k) * L,
			                          .len = (uint32_t)L,
			                          .node = (uint32_t)ni,
			                          .job = (uint32_t)g->njobs,
			                          .step = (uint32_t)step};
			bool any = false;

			cell.v[LWM2_GM_WBYTES] = (float)arr_at(a[A_WB], k);
			cell.v[LWM2_GM_WNS] = (float)(arr_at(a[A_WNS], k) + arr_at(a[A_SYNC], k));
			cell.v[LWM2_GM_RBYTES] = (float)arr_at(a[A_RB], k);
			cell.v[LWM2_GM_RNS] = (float)arr_at(a[A_RNS], k);
			cell.v[LWM2_GM_MBYTES] =
			    (float)(arr_at(a[A_P2PS], k) + arr_at(a[A_P2PR], k) +
			            arr_at(a[A_COLLS], k) + arr_at(a[A_COLLR], k));
			cell.v[LWM2_GM_MNS] =
			    (float)(arr_at(a[A_P2PNS], k) + arr_at(a[A_COLLNS], k));
			cell.v[LWM2_GM_MALLNS] =
			    (float)(cell.v[LWM2_GM_MNS] + arr_at(a[A_IORNS], k) +
			            arr_at(a[A_IOWNS], k) + arr_at(a[A_IOMNS], k) +
			            arr_at(a[A_OTHNS], k));
			for (int m = 0; m < LWM2_GM_PROCS; m++)
				any |= cell.v[m] > 0;
			if (!any)
				continue;
			cell.v[LWM2_GM_PROCS] = (float)procs;
			if (dense_slots) {
				struct lwm2_gcell *d =
				    &g->cells[base + (size_t)(first + k - dense)];
				for (int m = 0; m < LWM2_GM_N; m++)
					d->v[m] += cell.v[m];
				d->step = cell.step;
				continue;
			}
			if (g->ncells == g->capcells) {
				size_t nc = g->capcells ? 2 * g->capcells : 4096;
				struct lwm2_gcell *ncl = realloc(g->cells, nc * sizeof(*ncl));
				if (!ncl)
					goto nomem;
				g->cells = ncl;
				g->capcells = nc;
			}
			g->cells[g->ncells++] = cell;
			cnt++;
		}
	}
	if (dense_slots) {
		size_t w = base;
		for (size_t k = 0; k < dense_slots; k++) {
			bool any = false;
			for (int m = 0; m < LWM2_GM_PROCS; m++)
				any |= g->cells[base + k].v[m] > 0;
			if (any)
				g->cells[w++] = g->cells[base + k];
		}
		cnt = w - base;
		g->ncells = w;
	} else if (g->max_cells && cnt > g->max_cells / 2) {
		size_t w = base;
		qsort(&g->cells[base], cnt, sizeof(*g->cells), cmp_cell_t);
		for (size_t i = base; i < base + cnt; i++) {
			struct lwm2_gcell *c = &g->cells[i];
			if (w > base && g->cells[w - 1].t == c->t &&
			    g->cells[w - 1].len == c->len) {
				for (int m = 0; m < LWM2_GM_N; m++)
					g->cells[w - 1].v[m] += c->v[m];
				continue;
			}
			g->cells[w] = *c;
			g->cells[w].node = LWM2_GRID_ALLNODES;
			w++;
		}
		cnt = w - base;
		g->ncells = w;
	}
	jb.first = base;
	jb.n = cnt;
	g->jobs[g->njobs++] = jb;
	/* size bound: the oldest jobs go, never the one just added */
	if (g->max_cells && g->ncells > g->max_cells) {
		size_t k = 0, drop = 0;
		while (k + 1 < g->njobs && g->ncells - drop > g->max_cells)
			drop += g->jobs[k++].n;
		drop_jobs(g, k, SIZE_MAX);
	}
	free(pt);
	return 0;
nomem:
	free(pt);
	g->ncells = base;
	errno = ENOMEM;
	return -1;
}

/* ------------------------------------------------------------ statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v (sorted in place). */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Quantile (R type 7) of sorted v. */
static double quantile(const double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)h;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

/* ------------------------------------------------------------ interference */

/* One slice of the job under study, summed over its nodes and steps. */
struct jslice {
	int64_t t;
	int64_t t0; /* where the slice's calls began: t, or earlier (stalled) */
	uint32_t len;
	double v[LWM2_GM_N];
	double rate;
	int cls; /* 0 inactive, 1 normal, 2 slow */
};

enum { K_WRITE, K_READ, K_MPI, K_SHARE, NK };
static const char *const k_rule[NK] = {"interference-write", "interference-read",
                                       "interference-mpi", "interference-mpi-share"};
static const char *const k_metric[NK] = {"write_bw", "read_bw", "mpi_rate", "mpi_share"};

static int cmp_jslice(const void *a, const void *b)
{
	const struct jslice *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

struct other {
	size_t job;
	double slow, norm; /* volume in the slow and the normal slices */
	double written, read;
};

static int cmp_other(const void *a, const void *b)
{
	const struct other *x = a, *y = b;

	return (x->slow < y->slow) - (x->slow > y->slow);
}

static void fmt_clock(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "@%" PRId64, t);
}

static double overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? (double)(hi - lo) : 0;
}

/*
 * A call is counted in the slice it ends in.  One that blocked for several
 * slices (a write stalled behind another job's flood) leaves the slices it
 * began in without I/O of the job, and its own slice with more call time
 * per process than the slice is long.  A slow slice of that kind covers
 * the time back to where its calls began, as far as the previous slice of
 * the job with I/O: its t0 moves back, and the slices in between count as
 * slow (without bytes or time of their own, so the rate during the slow
 * slices stays what the calls saw).  Returns how many slices that adds;
 * from, tslow and the longest reach back (for the search of overlapping
 * cells) take them in.
 */
static size_t mark_stalled(struct jslice *s, size_t ns, int time_metric, int64_t *from,
                           double *tslow, int64_t *reach_max)
{
	size_t n = 0;

	for (size_t i = 0; i < ns; i++) {
		double procs, reach;
		int64_t len = s[i].len, t0, bound = INT64_MIN;

		if (s[i].cls != 2 || !len)
			continue;
		procs = s[i].v[LWM2_GM_PROCS] > 1 ? s[i].v[LWM2_GM_PROCS] : 1;
		reach = s[i].v[time_metric] / 1e9 / procs - (double)len;
		if (reach <= 0)
			continue;
		for (size_t j = i; j-- > 0;)
			if (s[j].len == s[i].len && s[j].cls) {
				bound = s[j].t + len;
				break;
			}
		t0 = s[i].t - (int64_t)ceil(reach / (double)len) * len;
		if (t0 < bound)
			t0 = bound;
		if (t0 >= s[i].t)
			continue;
		n += (size_t)((s[i].t - t0) / len);
		*tslow += (double)(s[i].t - t0);
		if (t0 < *from)
			*from = t0;
		if (s[i].t - t0 > *reach_max)
			*reach_max = s[i].t - t0;
		s[i].t0 = t0;
	}
	return n;
}

/* One kind of the rule over the job's slices; a finding appended to out. */
static int judge(const struct lwm2_grid *g, size_t jx, struct jslice *s, size_t ns,
                 const unsigned char *jnodes, int kind, const struct lwm2_interf_params *p,
                 json_object *out)
{
	double *vals = NULL, base, mad, lim = 0, sb = 0, sns = 0, tslow = 0, tnorm = 0, vslow = 0,
	       vnorm = 0, during;
	size_t na = 0, nslow = 0, nstalled = 0, nothers = 0;
	int64_t from = 0, to = 0, maxlen = 0, reach_max = 0;
	struct other *o = NULL;
	int rc = -1;
	/* the bytes of the kind's rate; its time follows (K_SHARE: unused) */
	const int bm = kind == K_WRITE  ? LWM2_GM_WBYTES
	               : kind == K_READ ? LWM2_GM_RBYTES
	                                : LWM2_GM_MBYTES;

	if (!(vals = malloc((ns ? ns : 1) * sizeof(*vals))))
		return -1;
	for (size_t i = 0; i < ns; i++) {
		double L = (double)s[i].len * 1e9, b, t;
		if ((int64_t)s[i].len > maxlen)
			maxlen = s[i].len;
		s[i].cls = 0;
		s[i].t0 = s[i].t;
		if (kind == K_SHARE) {
			double procs = s[i].v[LWM2_GM_PROCS];
			if (procs <= 0 || s[i].v[LWM2_GM_MALLNS] <= 0)
				continue;
			/* at most 100, as every view shows it: the finding's text
			 * quotes these shares */
			s[i].rate =
			    lwm2_slice_mpi_share(s[i].v[LWM2_GM_MALLNS], (double)s[i].len, procs);
		} else {
			b = s[i].v[bm];
			t = s[i].v[bm + 1];
			if (t < p->active_frac * L || b < p->min_slice_bytes)
				continue;
			s[i].rate = b / (t / 1e9);
		}
		s[i].cls = 1;
		vals[na++] = s[i].rate;
	}
	if (na < p->min_slices) {
		rc = 0;
		goto out;
	}
	/* rates vary by factors: their baseline and spread are taken on a
	 * log scale (the MPI share, in points, on its own scale) */
	if (kind != K_SHARE)
		for (size_t i = 0; i < na; i++)
			vals[i] = log(vals[i]);
	base = median(vals, na);
	for (size_t i = 0; i < na; i++)
		vals[i] = fabs(vals[i] - base);
	mad = 1.4826 * median(vals, na);
	if (kind != K_SHARE) {
		/* slow: below the median by the larger of fall and
		 * exp(mad_k * MAD) */
		lim = exp(base - fmax(log(p->fall), p->mad_k * mad));
		base = exp(base);
	}
	for (size_t i = 0; i < ns; i++) {
		bool slow;
		if (!s[i].cls)
			continue;
		if (kind == K_SHARE)
			slow = s[i].rate > base + p->share_jump &&
			       s[i].rate > base + p->mad_k * mad && s[i].rate >= p->share_floor;
		else
			slow = s[i].rate < lim;
		if (!slow) {
			tnorm += s[i].len;
			continue;
		}
		s[i].cls = 2;
		if (!nslow++)
			from = s[i].t;
		to = s[i].t + s[i].len;
		tslow += s[i].len;
		if (kind == K_SHARE) {
			sb += s[i].rate;
		} else {
			sb += s[i].v[bm];
			sns += s[i].v[bm + 1];
		}
	}
	if (kind != K_SHARE)
		nstalled = mark_stalled(s, ns, bm + 1, &from, &tslow, &reach_max);
	nslow += nstalled;
	if (nslow < p->min_slow || 2 * nslow > na + nstalled) {
		rc = 0;
		goto out;
	}
	during = kind == K_SHARE ? sb / (double)nslow : sb / (sns / 1e9);
	if (kind != K_SHARE && !(during > 0 && base / during >= p->fall)) {
		rc = 0;
		goto out;
	}
	/* the other jobs in the same slices: any node for the file system,
	 * the job's own nodes for MPI */
	if (!(o = calloc(g->njobs ? g->njobs : 1, sizeof(*o))))
		goto out;
	for (size_t c = 0; c < g->ncells; c++) {
		const struct lwm2_gcell *cl = &g->cells[c];
		int64_t c0 = cl->t, c1 = cl->t + cl->len;
		double vol, wr = 0, rd = 0;
		size_t lo = 0, hi = ns;

		if (cl->job == jx || c1 <= s[0].t || c0 >= s[ns - 1].t + s[ns - 1].len)
			continue;
		if (kind == K_MPI || kind == K_SHARE) {
			if (cl->node == LWM2_GRID_ALLNODES || !jnodes[cl->node])
				continue;
			vol = cl->v[LWM2_GM_MBYTES];
		} else {
			wr = cl->v[LWM2_GM_WBYTES];
			rd = cl->v[LWM2_GM_RBYTES];
			vol = wr + rd;
		}
		if (vol <= 0)
			continue;
		/* first of the job's slices that may overlap (slices of one
		 * length do not overlap; mixed lengths reach back maxlen, a
		 * stalled slice's calls reach_max before it) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s[mid].t + maxlen <= c0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < ns && s[i].t - reach_max < c1; i++) {
			double f;
			if (!s[i].cls || !(f = overlap(c0, c1, s[i].t0, s[i].t + s[i].len)))
				continue;
			f /= (double)cl->len;
			if (s[i].cls == 2) {
				o[cl->job].slow += vol * f;
				o[cl->job].written += wr * f;
				o[cl->job].read += rd * f;
				vslow += vol * f;
			} else {
				o[cl->job].norm += vol * f;
				vnorm += vol * f;
			}
		}
	}
	if (vslow < p->min_other_bytes ||
	    (tnorm > 0 && vslow / tslow < p->contrast * (vnorm / tnorm))) {
		rc = 0;
		goto out;
	}
	for (size_t j = 0; j < g->njobs; j++)
		if (o[j].slow > 0) {
			o[j].job = j;
			o[nothers++] = o[j];
		}
	qsort(o, nothers, sizeof(*o), cmp_other);
	{
		json_object *f = json_object_new_object(), *arr = json_object_new_array();
		char text[1024], a[32], b[32], vb[32], jl[256] = "", nl[256] = "";
		double cum = 0, wsum = 0, rsum = 0;
		size_t named = 0;

		if (!f || !arr) {
			json_object_put(f);
			json_object_put(arr);
			goto out;
		}
		for (size_t i = 0; i < nothers && named < 3; i++) {
			json_object *e = json_object_new_object();
			size_t l = strlen(jl);
			if (named && (cum >= 0.8 * vslow || o[i].slow < 0.1 * vslow))
				break;
			cum += o[i].slow;
			wsum += o[i].written;
			rsum += o[i].read;
			ju_add(e, LWM2_KEY_JOB, json_object_new_int64(g->jobs[o[i].job].id));
			ju_add(e, LWM2_KEY_BYTES, ju_double(o[i].slow));
			if (kind == K_WRITE || kind == K_READ) {
				ju_add(e, LWM2_KEY_WRITTEN, ju_double(o[i].written));
				ju_add(e, LWM2_KEY_READ, ju_double(o[i].read));
			}
			json_object_array_add(arr, e);
			snprintf(jl + l, sizeof(jl) - l, "%s%" PRId64, named ? ", " : "",
			         g->jobs[o[i].job].id);
			named++;
		}
		/* "jobs 1240, 1251" reads "jobs 1240 and 1251" */
		if (named > 1) {
			char *last = strrchr(jl, ',');
			char tail[64];
			snprintf(tail, sizeof(tail), "%s", last + 2);
			snprintf(last, sizeof(jl) - (size_t)(last - jl), " and %s", tail);
		}
		if (kind == K_MPI || kind == K_SHARE) {
			size_t l = 0;
			for (size_t i = 0; i < g->nnodes && l + 1 < sizeof(nl); i++)
				if (jnodes[i]) {
					int w = snprintf(nl + l, sizeof(nl) - l, "%s%s",
					                 l ? "," : "", g->nodes[i]);
					if (w < 0 || (size_t)w >= sizeof(nl) - l) {
						snprintf(nl + l, sizeof(nl) - l, ",...");
						break;
					}
					l += (size_t)w;
				}
		}
		fmt_clock(from, a, sizeof(a));
		fmt_clock(to, b, sizeof(b));
		lwm2_fmt_bytes(cum, vb, sizeof(vb));
		switch (kind) {
		case K_WRITE:
		case K_READ: {
			char what[96], wb[32], rb[32];
			if (rsum < 0.1 * cum)
				snprintf(what, sizeof(what), "wrote %s", vb);
			else if (wsum < 0.1 * cum)
				snprintf(what, sizeof(what), "read %s", vb);
			else
				snprintf(what, sizeof(what), "wrote %s and read %s",
				         lwm2_fmt_bytes(wsum, wb, sizeof(wb)),
				         lwm2_fmt_bytes(rsum, rb, sizeof(rb)));
			snprintf(
			    text, sizeof(text),
			    "%s bandwidth fell %.0fx in %s-%s (%zu of %zu slices) while %s %s %s "
			    "on the shared file system; rerun may be faster",
			    kind == K_WRITE ? "write" : "read", base / during, a, b, nslow, na,
			    named > 1 ? "jobs" : "job", jl, what);
			break;
		}
		case K_MPI:
			snprintf(
			    text, sizeof(text),
			    "MPI transfer rate fell %.0fx in %s-%s (%zu of %zu slices) while %s %s "
			    "moved %s over MPI on the same nodes (%s; lwm2 knows nodes, not "
			    "switches); rerun may be faster",
			    base / during, a, b, nslow, na, named > 1 ? "jobs" : "job", jl, vb, nl);
			break;
		default:
			snprintf(
			    text, sizeof(text),
			    "MPI share rose from %.0f%% to %.0f%% in %s-%s (%zu of %zu slices) "
			    "while %s %s moved %s over MPI on the same nodes (%s; lwm2 knows "
			    "nodes, not switches); rerun may be faster",
			    base, during, a, b, nslow, na, named > 1 ? "jobs" : "job", jl, vb, nl);
			break;
		}
		ju_add(f, LWM2_KEY_RULE, json_object_new_string(k_rule[kind]));
		ju_add(f, LWM2_KEY_METRIC, json_object_new_string(k_metric[kind]));
		ju_add(f, LWM2_KEY_FROM, json_object_new_int64(from));
		ju_add(f, LWM2_KEY_TO, json_object_new_int64(to));
		ju_add(f, LWM2_KEY_SLICES, json_object_new_int64((int64_t)nslow));
		ju_add(f, LWM2_KEY_ACTIVE, json_object_new_int64((int64_t)na));
		ju_add(f, LWM2_KEY_BASELINE, ju_double(base));
		ju_add(f, LWM2_KEY_DURING, ju_double(during));
		if (kind != K_SHARE)
			ju_add(f, LWM2_KEY_FALL, ju_double(base / during));
		ju_add(f, LWM2_KEY_OTHERS_BYTES, ju_double(vslow));
		ju_add(f, LWM2_KEY_OTHERS, arr);
		if (nl[0])
			ju_add(f, LWM2_KEY_NODES, json_object_new_string(nl));
		ju_add(f, LWM2_KEY_TEXT, json_object_new_string(text));
		json_object_array_add(out, f);
	}
	rc = 0;
out:
	free(vals);
	free(o);
	return rc;
}

json_object *lwm2_grid_interference(const struct lwm2_grid *g, int64_t job_id,
                                    const struct lwm2_interf_params *p)
{
	long jx = lwm2_grid_find(g, job_id);
	const struct lwm2_gjob *jb;
	struct jslice *s = NULL;
	unsigned char *jnodes = NULL;
	json_object *out = NULL;
	size_t ns = 0;

	if (!p)
		p = &lwm2_interf_defaults;
	if (jx < 0) {
		errno = ENOENT;
		return NULL;
	}
	jb = &g->jobs[jx];
	if (!(out = json_object_new_array()) || !(jnodes = calloc(g->nnodes ? g->nnodes : 1, 1)) ||
	    !(s = calloc(jb->n ? jb->n : 1, sizeof(*s))))
		goto nomem;
	for (size_t c = jb->first; c < jb->first + jb->n; c++) {
		const struct lwm2_gcell *cl = &g->cells[c];
		s[ns].t = cl->t;
		s[ns].len = cl->len;
		for (int m = 0; m < LWM2_GM_N; m++)
			s[ns].v[m] = cl->v[m];
		ns++;
		if (cl->node != LWM2_GRID_ALLNODES)
			jnodes[cl->node] = 1;
	}
	/* the job's nodes and steps summed per slice */
	qsort(s, ns, sizeof(*s), cmp_jslice);
	{
		size_t w = 0;
		for (size_t i = 0; i < ns; i++) {
			if (w && s[w - 1].t == s[i].t && s[w - 1].len == s[i].len) {
				for (int m = 0; m < LWM2_GM_N; m++)
					s[w - 1].v[m] += s[i].v[m];
				continue;
			}
			s[w++] = s[i];
		}
		ns = w;
	}
	for (int k = 0; k < NK && ns; k++)
		if (judge(g, (size_t)jx, s, ns, jnodes, k, p, out) != 0)
			goto nomem;
	free(s);
	free(jnodes);
	return out;
nomem:
	free(s);
	free(jnodes);
	json_object_put(out);
	errno = ENOMEM;
	return NULL;
}

/* ------------------------------------------------------------ sick nodes */

struct nev {
	int64_t job;
	int rank;
	const char *how; /* static */
	double ratio;
	bool slowest;
};

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
	if (ns->nn == ns->capn) {
		size_t nc = ns->capn ? 2 * ns->capn : 64;
		struct nstat *nn = realloc(ns->n, nc * sizeof(*nn));
		if (!nn)
			return NULL;
		ns->n = nn;
		ns->capn = nc;
	}
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
	for (size_t i = 0; cols && i < alen(cols); i++)
		if (json_object_get_string(aget(cols, i)) &&
		    !strcmp(json_object_get_string(aget(cols, i)), name))
			return (int)i;
	return -1;
}

static double cell_num(json_object *row, int col)
{
	json_object *v = col >= 0 ? aget(row, (size_t)col) : NULL;

	return v ? json_object_get_double(v) : NAN;
}

int lwm2_nodes_add(struct lwm2_nodes *ns, json_object *digest)
{
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *cols = ju_get(ranks, LWM2_KEY_COLS, json_type_array);
	json_object *rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
	json_object *names = ju_get(ranks, LWM2_KEY_NODES, json_type_array);
	json_object *ex = ju_get(ju_get(digest, LWM2_KEY_SCOPE, json_type_object),
	                         LWM2_KEY_EXECUTABLES, json_type_object);
	json_object *bycpu = ju_get(ex, LWM2_KEY_BY_CPU, json_type_array);
	const char *app = bycpu && alen(bycpu) ? ju_str(aget(bycpu, 0), LWM2_KEY_EXE) : NULL;
	int cdur = col_of(cols, "duration"), cmpi = col_of(cols, "mpi_time"),
	    cio = col_of(cols, "posix_io_time"), ccuda = col_of(cols, "cuda_time");
	size_t nr = rows ? alen(rows) : 0, nnames;
	int64_t best_step = 0, jid = ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	size_t best = 0;
	struct {
		int node, rank;
		double comp, mpi;
	} *pr = NULL;
	size_t np = 0;
	double *v = NULL, *nodec = NULL, *nodecnt = NULL;
	int rc = -1;

	if (!rows || !names || cdur < 0)
		return 0;
	nnames = alen(names);
	/* the step with the most processes on two or more nodes: the main
	 * run (the batch step has one node) */
	{
		int64_t steps[64];
		size_t nsteps = 0;
		for (size_t r = 0; r < nr; r++) {
			int64_t st = json_object_get_int64(aget(aget(rows, r), 0));
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
				json_object *rw = aget(rows, r);
				int64_t ni = json_object_get_int64(aget(rw, 1));
				if (json_object_get_int64(aget(rw, 0)) != steps[i])
					continue;
				cnt++;
				if (ni >= 0 && (size_t)ni < nnames && !seen[ni]++)
					nodes++;
			}
			free(seen);
			if (nodes >= 2 && cnt > best) {
				best = cnt;
				best_step = steps[i];
			}
		}
	}
	if (!best)
		return 0;
	if (!(pr = calloc(best, sizeof(*pr))) || !(v = calloc(best, sizeof(*v))) ||
	    !(nodec = calloc(nnames, sizeof(*nodec))) ||
	    !(nodecnt = calloc(nnames, sizeof(*nodecnt))))
		goto out;
	for (size_t r = 0; r < nr && np < best; r++) {
		json_object *rw = aget(rows, r);
		int64_t ni = json_object_get_int64(aget(rw, 1));
		double dur = cell_num(rw, cdur), share = 0, m = cell_num(rw, cmpi);
		if (json_object_get_int64(aget(rw, 0)) != best_step || ni < 0 ||
		    (size_t)ni >= nnames || !isfinite(dur))
			continue;
		if (isfinite(m))
			share += m;
		if (isfinite(cell_num(rw, cio)))
			share += cell_num(rw, cio);
		if (isfinite(cell_num(rw, ccuda)))
			share += cell_num(rw, ccuda);
		pr[np].node = (int)ni;
		pr[np].rank = (int)json_object_get_int64(aget(rw, 2));
		pr[np].comp = dur * fmax(0, 1 - share / 100);
		pr[np].mpi = m;
		nodec[ni] += pr[np].comp;
		nodecnt[ni]++;
		np++;
	}
	{
		size_t imax = 0, imin = SIZE_MAX, nm = 0, nodes = 0;
		double med, q1, q3, mmed = NAN;
		int hold = -1, hrank = -1;
		const char *how = NULL;
		double nmed;

		for (size_t i = 0; i < np; i++) {
			v[i] = pr[i].comp;
			if (pr[i].comp > pr[imax].comp)
				imax = i;
		}
		qsort(v, np, sizeof(*v), cmp_double);
		med = quantile(v, np, 0.5);
		q1 = quantile(v, np, 0.25);
		q3 = quantile(v, np, 0.75);
		if (np >= 3 && pr[imax].comp > q3 + ns->p.iqr_k * (q3 - q1) &&
		    pr[imax].comp >= ns->p.min_excess * med) {
			hold = pr[imax].node;
			hrank = pr[imax].rank;
			how = "compute-time outlier";
		}
		for (size_t i = 0; i < np; i++)
			if (isfinite(pr[i].mpi)) {
				v[nm++] = pr[i].mpi;
				if (imin == SIZE_MAX || pr[i].mpi < pr[imin].mpi)
					imin = i;
			}
		if (nm >= 2)
			mmed = median(v, nm);
		if (hold < 0 && nm >= 2 && mmed - pr[imin].mpi >= ns->p.wait_gap) {
			hold = pr[imin].node;
			hrank = pr[imin].rank;
			how = "lowest MPI share (the others waited)";
		}
		/* each node's mean compute time against the median node's */
		for (size_t i = 0; i < nnames; i++)
			if (nodecnt[i] > 0)
				v[nodes++] = nodec[i] / nodecnt[i];
		nmed = median(v, nodes);
		ns->jobs++;
		for (size_t i = 0; i < nnames; i++) {
			struct nev e = {.job = jid, .rank = -1};
			struct nstat *st;
			const char *nm_ = json_object_get_string(aget(names, i));
			if (nodecnt[i] <= 0 || !nm_)
				continue;
			if (!(st = nstat_of(ns, nm_)))
				goto out;
			e.ratio = nmed > 0 ? nodec[i] / nodecnt[i] / nmed : 1;
			if ((int)i == hold) {
				e.slowest = true;
				e.rank = hrank;
				e.how = how;
			}
			if (nstat_push(st, 1.0 / (double)nodes, &e) != 0)
				goto out;
			if (app && !strstr(st->apps, app) &&
			    strlen(st->apps) + strlen(app) + 2 < sizeof(st->apps)) {
				if (st->apps[0])
					strcat(st->apps, ",");
				strcat(st->apps, app);
			}
		}
	}
	rc = 0;
out:
	free(pr);
	free(v);
	free(nodec);
	free(nodecnt);
	if (rc)
		errno = ENOMEM;
	return rc;
}

/* P(X >= k) for X the number of successes of independent trials with
 * chances p[0..n): the chance of holding the slowest rank that often when
 * every node of each job were alike (Poisson binomial, exact). */
static double tail(const double *p, size_t n, size_t k)
{
	double *d = calloc(n + 2, sizeof(*d)), t = 0;

	if (!d)
		return 1;
	d[0] = 1;
	for (size_t j = 0; j < n; j++) {
		for (size_t x = j + 1; x > 0; x--)
			d[x] = d[x] * (1 - p[j]) + d[x - 1] * p[j];
		d[0] *= 1 - p[j];
	}
	for (size_t x = k; x <= n; x++)
		t += d[x];
	free(d);
	return t;
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

json_object *lwm2_nodes_result(const struct lwm2_nodes *ns, bool all)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct verdict *vd = calloc(ns->nn ? ns->nn : 1, sizeof(*vd));
	double *tmp = NULL;

	if (!o || !arr || !vd)
		goto nomem;
	for (size_t i = 0; i < ns->nn; i++) {
		const struct nstat *st = &ns->n[i];
		size_t nr = 0;
		vd[i].st = st;
		vd[i].p = tail(st->pj, st->jobs, st->slowest);
		free(tmp);
		if (!(tmp = malloc((st->jobs ? st->jobs : 1) * sizeof(*tmp))))
			goto nomem;
		for (size_t j = 0; j < st->jobs; j++)
			if (isfinite(st->ratios[j]))
				tmp[nr++] = st->ratios[j];
		vd[i].ratio = nr ? median(tmp, nr) : NAN;
		vd[i].ratio_jobs = nr;
		vd[i].out = (st->slowest >= ns->p.min_slowest &&
		             (double)st->slowest >= ns->p.min_share * (double)st->jobs &&
		             vd[i].p < ns->p.max_p) ||
		            (nr >= ns->p.ratio_jobs && vd[i].ratio >= ns->p.slow_ratio);
	}
	free(tmp);
	qsort(vd, ns->nn, sizeof(*vd), cmp_verdict);
	for (size_t i = 0; i < ns->nn; i++) {
		const struct nstat *st = vd[i].st;
		json_object *e, *ev;
		char why[512];

		if (!all && !vd[i].out)
			continue;
		if (!(e = json_object_new_object()) || !(ev = json_object_new_array())) {
			json_object_put(e);
			goto nomem;
		}
		ju_add(e, "node", json_object_new_string(st->name));
		ju_add(e, "jobs", json_object_new_int64((int64_t)st->jobs));
		ju_add(e, "slowest", json_object_new_int64((int64_t)st->slowest));
		ju_add(e, "expected", ju_double(st->expected));
		ju_add(e, "p", ju_double(vd[i].p));
		ju_add(e, "ratio", ju_double(isfinite(vd[i].ratio) ? vd[i].ratio : 0));
		ju_add(e, "ratio_jobs", json_object_new_int64((int64_t)vd[i].ratio_jobs));
		ju_add(e, "apps", json_object_new_string(st->apps));
		ju_add(e, "stands_out", json_object_new_boolean(vd[i].out));
		snprintf(why, sizeof(why),
		         "%s held the slowest rank in %zu of %zu multi-node jobs (%.1f expected if "
		         "nodes were alike, chance %.2g); its compute time was %.2fx the job's "
		         "median node's (median over %zu jobs)",
		         st->name, st->slowest, st->jobs, st->expected, vd[i].p,
		         isfinite(vd[i].ratio) ? vd[i].ratio : 0, vd[i].ratio_jobs);
		ju_add(e, "why", json_object_new_string(why));
		for (size_t j = 0; j < st->jobs; j++) {
			json_object *x = json_object_new_object();
			if (!x)
				goto nomem;
			ju_add(x, "job", json_object_new_int64(st->ev[j].job));
			ju_add(x, "slowest", json_object_new_boolean(st->ev[j].slowest));
			if (st->ev[j].slowest) {
				ju_add(x, "rank", json_object_new_int(st->ev[j].rank));
				ju_add(x, "how", json_object_new_string(st->ev[j].how));
			}
			ju_add(x, "ratio", ju_double(st->ev[j].ratio));
			json_object_array_add(ev, x);
		}
		ju_add(e, "evidence", ev);
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
