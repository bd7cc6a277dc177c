/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The words of the grid's findings (grid_internal.h): bytes, clock times,
 * lists of jobs and nodes, and the sentences the interference and
 * sick-node rules put in their "text" and "why".
 */
#include "grid_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

static void fmt_clock(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "@%" PRId64, t);
}

/* "1240", "1240 and 1251", "1240, 1251 and 1300" */
static void fmt_jobs(const int64_t *jobs, size_t n, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && l < len; i++) {
		int w = snprintf(buf + l, len - l, "%s%" PRId64,
		                 !i          ? ""
		                 : i + 1 < n ? ", "
		                             : " and ",
		                 jobs[i]);
		if (w < 0)
			break;
		l += (size_t)w;
	}
}

void grid_node_list(const struct lwm2_grid *g, const unsigned char *jnodes, char *buf, size_t len)
{
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < g->nnodes && l + 1 < len; i++) {
		int w;

		if (!jnodes[i])
			continue;
		w = snprintf(buf + l, len - l, "%s%s", l ? "," : "", g->nodes[i]);
		if (w < 0 || (size_t)w >= len - l) {
			snprintf(buf + l, len - l, ",...");
			break;
		}
		l += (size_t)w;
	}
}

/* What the others did in the slow slices: "wrote 80 GB", "read 2 GB",
 * "wrote 80 GB and read 2 GB". */
static void fmt_io(const struct grid_interf_words *w, const char *vb, char *buf, size_t len)
{
	char wb[32], rb[32];

	if (w->rsum < 0.1 * w->cum)
		snprintf(buf, len, "wrote %s", vb);
	else if (w->wsum < 0.1 * w->cum)
		snprintf(buf, len, "read %s", vb);
	else
		snprintf(buf, len, "wrote %s and read %s", lwm2_fmt_bytes(w->wsum, wb, sizeof(wb)),
		         lwm2_fmt_bytes(w->rsum, rb, sizeof(rb)));
}

void grid_interf_text(char *text, size_t len, const struct grid_interf_words *w)
{
	char a[32], b[32], vb[32], jl[256], what[96];
	const char *jobs = w->njobs > 1 ? "jobs" : "job";

	fmt_jobs(w->jobs, w->njobs, jl, sizeof(jl));
	fmt_clock(w->from, a, sizeof(a));
	fmt_clock(w->to, b, sizeof(b));
	lwm2_fmt_bytes(w->cum, vb, sizeof(vb));
	switch (w->kind) {
	case K_WRITE:
	case K_READ:
		fmt_io(w, vb, what, sizeof(what));
		snprintf(text, len,
		         "%s bandwidth fell %.0fx in %s-%s (%zu of %zu slices) while %s %s %s "
		         "on the shared file system; rerun may be faster",
		         w->kind == K_WRITE ? "write" : "read", w->base / w->during, a, b, w->nslow,
		         w->na, jobs, jl, what);
		break;
	case K_MPI:
		snprintf(text, len,
		         "MPI transfer rate fell %.0fx in %s-%s (%zu of %zu slices) while %s %s "
		         "moved %s over MPI on the same nodes (%s; lwm2 knows nodes, not "
		         "switches); rerun may be faster",
		         w->base / w->during, a, b, w->nslow, w->na, jobs, jl, vb, w->nodes);
		break;
	default:
		snprintf(text, len,
		         "MPI share rose from %.0f%% to %.0f%% in %s-%s (%zu of %zu slices) "
		         "while %s %s moved %s over MPI on the same nodes (%s; lwm2 knows "
		         "nodes, not switches); rerun may be faster",
		         w->base, w->during, a, b, w->nslow, w->na, jobs, jl, vb, w->nodes);
		break;
	}
}

void grid_nodes_why(char *buf, size_t len, const char *node, size_t slowest, size_t jobs,
                    double expected, double p, double ratio, size_t ratio_jobs)
{
	snprintf(buf, len,
	         "%s held the slowest rank in %zu of %zu multi-node jobs (%.1f expected if "
	         "nodes were alike, chance %.2g); its compute time was %.2fx the job's "
	         "median node's (median over %zu jobs)",
	         node, slowest, jobs, expected, p, ratio, ratio_jobs);
}
