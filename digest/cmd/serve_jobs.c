/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job list: the query builder and its jobs as a page (sortable,
 * paged, each user, account and application a link narrowing the list),
 * and the same selection as CSV and JSON.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "report.h"
#include "serve_pages.h"

static void jobs_csv(FILE *f, const struct serve_rows *rs)
{
	char buf[64];

	for (int c = 0; c < SC_N; c++)
		fprintf(f, "%s%s", c ? "," : "", serve_cols[c].id);
	fputc('\n', f);
	for (size_t i = 0; i < rs->n; i++)
		for (int c = 0; c < SC_N; c++) {
			if (c)
				fputc(',', f);
			serve_csv_field(f,
			                serve_cell(&rs->r[i], (enum serve_col)c, buf, sizeof(buf)));
			if (c == SC_N - 1)
				fputc('\n', f);
		}
}

static json_object *jobs_json(const struct serve_rows *rs, const struct serve_query *q)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char buf[64];

	json_object_object_add(o, "total", json_object_new_int64((int64_t)rs->total));
	json_object_object_add(o, "core_h", json_object_new_double(rs->core_h));
	json_object_object_add(o, "page", json_object_new_int64(q->page));
	json_object_object_add(o, "per", json_object_new_int64(q->per));
	for (size_t i = 0; i < rs->n; i++) {
		const struct serve_row *r = &rs->r[i];
		json_object *j = json_object_new_object();

		for (int c = 0; c < SC_N; c++) {
			int k = serve_cols[c].value;
			json_object *v;

			if (k >= 0)
				v = r->has[k] ? json_object_new_double(r->v[k]) : NULL;
			else if (c == SC_ELAPSED)
				v = json_object_new_int64(r->elapsed);
			else if (c == SC_CORE_H)
				v = json_object_new_double(r->core_h);
			else
				v = json_object_new_string(
				    serve_cell(r, (enum serve_col)c, buf, sizeof(buf)));
			json_object_object_add(j, serve_cols[c].id, v);
		}
		json_object_array_add(a, j);
	}
	json_object_object_add(o, "jobs", a);
	return o;
}

/* The address of the list: "/", or a node's page ("/node/NAME"). */
static void list_href(FILE *f, const char *node)
{
	fputs("/", f);
	if (node) {
		fputs("node/", f);
		serve_url_value(f, node);
	}
}

/* A labelled field of the query builder. */
static void form_text(FILE *f, const char *name, const char *label, const char *value)
{
	fprintf(f,
	        "<label style=\"display:flex;justify-content:space-between;gap:.4em\">%s "
	        "<input name=\"%s\" size=\"12\" value=\"",
	        label, name);
	rp_esc(f, value);
	fputs("\"></label>\n", f);
}

static void jobs_form(FILE *f, const struct serve_query *q, const char *node)
{
	char num[32];

	/* a grid of labelled fields, as many to a line as the window takes */
	fputs("<form method=\"get\" action=\"", f);
	list_href(f, node);
	fputs("\" class=\"small\" style=\"display:grid;"
	      "grid-template-columns:repeat(auto-fill,minmax(15em,1fr));gap:.3em 1.5em;"
	      "max-width:75em\">\n",
	      f);
	for (int i = 0; i < SQ_NFILTERS; i++)
		form_text(f, serve_filter_names[i], serve_filter_names[i], q->filter[i]);
	form_text(f, "start", "ended from", q->start_arg);
	form_text(f, "end", "ended to", q->end_arg);
	fputs("<label style=\"display:flex;justify-content:space-between;gap:.4em\">metric "
	      "<select name=\"metric\"><option value=\"\">(none)</option>",
	      f);
	for (int c = 0; c < SC_N; c++)
		if (serve_cols[c].value >= 0)
			fprintf(f, "<option value=\"%s\"%s>%s</option>", serve_cols[c].id,
			        q->metric == c ? " selected" : "", serve_cols[c].head);
	fputs("</select></label>\n", f);
	snprintf(num, sizeof(num), "%g", q->min);
	form_text(f, "min", "metric from", q->has_min ? num : "");
	snprintf(num, sizeof(num), "%g", q->max);
	form_text(f, "max", "metric to", q->has_max ? num : "");
	fputs("<span><button type=\"submit\">Show</button> <a href=\"", f);
	list_href(f, node);
	fputs("\">all</a></span></form>\n", f);
}

/* A cell that narrows the list to its value (the drill-down). */
static void narrowing_cell(FILE *f, const struct serve_query *q, const char *node, const char *name,
                           const char *v)
{
	fputs("<td>", f);
	if (*v) {
		fputs("<a href=\"", f);
		list_href(f, node);
		serve_query_args(f, q, name, v);
		fputs("\">", f);
		rp_esc(f, v);
		fputs("</a>", f);
	}
	fputs("</td>", f);
}

/* The page's head: the query builder, the figures, the downloads and
 * the groups (the list of all jobs), or the node's (a node's page). */
static void jobs_head(FILE *f, const struct serve_rows *rs, const struct serve_query *q,
                      const struct serve_viewer *v, const char *node)
{
	if (node) {
		rp_page_begin(f, "lwm2: jobs on a node");
		fputs("<h1>Jobs on node ", f);
		rp_esc(f, node);
		fputs("</h1>\n<p class=\"small\">", f);
		serve_signed_in(f, v);
		fputs(". <a href=\"/", f);
		serve_query_args(f, q, NULL, NULL);
		fputs("\">All nodes' jobs</a>.</p>\n", f);
		jobs_form(f, q, node);
		fprintf(f, "<p>%zu jobs ran on ", rs->total);
		rp_esc(f, node);
		fprintf(f, ", %.1f core-hours.</p>\n", rs->core_h);
		return;
	}
	rp_page_begin(f, "lwm2: jobs");
	fputs("<h1>Jobs</h1>\n<p class=\"small\">", f);
	serve_signed_in(f, v);
	fputs("</p>\n", f);
	jobs_form(f, q, NULL);
	fprintf(f, "<p>%zu jobs, %.1f core-hours. ", rs->total, rs->core_h);
	fputs("Download: <a href=\"/api/jobs", f);
	serve_query_args(f, q, "format", "csv");
	fputs("\">CSV</a> · <a href=\"/api/jobs", f);
	serve_query_args(f, q, "format", "json");
	fputs("\">JSON</a>. The same jobs by", f);
	for (int i = 0; i < SQ_NFILTERS; i++) {
		if (i == SQ_STATE)
			continue;
		fputs(i ? ", <a href=\"/site" : " <a href=\"/site", f);
		serve_query_args(f, q, "by", serve_filter_names[i]);
		fprintf(f, "\">%s</a>", serve_filter_names[i]);
	}
	fputs(".</p>\n", f);
}

static void jobs_html(FILE *f, const struct serve_rows *rs, const struct serve_query *q,
                      const struct serve_viewer *v, const char *node)
{
	char buf[64], page[32];

	jobs_head(f, rs, q, v, node);
	fputs("<table class=\"jobs\"><thead><tr>", f);
	for (int c = 0; c < SC_N; c++) {
		bool here = q->sort == (enum serve_col)c;
		struct serve_query flip = *q;

		flip.sort = (enum serve_col)c;
		flip.desc = here ? !q->desc : true;
		fputs("<th><a href=\"", f);
		list_href(f, node);
		serve_query_args(f, &flip, NULL, NULL);
		fprintf(f, "\">%s%s</a></th>", serve_cols[c].head,
		        here ? (q->desc ? " ▼" : " ▲") : "");
	}
	fputs("</tr></thead>\n<tbody>\n", f);
	for (size_t i = 0; i < rs->n; i++) {
		const struct serve_row *r = &rs->r[i];

		fputs("<tr><td><a href=\"/job/", f);
		serve_url_value(f, r->id);
		fputs("\">", f);
		rp_esc(f, r->id);
		fputs("</a></td>", f);
		for (int c = SC_CLUSTER; c < SC_N; c++) {
			int t = serve_text_col((enum serve_col)c);

			if (t >= 0 && t != SQ_STATE) {
				narrowing_cell(f, q, node, serve_filter_names[t], r->text[t]);
				continue;
			}
			fputs("<td>", f);
			rp_esc(f, serve_cell(r, (enum serve_col)c, buf, sizeof(buf)));
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n<p>", f);
	if (q->page > 1) {
		snprintf(page, sizeof(page), "%ld", q->page - 1);
		fputs("<a href=\"", f);
		list_href(f, node);
		serve_query_args(f, q, "page", page);
		fputs("\">← earlier page</a> ", f);
	}
	fprintf(f, "page %ld of %zu", q->page, (rs->total + (size_t)q->per - 1) / (size_t)q->per);
	if ((size_t)(q->page - 1) * (size_t)q->per + rs->n < rs->total) {
		snprintf(page, sizeof(page), "%ld", q->page + 1);
		fputs(" <a href=\"", f);
		list_href(f, node);
		serve_query_args(f, q, "page", page);
		fputs("\">next page →</a>", f);
	}
	fputs("</p>\n", f);
	rp_page_end_by(f, "lwm2 serve");
}

/* The jobs of the query (node: those that ran on it) as a page, or
 * (api) as JSON or CSV. */
static void jobs_reply(const struct serve_request *rq, struct serve_reply *rp, bool api,
                       const char *node)
{
	struct serve_query q;
	struct serve_rows rs;
	struct serve_body b;
	char err[512];

	if (serve_query_read(rq, (int64_t)time(NULL), &q, err, sizeof(err)) < 0) {
		serve_error(rp, 400, "%s", err);
		return;
	}
	if (api && q.format == SF_HTML)
		q.format = SF_JSON;
	if (serve_rows_read(rq, &q, node, &rs, err, sizeof(err)) < 0) {
		serve_error(rp, 503, "%s", err);
		return;
	}
	if (!serve_body_open(&b)) {
		serve_rows_free(&rs);
		serve_error(rp, 500, "out of memory");
		return;
	}
	if (q.format == SF_CSV) {
		jobs_csv(b.f, &rs);
		snprintf(rp->disposition, sizeof(rp->disposition),
		         "attachment; filename=\"lwm2-jobs.csv\"");
		serve_body_close(&b, rp, 200, "text/csv; charset=utf-8");
	} else if (q.format == SF_JSON) {
		serve_body_json(&b, rp, jobs_json(&rs, &q));
	} else {
		jobs_html(b.f, &rs, &q, rq->viewer, node);
		serve_body_close(&b, rp, 200, "text/html; charset=utf-8");
	}
	serve_rows_free(&rs);
}

void serve_jobs(const struct serve_request *rq, struct serve_reply *rp, bool api)
{
	jobs_reply(rq, rp, api, NULL);
}

void serve_node(const struct serve_request *rq, const char *node, struct serve_reply *rp)
{
	/* a node's name as Slurm writes it: no path, no markup */
	if (!*node || strlen(node) >= 256 || strpbrk(node, "/<>\"'&%?#")) {
		serve_error(rp, 400, "node: want a node's name, not '%.64s'", node);
		return;
	}
	jobs_reply(rq, rp, false, node);
}
