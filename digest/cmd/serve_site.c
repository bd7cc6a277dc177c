/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The site's groups: the selected jobs the viewer may see by user,
 * account, application, partition, state or cluster (by=), as TOPAS
 * breaks a workload down: jobs and their share (Num%), core-hours and
 * their share (Time%), and the MPI and I/O shares weighted by core-hours.
 * Each group links to its jobs.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "errmsg.h"
#include "grow.h"
#include "report.h"
#include "serve_pages.h"

struct group {
	char *name; /* malloc'd */
	unsigned long jobs;
	double core_h;
	double w[LWM2_JR_N], wv[LWM2_JR_N]; /* weights and weighted sums */
};

/* The groups and what they add up to. */
struct groups {
	struct group *g;
	size_t n, cap;
	size_t jobs;
	double core_h;
};

static void groups_free(struct groups *gs)
{
	for (size_t i = 0; i < gs->n; i++)
		free(gs->g[i].name);
	free(gs->g);
}

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;

	if (a->core_h != b->core_h)
		return a->core_h < b->core_h ? 1 : -1;
	if (a->jobs != b->jobs)
		return a->jobs < b->jobs ? 1 : -1;
	return strcmp(a->name, b->name);
}

static int on_group(void *arg, const struct lwm2_db_group *dg)
{
	struct groups *gs = arg;
	struct group *g;

	/* the jobs without the text and those with "": one group */
	for (size_t i = 0; !*dg->name && i < gs->n; i++)
		if (!*gs->g[i].name) {
			g = &gs->g[i];
			g->jobs += (unsigned long)dg->jobs;
			g->core_h += dg->core_h;
			for (int k = 0; k < LWM2_JR_N; k++) {
				g->w[k] += dg->w[k];
				g->wv[k] += dg->wv[k];
			}
			gs->jobs += (unsigned long)dg->jobs;
			gs->core_h += dg->core_h;
			return 0;
		}

	if (LWM2_GROW(gs->g, gs->n, gs->cap, 64) < 0)
		return -1;
	g = &gs->g[gs->n];
	if (!(g->name = strdup(dg->name)))
		return -1;
	g->jobs = (unsigned long)dg->jobs;
	g->core_h = dg->core_h;
	memcpy(g->w, dg->w, sizeof(g->w));
	memcpy(g->wv, dg->wv, sizeof(g->wv));
	gs->n++;
	gs->jobs += g->jobs;
	gs->core_h += g->core_h;
	return 0;
}

struct group_ask {
	struct groups *gs;
	int by;
};

static int ask_groups(struct lwm2_db *db, const struct lwm2_db_query *dq, void *arg, char *err,
                      size_t errlen)
{
	const struct group_ask *ga = arg;

	return lwm2_db_groups(db, dq, ga->by, on_group, ga->gs, err, errlen);
}

/* The groups by text filter f of the jobs q selects that rq's viewer
 * may see, as the database groups them, largest first.  0, or -1 with
 * err. */
static int groups_read(const struct serve_request *rq, const struct serve_query *q, int f,
                       struct groups *gs, char *err, size_t errlen)
{
	memset(gs, 0, sizeof(*gs));
	if (serve_db_ask(rq, q, NULL, ask_groups, &(struct group_ask){gs, f}, err, errlen) < 0) {
		groups_free(gs);
		return -1;
	}
	if (gs->n)
		qsort(gs->g, gs->n, sizeof(*gs->g), cmp_group);
	return 0;
}

static double share(double part, double all)
{
	return all > 0 ? 100.0 * part / all : 0.0;
}

/* A weighted average as text, "" where no job had the figure. */
static const char *avg(const struct group *g, int k, char *buf, size_t len)
{
	if (g->w[k] <= 0)
		return "";
	snprintf(buf, len, "%.1f", g->wv[k] / g->w[k]);
	return buf;
}

static void site_html(FILE *f, const struct serve_query *q, const char *by, const struct groups *gs,
                      const struct serve_viewer *v)
{
	char title[128], a[32], b[32];

	snprintf(title, sizeof(title), "lwm2: jobs by %s", by);
	rp_page_begin(f, title);
	fprintf(f, "<h1>Jobs by %s</h1>\n<p class=\"small\">", by);
	serve_signed_in(f, v);
	fputs(". <a href=\"/", f);
	serve_query_args(f, q, NULL, NULL);
	fputs("\">The jobs themselves</a>. By:", f);
	for (int i = 0; i < SQ_NFILTERS; i++) {
		fprintf(f, " <a href=\"/site");
		serve_query_args(f, q, "by", serve_filter_names[i]);
		fprintf(f, "\">%s</a>", serve_filter_names[i]);
	}
	fprintf(f, "</p>\n<p>%zu jobs, %.1f core-hours, in %zu groups.</p>\n", gs->jobs, gs->core_h,
	        gs->n);
	fprintf(f,
	        "<table class=\"jobs\"><thead><tr><th>%s</th><th>Jobs</th><th>Num%%</th>"
	        "<th>Core-h</th><th>Time%%</th><th>MPI %%</th><th>I/O %%</th></tr></thead>\n"
	        "<tbody>\n",
	        by);
	for (size_t i = 0; i < gs->n; i++) {
		const struct group *g = gs->g;

		fputs("<tr><td><a href=\"/", f);
		serve_query_args(f, q, by, g[i].name);
		fputs("\">", f);
		rp_esc(f, *g[i].name ? g[i].name : "(none)");
		fprintf(f,
		        "</a></td><td>%lu</td><td>%.1f</td><td>%.2f</td><td>%.1f</td><td>%s</td>"
		        "<td>%s</td></tr>\n",
		        g[i].jobs, share((double)g[i].jobs, (double)gs->jobs), g[i].core_h,
		        share(g[i].core_h, gs->core_h), avg(&g[i], LWM2_JR_MPI, a, sizeof(a)),
		        avg(&g[i], LWM2_JR_IO, b, sizeof(b)));
	}
	fputs("</tbody></table>\n", f);
	rp_page_end_by(f, "lwm2 serve");
}

static void site_csv(FILE *f, const char *by, const struct groups *gs)
{
	const struct group *g = gs->g;
	char a[32], b[32];

	fprintf(f, "%s,jobs,num_pct,core_h,time_pct,mpi_time,posix_io_time\n", by);
	for (size_t i = 0; i < gs->n; i++) {
		serve_csv_field(f, g[i].name);
		fprintf(f, ",%lu,%.2f,%.4f,%.2f,%s,%s\n", g[i].jobs,
		        share((double)g[i].jobs, (double)gs->jobs), g[i].core_h,
		        share(g[i].core_h, gs->core_h), avg(&g[i], LWM2_JR_MPI, a, sizeof(a)),
		        avg(&g[i], LWM2_JR_IO, b, sizeof(b)));
	}
}

static json_object *site_json(const char *by, const struct groups *gs)
{
	const struct group *g = gs->g;
	json_object *o = json_object_new_object(), *a = json_object_new_array();

	json_object_object_add(o, "by", json_object_new_string(by));
	json_object_object_add(o, "jobs", json_object_new_int64((int64_t)gs->jobs));
	json_object_object_add(o, "core_h", json_object_new_double(gs->core_h));
	for (size_t i = 0; i < gs->n; i++) {
		json_object *e = json_object_new_object();

		json_object_object_add(e, "name", json_object_new_string(g[i].name));
		json_object_object_add(e, "jobs", json_object_new_int64((int64_t)g[i].jobs));
		json_object_object_add(
		    e, "num_pct",
		    json_object_new_double(share((double)g[i].jobs, (double)gs->jobs)));
		json_object_object_add(e, "core_h", json_object_new_double(g[i].core_h));
		json_object_object_add(e, "time_pct",
		                       json_object_new_double(share(g[i].core_h, gs->core_h)));
		for (int k = LWM2_JR_MPI; k <= LWM2_JR_IO; k++)
			if (g[i].w[k] > 0)
				json_object_object_add(
				    e, k == LWM2_JR_MPI ? "mpi_time" : "posix_io_time",
				    json_object_new_double(g[i].wv[k] / g[i].w[k]));
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "groups", a);
	return o;
}

void serve_site(const struct serve_request *rq, struct serve_reply *rp)
{
	const char *by = rq->arg(rq->ctx, "by");
	struct serve_query q;
	struct groups gs;
	struct serve_body b;
	char err[512];
	int f = -1;

	if (!by || !*by)
		by = "user";
	for (int i = 0; i < SQ_NFILTERS; i++)
		if (strcmp(by, serve_filter_names[i]) == 0)
			f = i;
	if (f < 0) {
		serve_error(rp, 400,
		            "by: want user, account, app, partition, state, cluster, language, mpi "
		            "or mode");
		return;
	}
	if (serve_query_read(rq, (int64_t)time(NULL), &q, err, sizeof(err)) < 0) {
		serve_error(rp, 400, "%s", err);
		return;
	}
	if (groups_read(rq, &q, f, &gs, err, sizeof(err)) < 0) {
		serve_error(rp, 503, "%s", err);
		return;
	}
	if (!serve_body_open(&b)) {
		groups_free(&gs);
		serve_error(rp, 500, "out of memory");
		return;
	}
	by = serve_filter_names[f];
	if (q.format == SF_CSV) {
		site_csv(b.f, by, &gs);
		snprintf(rp->disposition, sizeof(rp->disposition),
		         "attachment; filename=\"lwm2-by-%s.csv\"", by);
		serve_body_close(&b, rp, 200, "text/csv; charset=utf-8");
	} else if (q.format == SF_JSON) {
		serve_body_json(&b, rp, site_json(by, &gs));
	} else {
		site_html(b.f, &q, by, &gs, rq->viewer);
		serve_body_close(&b, rp, 200, "text/html; charset=utf-8");
	}
	groups_free(&gs);
}
