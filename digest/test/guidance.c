/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guidance thresholds live in one C array and are documented in one
 * table of doc/digest-schema.md: every rule must appear there with exactly
 * its conditions, and the table must hold no rule the code lacks.
 */
#include "lwm2_render.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void num(char *buf, size_t len, double v)
{
	if (v == (double)(long long)v && v < 1e15)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%g", v);
}

/* The condition as the documentation writes it. */
static void cond_text(const struct lwm2_cond *c, char *buf, size_t len)
{
	const char *m = lwm2_metric_ids[c->metric];
	char v[32];

	num(v, sizeof(v), c->value);
	switch (c->kind) {
	case LWM2_COND_NONE:
		snprintf(buf, len, "%s", "");
		break;
	case LWM2_COND_AVG_GT:
		snprintf(buf, len, "avg(%s) > %s", m, v);
		break;
	case LWM2_COND_AVG_LT:
		snprintf(buf, len, "avg(%s) < %s", m, v);
		break;
	case LWM2_COND_MAX_GT:
		snprintf(buf, len, "max(%s) > %s", m, v);
		break;
	case LWM2_COND_SPREAD_GT:
		snprintf(buf, len, "spread(%s) > %s", m, v);
		break;
	case LWM2_COND_AVG_LT_CPUS:
		snprintf(buf, len, "avg(%s) < %s × cpus_per_task", m, v);
		break;
	case LWM2_COND_AVG_LT_REF:
		snprintf(buf, len, "avg(%s) < %s × avg(%s)", m, v, lwm2_metric_ids[c->ref]);
		break;
	case LWM2_COND_AVG_GT_CPUS:
		snprintf(buf, len, "avg(%s) > %s × cpus_per_task", m, v);
		break;
	}
}

/* The preconditions as the documentation writes them. */
static void pre_text(const struct lwm2_pre *p, char *buf, size_t len)
{
	char v[32];
	size_t k = 0;

	buf[0] = '\0';
#define ADD(...)                                                                                   \
	do {                                                                                       \
		if (k && k < len)                                                                  \
			k += (size_t)snprintf(buf + k, len - k, ", ");                             \
		if (k < len)                                                                       \
			k += (size_t)snprintf(buf + k, len - k, __VA_ARGS__);                      \
	} while (0)
	if (p->mpi)
		ADD("MPI job");
	if (p->min_procs > 1)
		ADD("≥ %u %sprocesses", p->min_procs, p->mpi ? "MPI " : "");
	if (p->min_duration_s > 0) {
		num(v, sizeof(v), p->min_duration_s);
		ADD("run ≥ %s s", v);
	}
	if (p->min_bytes > 0) {
		num(v, sizeof(v), p->min_bytes);
		ADD("volume ≥ %s B", v);
	}
	if (!k)
		snprintf(buf, len, "always");
#undef ADD
}

/* ---- each rule fires where it should and nowhere else ---------------- */

static void set_stat(struct lwm2_metric_stat *st, double min, double avg, double max)
{
	st->n = 4;
	st->min = min;
	st->avg = avg;
	st->max = max;
}

/* Make condition c hold in s, keeping what an earlier condition on the
 * same metric made hold (spread, then max, is the only pair). */
static void satisfy(struct lwm2_scope *s, const struct lwm2_cond *c)
{
	struct lwm2_metric_stat *st = &s->stat[c->metric];
	double v = c->value;

	switch (c->kind) {
	case LWM2_COND_NONE:
		break;
	case LWM2_COND_AVG_GT:
		set_stat(st, v * 1.5 + 1, v * 1.5 + 1, v * 1.5 + 1);
		break;
	case LWM2_COND_AVG_LT:
		set_stat(st, v / 2, v / 2, v / 2);
		break;
	case LWM2_COND_MAX_GT:
		if (!st->n)
			set_stat(st, v + 1, v + 1, v + 1);
		else if (st->max <= v)
			st->max = v + 1;
		break;
	case LWM2_COND_SPREAD_GT:
		set_stat(st, 0, 50, 100);
		break;
	case LWM2_COND_AVG_LT_CPUS:
		set_stat(st, 0.1, 0.1, 0.1);
		break;
	case LWM2_COND_AVG_GT_CPUS:
		set_stat(st, v * s->cpus_per_task * 2, v * s->cpus_per_task * 2,
		         v * s->cpus_per_task * 2);
		break;
	case LWM2_COND_AVG_LT_REF:
		set_stat(&s->stat[c->ref], 8, 8, 8);
		set_stat(st, 1, 1, 1);
		break;
	}
}

/* Move s to the edge of condition c, where it just does not hold. */
static void edge(struct lwm2_scope *s, const struct lwm2_cond *c)
{
	struct lwm2_metric_stat *st = &s->stat[c->metric];
	double v = c->value, at = v;

	switch (c->kind) {
	case LWM2_COND_NONE:
		return;
	case LWM2_COND_MAX_GT:
		st->max = v;
		st->avg = st->avg < v ? st->avg : v;
		st->min = st->min < v ? st->min : v;
		return;
	case LWM2_COND_SPREAD_GT:
		st->min = st->max * (1 - v);
		st->avg = st->max;
		return;
	case LWM2_COND_AVG_LT_CPUS:
	case LWM2_COND_AVG_GT_CPUS:
		at = v * s->cpus_per_task;
		break;
	case LWM2_COND_AVG_LT_REF:
		at = v * s->stat[c->ref].avg;
		break;
	default:
		break;
	}
	set_stat(st, at, at, at);
}

/* The least scope where rule g applies, its conditions made to hold. */
static void firing_scope(struct lwm2_scope *s, const struct lwm2_guidance_rule *g)
{
	double dur = g->pre.min_duration_s > 0 ? g->pre.min_duration_s * 2 : 100;

	memset(s, 0, sizeof(*s));
	s->title = "job 1";
	s->processes = s->mpi_processes = g->pre.min_procs > 4 ? g->pre.min_procs : 4;
	if (!g->pre.mpi)
		s->mpi_processes = 0;
	s->nodes = 1;
	s->cpus_per_task = 4;
	set_stat(&s->stat[LWM2_M_duration], dur, dur, dur);
	if (g->pre.min_bytes > 0)
		set_stat(&s->stat[LWM2_M_bytes_written], g->pre.min_bytes * 2, g->pre.min_bytes * 2,
		         g->pre.min_bytes * 2);
	satisfy(s, &g->cond[0]);
	satisfy(s, &g->cond[1]);
}

static bool fires_any(const struct lwm2_scope *s)
{
	for (size_t r = 0; r < lwm2_nguidance_rules; r++)
		if (lwm2_guidance_fires(&lwm2_guidance_rules[r], s))
			return true;
	return false;
}

static void rules_fire_only_where_they_should(void)
{
	for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
		const struct lwm2_guidance_rule *g = &lwm2_guidance_rules[r];
		struct lwm2_scope s;

		firing_scope(&s, g);
		ok(lwm2_guidance_fires(g, &s), "%s: fires past its thresholds", g->id);
		for (int k = 0; k < 2; k++) {
			if (g->cond[k].kind == LWM2_COND_NONE)
				continue;
			firing_scope(&s, g);
			edge(&s, &g->cond[k]);
			ok(!lwm2_guidance_fires(g, &s), "%s: silent at its threshold %d (%s %g)",
			   g->id, k, lwm2_metric_ids[g->cond[k].metric],
			   s.stat[g->cond[k].metric].avg);
			firing_scope(&s, g);
			s.stat[g->cond[k].metric].n = 0;
			ok(!lwm2_guidance_fires(g, &s), "%s: silent where %s is missing", g->id,
			   lwm2_metric_ids[g->cond[k].metric]);
			if (g->cond[k].kind == LWM2_COND_AVG_LT_CPUS ||
			    g->cond[k].kind == LWM2_COND_AVG_GT_CPUS) {
				firing_scope(&s, g);
				s.cpus_per_task = 0;
				ok(!lwm2_guidance_fires(g, &s),
				   "%s: silent where the allocation is unknown", g->id);
			}
		}
		if (g->pre.mpi) {
			firing_scope(&s, g);
			s.mpi_processes = 0;
			ok(!lwm2_guidance_fires(g, &s), "%s: silent without MPI", g->id);
		}
		if (g->pre.min_procs > 1) {
			firing_scope(&s, g);
			if (g->pre.mpi)
				s.mpi_processes = g->pre.min_procs - 1;
			else
				s.processes = g->pre.min_procs - 1;
			ok(!lwm2_guidance_fires(g, &s), "%s: silent with %u process(es)", g->id,
			   g->pre.min_procs - 1);
		}
		if (g->pre.min_duration_s > 0) {
			double d = g->pre.min_duration_s * 0.99;

			firing_scope(&s, g);
			set_stat(&s.stat[LWM2_M_duration], d, d, d);
			ok(!lwm2_guidance_fires(g, &s), "%s: silent in a run of %g s", g->id, d);
		}
		if (g->pre.min_bytes > 0) {
			double b = g->pre.min_bytes * 0.99;

			firing_scope(&s, g);
			/* the volume is the larger of the two */
			set_stat(&s.stat[LWM2_M_bytes_written], b, b, b);
			set_stat(&s.stat[LWM2_M_bytes_read], b, b, b);
			ok(!lwm2_guidance_fires(g, &s), "%s: silent below %g B", g->id,
			   g->pre.min_bytes);
		}
	}
}

/* Whole jobs that must draw no advice and no note. */
static int collect(void *arg, const char *buf, size_t len)
{
	FILE *f = arg;

	return fwrite(buf, 1, len, f) == len ? 0 : -1;
}

static char *rendered(const struct lwm2_scope *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	lwm2_render_scope(s, 0, collect, f);
	fclose(f);
	return text;
}

static void quiet_jobs(void)
{
	struct lwm2_scope s;
	char *t;

	/* a healthy 4-rank MPI job of 100 s: 5 % in MPI, 1 % in I/O, one busy
	 * thread per allocated core, good caches */
	memset(&s, 0, sizeof(s));
	s.title = "job 2";
	s.processes = s.mpi_processes = 4;
	s.nodes = 1;
	s.cpus_per_task = 1;
	set_stat(&s.stat[LWM2_M_duration], 99, 100, 100);
	set_stat(&s.stat[LWM2_M_mpi_time], 4, 5, 6);
	set_stat(&s.stat[LWM2_M_mpi_coll_time], 1, 2, 3);
	set_stat(&s.stat[LWM2_M_posix_io_time], 0.5, 1, 1.5);
	set_stat(&s.stat[LWM2_M_bytes_written], 1e8, 1e8, 1e8);
	set_stat(&s.stat[LWM2_M_write_bw], 1e6, 1e6, 1e6);
	set_stat(&s.stat[LWM2_M_avg_threads], 0.95, 0.98, 1);
	set_stat(&s.stat[LWM2_M_threads_total], 3, 3, 3);
	set_stat(&s.stat[LWM2_M_cpi], 0.6, 0.7, 0.8);
	set_stat(&s.stat[LWM2_M_l1_hit_ratio], 97, 98, 99);
	set_stat(&s.stat[LWM2_M_mpi_p2p_msg_size], 65536, 65536, 65536);
	set_stat(&s.stat[LWM2_M_mpi_p2p_freq], 100, 100, 100);
	ok(!fires_any(&s), "a healthy MPI job: no rule fires");
	t = rendered(&s);
	ok(t && !strstr(t, "Notes") && strstr(t, "no metric is outside the expected range"),
	   "a healthy MPI job: no note, no advice");
	free(t);

	/* a batch script: a shell of 2 hours and its short commands (date,
	 * cp): processes of a tree live for different times by nature */
	memset(&s, 0, sizeof(s));
	s.title = "job 3 step batch";
	s.processes = 5;
	s.nodes = 1;
	s.cpus_per_task = 1;
	set_stat(&s.stat[LWM2_M_duration], 0.002, 1440, 7200);
	set_stat(&s.stat[LWM2_M_avg_threads], 0.9, 0.95, 1);
	set_stat(&s.stat[LWM2_M_threads_total], 1, 1, 1);
	ok(!fires_any(&s), "a batch script's process tree: no rule fires");

	/* the notes, each on its own count: silent at 0, said at 1 */
	memset(&s, 0, sizeof(s));
	s.title = "job 4";
	s.processes = 1;
	s.nodes = 1;
	t = rendered(&s);
	ok(t && !strstr(t, "Notes"), "no flag: no note");
	free(t);
	for (int k = 0; k < 4; k++) {
		static const char *const said[4] = {"io_uring", "mapped files", "normal end",
		                                    "Partial data"};
		memset(&s, 0, sizeof(s));
		s.title = "job 5";
		s.processes = 1;
		s.nodes = 1;
		s.io_uring = k == 0;
		s.mmap_write = k == 1;
		s.incomplete = k == 2;
		s.partial = k == 3;
		t = rendered(&s);
		ok(t && strstr(t, said[k]) && strstr(t, "Notes"),
		   "note '%s' said on its flag alone", said[k]);
		for (int j = 0; t && j < 4; j++)
			if (j != k && strstr(t, said[j]))
				ok(0, "note '%s' said without its flag", said[j]);
		free(t);
	}
}

int main(void)
{
	const char *srcdir = getenv("srcdir");
	char path[1024], line[1024];
	FILE *f;
	size_t rows = 0;
	char *doc = NULL;
	size_t doclen = 0;

	snprintf(path, sizeof(path), "%s/../doc/digest-schema.md", srcdir ? srcdir : ".");
	f = fopen(path, "r");
	if (!f) {
		ok(0, "open %s", path);
		return done_testing();
	}
	{
		FILE *m = open_memstream(&doc, &doclen);
		while (fgets(line, sizeof(line), f)) {
			fputs(line, m);
			if (!strncmp(line, "| `", 3) && strstr(line, "-") &&
			    strchr(line + 3, '`')) {
				/* a rule row: "| `id` | cond | cond | tool |" */
				char id[64];
				if (sscanf(line, "| `%63[a-z0-9-]`", id) == 1 && strchr(id, '-')) {
					bool known = false;
					for (size_t r = 0; r < lwm2_nguidance_rules; r++)
						known |= !strcmp(lwm2_guidance_rules[r].id, id);
					ok(known, "documented rule %s exists in the code", id);
					rows++;
				}
			}
		}
		fclose(m);
	}
	fclose(f);
	is_int((int)rows, (int)lwm2_nguidance_rules, "one table row per rule");
	for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
		const struct lwm2_guidance_rule *g = &lwm2_guidance_rules[r];
		char c0[128], c1[128], pre[160], want[600];
		pre_text(&g->pre, pre, sizeof(pre));
		cond_text(&g->cond[0], c0, sizeof(c0));
		cond_text(&g->cond[1], c1, sizeof(c1));
		snprintf(want, sizeof(want), "| `%s` | %s | %s | %s |", g->id, pre, c0, c1);
		if (!c1[0])
			snprintf(want, sizeof(want), "| `%s` | %s | %s | |", g->id, pre, c0);
		ok(strstr(doc, want) != NULL, "documented as: %s", want);
	}
	free(doc);
	rules_fire_only_where_they_should();
	quiet_jobs();
	return done_testing();
}
