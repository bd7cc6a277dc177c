/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Threads as a scope, rank -> thread: the digest's "ranks"' "threads"
 * (a row per thread of the processes that had several, its first column
 * the row of its process) read against the per-process table, for
 * `lwm2 ranks --threads` and the job page's table of threads: each
 * thread's CPU time, its samples' shares per earmark as a stacked bar,
 * its time in MPI and file I/O and its bytes.  Nothing for a digest
 * without thread rows.
 */
#include "report.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
#include "stepname.h"

/* The columns a thread row has, by name: -1 where the digest lacks one. */
struct thread_cols {
	int process, tid, flags, cpu_ns;
	int samples[LWM2_NEARMARKS];
	int counters[LWM2_THREAD_NCOUNTERS];
};

static int col_index(json_object *cols, const char *name)
{
	for (size_t i = 0; i < json_object_array_length(cols); i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(cols, i));

		if (c && !strcmp(c, name))
			return (int)i;
	}
	return -1;
}

static void thread_cols_of(json_object *cols, struct thread_cols *c)
{
	char name[64];

	c->process = col_index(cols, "process");
	c->tid = col_index(cols, "tid");
	c->flags = col_index(cols, "flags");
	c->cpu_ns = col_index(cols, "cpu_ns");
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		snprintf(name, sizeof(name), "samples_%s", lwm2_earmark_names[e]);
		c->samples[e] = col_index(cols, name);
	}
	for (int k = 0; k < LWM2_THREAD_NCOUNTERS; k++)
		c->counters[k] = col_index(cols, lwm2_thread_counter_names[k]);
}

static int64_t cell(json_object *row, int col)
{
	json_object *x = col >= 0 ? json_object_array_get_idx(row, (size_t)col) : NULL;

	return x ? json_object_get_int64(x) : 0;
}

/* The process of t at digest row `row` (t's rows are in the digest's
 * order, those it could not read left out), or NULL. */
static const struct rp_prow *proc_at(const struct rp_ptable *t, int64_t row)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((int64_t)t->rows[mid].row < row)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && (int64_t)t->rows[lo].row == row ? &t->rows[lo] : NULL;
}

/* By process (the table's order), then the main thread, then by CPU
 * time, busiest first: a record keeps its threads in no order. */
static int cmp_thread(const void *a, const void *b)
{
	const struct rp_thread *x = a, *y = b;
	bool xm = x->flags & LWM2_TH_MAIN, ym = y->flags & LWM2_TH_MAIN;

	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	if (xm != ym)
		return xm ? -1 : 1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns > y->cpu_ns ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

int rp_threads_load(struct rp_threads *th, json_object *digest, const struct rp_ptable *t)
{
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	json_object *o = ju_get(ranks, LWM2_KEY_THREADS, json_type_object);
	json_object *cols = ju_get(o, LWM2_KEY_COLS, json_type_array);
	json_object *rows = ju_get(o, LWM2_KEY_ROWS, json_type_array);
	struct thread_cols c;
	size_t nr;

	memset(th, 0, sizeof(*th));
	if (!o || !t->present)
		return 0;
	th->omitted = ju_int_or(o, LWM2_KEY_OMITTED, 0);
	if (!cols || !rows || !(nr = json_object_array_length(rows)))
		return 0;
	thread_cols_of(cols, &c);
	if (c.process < 0)
		return 0;
	if (!(th->v = calloc(nr, sizeof(*th->v)))) {
		th->omitted = 0;
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < nr; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		struct rp_thread *x = &th->v[th->n];

		if (!json_object_is_type(row, json_type_array) ||
		    !(x->proc = proc_at(t, cell(row, c.process))))
			continue;
		x->tid = cell(row, c.tid);
		x->flags = cell(row, c.flags);
		x->cpu_ns = cell(row, c.cpu_ns);
		for (int e = 0; e < LWM2_NEARMARKS; e++)
			x->samples[e] = cell(row, c.samples[e]);
		for (int k = 0; k < LWM2_THREAD_NCOUNTERS; k++)
			x->counters[k] = cell(row, c.counters[k]);
		th->n++;
	}
	qsort(th->v, th->n, sizeof(*th->v), cmp_thread);
	return 0;
}

void rp_threads_free(struct rp_threads *th)
{
	free(th->v);
	memset(th, 0, sizeof(*th));
}

double rp_thread_share(const struct rp_thread *th, int e)
{
	double all = 0;

	for (int k = 0; k < LWM2_NEARMARKS; k++)
		all += (double)th->samples[k];
	return all > 0 ? 100.0 * (double)th->samples[e] / all : NAN;
}

/* ------------------------------------------------------------ the job page */

/* The earmarks' colours in the bar (compute, MPI, I/O, CUDA): those of
 * the per-rank view's time shares, CUDA apart. */
static const char *const earmark_fill[LWM2_NEARMARKS] = {"#9ccc65", "#1f77b4", "#ff7f0e",
                                                         "#e377c2"};
static const char *const earmark_label[LWM2_NEARMARKS] = {"compute", "MPI", "I/O", "CUDA"};

#define BAR_W 120
#define BAR_H 12

/* The thread's samples per earmark as one stacked bar, the shares in its
 * title; "-" without samples. */
static void share_cell(FILE *f, const struct rp_thread *x)
{
	char title[160], b[32];
	size_t len = 0;
	double at = 0;

	fputs("<td>", f);
	if (isnan(rp_thread_share(x, 0))) {
		fputs("-</td>", f);
		return;
	}
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		len += (size_t)snprintf(title + len, sizeof(title) - len, "%s%s %s", e ? ", " : "",
		                        earmark_label[e],
		                        rp_fmt(rp_thread_share(x, e), "%", b, sizeof(b)));
	rp_svg_begin(f, BAR_W, BAR_H, title);
	fputs("<title>", f);
	rp_esc(f, title);
	fputs("</title>", f);
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		double w = rp_thread_share(x, e) * BAR_W / 100.0;

		if (w > 0)
			fprintf(
			    f,
			    "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>",
			    at, w, BAR_H, earmark_fill[e]);
		at += w;
	}
	/* not rp_svg_end's line break: a row stays one line */
	fputs("</svg></td>", f);
}

static void value_cell(FILE *f, double v, const char *unit)
{
	char b[64];

	fprintf(f, "<td class=\"n\">%s</td>", rp_fmt(v, unit, b, sizeof(b)));
}

static void thread_row(FILE *f, const struct rp_thread *x, const struct rp_ptable *t)
{
	char b[96], st[32];

	/* the digest's own values for a reader of the page */
	fprintf(f,
	        "<tr data-rank=\"%d\" data-tid=\"%" PRId64 "\" data-cpu-ns=\"%" PRId64
	        "\" data-samples=\"",
	        x->proc->rank, x->tid, x->cpu_ns);
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		fprintf(f, "%s%" PRId64, e ? "," : "", x->samples[e]);
	fprintf(f, "\" data-io-bytes=\"%" PRId64 "\"><td>", x->counters[LWM2_TC_io_bytes]);
	if (t->multi_step)
		snprintf(b, sizeof(b), "%d@%s.%s", x->proc->rank, rp_pnode(t, x->proc),
		         lwm2_step_name(x->proc->step, st, sizeof(st)));
	else
		snprintf(b, sizeof(b), "%d@%s", x->proc->rank, rp_pnode(t, x->proc));
	rp_esc(f, b);
	fprintf(f, "</td><td class=\"n\">%" PRId64 "</td><td>%s</td>", x->tid,
	        x->flags & LWM2_TH_MAIN    ? "main"
	        : x->flags & LWM2_TH_ENDED ? "ended"
	                                   : "");
	value_cell(f, (double)x->cpu_ns / 1e9, "s");
	share_cell(f, x);
	value_cell(f, (double)x->counters[LWM2_TC_mpi_ns] / 1e9, "s");
	value_cell(f, (double)x->counters[LWM2_TC_io_ns] / 1e9, "s");
	value_cell(f, (double)x->counters[LWM2_TC_io_bytes], "B");
	fputs("</tr>\n", f);
}

void rp_job_threads(FILE *f, const struct rp_threads *th, const struct rp_ptable *t)
{
	if (!th->n && !th->omitted)
		return;
	fputs("<h2 id=\"threads\">Threads</h2>\n"
	      "<p class=\"small\">The threads of the processes that had several: each "
	      "process's main thread first, then its busiest others by CPU time (a thread "
	      "that ended as it was at its end); the bar is where the thread's samples "
	      "fell.</p>\n<p class=\"legend small\">",
	      f);
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		fprintf(f, "<span style=\"background:%s\"></span>%s", earmark_fill[e],
		        earmark_label[e]);
	fputs("</p>\n<table class=\"digest threads\">\n"
	      "<tr><th>rank@node</th><th>tid</th><th></th><th>CPU time</th><th>samples</th>"
	      "<th>in MPI</th><th>in file I/O</th><th>I/O bytes</th></tr>\n",
	      f);
	for (size_t i = 0; i < th->n; i++)
		thread_row(f, &th->v[i], t);
	if (th->omitted > 0)
		fprintf(f,
		        "<tr class=\"folded\" data-omitted=\"%" PRId64
		        "\"><td colspan=\"8\">%" PRId64
		        " more thread%s not kept by the digest</td></tr>\n",
		        th->omitted, th->omitted, th->omitted == 1 ? "" : "s");
	fputs("</table>\n", f);
}
