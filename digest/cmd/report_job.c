/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page of one job: metadata, the digest table with guidance (the
 * numbers and texts of the text digest), the per-rank view (box plots
 * per metric with outliers named by rank and node, stacked time shares
 * per rank, sorted) and the job's row of the space-time grid (per node
 * and step, per wall-clock slice).  What the digest cannot show, because
 * it is the compact form of AdminComment or because nodes or processes
 * are missing, is said next to the plot it affects.
 */
#include "report.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "jsonutil.h"
#include "log.h"
#include "lwm2_digest.h"
#include "lwm2_render.h"
#include "lwm2_sums.h"
#include "stepname.h"

/* Per-rank stacked bars drawn at most; more processes are put into this
 * many buckets of consecutive processes (in sorted order), each bar their
 * average. */
#define BARS_MAX 800
/* Outliers named per metric in the text, and dots drawn per metric. */
#define OUTLIERS_NAMED 8
#define OUTLIER_DOTS   400
/* Grid columns and rows drawn at most; more slices or node rows are
 * averaged into these. */
#define GRID_COLS 600
#define GRID_ROWS 200

/* "rank 3 on n1", with the step where the job has processes of several
 * (the batch script is task 0 of its own step). */
static void pname(FILE *f, const struct rp_ptable *t, const struct rp_prow *r)
{
	char b[32];

	fprintf(f, "rank %d on ", r->rank);
	rp_esc(f, rp_pnode(t, r));
	if (t->multi_step)
		fprintf(f, " (step %s)", lwm2_step_name(r->step, b, sizeof(b)));
}

/* The address of a node's page: node_href with the name, escaped, in
 * place of its "%s" (node names are data, never a format). */
static void node_link(FILE *f, const struct rp_job_opts *o, const char *node)
{
	const char *p = strstr(o->node_href, "%s");

	if (!p) {
		rp_esc(f, o->node_href);
		return;
	}
	fwrite(o->node_href, 1, (size_t)(p - o->node_href), f);
	rp_esc(f, node);
	rp_esc(f, p + 2);
}

/* The anchor of a process on its node page. */
static void panchor(FILE *f, const struct rp_ptable *t, const struct rp_prow *r)
{
	char b[32];

	fprintf(f, "rank-%d", r->rank);
	if (t->multi_step)
		fprintf(f, "-step-%s", lwm2_step_name(r->step, b, sizeof(b)));
}

/* ------------------------------------------------------------ small parts */

static void fmt_time(int64_t t, char *buf, size_t len)
{
	struct tm tm;
	time_t tt = (time_t)t;

	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "-");
}

static void row_kv(FILE *f, const char *k, const char *v)
{
	fputs("<tr><th>", f);
	rp_esc(f, k);
	fputs("</th><td>", f);
	rp_esc(f, v ? v : "-");
	fputs("</td></tr>\n", f);
}

static void note(FILE *f, const char *cls, const char *text)
{
	fprintf(f, "<p class=\"%s\">", cls);
	rp_esc(f, text);
	fputs("</p>\n", f);
}

static bool has_flag(json_object *digest, const char *flag)
{
	json_object *fl = ju_get(digest, LWM2_KEY_FLAGS, json_type_array);

	for (size_t i = 0; fl && i < json_object_array_length(fl); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(fl, i));
		if (s && !strcmp(s, flag))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ sections */

static void section_meta(FILE *f, json_object *digest, const struct lwm2_scope *s,
                         const struct rp_job_opts *o)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object), *fl;
	char b[256], b2[64];
	int64_t start = ju_int_or(job, LWM2_KEY_START, 0), end = ju_int_or(job, LWM2_KEY_END, 0);

	fputs("<h2 id=\"meta\">Job</h2>\n<table class=\"meta\">\n", f);
	row_kv(f, "Cluster", ju_str(job, LWM2_KEY_CLUSTER));
	snprintf(b, sizeof(b), "%" PRId64, ju_int_or(job, LWM2_KEY_JOB_ID, 0));
	row_kv(f, "Job", b);
	row_kv(f, "User", ju_str(job, LWM2_KEY_USER));
	row_kv(f, "Account", ju_str(job, LWM2_KEY_ACCOUNT));
	row_kv(f, "Partition", ju_str(job, LWM2_KEY_PARTITION));
	row_kv(f, "State", ju_str(job, LWM2_KEY_STATE));
	snprintf(b, sizeof(b), "%s (%" PRId64 " allocated, %" PRIu64 " reporting)",
	         ju_str(job, LWM2_KEY_NODES) ? ju_str(job, LWM2_KEY_NODES) : "-",
	         ju_int_or(job, LWM2_KEY_NODE_COUNT, 0), s->nodes);
	row_kv(f, "Nodes", b);
	fmt_time(start, b, sizeof(b));
	row_kv(f, "Start", b);
	fmt_time(end, b, sizeof(b));
	row_kv(f, "End", b);
	snprintf(b2, sizeof(b2), "%" PRId64 " s", end > start && start > 0 ? end - start : 0);
	row_kv(f, "Elapsed", b2);
	{
		char unm[160];
		size_t n = lwm2_render_unmeasured(s, unm, sizeof(unm));

		snprintf(b, sizeof(b), "%" PRIu64 " (%" PRIu64 " MPI), %" PRIu64 " incomplete%s%s",
		         s->processes, s->mpi_processes, s->incomplete, n ? ", " : "", unm);
	}
	row_kv(f, "Processes", b);
	b[0] = '\0';
	fl = ju_get(digest, LWM2_KEY_FLAGS, json_type_array);
	for (size_t i = 0; fl && i < json_object_array_length(fl); i++) {
		const char *x = json_object_get_string(json_object_array_get_idx(fl, i));
		snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%s", i ? ", " : "", x ? x : "");
	}
	row_kv(f, "Flags", b[0] ? b : "none");
	if (s->hwc_events[0]) {
		/* "role=EVENT role=EVENT" as the text digest's "Counted with" */
		size_t k = 0;

		for (const char *p = s->hwc_events; *p && k + 3 < sizeof(b); p++) {
			if (*p == ' ') {
				b[k++] = ',';
				b[k++] = ' ';
			} else {
				b[k++] = *p == '=' ? ' ' : *p;
			}
		}
		b[k] = '\0';
		row_kv(f, "Counted with", b);
	}
	row_kv(f, "Digest",
	       ju_get(digest, LWM2_KEY_COMPACT, json_type_boolean)
	           ? "compact form (from AdminComment)"
	           : (o->source && !strcmp(o->source, "accounting") ? "from accounting"
	                                                            : "full form (from the log)"));
	fputs("</table>\n", f);
}

/* A note on the figures, its text formatted as printf does (511 bytes at
 * the most). */
static void __attribute__((format(printf, 2, 3))) notef(FILE *f, const char *fmt, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	note(f, "note", b);
}

static void notes_missing(FILE *f, json_object *digest, const struct lwm2_scope *s)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *inc = ju_get(digest, LWM2_KEY_INCOMPLETE_LIST, json_type_array);
	char b[512];

	if (has_flag(digest, "missing_nodes"))
		notef(f,
		      "Node records are missing: %" PRIu64 " of %" PRId64
		      " allocated nodes reported. The plots show only the nodes that reported.",
		      s->nodes, ju_int_or(job, LWM2_KEY_NODE_COUNT, 0));
	/* the text digest's notes, on the same flags: each says which figures
	 * are too low */
	if (s->io_uring)
		notef(f,
		      "%" PRIu64 " process(es) set up an io_uring; I/O submitted through it "
		      "is not counted, so their file I/O figures are too low.",
		      s->io_uring);
	if (s->mmap_write)
		notef(f,
		      "%" PRIu64 " process(es) mapped files shared and writable; data stored "
		      "through such a mapping is not counted as written.",
		      s->mmap_write);
	if (s->incomplete) {
		size_t n = inc ? json_object_array_length(inc) : 0;

		notef(f,
		      "%" PRIu64 " process(es) did not end normally (killed, or still "
		      "running at step end); their values cover the time until their last "
		      "record.",
		      s->incomplete);
		if (n) {
			fputs("<p class=\"small\">Incomplete: ", f);
			for (size_t i = 0; i < n && i < 32; i++) {
				json_object *e = json_object_array_get_idx(inc, i);
				snprintf(b, sizeof(b),
				         "%srank %" PRId64 " on %s (step %" PRId64 ")",
				         i ? ", " : "", ju_int_or(e, "rank", -1),
				         ju_str(e, LWM2_KEY_NODE) ? ju_str(e, LWM2_KEY_NODE) : "?",
				         ju_int_or(e, LWM2_KEY_STEP, 0));
				rp_esc(f, b);
			}
			fputs("</p>\n", f);
		}
	}
	if (s->partial && !has_flag(digest, "missing_nodes"))
		note(f, "note",
		     "Partial data: a memory budget was hit, rank records could not be read, or "
		     "fewer processes reported than were started on a node.");
	if (has_flag(digest, "no_data"))
		note(f, "note", "No processes were measured in this job.");
}

static void section_digest(FILE *f, const struct lwm2_scope *s)
{
	char b[64], label[160];
	int g = -1;

	fputs("<h2 id=\"digest\">Digest</h2>\n<table class=\"digest\">\n"
	      "<tr><th>Metric</th><th>min</th><th>avg</th><th>max</th><th>where min</th>"
	      "<th>where max</th></tr>\n",
	      f);
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_metric_stat *st = &s->stat[k];
		const char *u = lwm2_metric_units[k];

		if (st->n == 0 && lwm2_metric_on_request(k))
			continue;
		if ((int)lwm2_metric_groups[k] != g) {
			g = (int)lwm2_metric_groups[k];
			fputs("<tr class=\"sec\"><th colspan=\"6\">", f);
			rp_esc(f, lwm2_mgroup_titles[g]);
			fputs("</th></tr>\n", f);
		}
		fprintf(f, "<tr data-metric=\"%s\"", lwm2_metric_ids[k]);
		if (st->n) {
			/* the digest's own values, as its JSON writes them: a
			 * reader of the page gets the same numbers as one of
			 * the digest, not 6 digits of them */
			char mn[32], av[32], mx[32];

			fprintf(f, " data-min=\"%s\" data-avg=\"%s\" data-max=\"%s\"",
			        ju_double_text(st->min, mn, sizeof(mn)),
			        ju_double_text(st->avg, av, sizeof(av)),
			        ju_double_text(st->max, mx, sizeof(mx)));
		}
		fputs("><td>", f);
		rp_esc(f, lwm2_metric_label(s->hwc_events, k, label, sizeof(label)));
		fputs("</td>", f);
		if (!st->n) {
			fputs("<td colspan=\"5\" class=\"miss\">", f);
			rp_esc(f, st->reason ? st->reason : "not measured");
			fputs("</td></tr>\n", f);
			continue;
		}
		fprintf(f, "<td class=\"n\">%s</td>", rp_fmt(st->min, u, b, sizeof(b)));
		fprintf(f, "<td class=\"n avg\">%s</td>", rp_fmt(st->avg, u, b, sizeof(b)));
		fprintf(f, "<td class=\"n\">%s</td>", rp_fmt(st->max, u, b, sizeof(b)));
		for (int w = 0; w < 2; w++) {
			int32_t r = w ? st->max_rank : st->min_rank;
			const char *nd = w ? st->max_node : st->min_node;
			fputs("<td>", f);
			if (r >= 0 || (nd && *nd)) {
				snprintf(b, sizeof(b), "rank %" PRId32 " on ", r);
				rp_esc(f, b);
				rp_esc(f, nd ? nd : "?");
			}
			fputs("</td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<h3>Guidance</h3>\n", f);
	{
		int fired = 0;
		for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
			const struct lwm2_guidance_rule *rule = &lwm2_guidance_rules[r];
			if (!lwm2_guidance_fires(rule, s))
				continue;
			fired++;
			fprintf(f, "<div class=\"guide\" data-rule=\"%s\"><b>", rule->id);
			rp_esc(f, rule->finding);
			fputs("</b> [", f);
			rp_esc(f, rule->id);
			fputs("]<br>", f);
			rp_esc(f, rule->meaning);
			fputs("<br><i>Next:</i> ", f);
			rp_esc(f, rule->next);
			fputs("</div>\n", f);
		}
		if (!fired)
			fputs("<p>No guidance rule fires for this job.</p>\n", f);
	}
}

/* A digest made of others: the operation and its operands, in words. */
static void note_derived(FILE *f, json_object *digest)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (!ju_get(digest, LWM2_KEY_DERIVED, json_type_object) ||
	    !(m = open_memstream(&text, &len)))
		return;
	lwm2_derived_render(digest, m);
	if (fclose(m) == 0 && text)
		note(f, "note", text);
	free(text);
}

/* The job's derived metrics (lwm2.conf's DerivedMetric, or written into
 * the digest by lwm2 diff --output, mean, combine). */
static void section_derived_metrics(FILE *f, json_object *scope)
{
	json_object *dm = ju_get(scope, LWM2_KEY_DERIVED_METRICS, json_type_object);
	char b[64];
	double v;

	if (!dm || !json_object_object_length(dm))
		return;
	fputs("<h2 id=\"derived\">Derived metrics</h2>\n<table class=\"digest\">\n"
	      "<tr><th>Metric</th><th>value</th><th>expression</th></tr>\n",
	      f);
	json_object_object_foreach(dm, name, m)
	{
		const char *why = ju_str(m, LWM2_KEY_WHY), *expr = ju_str(m, LWM2_KEY_EXPR);

		if (ju_num(m, LWM2_KEY_VALUE, &v))
			ju_double_text(v, b, sizeof(b));
		else
			snprintf(b, sizeof(b), "n/a (%s)", why ? why : "no figure");
		fputs("<tr><th>", f);
		rp_esc(f, name);
		fputs("</th><td>", f);
		rp_esc(f, b);
		fputs("</td><td>", f);
		rp_esc(f, expr ? expr : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void section_steps(FILE *f, json_object *digest)
{
	json_object *steps = ju_get(digest, LWM2_KEY_STEPS, json_type_array);
	size_t n = steps ? json_object_array_length(steps) : 0;
	char b[64];

	fputs("<h2 id=\"steps\">Steps</h2>\n", f);
	if (ju_int_or(digest, LWM2_KEY_STEPS_OMITTED, 0) > 0) {
		snprintf(b, sizeof(b), "%" PRId64, ju_int_or(digest, LWM2_KEY_STEPS_OMITTED, 0));
		fputs("<p class=\"note\">The compact form left out ", f);
		rp_esc(f, b);
		fputs(" steps to fit AdminComment.</p>\n", f);
	}
	if (!n) {
		fputs("<p>No steps in the digest.</p>\n", f);
		return;
	}
	fputs("<table><tr><th>Step</th><th>Processes</th><th>Nodes</th><th>Duration (max)</th>"
	      "<th>MPI (avg)</th><th>POSIX I/O (avg)</th><th>Threads (avg)</th></tr>\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		json_object *st = json_object_array_get_idx(steps, i);
		struct lwm2_scope s;
		int64_t id = ju_int_or(st, LWM2_KEY_STEP_ID, 0);

		lwm2_scope_from_json(&s, st, NULL, 0);
		fprintf(f,
		        "<tr><td>%s</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64
		        "</td>",
		        lwm2_step_name(id, b, sizeof(b)), s.processes, s.nodes);
		{
			static const int ms[] = {LWM2_M_duration, LWM2_M_mpi_time,
			                         LWM2_M_posix_io_time, LWM2_M_avg_threads};
			for (size_t k = 0; k < 4; k++) {
				const struct lwm2_metric_stat *m = &s.stat[ms[k]];
				fprintf(f, "<td class=\"n\">%s</td>",
				        m->n ? rp_fmt(k ? m->avg : m->max, lwm2_metric_units[ms[k]],
				                      b, sizeof(b))
				             : "-");
			}
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* ------------------------------------------------------------ per-rank view */

struct outl {
	double v;
	const struct rp_prow *r;
};

static int cmp_outl(const void *a, const void *b)
{
	const struct outl *x = a, *y = b;

	return x->v > y->v ? -1 : x->v < y->v;
}

/* A metric's values over the processes, sorted, with its box. */
struct mbox {
	int m;
	double *v;
	size_t n;
	struct rp_box b;
};

static int mbox_load(struct mbox *x, const struct rp_ptable *t, int m)
{
	memset(x, 0, sizeof(*x));
	x->m = m;
	if (!(x->v = malloc((t->n + 1) * sizeof(*x->v))))
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (rp_pvalid(&t->rows[i], m))
			x->v[x->n++] = t->rows[i].v[m];
	if (!x->n)
		return -1;
	rp_sort(x->v, x->n);
	rp_box_stats(x->v, x->n, &x->b);
	return 0;
}

/* A box row: the label ends BOX_LABEL_GAP before the plot (the minimum's
 * value goes between), the plot is BOX_PLOT_W wide, BOX_RIGHT is left for
 * the maximum's value.  The plot starts at 250 or where the longest label
 * of the group needs it: 11 px sans-serif averages about 5 px a character
 * ("Time in MPI calls, without Init/Finalize" measured 207 px in
 * Chromium); 6.5 px a character leaves room for wider fonts. */
#define BOX_LABEL_GAP 70.0
#define BOX_PLOT_W    440.0
#define BOX_RIGHT     110.0

/* Metric m's label as the digest's counter events name it. */
static const char *plabel(const struct rp_ptable *t, int m, char *buf, size_t len)
{
	return lwm2_metric_label(t->hwc_events, m, buf, len);
}

static double box_x0(const struct rp_ptable *t, const struct mbox *xs, size_t n)
{
	char label[160];

	double x0 = 250;

	for (size_t i = 0; i < n; i++) {
		double need = 8 + 6.5 * (double)strlen(plabel(t, xs[i].m, label, sizeof(label))) +
		              BOX_LABEL_GAP;

		if (xs[i].b.max > xs[i].b.min && need > x0)
			x0 = need;
	}
	return x0;
}

/* One row (28 pixels) of a group's box plots at y: label, axis, whiskers,
 * box, median, outliers as dots with rank and node in their tooltip. */
static void box_row(FILE *f, const struct rp_ptable *t, const struct mbox *x, double y, double x0)
{
	const struct rp_box *b = &x->b;
	const char *u = lwm2_metric_units[x->m];
	double lo = b->min, hi = b->max, x1 = x0 + BOX_PLOT_W;
	size_t dots = 0;
	char s1[64], label[160];

#define X(val) (x0 + ((val)-lo) / (hi - lo) * (x1 - x0))
	fprintf(f,
	        "<g class=\"boxrow\" data-metric=\"%s\" data-n=\"%zu\" data-q1=\"%.6g\" "
	        "data-median=\"%.6g\" data-q3=\"%.6g\" data-outliers=\"%zu\">",
	        lwm2_metric_ids[x->m], x->n, b->q1, b->median, b->q3, b->nlow + b->nhigh);
	rp_svg_text(f, x0 - BOX_LABEL_GAP, y + 17, "end", NULL,
	            plabel(t, x->m, label, sizeof(label)));
	rp_svg_text(f, x0 - 6, y + 17, "end", "small", rp_fmt(lo, u, s1, sizeof(s1)));
	rp_svg_text(f, x1 + 6, y + 17, "start", "small", rp_fmt(hi, u, s1, sizeof(s1)));
	fprintf(f, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", x0, y + 24, x1);
	fprintf(f,
	        "<path class=\"wh\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1fM%.1f "
	        "%.1fV%.1f\"/>",
	        X(b->lo_whisker), y + 8, y + 20, X(b->lo_whisker), y + 14, X(b->q1), X(b->q3),
	        y + 14, X(b->hi_whisker), X(b->hi_whisker), y + 8, y + 20);
	fprintf(f, "<path class=\"box\" d=\"M%.1f %.1fH%.1fV%.1fH%.1fZ\"/>", X(b->q1), y + 5,
	        X(b->q3) > X(b->q1) + 1 ? X(b->q3) : X(b->q1) + 1, y + 23, X(b->q1));
	fprintf(f, "<path class=\"med\" d=\"M%.1f %.1fV%.1f\"/>", X(b->median), y + 5, y + 23);
	for (size_t i = 0; i < t->n && dots < OUTLIER_DOTS; i++) {
		const struct rp_prow *r = &t->rows[i];
		if (!rp_pvalid(r, x->m) || !rp_is_outlier(b, r->v[x->m]))
			continue;
		fprintf(f, "<circle class=\"out\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>",
		        X(r->v[x->m]), y + 14);
		pname(f, t, r);
		fprintf(f, ": %s</title></circle>", rp_fmt(r->v[x->m], u, s1, sizeof(s1)));
		dots++;
	}
	fputs("</g>", f);
#undef X
}

/* The outliers of a metric named by rank and node, largest first. */
static void outlier_names(FILE *f, const struct rp_ptable *t, const struct mbox *x,
                          const struct rp_job_opts *o)
{
	const char *u = lwm2_metric_units[x->m];
	size_t nout = x->b.nlow + x->b.nhigh, no = 0;
	struct outl *out;
	char s1[64], label[160];

	if (!nout || !(out = malloc(nout * sizeof(*out))))
		return;
	for (size_t i = 0; i < t->n && no < nout; i++) {
		const struct rp_prow *r = &t->rows[i];
		if (rp_pvalid(r, x->m) && rp_is_outlier(&x->b, r->v[x->m]))
			out[no++] = (struct outl){r->v[x->m], r};
	}
	qsort(out, no, sizeof(*out), cmp_outl);
	fprintf(f, "<li class=\"outliers\" data-metric=\"%s\"><b>", lwm2_metric_ids[x->m]);
	rp_esc(f, plabel(t, x->m, label, sizeof(label)));
	fprintf(f, "</b> (median %s): ", rp_fmt(x->b.median, u, s1, sizeof(s1)));
	for (size_t i = 0; i < no && i < OUTLIERS_NAMED; i++) {
		const struct rp_prow *r = out[i].r;
		fprintf(f, "%s<span class=\"outlier\" data-rank=\"%d\" data-node=\"", i ? ", " : "",
		        r->rank);
		rp_esc(f, rp_pnode(t, r));
		fputs("\">", f);
		if (o->node_href) {
			fputs("<a href=\"", f);
			node_link(f, o, rp_pnode(t, r));
			fputc('#', f);
			panchor(f, t, r);
			fputs("\">", f);
		}
		pname(f, t, r);
		if (o->node_href)
			fputs("</a>", f);
		fprintf(f, " %s</span>", rp_fmt(r->v[x->m], u, s1, sizeof(s1)));
	}
	if (no > OUTLIERS_NAMED)
		fprintf(f, " and %zu more", no - OUTLIERS_NAMED);
	fputs("</li>\n", f);
	free(out);
}

/* The box plots of one metric group: one SVG, a row per metric whose
 * values differ between processes; metrics equal in every process are
 * listed in a line instead; then the outliers by name. */
static void box_group(FILE *f, const struct rp_ptable *t, int g, const struct rp_job_opts *o)
{
	struct mbox xs[LWM2_NMETRICS];
	size_t nx = 0, nvar = 0, nconst = 0, nout = 0;
	char s1[64], lab[128], label[160];

	for (size_t i = 0; i < LWM2_NRANK_METRICS; i++) {
		int m = lwm2_rank_metrics[i];
		if ((int)lwm2_metric_groups[m] != g)
			continue;
		if (mbox_load(&xs[nx], t, m) != 0) {
			free(xs[nx].v);
			continue;
		}
		if (xs[nx].b.max > xs[nx].b.min)
			nvar++;
		else
			nconst++;
		nout += xs[nx].b.nlow + xs[nx].b.nhigh ? 1 : 0;
		nx++;
	}
	if (!nx)
		return;
	fputs("<h3 class=\"grp\">", f);
	rp_esc(f, lwm2_mgroup_titles[g]);
	fputs("</h3>\n", f);
	if (nvar) {
		double y = 0, x0 = box_x0(t, xs, nx);
		snprintf(lab, sizeof(lab), "box plots of %s over the processes",
		         lwm2_mgroup_titles[g]);
		rp_svg_begin(f, (int)(x0 + BOX_PLOT_W + BOX_RIGHT), (int)(nvar * 28 + 4), lab);
		for (size_t i = 0; i < nx; i++)
			if (xs[i].b.max > xs[i].b.min) {
				box_row(f, t, &xs[i], y, x0);
				y += 28;
			}
		rp_svg_end(f);
	}
	if (nconst) {
		bool first = true;
		fputs("<p class=\"small\">The same in every process: ", f);
		for (size_t i = 0; i < nx; i++)
			if (!(xs[i].b.max > xs[i].b.min)) {
				fputs(first ? "" : "; ", f);
				rp_esc(f, plabel(t, xs[i].m, label, sizeof(label)));
				fprintf(f, " %s",
				        rp_fmt(xs[i].b.min, lwm2_metric_units[xs[i].m], s1,
				               sizeof(s1)));
				first = false;
			}
		fputs("</p>\n", f);
	}
	if (nout) {
		fputs("<p class=\"small\">Outliers (beyond 1.5 times the interquartile "
		      "range):</p>\n<ul class=\"small\">\n",
		      f);
		for (size_t i = 0; i < nx; i++)
			outlier_names(f, t, &xs[i], o);
		fputs("</ul>\n", f);
	}
	for (size_t i = 0; i < nx; i++)
		free(xs[i].v);
}

/* The time shares of a process, summing to 100: MPI point-to-point, MPI
 * collective, other MPI (MPI-IO included), POSIX I/O outside MPI, and the
 * rest, compute.  Wrapper time summed over threads can exceed the wall
 * time; the shares are then scaled to fit. */
enum { SH_COMPUTE, SH_P2P, SH_COLL, SH_MPIO, SH_IO, NSH };
static const char *const sh_names[NSH] = {"compute", "MPI point-to-point", "MPI collective",
                                          "other MPI (MPI-IO, init)", "POSIX I/O"};
static const char *const sh_colors[NSH] = {"#9ccc65", "#1f77b4", "#6a3d9a", "#a6cee3", "#ff7f0e"};

static void shares(const struct rp_prow *r, double sh[NSH])
{
	double mpi = rp_pvalid(r, LWM2_M_mpi_time) ? r->v[LWM2_M_mpi_time] : 0;
	double p2p = rp_pvalid(r, LWM2_M_mpi_p2p_time) ? r->v[LWM2_M_mpi_p2p_time] : 0;
	double coll = rp_pvalid(r, LWM2_M_mpi_coll_time) ? r->v[LWM2_M_mpi_coll_time] : 0;
	double io = rp_pvalid(r, LWM2_M_posix_io_time) ? r->v[LWM2_M_posix_io_time] : 0;
	double mpio = mpi - p2p - coll, sum;

	if (mpio < 0)
		mpio = 0;
	/* POSIX I/O done inside MPI-IO is already in the MPI share */
	if (rp_pvalid(r, LWM2_M_mpiio_time))
		io -= r->v[LWM2_M_mpiio_time];
	if (io < 0)
		io = 0;
	sh[SH_P2P] = p2p;
	sh[SH_COLL] = coll;
	sh[SH_MPIO] = mpio;
	sh[SH_IO] = io;
	sum = p2p + coll + mpio + io;
	if (sum > 100) {
		for (int i = 1; i < NSH; i++)
			sh[i] *= 100 / sum;
		sum = 100;
	}
	sh[SH_COMPUTE] = 100 - sum;
}

struct sorted_row {
	double key;
	const struct rp_prow *r;
};

static int cmp_sorted(const void *a, const void *b)
{
	const struct sorted_row *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->r->rank - y->r->rank;
}

static void share_bars(FILE *f, const struct rp_ptable *t)
{
	struct sorted_row *s = malloc((t->n + 1) * sizeof(*s));
	struct rp_path p[NSH];
	size_t nb = t->n < BARS_MAX ? t->n : BARS_MAX;
	double w = 750.0 / (double)(nb ? nb : 1), h = 160;
	char lab[128];

	if (!s || !t->n) {
		free(s);
		return;
	}
	memset(p, 0, sizeof(p));
	for (size_t i = 0; i < t->n; i++) {
		double sh[NSH];
		shares(&t->rows[i], sh);
		s[i].key = 100 - sh[SH_COMPUTE];
		s[i].r = &t->rows[i];
	}
	qsort(s, t->n, sizeof(*s), cmp_sorted);
	fputs("<h3>Time shares per process, sorted by time outside compute</h3>\n", f);
	if (nb < t->n)
		fprintf(f,
		        "<p class=\"small\">%zu processes in %zu bars: each bar is the average of "
		        "%zu or %zu consecutive processes of the sorted order.</p>\n",
		        t->n, nb, t->n / nb, t->n / nb + 1);
	fputs("<p class=\"legend small\">", f);
	for (int i = NSH - 1; i >= 0; i--) {
		fprintf(f, "<span style=\"background:%s\"></span>", sh_colors[i]);
		rp_esc(f, sh_names[i]);
	}
	fputs("</p>\n", f);
	snprintf(lab, sizeof(lab), "time shares of %zu processes", t->n);
	rp_svg_begin(f, 800, 196, lab);
	for (size_t b = 0; b < nb; b++) {
		size_t i0 = b * t->n / nb, i1 = (b + 1) * t->n / nb;
		double acc[NSH] = {0}, y = 10;
		for (size_t i = i0; i < i1; i++) {
			double sh[NSH];
			shares(s[i].r, sh);
			for (int k = 0; k < NSH; k++)
				acc[k] += sh[k] / (double)(i1 - i0);
		}
		/* from the top: MPI and I/O first, compute at the bottom */
		for (int k = NSH - 1; k >= 0; k--) {
			double hh = acc[k] / 100 * h;
			if (hh > 0.05)
				rp_path_rect(&p[k], 40 + (double)b * w, y, w, hh);
			y += hh;
		}
	}
	for (int k = 0; k < NSH; k++) {
		rp_path_emit(f, &p[k], sh_colors[k], "share");
		rp_path_free(&p[k]);
	}
	/* tooltips per bar where they stay few */
	if (nb == t->n && nb <= 256)
		for (size_t b = 0; b < nb; b++) {
			double sh[NSH];
			shares(s[b].r, sh);
			fprintf(f,
			        "<rect x=\"%.2f\" y=\"10\" width=\"%.2f\" height=\"160\" "
			        "fill-opacity=\"0\"><title>",
			        40 + (double)b * w, w);
			pname(f, t, s[b].r);
			fprintf(f,
			        ": MPI p2p %.1f %%, collective %.1f %%, other MPI %.1f %%, I/O "
			        "%.1f %%, "
			        "compute %.1f %%</title></rect>",
			        sh[SH_P2P], sh[SH_COLL], sh[SH_MPIO], sh[SH_IO], sh[SH_COMPUTE]);
		}
	fputs("<path class=\"ax\" d=\"M40 10V170H790\"/>", f);
	rp_svg_text(f, 36, 16, "end", NULL, "100%");
	rp_svg_text(f, 36, 172, "end", NULL, "0%");
	snprintf(lab, sizeof(lab), "rank %d (%s)", s[0].r->rank, rp_pnode(t, s[0].r));
	rp_svg_text(f, 40, 186, "start", NULL, lab);
	snprintf(lab, sizeof(lab), "rank %d (%s)", s[t->n - 1].r->rank, rp_pnode(t, s[t->n - 1].r));
	rp_svg_text(f, 790, 186, "end", NULL, lab);
	rp_svg_end(f);
	free(s);
}

static void section_ranks(FILE *f, json_object *digest, const struct rp_ptable *t,
                          const struct rp_threads *th, const struct rp_job_opts *o)
{
	fputs("<h2 id=\"ranks\">Per-rank view</h2>\n", f);
	if (!t->present) {
		note(f, "note",
		     ju_get(digest, LWM2_KEY_COMPACT, json_type_boolean)
		         ? "Not available from the compact digest of AdminComment: it keeps "
		           "min/avg/max and where they were measured, not the values of every "
		           "process. Run lwm2 report --file LOG with jobcomp/lwm2's log for the "
		           "per-rank view."
		         : "This digest has no per-process table (written by an older lwm2).");
		return;
	}
	if (has_flag(digest, "missing_nodes") ||
	    ju_int_or(ju_get(digest, LWM2_KEY_SCOPE, json_type_object), LWM2_KEY_INCOMPLETE, 0) > 0)
		note(f, "note",
		     "Processes of missing nodes are not in these plots; incomplete processes are, "
		     "with the values up to their last record.");
	share_bars(f, t);
	if (th->n)
		fprintf(f,
		        "<p class=\"small\">The %zu threads of the processes that had several: "
		        "<a href=\"#threads\">Threads</a>.</p>\n",
		        th->n);
	fputs("<p class=\"small\">Box: quartiles over the processes; red line: median; "
	      "whiskers: the furthest values within 1.5 times the interquartile range; red "
	      "dots: processes beyond (outliers; their rank and node in the tooltip and "
	      "below).</p>\n",
	      f);
	for (int g = 0; g < LWM2_NMGROUPS; g++)
		box_group(f, t, g, o);
}

/* ------------------------------------------------------------ grid row */

struct gline {
	int64_t step;
	const char *node;
	int64_t first, n, len; /* slices */
	json_object *c;
	double procs;
};

enum { GM_MPI, GM_IO, GM_CPU, NGM };

/* The value of one grid metric in slice k of a line: MPI share of the
 * processes' time (%), file I/O bytes per second, CPU cycles per second
 * (hardware counters; 0 without them). */
static double gval(const struct gline *l, int gm, int64_t k)
{
	double L = (double)(l->len ? l->len : 1);

	switch (gm) {
	case GM_MPI:
		return lwm2_slice_mpi_share(RP_SERIES_SUM(l->c, lwm2_mpi_time_names, k), L,
		                            l->procs);
	case GM_IO:
		return RP_SERIES_IO_BYTES(l->c, k) / L;
	default:
		return rp_series_at(l->c, "hwc_cycles", k) / L;
	}
}

static const char *const gm_title[NGM] = {"MPI share of process time", "file I/O bytes/s",
                                          "CPU cycles/s (hardware counters)"};
static const char *const gm_unit[NGM] = {"%", "B/s", "/s"};

/* Processes per step and node, for the MPI share of a node's slice: the
 * (step, node) pairs of the per-process table sorted, and the node names
 * sorted with their index, so 10,000 node rows cost no quadratic search. */
struct procs_ix {
	struct rp_stepnode *keys;
	size_t n;
	struct nname {
		const char *name;
		int idx;
	} * names;
	size_t nn;
};

static int cmp_nname(const void *a, const void *b)
{
	return strcmp(((const struct nname *)a)->name, ((const struct nname *)b)->name);
}

static void procs_index(const struct rp_ptable *t, struct procs_ix *ix)
{
	memset(ix, 0, sizeof(*ix));
	if (!t->present || !t->n)
		return;
	ix->keys = malloc(t->n * sizeof(*ix->keys));
	ix->names = malloc((t->nnodes + 1) * sizeof(*ix->names));
	if (!ix->keys || !ix->names) {
		free(ix->keys);
		free(ix->names);
		memset(ix, 0, sizeof(*ix));
		return;
	}
	for (size_t i = 0; i < t->n; i++)
		ix->keys[i] = (struct rp_stepnode){t->rows[i].step, t->rows[i].node};
	ix->n = t->n;
	rp_stepnode_sort(ix->keys, ix->n);
	for (size_t i = 0; i < t->nnodes; i++)
		ix->names[i] = (struct nname){t->nodes[i] ? t->nodes[i] : "", (int)i};
	ix->nn = t->nnodes;
	qsort(ix->names, ix->nn, sizeof(*ix->names), cmp_nname);
}

static size_t procs_on(const struct rp_ptable *t, const struct procs_ix *ix, int64_t step,
                       const char *node)
{
	struct nname key = {node, 0}, *nm;

	(void)t;
	if (!ix->n || !(nm = bsearch(&key, ix->names, ix->nn, sizeof(*ix->names), cmp_nname)))
		return 0;
	return rp_stepnode_count(ix->keys, ix->n, step, nm->idx);
}

static int cmp_gline(const void *a, const void *b)
{
	const struct gline *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	return strcmp(x->node, y->node);
}

static void grid_plot(FILE *f, struct gline *ls, size_t nl, int gm, int64_t t0, int64_t t1)
{
	size_t rows = nl < GRID_ROWS ? nl : GRID_ROWS;
	int64_t span = t1 - t0;
	int64_t L = ls[0].len ? ls[0].len : 1;
	size_t cols;
	double *sum, *cnt, vmax = 0, cw, rh = nl > 40 ? 6 : 16, x0 = 150, W = 600;
	struct rp_path p[RP_LEVELS];
	char b[64], lab[160];

	/* a test on span itself: clang's analyzer does not carry t1 > t0 over
	 * to t1 - t0, and took the divisions below for divisions by zero */
	if (span < 1)
		span = 1;
	/* columns of the shortest slice: steps with longer slices (the
	 * batch script's, by default) fill several */
	for (size_t i = 0; i < nl; i++)
		if (ls[i].len > 0 && ls[i].len < L)
			L = ls[i].len;
	cols = (size_t)((span + L - 1) / L);
	if (cols < 1)
		cols = 1;
	if (cols > GRID_COLS)
		cols = GRID_COLS;
	cw = W / (double)cols;
	if (rows < nl)
		rh = 600.0 / (double)rows < 3 ? 3 : 600.0 / (double)rows;
	sum = calloc(rows * cols, sizeof(*sum));
	cnt = calloc(rows * cols, sizeof(*cnt));
	if (!sum || !cnt) {
		free(sum);
		free(cnt);
		return;
	}
	for (size_t i = 0; i < nl; i++) {
		size_t r = i * rows / nl;
		for (int64_t k = 0; k < ls[i].n; k++) {
			int64_t ts = (ls[i].first + k) * ls[i].len;
			int64_t c = (ts - t0) * (int64_t)cols / span;
			int64_t c1 = (ts + ls[i].len - 1 - t0) * (int64_t)cols / span;
			double v = gval(&ls[i], gm, k);
			if (c < 0)
				c = 0;
			/* a slice counts in every column it overlaps */
			for (; c <= c1 && c < (int64_t)cols; c++) {
				sum[r * cols + (size_t)c] += v;
				cnt[r * cols + (size_t)c] += 1;
			}
		}
	}
	for (size_t i = 0; i < rows * cols; i++)
		if (cnt[i] && sum[i] / cnt[i] > vmax)
			vmax = sum[i] / cnt[i];
	if (gm == GM_MPI && vmax < 100)
		vmax = vmax > 0 ? vmax : 100;
	memset(p, 0, sizeof(p));
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++) {
			double v;
			int lv;
			if (!cnt[r * cols + c])
				continue;
			v = sum[r * cols + c] / cnt[r * cols + c];
			lv = vmax > 0 ? (int)(v / vmax * (RP_LEVELS - 1) + 0.5) : 0;
			rp_path_rect(&p[lv], x0 + (double)c * cw, 4 + (double)r * rh, cw, rh);
		}
	fputs("<h3>", f);
	rp_esc(f, gm_title[gm]);
	fprintf(f, "</h3><p class=\"small\">Colour from 0 (light) to %s (dark)",
	        rp_fmt(vmax, gm_unit[gm], b, sizeof(b)));
	if (rows < nl || (size_t)((span + L - 1) / L) > cols)
		fputs("; cells averaged: more node rows or slices than drawn", f);
	fputs(".</p>\n", f);
	rp_legend(f, vmax, gm_unit[gm]);
	snprintf(lab, sizeof(lab), "%s per node and slice", gm_title[gm]);
	rp_svg_begin(f, 760, (int)(rh * (double)rows) + 24, lab);
	for (int lv = 0; lv < RP_LEVELS; lv++) {
		char col[8];
		rp_color((double)lv / (RP_LEVELS - 1), col);
		rp_path_emit(f, &p[lv], col, "cell");
		rp_path_free(&p[lv]);
	}
	for (size_t r = 0; r < rows; r++) {
		const struct gline *l = &ls[r * nl / rows];
		if (rows < nl && rh < 10)
			continue;
		char sb[32];
		snprintf(lab, sizeof(lab), "step %s %s", lwm2_step_name(l->step, sb, sizeof(sb)),
		         l->node);
		rp_svg_text(f, x0 - 4, 4 + ((double)r + 0.75) * rh, "end", NULL, lab);
	}
	fprintf(f, "<path class=\"ax\" d=\"M%.1f %.1fH%.1f\"/>", x0, 6 + rh * (double)rows, x0 + W);
	rp_svg_text(f, x0, 18 + rh * (double)rows, "start", NULL, "job start");
	snprintf(lab, sizeof(lab), "+%" PRId64 " s", span);
	rp_svg_text(f, x0 + W, 18 + rh * (double)rows, "end", NULL, lab);
	rp_svg_end(f);
	free(sum);
	free(cnt);
}

static void section_grid(FILE *f, json_object *digest, const struct rp_ptable *t)
{
	json_object *grid = ju_get(digest, LWM2_KEY_GRID, json_type_array);
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	size_t n = grid ? json_object_array_length(grid) : 0, nl = 0;
	struct gline *ls;
	int64_t t0 = INT64_MAX, t1 = 0;
	bool cpu = false;
	struct procs_ix ix = {0};

	fputs("<h2 id=\"grid\">Space-time grid</h2>\n", f);
	if (!n) {
		note(f, "note",
		     ju_get(digest, LWM2_KEY_COMPACT, json_type_boolean)
		         ? "Not available from the compact digest of AdminComment: the time-slice "
		           "series are only in jobcomp/lwm2's log (lwm2 report --file LOG)."
		         : "No time-slice series in this digest.");
		return;
	}
	if (!(ls = calloc(n, sizeof(*ls))))
		return;
	procs_index(t, &ix);
	for (size_t i = 0; i < n; i++) {
		json_object *g = json_object_array_get_idx(grid, i);
		struct gline *l = &ls[nl];
		l->c = ju_get(g, LWM2_KEY_C, json_type_object);
		l->node = ju_str(g, LWM2_KEY_NODE);
		l->step = ju_int_or(g, LWM2_KEY_STEP, 0);
		l->first = ju_int_or(g, LWM2_KEY_FIRST_SLICE, 0);
		l->n = ju_int_or(g, LWM2_KEY_N, 0);
		l->len = ju_int_or(g, LWM2_KEY_SLICE_LENGTH_S, 0);
		if (!l->c || !l->node || l->n <= 0 || l->len <= 0 || l->n > 1 << 20)
			continue;
		l->procs = (double)procs_on(t, &ix, l->step, l->node);
		cpu |= ju_get(l->c, "hwc_cycles", json_type_array) != NULL;
		if (l->first * l->len < t0)
			t0 = l->first * l->len;
		if ((l->first + l->n) * l->len > t1)
			t1 = (l->first + l->n) * l->len;
		nl++;
	}
	if (!nl) {
		note(f, "note", "No usable time-slice series in this digest.");
		free(ls);
		return;
	}
	/* wall-clock alignment: from the job's start to its end where
	 * known (slices reach past them by up to a slice length) */
	if (ju_int_or(job, LWM2_KEY_START, 0) > 0 &&
	    ju_int_or(job, LWM2_KEY_END, 0) > ju_int_or(job, LWM2_KEY_START, 0)) {
		t0 = ju_int_or(job, LWM2_KEY_START, 0);
		t1 = ju_int_or(job, LWM2_KEY_END, 0);
	}
	qsort(ls, nl, sizeof(*ls), cmp_gline);
	fprintf(f,
	        "<p class=\"small\">One row per node and step (steps that ran at the same time "
	        "side by side), one column per wall-clock slice of %" PRId64
	        " s from the job's start to its end. Active threads are not kept per slice; their "
	        "average per process is in the per-rank view.</p>\n",
	        ls[0].len);
	if (has_flag(digest, "missing_nodes"))
		note(f, "note", "Nodes without a node record have no row here.");
	if (!t->present)
		note(f, "note",
		     "Without the per-process table the MPI share is per node, not per process.");
	grid_plot(f, ls, nl, GM_MPI, t0, t1);
	grid_plot(f, ls, nl, GM_IO, t0, t1);
	if (cpu)
		grid_plot(f, ls, nl, GM_CPU, t0, t1);
	free(ls);
	free(ix.keys);
	free(ix.names);
}

/* ------------------------------------------------------------ nodes */

static void section_nodes(FILE *f, const struct rp_ptable *t, const struct rp_job_opts *o)
{
	if (!t->present || !t->nnodes)
		return;
	fputs("<h2 id=\"nodes\">Nodes</h2>\n<table><tr><th>Node</th><th>Processes</th>"
	      "<th>MPI (avg)</th><th>POSIX I/O (avg)</th><th>Threads (avg)</th>"
	      "<th>Written</th><th>Read</th></tr>\n",
	      f);
	for (size_t ni = 0; ni < t->nnodes && ni < 2000; ni++) {
		double s[5] = {0}, c[3] = {0};
		size_t np = 0;
		char b[64];
		static const int ms[] = {LWM2_M_mpi_time, LWM2_M_posix_io_time, LWM2_M_avg_threads,
		                         LWM2_M_bytes_written, LWM2_M_bytes_read};
		for (size_t r = 0; r < t->n; r++) {
			if (t->rows[r].node != (int)ni)
				continue;
			np++;
			for (int k = 0; k < 5; k++)
				if (rp_pvalid(&t->rows[r], ms[k])) {
					s[k] += t->rows[r].v[ms[k]];
					if (k < 3)
						c[k]++;
				}
		}
		fputs("<tr><td>", f);
		if (o->node_href) {
			fputs("<a href=\"", f);
			node_link(f, o, t->nodes[ni]);
			fputs("\">", f);
		}
		rp_esc(f, t->nodes[ni]);
		if (o->node_href)
			fputs("</a>", f);
		fprintf(f, "</td><td class=\"n\">%zu</td>", np);
		for (int k = 0; k < 5; k++) {
			double v = k < 3 ? (c[k] ? s[k] / c[k] : NAN) : s[k];
			fprintf(f, "<td class=\"n\">%s</td>",
			        isfinite(v) ? rp_fmt(v, lwm2_metric_units[ms[k]], b, sizeof(b))
			                    : "-");
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	if (t->nnodes > 2000)
		fprintf(f, "<p class=\"small\">First 2000 of %zu nodes.</p>\n", t->nnodes);
}

/* ------------------------------------------------------------ page */

/* The digest's "fit" block: one row each of CPU, memory, time, GPUs, the
 * verdict and the request for next time; nothing without the block. */
static void section_fit(FILE *f, json_object *digest)
{
	static const char *const what[][2] = {{LWM2_KEY_FIT_CPU, "CPU"},
	                                      {LWM2_KEY_FIT_MEMORY, "Memory"},
	                                      {LWM2_KEY_FIT_TIME, "Time"},
	                                      {LWM2_KEY_FIT_GPU, "GPU"}};
	json_object *fit = ju_get(digest, LWM2_KEY_FIT, json_type_object);

	if (!fit)
		return;
	fputs(
	    "<h2 id=\"fit\">Fit: asked for against used</h2>\n<table class=\"fit\">"
	    "<tr><th></th><th>Asked for</th><th>Used</th><th>Verdict</th><th>Next time</th></tr>\n",
	    f);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		json_object *p = ju_get(fit, what[i][0], json_type_object);
		const char *v = p ? ju_str(p, LWM2_KEY_VERDICT) : NULL;
		char a[64] = "-", u[96] = "-";
		double x;
		int64_t n;

		if (lwm2_fit_not_measured(p, u, sizeof(u))) {
			/* u says so, and why */
		} else if (i == 0 && ju_num(p, LWM2_KEY_EFFICIENCY, &x)) {
			snprintf(a, sizeof(a), "%" PRId64 " cores",
			         ju_int_or(p, LWM2_KEY_ALLOCATED_CORES, 0));
			snprintf(u, sizeof(u), "%.0f %%", x * 100);
		} else if (i == 1 && ju_int(p, LWM2_KEY_PEAK_PER_NODE_MB, &n)) {
			snprintf(a, sizeof(a), "%" PRId64 " MB per node",
			         ju_int_or(p, LWM2_KEY_REQUESTED_PER_NODE_MB, 0));
			const char *src = ju_str(p, LWM2_KEY_SOURCE);

			snprintf(u, sizeof(u), "%" PRId64 " MB peak (%s)", n,
			         src && !strcmp(src, "cgroup")  ? "cgroup"
			         : src && !strcmp(src, "mixed") ? "cgroup or processes' sum"
			                                        : "processes' sum");
		} else if (i == 2 && ju_int(p, LWM2_KEY_ELAPSED_S, &n) && !strcmp(v, "unlimited")) {
			snprintf(a, sizeof(a), "no limit");
			snprintf(u, sizeof(u), "%" PRId64 " s", n);
		} else if (i == 2 && ju_int(p, LWM2_KEY_LIMIT_S, &n)) {
			snprintf(a, sizeof(a), "%" PRId64 " s", n);
			snprintf(u, sizeof(u), "%" PRId64 " s",
			         ju_int_or(p, LWM2_KEY_ELAPSED_S, 0));
		} else if (i == 3 && ju_int(p, LWM2_KEY_ALLOCATED, &n)) {
			snprintf(a, sizeof(a), "%" PRId64 " GPUs", n);
			snprintf(u, sizeof(u), "%" PRId64 " with CUDA activity",
			         ju_int_or(p, LWM2_KEY_USED, 0));
		}
		fputs("<tr><th>", f);
		rp_esc(f, what[i][1]);
		fputs("</th><td>", f);
		rp_esc(f, a);
		fputs("</td><td>", f);
		rp_esc(f, u);
		fputs("</td><td>", f);
		rp_esc(f, v && strcmp(v, "not_measured") ? v : "not measured");
		fputs("</td><td>", f);
		rp_esc(f, p && ju_str(p, LWM2_KEY_ADVICE) ? ju_str(p, LWM2_KEY_ADVICE) : "");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	if (ju_str(fit, LWM2_KEY_NO_ADVICE)) {
		fputs("<p class=\"fit-note\">Advice not given: ", f);
		rp_esc(f, ju_str(fit, LWM2_KEY_NO_ADVICE));
		fputs(".</p>\n", f);
	}
}

int rp_job_page(FILE *f, json_object *digest, const struct rp_job_opts *o)
{
	json_object *job = ju_get(digest, LWM2_KEY_JOB, json_type_object);
	json_object *scope = ju_get(digest, LWM2_KEY_SCOPE, json_type_object);
	struct lwm2_scope s;
	struct rp_ptable t;
	struct rp_threads th;
	char title[128];

	lwm2_scope_from_json(&s, scope, NULL, (uint32_t)ju_int_or(job, LWM2_KEY_CPUS_PER_TASK, 0));
	lwm2_scope_events_from_digest(&s, digest);
	rp_ptable_load(&t, digest);
	/* out of memory: the page without its threads */
	(void)rp_threads_load(&th, digest, &t);
	snprintf(title, sizeof(title), "lwm2 report: job %" PRId64,
	         ju_int_or(job, LWM2_KEY_JOB_ID, 0));
	rp_page_begin(f, title);
	if (o->up_href) {
		fputs("<p class=\"small\"><a href=\"", f);
		rp_esc(f, o->up_href);
		fputs("\">", f);
		rp_esc(f, o->up_label ? o->up_label : "up");
		fputs("</a></p>\n", f);
	}
	fputs("<h1>", f);
	rp_esc(f, title);
	fputs("</h1>\n<p class=\"small\"><a href=\"#digest\">Digest</a> · ", f);
	if (ju_get(digest, LWM2_KEY_REGIONS, json_type_object))
		fputs("<a href=\"#regions\">Named regions</a> · ", f);
	fputs("<a href=\"#steps\">Steps</a> · <a href=\"#ranks\">Per-rank view</a> · ", f);
	if (th.n || th.omitted)
		fputs("<a href=\"#threads\">Threads</a> · ", f);
	fputs("<a href=\"#grid\">Space-time grid</a> · <a href=\"#nodes\">Nodes</a></p>\n", f);
	if (ju_get(digest, LWM2_KEY_COMPACT, json_type_boolean))
		note(f, "note",
		     "This is the compact digest of AdminComment: min/avg/max per metric and "
		     "where they were measured. It has no per-process values and no time-slice "
		     "series, so the per-rank view and the space-time grid cannot be shown; "
		     "lwm2 report --file LOG -j JOB shows them from jobcomp/lwm2's log.");
	note_derived(f, digest);
	section_meta(f, digest, &s, o);
	section_fit(f, digest);
	notes_missing(f, digest, &s);
	section_digest(f, &s);
	section_derived_metrics(f, scope);
	rp_job_regions(f, digest);
	section_steps(f, digest);
	section_ranks(f, digest, &t, &th, o);
	rp_job_threads(f, &th, &t);
	section_grid(f, digest, &t);
	section_nodes(f, &t, o);
	rp_page_end_by(f, o->made_by ? o->made_by : "lwm2 report");
	rp_threads_free(&th);
	rp_ptable_free(&t);
	return ferror(f) ? -1 : 0;
}

/* ------------------------------------------------------------ node pages */

int rp_job_node_pages(const char *dir, json_object *digest, const char *job_href)
{
	struct rp_ptable t;
	int rc = 0;

	rp_ptable_load(&t, digest);
	for (size_t ni = 0; ni < t.nnodes; ni++) {
		char path[4096], title[256], b[64];
		FILE *f;
		const char *nn = t.nodes[ni];

		/* node names come from node records: nothing but a plain name
		 * becomes a file name */
		if (!nn || !*nn || strchr(nn, '/') || nn[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/node-%s.html", dir, nn);
		if (!(f = fopen(path, "we"))) {
			lwm2_log_error("report: couldn't write %s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		snprintf(
		    title, sizeof(title), "lwm2 report: job %" PRId64 ", node %s",
		    ju_int_or(ju_get(digest, LWM2_KEY_JOB, json_type_object), LWM2_KEY_JOB_ID, 0),
		    nn);
		rp_page_begin(f, title);
		fputs("<p class=\"small\"><a href=\"", f);
		rp_esc(f, job_href);
		fputs("\">job</a></p>\n<h1>", f);
		rp_esc(f, title);
		fputs("</h1>\n<table><tr><th>Rank</th><th>Step</th>", f);
		for (size_t k = 0; k < LWM2_NRANK_METRICS; k++) {
			fputs("<th>", f);
			rp_esc(f, lwm2_metric_ids[lwm2_rank_metrics[k]]);
			fputs("</th>", f);
		}
		fputs("</tr>\n", f);
		for (size_t r = 0; r < t.n; r++) {
			const struct rp_prow *p = &t.rows[r];
			if (p->node != (int)ni)
				continue;
			fputs("<tr id=\"", f);
			panchor(f, &t, p);
			fprintf(f, "\"><td>%d</td><td>%s</td>", p->rank,
			        lwm2_step_name(p->step, b, sizeof(b)));
			for (size_t k = 0; k < LWM2_NRANK_METRICS; k++) {
				int m = lwm2_rank_metrics[k];
				fprintf(f, "<td class=\"n\">%s</td>",
				        rp_pvalid(p, m)
				            ? rp_fmt(p->v[m], lwm2_metric_units[m], b, sizeof(b))
				            : "-");
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
		rp_page_end(f);
		if (fclose(f) != 0) {
			lwm2_log_error("report: couldn't write %s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
	}
	rp_ptable_free(&t);
	return rc;
}
