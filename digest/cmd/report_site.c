/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The site pages of `lwm2 report --site`: a directory of static files
 *
 *   index.html              statistics of `lwm2 stats` as plots, the
 *                           space-time grid of the chosen metric, users
 *   grid-mpi.html, grid-io.html, grid-cpu.html   the grid by each metric
 *   users/USER.html         a user's jobs
 *   jobs/ID.html            a job's page (as `lwm2 report -j`)
 *   jobs/ID/node-NODE.html  a node of a job: its processes, #rank-N each
 *
 * so one drills down site -> user -> job -> node -> rank, as PerfMiner
 * did.  The log is read twice, line by line: first the jobs, their nodes
 * and the time window; then every digest once more for its job page and
 * its slices, which are added into the grid's cells and dropped, so the
 * memory is the cells, not the log.
 *
 * The grid has at most W columns and H rows (--size, default 1000 x 600):
 * with more wall-clock slices than W, a column covers several slices
 * (each slice counts in the column its start falls in); with more nodes
 * than H, a row covers consecutive nodes in name order.  A cell shows the
 * mean over the node slices that fell into it.
 */
#include "config.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "db.h"
#include "errmsg.h"
#include "jsonutil.h"
#include "log.h"
#include "logscan.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "report.h"
#include "site_stats.h"
#include "strhash.h"
#include "usage.h"

/* Job outlines drawn at most; beyond, the grid has cells only (and says
 * so). */
#define OUTLINES_MAX 20000

enum { SM_MPI, SM_IO, SM_CPU, NSM };
static const char *const sm_id[NSM] = {"mpi", "io", "cpu"};
static const char *const sm_title[NSM] = {"MPI share of process time", "file I/O bytes/s",
                                          "CPU cycles/s (hardware counters)"};
static const char *const sm_unit[NSM] = {"%", "B/s", "/s"};

struct sjob {
	int64_t id, start, end;
	char *user, *account, *state;
	size_t *nodes; /* node indexes */
	size_t nnodes;
	uint64_t procs;
	double mpi_avg; /* NaN: none */
	bool digest;
};

struct site {
	const struct rp_site_opts *o;
	int64_t sel_start, sel_end; /* 0: not set */
	struct sjob *jobs;
	size_t njobs, capjobs;
	/* node names, interned: an open hash table of indexes */
	char **names;
	size_t nnames, capnames;
	size_t *htab;
	size_t hcap;
	size_t *row_of; /* node index -> grid row */
	int64_t t0, t1, colsec;
	size_t rows, cols, per_row;
	double *sum[NSM], *cnt;
	int pass;
	size_t cur; /* job index in pass 2 */
	/* requested against used, per user, account and application */
	struct lwm2_usage_table waste[3];
	int rc;
};

/* ------------------------------------------------------------ nodes */

static long node_intern(struct site *st, const char *name)
{
	size_t i;

	if (st->nnames * 2 >= st->hcap) {
		size_t nc = st->hcap ? 2 * st->hcap : 1024;
		size_t *nt = malloc(nc * sizeof(*nt));
		if (!nt)
			return -1;
		for (i = 0; i < nc; i++)
			nt[i] = SIZE_MAX;
		for (size_t k = 0; k < st->nnames; k++) {
			i = lwm2_strhash(st->names[k]) & (nc - 1);
			while (nt[i] != SIZE_MAX)
				i = (i + 1) & (nc - 1);
			nt[i] = k;
		}
		free(st->htab);
		st->htab = nt;
		st->hcap = nc;
	}
	i = lwm2_strhash(name) & (st->hcap - 1);
	while (st->htab[i] != SIZE_MAX) {
		if (!strcmp(st->names[st->htab[i]], name))
			return (long)st->htab[i];
		i = (i + 1) & (st->hcap - 1);
	}
	if (st->nnames == st->capnames) {
		size_t nc = st->capnames ? 2 * st->capnames : 256;
		char **nn = realloc(st->names, nc * sizeof(*nn));
		if (!nn)
			return -1;
		st->names = nn;
		st->capnames = nc;
	}
	if (!(st->names[st->nnames] = strdup(name)))
		return -1;
	st->htab[i] = st->nnames;
	return (long)st->nnames++;
}

static long node_find(const struct site *st, const char *name)
{
	size_t i;

	if (!st->hcap)
		return -1;
	i = lwm2_strhash(name) & (st->hcap - 1);
	while (st->htab[i] != SIZE_MAX) {
		if (!strcmp(st->names[st->htab[i]], name))
			return (long)st->htab[i];
		i = (i + 1) & (st->hcap - 1);
	}
	return -1;
}

/* Node names in natural order: n2 before n10. */
static int natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *x = a, *y = b;
			size_t lx, ly;
			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			for (lx = 0; x[lx] >= '0' && x[lx] <= '9'; lx++)
				;
			for (ly = 0; y[ly] >= '0' && y[ly] <= '9'; ly++)
				;
			if (lx != ly)
				return lx < ly ? -1 : 1;
			for (size_t k = 0; k < lx; k++)
				if (x[k] != y[k])
					return x[k] < y[k] ? -1 : 1;
			a = x + lx;
			b = y + ly;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

static char **sort_names;

static int cmp_idx(const void *a, const void *b)
{
	return natcmp(sort_names[*(const size_t *)a], sort_names[*(const size_t *)b]);
}

/* ------------------------------------------------------------ pass 1 */

static int on_line1(struct site *st, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct sjob *j;
	json_object *f = l->fields;
	const char *g, *sc;

	if (st->njobs == st->capjobs) {
		size_t nc = st->capjobs ? 2 * st->capjobs : 256;
		struct sjob *nj = realloc(st->jobs, nc * sizeof(*nj));
		if (!nj) {
			lwm2_errprintf(0, err, errlen, "out of memory");
			return 1;
		}
		st->jobs = nj;
		st->capjobs = nc;
	}
	j = &st->jobs[st->njobs];
	memset(j, 0, sizeof(*j));
	j->id = ju_int_or(f, "job_id", 0);
	j->start = ju_int_or(f, "start", 0);
	j->end = ju_int_or(f, "end", 0);
	j->user = strdup(ju_str(f, "user") ? ju_str(f, "user") : "?");
	j->account = strdup(ju_str(f, "account") ? ju_str(f, "account") : "");
	j->state = strdup(ju_str(f, "state") ? ju_str(f, "state") : "");
	j->mpi_avg = NAN;
	if (!j->user || !j->account || !j->state) {
		free(j->user);
		free(j->account);
		free(j->state);
		lwm2_errprintf(0, err, errlen, "out of memory");
		return 1;
	}
	st->njobs++;
	if (!l->digest)
		return 0;
	j->digest = true;
	if ((sc = lwm2_logline_member(l, LWM2_KEY_SCOPE))) {
		struct lwm2_scope s;
		if (lwm2_scope_from_text(&s, sc, l->end, 0) == 0) {
			j->procs = s.processes;
			if (s.stat[LWM2_M_mpi_time].n)
				j->mpi_avg = s.stat[LWM2_M_mpi_time].avg;
		}
	}
	/* the nodes: those with slices in the grid */
	if ((g = lwm2_logline_member(l, LWM2_KEY_GRID))) {
		json_object *ga = lwm2_json_parse_at(g, l->end);
		size_t n = ga && json_object_is_type(ga, json_type_array)
		               ? json_object_array_length(ga)
		               : 0;
		j->nodes = calloc(n + 1, sizeof(*j->nodes));
		for (size_t i = 0; j->nodes && i < n; i++) {
			const char *nn = ju_str(json_object_array_get_idx(ga, i), LWM2_KEY_NODE);
			long ni = nn ? node_intern(st, nn) : -1;
			bool dup = false;
			if (ni < 0)
				continue;
			for (size_t k = 0; k < j->nnodes && !dup; k++)
				dup = j->nodes[k] == (size_t)ni;
			if (!dup)
				j->nodes[j->nnodes++] = (size_t)ni;
		}
		json_object_put(ga);
	}
	return 0;
}

/* ------------------------------------------------------------ pass 2 */

/* The per-process table's processes by step and the site's index of their
 * node, sorted. */
static struct rp_stepnode *procs_table(const struct site *st, json_object *digest, size_t *np)
{
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	json_object *rnodes = ju_get(ranks, LWM2_KEY_NODES, json_type_array);
	json_object *rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
	size_t nn = rnodes ? json_object_array_length(rnodes) : 0;
	size_t nr = rows ? json_object_array_length(rows) : 0;
	long *map = calloc(nn + 1, sizeof(*map));
	struct rp_stepnode *t = malloc((nr + 1) * sizeof(*t));

	*np = 0;
	if (!map || !t) {
		free(map);
		free(t);
		return NULL;
	}
	for (size_t i = 0; i < nn; i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(rnodes, i));
		map[i] = name ? node_find(st, name) : -1;
	}
	for (size_t r = 0; r < nr; r++) {
		json_object *rw = json_object_array_get_idx(rows, r);
		int ni = json_object_get_int(json_object_array_get_idx(rw, 1));
		if (ni < 0 || (size_t)ni >= nn || map[ni] < 0)
			continue;
		t[*np].step = json_object_get_int64(json_object_array_get_idx(rw, 0));
		t[*np].node = map[ni];
		(*np)++;
	}
	free(map);
	rp_stepnode_sort(t, *np);
	return t;
}

static void add_slices(struct site *st, json_object *digest)
{
	json_object *grid = ju_get(digest, LWM2_KEY_GRID, json_type_array);
	size_t n = grid ? json_object_array_length(grid) : 0, np = 0;
	struct rp_stepnode *pt = procs_table(st, digest, &np);
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	/* slices are clipped to the job's run: a step's last slice (the
	 * batch script's 60 s, say) reaches past its end */
	int64_t js = ju_int_or(job, LWM2_KEY_START, 0), je = ju_int_or(job, LWM2_KEY_END, 0);

	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(grid, i);
		json_object *c = ju_get(g, LWM2_KEY_C, json_type_object);
		const char *nn = ju_str(g, LWM2_KEY_NODE);
		int64_t first = ju_int_or(g, LWM2_KEY_FIRST_SLICE, 0),
		        ns = ju_int_or(g, LWM2_KEY_N, 0);
		int64_t L = ju_int_or(g, LWM2_KEY_SLICE_LENGTH_S, 0),
		        step = ju_int_or(g, LWM2_KEY_STEP, 0);
		long ni = nn ? node_find(st, nn) : -1;
		double procs = 0;
		size_t row;

		if (!c || ni < 0 || L <= 0 || ns <= 0 || ns > 1 << 20)
			continue;
		row = st->row_of[ni];
		/* processes of this step on this node, for the MPI share */
		if (pt)
			procs = (double)rp_stepnode_count(pt, np, step, ni);
		for (int64_t k = 0; k < ns; k++) {
			int64_t ts = (first + k) * L, col;
			double mpi = RP_SERIES_SUM(c, lwm2_mpi_time_names, k);
			size_t cell;

			double vm = lwm2_slice_mpi_share(mpi, (double)L, procs);
			double vi = RP_SERIES_IO_BYTES(c, k) / (double)L;
			double vc = rp_series_at(c, "hwc_cycles", k) / (double)L;
			int64_t c1;

			int64_t a = ts, b = ts + L;

			if (je > js && js > 0) {
				a = a > js ? a : js;
				b = b < je ? b : je;
			}
			if (b <= a || b <= st->t0 || a >= st->t1)
				continue;
			/* a slice counts in every column it overlaps */
			col = a > st->t0 ? (a - st->t0) / st->colsec : 0;
			c1 = (b - 1 - st->t0) / st->colsec;
			for (; col <= c1 && (size_t)col < st->cols; col++) {
				cell = row * st->cols + (size_t)col;
				st->sum[SM_MPI][cell] += vm;
				st->sum[SM_IO][cell] += vi;
				st->sum[SM_CPU][cell] += vc;
				st->cnt[cell] += 1;
			}
		}
	}
	free(pt);
}

static int mkdir_p(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int on_line2(struct site *st, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct sjob *j = &st->jobs[st->cur++];
	json_object *d;
	char path[4096], dir[4096], up[600];
	FILE *f;

	if (!l->digest)
		return 0;
	if (!(d = lwm2_json_parse_at(l->digest, l->end)))
		return lwm2_errprintf(0, err, errlen, "job %" PRId64 ": the digest is not JSON",
		                      j->id);
	if (lwm2_digest_validate(d, err, errlen) != 0) {
		json_object_put(d);
		return -1;
	}
	add_slices(st, d);
	snprintf(dir, sizeof(dir), "%s/jobs/%" PRId64, st->o->outdir, j->id);
	snprintf(path, sizeof(path), "%s/jobs/%" PRId64 ".html", st->o->outdir, j->id);
	if (mkdir_p(dir) != 0 || !(f = fopen(path, "we"))) {
		lwm2_log_error("report: couldn't write %s: %s", path, strerror(errno));
		json_object_put(d);
		st->rc = 1;
		return 1;
	}
	{
		char nh[64], uh[512];
		struct rp_job_opts jo = {.source = "log", .up_label = "user"};
		snprintf(nh, sizeof(nh), "%" PRId64 "/node-%%s.html", j->id);
		/* user names from the log go into a file name: plain ones only */
		snprintf(uh, sizeof(uh), "../users/%s.html", j->user);
		jo.node_href = nh;
		jo.up_href = strchr(j->user, '/') || j->user[0] == '.' ? "../index.html" : uh;
		if (rp_job_page(f, d, &jo) != 0)
			st->rc = 1;
	}
	if (fclose(f) != 0)
		st->rc = 1;
	snprintf(up, sizeof(up), "../%" PRId64 ".html", j->id);
	if (rp_job_node_pages(dir, d, up) != 0)
		st->rc = 1;
	json_object_put(d);
	return 0;
}

/* ------------------------------------------------------------ waste */

/* Rows of each waste table: the site page is for acting on the worst. */
#define WASTE_TOP 20

static const char *const waste_kind[3] = {"Users", "Accounts", "Applications"};
static const char *const waste_id[3] = {"user", "account", "app"};

static int waste_line(struct site *st, const struct lwm2_logline *l)
{
	struct lwm2_usage u;
	char app[256];

	lwm2_usage_of_line(l, &u);
	lwm2_usage_app(l, app, sizeof(app));
	if (lwm2_usage_table_add(&st->waste[0], ju_str(l->fields, "user"), &u) < 0 ||
	    lwm2_usage_table_add(&st->waste[1], ju_str(l->fields, "account"), &u) < 0 ||
	    lwm2_usage_table_add(&st->waste[2], app, &u) < 0)
		return -1;
	return 0;
}

static void waste_num(FILE *f, double v, const char *fmt)
{
	if (isnan(v)) {
		fputs("<td class=\"n\">-</td>", f);
		return;
	}
	fputs("<td class=\"n\">", f);
	fprintf(f, fmt, v);
	fputs("</td>", f);
}

/* One table per kind: the WASTE_TOP groups that wasted the most
 * core-hours, with what they requested and used (usage.h). */
static void waste_tables(FILE *f, const struct site *st)
{
	fputs("<h2 id=\"waste\">Wasted core-hours</h2>\n<p class=\"small\">Requested: allocated "
	      "cores &times; elapsed time; used: CPU time of the job's processes; wasted: "
	      "requested &minus; used, over the jobs with a digest. Memory: the jobs' "
	      "requests and peaks where both are known, &ldquo;-&rdquo; where not "
	      "measured.</p>\n",
	      f);
	for (int k = 0; k < 3; k++) {
		const struct lwm2_usage_table *t = &st->waste[k];
		struct lwm2_usage_group **v = lwm2_usage_table_ranked(t);

		fprintf(f, "<h3>%s</h3>\n", waste_kind[k]);
		if (!v || !t->n) {
			fputs("<p class=\"miss\">No jobs.</p>\n", f);
			free(v);
			continue;
		}
		fprintf(f,
		        "<table class=\"waste\" data-kind=\"%s\">\n<tr><th>#</th><th>name</th>"
		        "<th>jobs</th><th>requested core-h</th><th>used core-h</th>"
		        "<th>efficiency %%</th><th>wasted core-h</th><th>memory requested GB</th>"
		        "<th>memory peak GB</th></tr>\n",
		        waste_id[k]);
		for (size_t i = 0; i < t->n && i < WASTE_TOP; i++) {
			const struct lwm2_usage_sum *u = &v[i]->s;

			fprintf(f, "<tr><td class=\"n\">%zu</td><td>", i + 1);
			rp_esc(f, v[i]->name);
			fprintf(f, "</td><td class=\"n\">%" PRIu64 "</td>", u->jobs);
			waste_num(f, u->req_core_h, "%.1f");
			waste_num(f, u->measured ? u->used_core_h : NAN, "%.1f");
			waste_num(f, lwm2_usage_efficiency(u), "%.1f");
			waste_num(f, lwm2_usage_waste(u), "%.1f");
			waste_num(f, u->mem_jobs ? u->mem_req_mb / 1024 : NAN, "%.1f");
			waste_num(f, u->mem_jobs ? u->mem_peak_mb / 1024 : NAN, "%.1f");
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
		if (t->n > WASTE_TOP)
			fprintf(f, "<p class=\"small\">%zu more not shown.</p>\n",
			        t->n - WASTE_TOP);
		free(v);
	}
}

static bool selected(const struct site *st, const struct lwm2_logline *l)
{
	int64_t end = ju_int_or(l->fields, "end", 0);

	return !(st->sel_start && end < st->sel_start) && !(st->sel_end && end > st->sel_end);
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct site *st = arg;

	if (!selected(st, l))
		return 0;
	if (st->pass == 1) {
		if (waste_line(st, l) < 0) {
			lwm2_errprintf(0, err, errlen, "out of memory");
			return 1;
		}
		return on_line1(st, l, err, errlen);
	}
	if (st->cur >= st->njobs)
		return 1; /* the log grew between the passes */
	return on_line2(st, l, err, errlen);
}

/* ------------------------------------------------------------ grid */

/* Where the grid lies in its SVG: the left edge of the cells, a column's
 * width and a row's height. */
struct grid_geo {
	double x0, cw, rh;
};

/* The grid's block and what it shows: the metric, its scale, the rows and
 * columns. */
static void grid_head(FILE *f, const struct site *st, int m, double vmax)
{
	char b[64];

	fprintf(f,
	        "<div class=\"grid\" data-metric=\"%s\" data-rows=\"%zu\" data-cols=\"%zu\" "
	        "data-per-row=\"%zu\" data-colsec=\"%" PRId64 "\">\n",
	        sm_id[m], st->rows, st->cols, st->per_row, st->colsec);
	fputs("<p class=\"small\">", f);
	rp_esc(f, sm_title[m]);
	fprintf(f, ": colour from 0 (light) to %s (dark); white: no measured job. ",
	        rp_fmt(vmax, sm_unit[m], b, sizeof(b)));
	fprintf(f,
	        "%zu node rows of %zu node(s) each, %zu columns of %" PRId64
	        " s; a cell is the mean of the node slices that fall in it. "
	        "Each job is outlined and links to its page.</p>\n",
	        st->rows, st->per_row, st->cols, st->colsec);
	rp_legend(f, vmax, sm_unit[m]);
}

/* The cells, one path per colour level. */
static void grid_cells(FILE *f, const struct site *st, int m, double vmax, const struct grid_geo *g)
{
	struct rp_path p[RP_LEVELS];

	memset(p, 0, sizeof(p));
	for (size_t r = 0; r < st->rows; r++)
		for (size_t c = 0; c < st->cols; c++) {
			size_t i = r * st->cols + c;
			double v;
			int lv;
			if (!st->cnt[i])
				continue;
			v = st->sum[m][i] / st->cnt[i];
			lv = vmax > 0 ? (int)(v / vmax * (RP_LEVELS - 1) + 0.5) : 0;
			rp_path_rect(&p[lv], g->x0 + (double)c * g->cw, 4 + (double)r * g->rh,
			             g->cw, g->rh);
		}
	for (int lv = 0; lv < RP_LEVELS; lv++) {
		char col[8];
		rp_color((double)lv / (RP_LEVELS - 1), col);
		rp_path_emit(f, &p[lv], col, "cell");
		rp_path_free(&p[lv]);
	}
}

/* One job's boundary: one outline per run of consecutive rows, linking
 * to its page, while *outlines stays below OUTLINES_MAX. */
static void job_outline(FILE *f, const struct site *st, const struct sjob *j,
                        const struct grid_geo *g, const char *job_prefix, size_t *outlines)
{
	const double x0 = g->x0, cw = g->cw, rh = g->rh;
	bool *on;
	double xa, xb;

	xa = x0 + (double)(j->start - st->t0) / (double)st->colsec * cw;
	xb = x0 + (double)(j->end - st->t0) / (double)st->colsec * cw;
	if (xa < x0)
		xa = x0;
	if (xb > x0 + cw * (double)st->cols)
		xb = x0 + cw * (double)st->cols;
	if (xb <= xa)
		xb = xa + 1;
	if (!(on = calloc(st->rows, sizeof(*on))))
		return;
	for (size_t k = 0; k < j->nnodes; k++)
		on[st->row_of[j->nodes[k]]] = true;
	for (size_t r = 0; r < st->rows && *outlines < OUTLINES_MAX; r++) {
		size_t r1 = r;
		if (!on[r])
			continue;
		while (r1 + 1 < st->rows && on[r1 + 1])
			r1++;
		fprintf(f,
		        "<a href=\"%s%" PRId64 ".html\"><rect class=\"job\" x=\"%.1f\" "
		        "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>job %" PRId64 " (",
		        job_prefix, j->id, xa, 4 + (double)r * rh, xb - xa,
		        (double)(r1 - r + 1) * rh, j->id);
		rp_esc(f, j->user);
		fputs(")</title></rect></a>", f);
		(*outlines)++;
		r = r1;
	}
	free(on);
}

/* The node names beside the rows (the first node of a row; with rows too
 * thin for every name, every few rows). */
static void row_labels(FILE *f, const struct site *st, const struct grid_geo *g)
{
	for (size_t r = 0; r < st->rows; r++) {
		size_t first = SIZE_MAX;
		if (g->rh < 9 && r % (size_t)(12 / g->rh + 1))
			continue;
		for (size_t k = 0; k < st->nnames && first == SIZE_MAX; k++)
			if (st->row_of[k] == r)
				first = k;
		if (first != SIZE_MAX)
			rp_svg_text(f, g->x0 - 4, 4 + ((double)r + 0.8) * g->rh, "end", NULL,
			            st->names[first]);
	}
}

/* The time axis under the grid. */
static void time_axis(FILE *f, const struct site *st, const struct grid_geo *g)
{
	const double x0 = g->x0, cw = g->cw;
	double yb = 4 + g->rh * (double)st->rows;
	struct tm tm;
	time_t tt;
	char b[64];

	fprintf(f, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", x0, yb + 2,
	        x0 + cw * (double)st->cols);
	/* as many time marks as fit, the date only where the span
	 * needs it */
	int marks = cw * (double)st->cols >= 600 ? 4 : cw * (double)st->cols >= 300 ? 2 : 1;
	const char *fmt = st->t1 - st->t0 > 86400 ? "%m-%d %H:%M" : "%H:%M:%S";
	for (int k = 0; k <= marks; k++) {
		tt = (time_t)(st->t0 + (st->t1 - st->t0) * k / marks);
		if (!localtime_r(&tt, &tm) || !strftime(b, sizeof(b), fmt, &tm))
			snprintf(b, sizeof(b), "?");
		rp_svg_text(f, x0 + cw * (double)st->cols * k / marks, yb + 16,
		            k == 0       ? "start"
		            : k == marks ? "end"
		                         : "middle",
		            NULL, b);
	}
}

static void grid_svg(FILE *f, const struct site *st, int m, const char *job_prefix)
{
	double vmax = 0;
	struct grid_geo g = {.x0 = 110};
	size_t outlines = 0;
	char lab[256];

	for (size_t i = 0; i < st->rows * st->cols; i++)
		if (st->cnt[i] && st->sum[m][i] / st->cnt[i] > vmax)
			vmax = st->sum[m][i] / st->cnt[i];
	g.cw = (double)st->o->width / (double)st->cols;
	if (g.cw > 120)
		g.cw = 120;
	g.rh = 600.0 / (double)(st->rows ? st->rows : 1);
	if (g.rh > 24)
		g.rh = 24;
	if (g.rh < 1)
		g.rh = 1;
	grid_head(f, st, m, vmax);
	snprintf(lab, sizeof(lab), "space-time grid: %s per node and time", sm_title[m]);
	rp_svg_begin(f, (int)(g.x0 + g.cw * (double)st->cols + 10),
	             (int)(g.rh * (double)st->rows + 40), lab);
	grid_cells(f, st, m, vmax, &g);
	/* job boundaries: one outline per run of consecutive rows */
	for (size_t ji = 0; ji < st->njobs; ji++)
		if (st->jobs[ji].nnodes && st->jobs[ji].digest)
			job_outline(f, st, &st->jobs[ji], &g, job_prefix, &outlines);
	row_labels(f, st, &g);
	time_axis(f, st, &g);
	rp_svg_end(f);
	if (outlines >= OUTLINES_MAX)
		fprintf(f, "<p class=\"note\">Only the first %d job outlines are drawn.</p>\n",
		        OUTLINES_MAX);
	fputs("</div>\n", f);
}

static void grid_links(FILE *f, int cur)
{
	fputs("<p class=\"small\">Colour by: ", f);
	for (int m = 0; m < NSM; m++) {
		if (m == cur)
			fprintf(f, "%s<b>", m ? " · " : "");
		else
			fprintf(f, "%s<a href=\"grid-%s.html\">", m ? " · " : "", sm_id[m]);
		rp_esc(f, sm_title[m]);
		fputs(m == cur ? "</b>" : "</a>", f);
	}
	fputs("</p>\n", f);
}

/* ------------------------------------------------------------ statistics */

/* The selected jobs' statistics grouped by by (LWM2_BY_NONE: all as one
 * group), as `lwm2 stats` gives them; what cannot be read is left out. */
static void stats_of(const struct site *st, enum lwm2_stats_by by, struct lwm2_stats *s)
{
	s->by = by;
	s->start = st->sel_start;
	s->end = st->sel_end;
	if (st->o->src->db[0])
		lwm2_stats_read_db(s, "stats", st->o->src->db);
	else
		lwm2_stats_read(s, "stats", st->o->src->files, st->o->src->nfiles);
}

/* A figure as the page shows it: 0 for what is not a number, and for -0. */
static double shown(double v)
{
	return isfinite(v) && v != 0 ? v : 0;
}

static void dist_plot(FILE *f, const struct lwm2_stats_group *total)
{
	static const struct {
		const char *label, *unit;
	} ds[LWM2_SM_N] = {
	    [LWM2_SM_MPI] = {"MPI share (time in MPI calls)", "%"},
	    [LWM2_SM_IO] = {"POSIX I/O share (time in file I/O)", "%"},
	    [LWM2_SM_TPC] = {"Average threads per allocated core", ""},
	    [LWM2_SM_CPI] = {"Cycles per instruction", ""},
	};
	fputs("<h2 id=\"dist\">Distributions, weighted by core-hours</h2>\n"
	      "<p class=\"small\">Box: quartiles of the core-hours (a job counts by its "
	      "allocated cores x elapsed time); line: median; whiskers: minimum and maximum "
	      "over the jobs.</p>\n",
	      f);
	for (int i = 0; i < LWM2_SM_N; i++) {
		const struct lwm2_stats_dist *d = &total->d[i];
		double v[5] = {d->min, lwm2_stats_dist_q(d, i, 0.25), lwm2_stats_dist_q(d, i, 0.5),
		               lwm2_stats_dist_q(d, i, 0.75), d->max},
		       lo, hi, x0 = 20, x1 = 640;
		char b1[64], b2[64];
		bool ok = d->n > 0;

		/* a quartile without values is not shown; minimum and maximum
		 * are there with the first value */
		for (int q = 0; ok && q < 5; q++) {
			ok = q == 0 || q == 4 || !isnan(v[q]);
			v[q] = shown(v[q]);
		}
		fputs("<h3>", f);
		rp_esc(f, ds[i].label);
		fputs("</h3>\n", f);
		if (!ok) {
			fputs("<p class=\"miss\">No job measured this.</p>\n", f);
			continue;
		}
		fprintf(f,
		        "<p class=\"small\" data-dist=\"%s\" data-median=\"%.6g\">%" PRId64
		        " jobs, %s core-hours; median %s</p>\n",
		        lwm2_stats_metrics[i].id, v[2], (int64_t)d->n,
		        rp_fmt(shown(d->w), "", b1, sizeof(b1)),
		        rp_fmt(v[2], ds[i].unit, b2, sizeof(b2)));
		lo = v[0];
		hi = v[4] > v[0] ? v[4] : v[0] + 1;
#define X(val) (x0 + ((val)-lo) / (hi - lo) * (x1 - x0))
		/* 48: the values' baseline is at 44, their descenders below */
		rp_svg_begin(f, 680, 48, ds[i].label);
		fprintf(f, "<path class=\"ax\" d=\"M%.1f 34H%.1f\"/>", x0, x1);
		fprintf(f,
		        "<path class=\"wh\" d=\"M%.1f 8V28M%.1f 18H%.1fM%.1f 18H%.1fM%.1f 8V28\"/>",
		        X(v[0]), X(v[0]), X(v[1]), X(v[3]), X(v[4]), X(v[4]));
		fprintf(f, "<path class=\"box\" d=\"M%.1f 6H%.1fV30H%.1fZ\"/>", X(v[1]),
		        X(v[3]) > X(v[1]) + 1 ? X(v[3]) : X(v[1]) + 1, X(v[1]));
		fprintf(f, "<path class=\"med\" d=\"M%.1f 6V30\"/>", X(v[2]));
		rp_svg_text(f, x0, 44, "start", NULL, rp_fmt(lo, ds[i].unit, b1, sizeof(b1)));
		rp_svg_text(f, x1, 44, "end", NULL, rp_fmt(hi, ds[i].unit, b1, sizeof(b1)));
		rp_svg_end(f);
#undef X
	}
}

/* How the jobs spread over the --histogram metric: one bar a bucket, of
 * the width `lwm2 stats --histogram` chooses, the jobs without a value
 * said apart. */
static void hist_plot(FILE *f, const struct lwm2_stats *s)
{
	const struct lwm2_histbin *h = &s->total.hist;
	const char *mid = lwm2_metric_ids[s->hist_metric];
	double width = h->n ? lwm2_histbin_width(h->min, h->max) : 1, *w = NULL;
	uint64_t *c = NULL, top = 0;
	int64_t first;
	size_t nb = 0;
	char title[160];

	snprintf(title, sizeof(title), "%s.%s: %s", mid, lwm2_stats_hist_stats[s->hist_stat],
	         lwm2_metric_labels[s->hist_metric]);
	fputs("<h2 id=\"histogram\">Histogram</h2>\n<h3>", f);
	rp_esc(f, title);
	fprintf(f, "</h3>\n<p class=\"small\" data-histogram=\"%s\" data-bucket=\"%.10g\">%zu jobs",
	        mid, width, h->n);
	if (h->absent)
		fprintf(f, "; %" PRIu64 " without a value (no digest, or not measured)", h->absent);
	fputs("</p>\n", f);
	if (!h->n || lwm2_histbin_buckets(h, width, &first, &nb, &c, &w) < 0) {
		fputs("<p class=\"miss\">No job measured this.</p>\n", f);
		return;
	}
	for (size_t i = 0; i < nb; i++)
		top = c[i] > top ? c[i] : top;
	rp_svg_begin(f, 680, (int)(nb * 20 + 6), title);
	{
		struct rp_path p = {0};

		for (size_t i = 0; i < nb; i++)
			rp_path_rect(&p, 160, 4 + (double)i * 20,
			             top ? (double)c[i] / (double)top * 300 + 1 : 1, 14);
		rp_path_emit(f, &p, NULL, "bar");
		rp_path_free(&p);
	}
	for (size_t i = 0; i < nb; i++) {
		char lab[160];

		snprintf(lab, sizeof(lab), "[%.10g, %.10g)",
		         lwm2_histbin_edge(first + (int64_t)i, width),
		         lwm2_histbin_edge(first + (int64_t)i + 1, width));
		rp_svg_text(f, 154, 16 + (double)i * 20, "end", NULL, lab);
		snprintf(lab, sizeof(lab), "%" PRIu64 " jobs, %.1f %%", c[i],
		         100.0 * (double)c[i] / (double)h->n);
		rp_svg_text(f, 470, 16 + (double)i * 20, "start", NULL, lab);
	}
	rp_svg_end(f);
	free(c);
	free(w);
}

/* The top 10 groups by core-hours as bars, with their MPI share. */
static void top_plot(FILE *f, const struct lwm2_stats *s, const char *title, const char *href_dir)
{
	size_t n = 0, k;
	struct lwm2_stats_group **a = lwm2_stats_groups(s, &n);
	double maxch = 0, ch;
	char b[64];

	k = n < 10 ? n : 10;
	fputs("<h3>", f);
	rp_esc(f, title);
	fputs("</h3>\n", f);
	if (!k) {
		fputs("<p class=\"miss\">No jobs.</p>\n", f);
		free(a);
		return;
	}
	for (size_t i = 0; i < k; i++)
		if (shown(a[i]->core_h) > maxch)
			maxch = shown(a[i]->core_h);
	rp_svg_begin(f, 680, (int)(k * 20 + 6), title);
	{
		struct rp_path p = {0};
		for (size_t i = 0; i < k; i++) {
			ch = shown(a[i]->core_h);
			rp_path_rect(&p, 160, 4 + (double)i * 20,
			             maxch > 0 ? ch / maxch * 300 + 1 : 1, 14);
		}
		rp_path_emit(f, &p, NULL, "bar");
		rp_path_free(&p);
	}
	for (size_t i = 0; i < k; i++) {
		const struct lwm2_stats_group *g = a[i];
		const char *name = g->name;
		/* the mean MPI share where a job has one */
		double mean = lwm2_stats_dist_mean(&g->d[LWM2_SM_MPI]);
		bool mpi = !isnan(mean);
		char lab[160];

		if (href_dir && !strchr(name, '/') && name[0] != '.') {
			fprintf(f, "<a href=\"%s/", href_dir);
			rp_esc(f, name);
			fputs(".html\">", f);
		}
		rp_svg_text(f, 154, 16 + (double)i * 20, "end", NULL, name);
		if (href_dir && !strchr(name, '/') && name[0] != '.')
			fputs("</a>", f);
		snprintf(lab, sizeof(lab), "%s core-h, %" PRId64 " jobs%s%s",
		         rp_fmt(shown(g->core_h), "", b, sizeof(b)), (int64_t)g->jobs,
		         mpi ? ", MPI " : "", "");
		if (mpi) {
			char b2[32];
			snprintf(lab + strlen(lab), sizeof(lab) - strlen(lab), "%s",
			         rp_fmt(shown(mean), "%", b2, sizeof(b2)));
		}
		rp_svg_text(f, 470, 16 + (double)i * 20, "start", NULL, lab);
	}
	rp_svg_end(f);
	free(a);
}

/* ------------------------------------------------------------ pages */

static FILE *open_page(struct site *st, const char *rel)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", st->o->outdir, rel);
	if (!(f = fopen(path, "we"))) {
		lwm2_log_error("report: couldn't write %s: %s", path, strerror(errno));
		st->rc = 1;
	}
	return f;
}

static void close_page(struct site *st, FILE *f, const char *rel)
{
	if (fclose(f) != 0) {
		lwm2_log_error("report: couldn't write %s/%s: %s", st->o->outdir, rel,
		               strerror(errno));
		st->rc = 1;
	}
}

static void window_text(const struct site *st, char *buf, size_t len)
{
	char a[32], b[32];
	struct tm tm;
	time_t t0 = (time_t)st->t0, t1 = (time_t)st->t1;

	if (!localtime_r(&t0, &tm) || !strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(a, sizeof(a), "?");
	if (!localtime_r(&t1, &tm) || !strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(b, sizeof(b), "?");
	snprintf(buf, len, "%s to %s", a, b);
}

static int cmp_user(const void *a, const void *b)
{
	const struct sjob *x = *(const struct sjob *const *)a, *y = *(const struct sjob *const *)b;
	int c = strcmp(x->user, y->user);

	return c ? c : (x->id > y->id) - (x->id < y->id);
}

static void user_pages(struct site *st)
{
	struct sjob **js = malloc((st->njobs + 1) * sizeof(*js));
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/users", st->o->outdir);
	if (!js || mkdir_p(dir) != 0) {
		lwm2_log_error("report: couldn't write %s: %s", dir, strerror(errno));
		st->rc = 1;
		free(js);
		return;
	}
	for (size_t i = 0; i < st->njobs; i++)
		js[i] = &st->jobs[i];
	qsort(js, st->njobs, sizeof(*js), cmp_user);
	for (size_t i = 0; i < st->njobs;) {
		size_t e = i;
		char rel[600], title[300], b[64];
		FILE *f;

		while (e < st->njobs && !strcmp(js[e]->user, js[i]->user))
			e++;
		if (strchr(js[i]->user, '/') || js[i]->user[0] == '.') {
			i = e;
			continue;
		}
		snprintf(rel, sizeof(rel), "users/%s.html", js[i]->user);
		if (!(f = open_page(st, rel)))
			break;
		snprintf(title, sizeof(title), "lwm2 report: user %s", js[i]->user);
		rp_page_begin(f, title);
		fputs("<p class=\"small\"><a href=\"../index.html\">site</a></p>\n<h1>", f);
		rp_esc(f, title);
		fprintf(f,
		        "</h1>\n<p>%zu jobs.</p>\n<table class=\"jobs\"><tr><th>Job</th>"
		        "<th>Account</th><th>State</th><th>Start</th><th>Elapsed</th><th>Nodes"
		        "</th><th>Processes</th><th>MPI (avg)</th></tr>\n",
		        e - i);
		for (size_t k = i; k < e; k++) {
			const struct sjob *j = js[k];
			struct tm tm;
			time_t tt = (time_t)j->start;
			char ts[32];
			if (!localtime_r(&tt, &tm) ||
			    !strftime(ts, sizeof(ts), "%Y-%m-%d %H:%M", &tm))
				snprintf(ts, sizeof(ts), "-");
			if (j->digest)
				fprintf(f,
				        "<tr><td><a href=\"../jobs/%" PRId64 ".html\">%" PRId64
				        "</a></td>",
				        j->id, j->id);
			else
				fprintf(f, "<tr><td>%" PRId64 " (no digest)</td>", j->id);
			fputs("<td>", f);
			rp_esc(f, j->account);
			fputs("</td><td>", f);
			rp_esc(f, j->state);
			fprintf(
			    f,
			    "</td><td>%s</td><td class=\"n\">%" PRId64 " s</td><td class=\"n\">%zu"
			    "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%s</td></tr>\n",
			    ts, j->end > j->start ? j->end - j->start : 0, j->nnodes, j->procs,
			    isfinite(j->mpi_avg) ? rp_fmt(j->mpi_avg, "%", b, sizeof(b)) : "-");
		}
		fputs("</table>\n", f);
		rp_page_end(f);
		close_page(st, f, rel);
		i = e;
	}
	free(js);
}

/* ss: the statistics of all jobs, by user, by account, by program. */
static void index_page(struct site *st, const struct lwm2_stats ss[4], int chosen)
{
	FILE *f = open_page(st, "index.html");
	char w[128];
	size_t with = 0;

	if (!f)
		return;
	for (size_t i = 0; i < st->njobs; i++)
		with += st->jobs[i].digest;
	window_text(st, w, sizeof(w));
	rp_page_begin(f, "lwm2 report: site");
	fputs("<h1>lwm2 report: site</h1>\n", f);
	fprintf(f, "<p>%zu jobs (%zu with a digest) on %zu nodes, ", st->njobs, with, st->nnames);
	rp_esc(f, w);
	fputs(".</p>\n<p class=\"small\"><a href=\"#grid\">Space-time grid</a> · <a href=\"#dist\">"
	      "Distributions</a> · <a href=\"#top\">Top users, accounts, programs</a> · "
	      "<a href=\"#waste\">Wasted core-hours</a></p>\n",
	      f);
	fputs("<h2 id=\"grid\">Space-time grid</h2>\n", f);
	grid_links(f, chosen);
	if (st->rows && st->cols)
		grid_svg(f, st, chosen, "jobs/");
	else
		fputs("<p class=\"miss\">No time slices in the selected jobs.</p>\n", f);
	dist_plot(f, &ss[0].total);
	if (ss[0].hist)
		hist_plot(f, &ss[0]);
	fputs("<h2 id=\"top\">Top users, accounts and programs by core-hours</h2>\n", f);
	top_plot(f, &ss[1], "Users", "users");
	top_plot(f, &ss[2], "Accounts", NULL);
	top_plot(f, &ss[3], "Programs", NULL);
	waste_tables(f, st);
	rp_page_end(f);
	close_page(st, f, "index.html");
}

static void grid_pages(struct site *st)
{
	for (int m = 0; m < NSM; m++) {
		char rel[64], title[128], w[128];
		FILE *f;

		snprintf(rel, sizeof(rel), "grid-%s.html", sm_id[m]);
		if (!(f = open_page(st, rel)))
			return;
		snprintf(title, sizeof(title), "lwm2 report: space-time grid, %s", sm_title[m]);
		rp_page_begin(f, title);
		fputs("<p class=\"small\"><a href=\"index.html\">site</a></p>\n<h1>", f);
		rp_esc(f, title);
		window_text(st, w, sizeof(w));
		fputs("</h1>\n<p>", f);
		rp_esc(f, w);
		fputs("</p>\n", f);
		grid_links(f, m);
		if (st->rows && st->cols)
			grid_svg(f, st, m, "jobs/");
		rp_page_end(f);
		close_page(st, f, rel);
	}
}

/* ------------------------------------------------------------ main */

static void layout(struct site *st)
{
	size_t *order;
	int64_t minL = 0;

	if (!st->sel_start || !st->sel_end) {
		int64_t a = INT64_MAX, b = 0;
		for (size_t i = 0; i < st->njobs; i++) {
			if (!st->jobs[i].digest || st->jobs[i].start <= 0)
				continue;
			if (st->jobs[i].start < a)
				a = st->jobs[i].start;
			if (st->jobs[i].end > b)
				b = st->jobs[i].end;
		}
		st->t0 = st->sel_start ? st->sel_start : (a == INT64_MAX ? 0 : a);
		st->t1 = st->sel_end ? st->sel_end : b;
	} else {
		st->t0 = st->sel_start;
		st->t1 = st->sel_end;
	}
	if (st->t1 <= st->t0)
		st->t1 = st->t0 + 1;
	/* columns: whole seconds, as few as fit the width, never finer than
	 * a second */
	st->colsec = (st->t1 - st->t0 + st->o->width - 1) / st->o->width;
	(void)minL;
	if (st->colsec < 1)
		st->colsec = 1;
	st->cols = (size_t)((st->t1 - st->t0 + st->colsec - 1) / st->colsec);
	st->per_row = (st->nnames + (size_t)st->o->height - 1) / (size_t)st->o->height;
	if (st->per_row < 1)
		st->per_row = 1;
	st->rows = (st->nnames + st->per_row - 1) / st->per_row;
	st->row_of = calloc(st->nnames + 1, sizeof(*st->row_of));
	order = malloc((st->nnames + 1) * sizeof(*order));
	if (!st->row_of || !order) {
		free(order);
		st->rows = 0;
		return;
	}
	for (size_t i = 0; i < st->nnames; i++)
		order[i] = i;
	sort_names = st->names;
	qsort(order, st->nnames, sizeof(*order), cmp_idx);
	for (size_t i = 0; i < st->nnames; i++)
		st->row_of[order[i]] = i / st->per_row;
	/* the names array keeps its order; labels look rows up by row_of */
	free(order);
}

int rp_site(const struct rp_site_opts *o)
{
	struct site st;
	static const enum lwm2_stats_by bys[4] = {LWM2_BY_NONE, LWM2_BY_USER, LWM2_BY_ACCOUNT,
	                                          LWM2_BY_EXE};
	struct lwm2_stats ss[4];
	struct lwm2_db_select sel = {.metric = -1};
	char dir[4096];
	int chosen = !strcmp(o->metric, "io") ? SM_IO : !strcmp(o->metric, "cpu") ? SM_CPU : SM_MPI;

	memset(&st, 0, sizeof(st));
	memset(ss, 0, sizeof(ss));
	st.o = o;
	if ((o->start && lwm2_parse_time(o->start, &st.sel_start) != 0) ||
	    (o->end && lwm2_parse_time(o->end, &st.sel_end) != 0)) {
		lwm2_log_error("report: bad time in -S or -E");
		return 2;
	}
	/* the jobs that ended in the period, read from the database by its
	 * index on the end (the pages select them again) */
	sel.start = st.sel_start;
	sel.end = st.sel_end;
	snprintf(dir, sizeof(dir), "%s/jobs", o->outdir);
	if (mkdir_p(o->outdir) != 0 || mkdir_p(dir) != 0) {
		lwm2_log_error("report: couldn't make %s: %s", dir, strerror(errno));
		return 1;
	}
	st.pass = 1;
	if (lwm2_source_scan("report", o->src, &sel, true, on_line, &st) < 0)
		st.rc = 1;
	layout(&st);
	st.cnt = calloc(st.rows * st.cols + 1, sizeof(*st.cnt));
	for (int m = 0; m < NSM; m++)
		st.sum[m] = calloc(st.rows * st.cols + 1, sizeof(*st.sum[m]));
	if (!st.cnt || !st.sum[0] || !st.sum[1] || !st.sum[2]) {
		lwm2_log_error("report: out of memory for the grid");
		st.rc = 1;
		goto out;
	}
	st.pass = 2;
	if (lwm2_source_scan("report", o->src, &sel, true, on_line, &st) < 0)
		st.rc = 1;
	/* the histogram's values with the statistics of all jobs */
	if (o->histogram)
		lwm2_stats_hist_set(&ss[0], "report", o->histogram, NULL);
	for (int k = 0; k < 4; k++)
		stats_of(&st, bys[k], &ss[k]);
	index_page(&st, ss, chosen);
	grid_pages(&st);
	user_pages(&st);
out:
	for (int k = 0; k < 4; k++)
		lwm2_stats_free(&ss[k]);
	for (size_t i = 0; i < st.njobs; i++) {
		free(st.jobs[i].user);
		free(st.jobs[i].account);
		free(st.jobs[i].state);
		free(st.jobs[i].nodes);
	}
	free(st.jobs);
	for (int k = 0; k < 3; k++)
		lwm2_usage_table_free(&st.waste[k]);
	for (size_t i = 0; i < st.nnames; i++)
		free(st.names[i]);
	free(st.names);
	free(st.htab);
	free(st.row_of);
	free(st.cnt);
	for (int m = 0; m < NSM; m++)
		free(st.sum[m]);
	return st.rc;
}
