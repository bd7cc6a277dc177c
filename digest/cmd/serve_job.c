/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One job: its report (`lwm2 report`'s page), its digest as JSON, and one
 * counter of its time slices per node and slice as CSV (LWM2's HTTP
 * query).  A job the viewer may not see is answered as one that does not
 * exist.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "db.h"
#include "errmsg.h"
#include "jsonutil.h"
#include "logscan.h"
#include "lwm2_keys.h"
#include "numparse.h"
#include "report.h"
#include "serve_pages.h"

struct find {
	const struct serve_viewer *viewer;
	json_object *digest;
	bool seen;   /* a line of the job the viewer may see */
	int64_t end; /* the end of the run whose digest it is */
};

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct find *fd = arg;
	struct lwm2_jobrow j;
	json_object *d;
	char why[256];

	lwm2_jobrow_fields(l, &j);
	if (!serve_viewer_sees(fd->viewer, j.user, j.account))
		return 0;
	fd->seen = true;
	if (!l->digest)
		return 0;
	if (!(d = lwm2_logline_digest(l, why, sizeof(why))))
		return lwm2_errprintf(0, err, errlen, "%s", why);
	/* a requeued job is logged once per run: the last one counts */
	json_object_put(fd->digest);
	fd->digest = d;
	fd->end = j.end;
	return 0;
}

/* The job's digest where the viewer may see it (*end: when the job
 * ended, end NULL: not wanted); NULL with rp filled. */
static json_object *job_digest(const struct serve_request *rq, const char *id, bool want_grid,
                               struct serve_reply *rp, int64_t *end)
{
	struct find fd = {.viewer = rq->viewer};
	struct lwm2_db_lines_count c = {0};
	struct lwm2_db *db;
	int64_t job;
	char err[512];
	int rc;

	if (lwm2_parse_i64(id, NULL, 1, INT64_MAX, &job) < 0) {
		serve_error(rp, 400, "job: want a plain job id, not '%.64s'", id);
		return NULL;
	}
	if (!(db = lwm2_db_open(rq->db_url, LWM2_DB_READ, err, sizeof(err)))) {
		serve_error(rp, 503, "%s", err);
		return NULL;
	}
	rc = lwm2_db_lines(db, "serve",
	                   &(struct lwm2_db_select){.metric = -1, .job_ids = &job, .njob_ids = 1},
	                   want_grid, on_line, &fd, &c, err, sizeof(err));
	lwm2_db_close(db);
	if (rc < 0) {
		json_object_put(fd.digest);
		serve_error(rp, 503, "%s", err);
		return NULL;
	}
	if (!fd.digest)
		serve_error(rp, 404, "job %" PRId64 ": %s", job,
		            fd.seen ? "no digest" : "no such job that you may see");
	if (end)
		*end = fd.end;
	return fd.digest;
}

/* The job's report page, or its digest as JSON. */
static void job_reply(const struct serve_request *rq, const char *id, struct serve_reply *rp,
                      bool page)
{
	struct rp_job_opts o = {
	    .source = "log", .up_href = "/", .up_label = "all jobs", .made_by = "lwm2 serve"};
	char node_href[128];
	int64_t end = 0;
	json_object *d = job_digest(rq, id, true, rp, &end);
	struct serve_body b;

	if (!d)
		return;
	/* each node's page over the days around the job's end, so that the
	 * job is among the node's jobs there */
	snprintf(node_href, sizeof(node_href), "/node/%%s?start=@%" PRId64 "&end=@%" PRId64,
	         end - SERVE_DAYS * 86400, end + SERVE_DAYS * 86400);
	o.node_href = node_href;
	if (!serve_body_open(&b)) {
		json_object_put(d);
		serve_error(rp, 500, "out of memory");
		return;
	}
	if (!page) {
		serve_body_json(&b, rp, d);
		return;
	}
	rp_job_page(b.f, d, &o);
	json_object_put(d);
	serve_body_close(&b, rp, 200, "text/html; charset=utf-8");
}

void serve_job_page(const struct serve_request *rq, const char *id, struct serve_reply *rp)
{
	job_reply(rq, id, rp, true);
}

void serve_job_json(const struct serve_request *rq, const char *id, struct serve_reply *rp)
{
	job_reply(rq, id, rp, false);
}

/* ------------------------------------------------------------ series */

struct point {
	const char *node;
	int64_t t;
	double v;
};

static int cmp_point(const void *pa, const void *pb)
{
	const struct point *a = pa, *b = pb;
	int c = strcmp(a->node, b->node);

	return c ? c : (a->t > b->t) - (a->t < b->t);
}

/* The grid's lines' series of name, each slice a point (steps on the same
 * node added up).  The number of points, or -1 (out of memory). */
static long series_points(json_object *grid, const char *name, struct point **out, bool *known)
{
	size_t n = json_object_array_length(grid), np = 0, cap = 0;
	struct point *p = NULL;

	*known = false;
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(grid, i);
		json_object *c = ju_get(g, LWM2_KEY_C, json_type_object);
		const char *node = ju_str(g, LWM2_KEY_NODE);
		int64_t first = ju_int_or(g, LWM2_KEY_FIRST_SLICE, 0);
		int64_t len = ju_int_or(g, LWM2_KEY_SLICE_LENGTH_S, 0);
		int64_t k, ns = ju_int_or(g, LWM2_KEY_N, 0);

		if (!c || !node || len <= 0 || ns <= 0 || ns > 1 << 20)
			continue;
		if (!ju_get(c, name, json_type_array))
			continue;
		*known = true;
		for (k = 0; k < ns; k++) {
			if (np == cap) {
				size_t nc = cap ? 2 * cap : 1024;
				struct point *q = realloc(p, nc * sizeof(*q));

				if (!q) {
					free(p);
					return -1;
				}
				p = q;
				cap = nc;
			}
			p[np++] = (struct point){node, (first + k) * len, rp_series_at(c, name, k)};
		}
	}
	if (np)
		qsort(p, np, sizeof(*p), cmp_point);
	/* steps side by side on a node: one point per node and slice */
	size_t w = 0;

	for (size_t i = 0; i < np; i++) {
		if (w && strcmp(p[w - 1].node, p[i].node) == 0 && p[w - 1].t == p[i].t)
			p[w - 1].v += p[i].v;
		else
			p[w++] = p[i];
	}
	*out = p;
	return (long)w;
}

/* The names of the series of a grid, for an error's text. */
static void series_names(json_object *grid, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	if (json_object_array_length(grid) == 0)
		return;
	json_object *c = ju_get(json_object_array_get_idx(grid, 0), LWM2_KEY_C, json_type_object);

	if (!c)
		return;
	json_object_object_foreach(c, key, val)
	{
		int w;

		(void)val;
		w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", key);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

void serve_series(const struct serve_request *rq, struct serve_reply *rp)
{
	const char *job = rq->arg(rq->ctx, "job"), *name = rq->arg(rq->ctx, "metric");
	struct point *p = NULL;
	json_object *d, *grid;
	char names[1024];
	struct serve_body b;
	bool known;
	long n;

	if (!job || !name || !*name || strlen(name) > 64) {
		serve_error(rp, 400,
		            "want job=ID and metric=NAME (a counter of the job's time slices)");
		return;
	}
	if (!(d = job_digest(rq, job, true, rp, NULL)))
		return;
	if (!(grid = ju_get(d, LWM2_KEY_GRID, json_type_array))) {
		json_object_put(d);
		serve_error(rp, 404, "job %s: no time-slice series in its digest", job);
		return;
	}
	if ((n = series_points(grid, name, &p, &known)) < 0) {
		json_object_put(d);
		serve_error(rp, 500, "out of memory");
		return;
	}
	if (!known) {
		series_names(grid, names, sizeof(names));
		json_object_put(d);
		free(p);
		serve_error(rp, 404, "job %s has no series '%s'; it has: %s", job, name, names);
		return;
	}
	if (!serve_body_open(&b)) {
		json_object_put(d);
		free(p);
		serve_error(rp, 500, "out of memory");
		return;
	}
	fputs("node,time,value\n", b.f);
	for (long i = 0; i < n; i++) {
		serve_csv_field(b.f, p[i].node);
		fprintf(b.f, ",%" PRId64 ",%.17g\n", p[i].t, p[i].v);
	}
	free(p);
	json_object_put(d);
	snprintf(rp->disposition, sizeof(rp->disposition),
	         "attachment; filename=\"lwm2-%.20s-%.64s.csv\"", job, name);
	serve_body_close(&b, rp, 200, "text/csv; charset=utf-8");
}
