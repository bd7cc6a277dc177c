/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 report`: self-contained HTML pages with inline SVG plots made
 * here in C (no scripts, no fonts, no network), so a page opens the same
 * from a laptop after scp as behind a web server.
 *
 *   report_stats.c  quartiles, whiskers and outliers of a set of values
 *   svg.c           SVG and HTML output helpers, colour scale
 *   report_job.c    the page of one job (from its digest)
 *   report_site.c   the site pages: statistics, space-time grid, users
 *   cmd_report.c    the command: options, accounting or the log
 *
 * Not part of the library: linked into the lwm2 command only.
 */
#ifndef LWM2_REPORT_H
#define LWM2_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "lwm2_render.h"
#include "lwm2_sums.h"

/* ------------------------------------------------------------ statistics */

/* A box plot: quartiles (linear interpolation between order statistics,
 * R's type 7), whiskers at the furthest values within 1.5 IQR of the
 * box, and how many values lie beyond them. */
struct rp_box {
	size_t n;
	double min, q1, median, q3, max;
	double lo_whisker, hi_whisker;
	double lo_fence, hi_fence; /* q1 - 1.5 IQR, q3 + 1.5 IQR */
	size_t nlow, nhigh;        /* outliers below / above the fences */
};

/* The q-quantile (0..1) of n sorted values; NaN when n is 0. */
double rp_quantile(const double *sorted, size_t n, double q);

/* Box plot numbers of n sorted values.  0, or -1 when n is 0. */
int rp_box_stats(const double *sorted, size_t n, struct rp_box *b);

/* Whether v lies outside the box's fences. */
bool rp_is_outlier(const struct rp_box *b, double v);

/* ------------------------------------------------------------ per-process table */

/* One process of a digest's "ranks" table (report_ptable.c). */
struct rp_prow {
	int64_t step;
	int node, rank;
	int64_t flags;
	size_t row; /* its row in the digest's table (threads name it) */
	double v[LWM2_NMETRICS];
	uint32_t valid[(LWM2_NMETRICS + 31) / 32];
};

/* The table: its processes, the nodes they name by index. */
struct rp_ptable {
	struct rp_prow *rows;
	size_t n;
	const char **nodes;
	size_t nnodes;
	bool present;    /* the digest has a per-process table */
	bool multi_step; /* processes of more than one step */
	/* the digest's counter events, which the metrics' labels follow */
	char hwc_events[LWM2_HWC_EVENTS_LEN];
};

/* Whether metric m of r was measured. */
bool rp_pvalid(const struct rp_prow *r, int m);

/* The digest's table into t (t->present false when it has none, or out
 * of memory); t's node names point into digest. */
void rp_ptable_load(struct rp_ptable *t, json_object *digest);
void rp_ptable_free(struct rp_ptable *t);

/* The node r ran on, "" when not named. */
const char *rp_pnode(const struct rp_ptable *t, const struct rp_prow *r);

/* A process of a digest's per-process table by its step and its node's
 * index: sorted, the processes of a step on a node are counted by binary
 * search rather than by a pass over the table for every node. */
struct rp_stepnode {
	int64_t step;
	long node;
};

/* Sort t by step, then node. */
void rp_stepnode_sort(struct rp_stepnode *t, size_t n);

/* How many of sorted t are step's on node. */
size_t rp_stepnode_count(const struct rp_stepnode *t, size_t n, int64_t step, long node);

/* Sort doubles in place, ascending. */
void rp_sort(double *v, size_t n);

/* A grid line's counter series c (the digest's grid "c"): the value of the
 * series NAME in slice k, 0 where there is none; the sum of one of
 * lwm2_sums.h's lists in slice k. */
double rp_series_at(json_object *c, const char *name, int64_t k);
double rp_series_sum(json_object *c, const char *const *names, size_t n, int64_t k);
#define RP_SERIES_SUM(c, ids, k) rp_series_sum((c), (ids), LWM2_NSUM(ids), (k))
/* The bytes read and written in slice k. */
#define RP_SERIES_IO_BYTES(c, k)                                                                   \
	(RP_SERIES_SUM((c), lwm2_read_bytes_names, (k)) +                                          \
	 RP_SERIES_SUM((c), lwm2_write_bytes_names, (k)))

/* ------------------------------------------------------------ SVG, HTML */

/* Text with &, <, >, " and ' escaped. */
void rp_esc(FILE *f, const char *s);

/* The page's head (title escaped, the one style sheet) and its end. */
void rp_page_begin(FILE *f, const char *title);
void rp_page_end(FILE *f);
/* The same, naming the command that made the page. */
void rp_page_end_by(FILE *f, const char *made_by);

/* <svg> of w x h with a title for screen readers; </svg>. */
void rp_svg_begin(FILE *f, int w, int h, const char *label);
void rp_svg_end(FILE *f);

/* Text at x, y; anchor "start", "middle" or "end". */
void rp_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
                 const char *text);

/* A colour of a sequential scale for t in [0, 1] (light yellow to dark
 * blue, readable for the common colour-vision deficiencies), "#rrggbb". */
void rp_color(double t, char buf[8]);

/* Number of colour levels a heat map is quantised to: one path per level
 * keeps a large grid to a few kilobytes per thousand cells. */
#define RP_LEVELS 16

/* A growing string of path data (d="..."), one per colour level. */
struct rp_path {
	char *buf;
	size_t len, cap;
};
void rp_path_rect(struct rp_path *p, double x, double y, double w, double h);
void rp_path_free(struct rp_path *p);
/* <path d=... fill=...> when p holds anything. */
void rp_path_emit(FILE *f, const struct rp_path *p, const char *fill, const char *cls);

/* A colour legend of the heat maps: RP_LEVELS swatches from 0 to vmax. */
void rp_legend(FILE *f, double vmax, const char *unit);

/* Value with its unit as the text digest prints it. */
const char *rp_fmt(double v, const char *unit, char *buf, size_t len);

/* ------------------------------------------------------------ pages */

struct rp_job_opts {
	const char *source;    /* "accounting" or "log" */
	const char *node_href; /* site mode: the address of node pages, "%s"
	                        * standing for the node name; else NULL */
	const char *up_href;   /* link back up (site mode), or NULL */
	const char *up_label;
	const char *made_by; /* the page's maker, NULL: lwm2 report */
};

/* The page of one job from its digest (full or compact).  0, or -1 when
 * writing failed. */
int rp_job_page(FILE *f, json_object *digest, const struct rp_job_opts *o);

/* The job page's table of the program's named regions (the digest's
 * "regions"); nothing without them (report_regions.c). */
void rp_job_regions(FILE *f, json_object *digest);

/* A thread of a process of the per-process table (the digest's
 * "ranks"' "threads", threads as a scope; report_threads.c). */
struct rp_thread {
	const struct rp_prow *proc;
	int64_t tid, flags, cpu_ns;
	int64_t samples[LWM2_NEARMARKS];
	int64_t counters[LWM2_THREAD_NCOUNTERS];
};

/* The threads of t's processes, by process in the table's order, each
 * process's main thread first, then the others by CPU time; omitted:
 * threads the digest did not keep. */
struct rp_threads {
	struct rp_thread *v;
	size_t n;
	int64_t omitted;
};

/* The digest's thread rows of t's processes into th: 0, -1 out of memory
 * (th empty).  th->n and th->omitted 0 where the digest has none. */
int rp_threads_load(struct rp_threads *th, json_object *digest, const struct rp_ptable *t);
void rp_threads_free(struct rp_threads *th);

/* A thread's share of its samples in earmark e (%), NaN without samples. */
double rp_thread_share(const struct rp_thread *th, int e);

/* The job page's table of the threads of the processes that had several;
 * nothing without them (report_threads.c). */
void rp_job_threads(FILE *f, const struct rp_threads *th, const struct rp_ptable *t);

/* Node pages of one job (site mode): dir/node-<name>.html for every node
 * of the per-process table, each listing its processes with an anchor per
 * rank.  0 or -1 (reported). */
int rp_job_node_pages(const char *dir, json_object *digest, const char *job_href);

struct lwm2_source;
struct rp_site_opts {
	const struct lwm2_source *src; /* the logs or the database */
	const char *start, *end;       /* -S, -E as given, or NULL */
	const char *metric;            /* mpi, io or cpu */
	const char *histogram; /* a digest metric whose histogram the index shows, or NULL */
	const char *outdir;
	int width, height; /* grid size in cells (pixels) */
};

/* The site pages into outdir.  0, or 1 (reported). */
int rp_site(const struct rp_site_opts *o);

#endif /* LWM2_REPORT_H */
