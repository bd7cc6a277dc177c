/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The interference rule over the grid index (see grid.h; documented in
 * lwm2(1), "INTERFERENCE AND SICK NODES").
 *
 * A finding needs a large fall (several times) well outside the job's own
 * spread (median and MAD of its own rates, grid_stats.c), several slices
 * of it, other jobs' volume in exactly those slices, and more of it there
 * than in the job's normal slices: a job that is merely noisy, or that has
 * a slow phase of its own while a neighbour streams all the time, stays
 * silent.
 */
#include "grid_internal.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "lwm2_digest.h"

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

/* One slice of the job under study, summed over its nodes and steps. */
struct jslice {
	int64_t t;
	int64_t t0; /* where the slice's calls began: t, or earlier (stalled) */
	uint32_t len;
	double v[LWM2_GM_N];
	double rate;
	int cls; /* 0 inactive, 1 normal, 2 slow */
};

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

/* Another job's volume in the job's slices. */
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

static double overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? (double)(hi - lo) : 0;
}

/* One kind of the rule over the job's slices, as it goes. */
struct judging {
	const struct lwm2_grid *g;
	size_t jx; /* the job */
	struct jslice *s;
	size_t ns;
	const unsigned char *jnodes; /* its nodes */
	int kind;                    /* enum grid_kind */
	int bm; /* the bytes of the kind's rate; its time follows (K_SHARE: unused) */
	const struct lwm2_interf_params *p;
	size_t na, nslow;      /* active slices, slow ones (stalled included) */
	double base, mad, lim; /* the typical rate, its spread, the slow limit */
	double sb, sns;        /* bytes and time (K_SHARE: shares) in the slow slices */
	double tslow, tnorm;   /* seconds of slow and normal slices */
	double vslow, vnorm;   /* others' volume in them */
	double during;         /* the rate in the slow slices */
	int64_t from, to;      /* the slow span */
	int64_t maxlen;        /* the longest slice */
	int64_t reach_max;     /* the farthest a stalled slice's calls reach back */
	struct other *o;       /* per job of the index */
	size_t nothers;
};

/* The rate of each slice that is active for the kind (cls 1), into vals;
 * how many. */
static size_t active_rates(struct judging *j, double *vals)
{
	struct jslice *s = j->s;
	size_t na = 0;

	for (size_t i = 0; i < j->ns; i++) {
		double L = (double)s[i].len * 1e9, b, t;
		if ((int64_t)s[i].len > j->maxlen)
			j->maxlen = s[i].len;
		s[i].cls = 0;
		s[i].t0 = s[i].t;
		if (j->kind == K_SHARE) {
			double procs = s[i].v[LWM2_GM_PROCS];
			if (procs <= 0 || s[i].v[LWM2_GM_MALLNS] <= 0)
				continue;
			/* at most 100, as every view shows it: the finding's text
			 * quotes these shares */
			s[i].rate =
			    lwm2_slice_mpi_share(s[i].v[LWM2_GM_MALLNS], (double)s[i].len, procs);
		} else {
			b = s[i].v[j->bm];
			t = s[i].v[j->bm + 1];
			if (t < j->p->active_frac * L || b < j->p->min_slice_bytes)
				continue;
			s[i].rate = b / (t / 1e9);
		}
		s[i].cls = 1;
		vals[na++] = s[i].rate;
	}
	return na;
}

/* The baseline and spread of the active rates (vals, overwritten): rates
 * vary by factors, so they are taken on a log scale (the MPI share, in
 * points, on its own scale). */
static void baseline(struct judging *j, double *vals)
{
	if (j->kind != K_SHARE)
		for (size_t i = 0; i < j->na; i++)
			vals[i] = log(vals[i]);
	j->base = grid_median(vals, j->na);
	for (size_t i = 0; i < j->na; i++)
		vals[i] = fabs(vals[i] - j->base);
	j->mad = 1.4826 * grid_median(vals, j->na);
	if (j->kind != K_SHARE) {
		/* slow: below the median by the larger of fall and
		 * exp(mad_k * MAD) */
		j->lim = exp(j->base - fmax(log(j->p->fall), j->p->mad_k * j->mad));
		j->base = exp(j->base);
	}
}

/* The active slices that are slow: cls 2, and their span and sums. */
static void mark_slow(struct judging *j)
{
	const struct lwm2_interf_params *p = j->p;
	struct jslice *s = j->s;

	for (size_t i = 0; i < j->ns; i++) {
		bool slow;
		if (!s[i].cls)
			continue;
		if (j->kind == K_SHARE)
			slow = s[i].rate > j->base + p->share_jump &&
			       s[i].rate > j->base + p->mad_k * j->mad &&
			       s[i].rate >= p->share_floor;
		else
			slow = s[i].rate < j->lim;
		if (!slow) {
			j->tnorm += s[i].len;
			continue;
		}
		s[i].cls = 2;
		if (!j->nslow++)
			j->from = s[i].t;
		j->to = s[i].t + s[i].len;
		j->tslow += s[i].len;
		if (j->kind == K_SHARE) {
			j->sb += s[i].rate;
		} else {
			j->sb += s[i].v[j->bm];
			j->sns += s[i].v[j->bm + 1];
		}
	}
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

/* First of the job's slices that may overlap a cell starting at c0 (slices
 * of one length do not overlap; mixed lengths reach back maxlen). */
static size_t first_overlap(const struct judging *j, int64_t c0)
{
	size_t lo = 0, hi = j->ns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->s[mid].t + j->maxlen <= c0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One other cell's volume, shared out over the job's slices it overlaps. */
static void count_cell(struct judging *j, const struct lwm2_gcell *cl, double vol, double wr,
                       double rd)
{
	const struct jslice *s = j->s;
	int64_t c0 = cl->t, c1 = cl->t + cl->len;
	struct other *o = &j->o[cl->job];

	/* a stalled slice's calls reach reach_max before it */
	for (size_t i = first_overlap(j, c0); i < j->ns && s[i].t - j->reach_max < c1; i++) {
		double f;
		if (!s[i].cls || !(f = overlap(c0, c1, s[i].t0, s[i].t + s[i].len)))
			continue;
		f /= (double)cl->len;
		if (s[i].cls == 2) {
			o->slow += vol * f;
			o->written += wr * f;
			o->read += rd * f;
			j->vslow += vol * f;
		} else {
			o->norm += vol * f;
			j->vnorm += vol * f;
		}
	}
}

/* The other jobs in the same slices: any node for the file system, the
 * job's own nodes for MPI.  -1: out of memory. */
static int count_others(struct judging *j)
{
	const struct lwm2_grid *g = j->g;
	const struct jslice *s = j->s;
	size_t ns = j->ns;

	if (!(j->o = calloc(g->njobs ? g->njobs : 1, sizeof(*j->o))))
		return -1;
	for (size_t c = 0; c < g->ncells; c++) {
		const struct lwm2_gcell *cl = &g->cells[c];
		int64_t c0 = cl->t, c1 = cl->t + cl->len;
		double vol, wr = 0, rd = 0;

		if (cl->job == j->jx || c1 <= s[0].t || c0 >= s[ns - 1].t + s[ns - 1].len)
			continue;
		if (j->kind == K_MPI || j->kind == K_SHARE) {
			if (cl->node == LWM2_GRID_ALLNODES || !j->jnodes[cl->node])
				continue;
			vol = cl->v[LWM2_GM_MBYTES];
		} else {
			wr = cl->v[LWM2_GM_WBYTES];
			rd = cl->v[LWM2_GM_RBYTES];
			vol = wr + rd;
		}
		if (vol > 0)
			count_cell(j, cl, vol, wr, rd);
	}
	/* those with volume in the slow slices, the most first */
	for (size_t k = 0; k < g->njobs; k++)
		if (j->o[k].slow > 0) {
			j->o[k].job = k;
			j->o[j->nothers++] = j->o[k];
		}
	qsort(j->o, j->nothers, sizeof(*j->o), cmp_other);
	return 0;
}

/* The finding of a kind that held, appended to out.  -1: out of memory. */
static int add_finding(const struct judging *j, json_object *out)
{
	const struct lwm2_grid *g = j->g;
	json_object *f = json_object_new_object(), *arr = json_object_new_array();
	struct grid_interf_words w = {.kind = j->kind,
	                              .base = j->base,
	                              .during = j->during,
	                              .from = j->from,
	                              .to = j->to,
	                              .nslow = j->nslow,
	                              .na = j->na};
	char text[1024], nl[256] = "";
	int64_t named[3];

	if (!f || !arr) {
		json_object_put(f);
		json_object_put(arr);
		return -1;
	}
	/* the jobs with most of the volume, at most three */
	for (size_t i = 0; i < j->nothers && w.njobs < 3; i++) {
		const struct other *o = &j->o[i];
		json_object *e = json_object_new_object();
		if (w.njobs && (w.cum >= 0.8 * j->vslow || o->slow < 0.1 * j->vslow)) {
			json_object_put(e);
			break;
		}
		w.cum += o->slow;
		w.wsum += o->written;
		w.rsum += o->read;
		ju_add(e, LWM2_KEY_JOB, json_object_new_int64(g->jobs[o->job].id));
		ju_add(e, LWM2_KEY_BYTES, ju_double(o->slow));
		if (j->kind == K_WRITE || j->kind == K_READ) {
			ju_add(e, LWM2_KEY_WRITTEN, ju_double(o->written));
			ju_add(e, LWM2_KEY_READ, ju_double(o->read));
		}
		json_object_array_add(arr, e);
		named[w.njobs++] = g->jobs[o->job].id;
	}
	w.jobs = named;
	if (j->kind == K_MPI || j->kind == K_SHARE)
		grid_node_list(g, j->jnodes, nl, sizeof(nl));
	w.nodes = nl;
	grid_interf_text(text, sizeof(text), &w);
	ju_add(f, LWM2_KEY_RULE, json_object_new_string(k_rule[j->kind]));
	ju_add(f, LWM2_KEY_METRIC, json_object_new_string(k_metric[j->kind]));
	ju_add(f, LWM2_KEY_FROM, json_object_new_int64(j->from));
	ju_add(f, LWM2_KEY_TO, json_object_new_int64(j->to));
	ju_add(f, LWM2_KEY_SLICES, json_object_new_int64((int64_t)j->nslow));
	ju_add(f, LWM2_KEY_ACTIVE, json_object_new_int64((int64_t)j->na));
	ju_add(f, LWM2_KEY_BASELINE, ju_double(j->base));
	ju_add(f, LWM2_KEY_DURING, ju_double(j->during));
	if (j->kind != K_SHARE)
		ju_add(f, LWM2_KEY_FALL, ju_double(j->base / j->during));
	ju_add(f, LWM2_KEY_OTHERS_BYTES, ju_double(j->vslow));
	ju_add(f, LWM2_KEY_OTHERS, arr);
	if (nl[0])
		ju_add(f, LWM2_KEY_NODES, json_object_new_string(nl));
	ju_add(f, LWM2_KEY_TEXT, json_object_new_string(text));
	json_object_array_add(out, f);
	return 0;
}

/* Are the job's own slices evidence: enough of them slow, and slow by
 * enough?  vals: room for ns rates. */
static bool job_is_slow(struct judging *j, double *vals)
{
	const struct lwm2_interf_params *p = j->p;
	size_t nstalled = 0;

	j->na = active_rates(j, vals);
	if (j->na < p->min_slices)
		return false;
	baseline(j, vals);
	mark_slow(j);
	if (j->kind != K_SHARE)
		nstalled = mark_stalled(j->s, j->ns, j->bm + 1, &j->from, &j->tslow, &j->reach_max);
	j->nslow += nstalled;
	if (j->nslow < p->min_slow || 2 * j->nslow > j->na + nstalled)
		return false;
	j->during = j->kind == K_SHARE ? j->sb / (double)j->nslow : j->sb / (j->sns / 1e9);
	return j->kind == K_SHARE || (j->during > 0 && j->base / j->during >= p->fall);
}

/* Did others' volume come with the slow slices? */
static bool others_explain(const struct judging *j)
{
	return !(j->vslow < j->p->min_other_bytes ||
	         (j->tnorm > 0 && j->vslow / j->tslow < j->p->contrast * (j->vnorm / j->tnorm)));
}

/* One kind of the rule over the job's slices; a finding appended to out.
 * -1: out of memory. */
static int judge(const struct lwm2_grid *g, size_t jx, struct jslice *s, size_t ns,
                 const unsigned char *jnodes, int kind, const struct lwm2_interf_params *p,
                 json_object *out)
{
	struct judging j = {
	    .g = g, .jx = jx, .s = s, .ns = ns, .jnodes = jnodes, .kind = kind, .p = p};
	double *vals;
	int rc = -1;

	j.bm = kind == K_WRITE ? LWM2_GM_WBYTES : kind == K_READ ? LWM2_GM_RBYTES : LWM2_GM_MBYTES;
	if (!(vals = malloc((ns ? ns : 1) * sizeof(*vals))))
		return -1;
	if (!job_is_slow(&j, vals)) {
		rc = 0;
		goto out;
	}
	if (count_others(&j) != 0)
		goto out;
	rc = others_explain(&j) ? add_finding(&j, out) : 0;
out:
	free(vals);
	free(j.o);
	return rc;
}

/* The job's cells as slices summed over its nodes and steps; its nodes
 * marked in jnodes.  How many slices. */
static size_t job_slices(const struct lwm2_grid *g, const struct lwm2_gjob *jb, struct jslice *s,
                         unsigned char *jnodes)
{
	size_t ns = 0, w = 0;

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
	qsort(s, ns, sizeof(*s), cmp_jslice);
	for (size_t i = 0; i < ns; i++) {
		if (w && s[w - 1].t == s[i].t && s[w - 1].len == s[i].len) {
			for (int m = 0; m < LWM2_GM_N; m++)
				s[w - 1].v[m] += s[i].v[m];
			continue;
		}
		s[w++] = s[i];
	}
	return w;
}

json_object *lwm2_grid_interference(const struct lwm2_grid *g, int64_t job_id,
                                    const struct lwm2_interf_params *p)
{
	long jx = lwm2_grid_find(g, job_id);
	const struct lwm2_gjob *jb;
	struct jslice *s = NULL;
	unsigned char *jnodes = NULL;
	json_object *out = NULL;
	size_t ns;

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
	ns = job_slices(g, jb, s, jnodes);
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
