/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Rendering a digest (full or compact JSON) as text: job metadata, then
 * the scope of the whole job and, if asked, of every step, through the
 * same renderer and guidance table as the one-process digest.
 */
#include "digest_internal.h"
#include "hwc_events.h"
#include "lwm2_keys.h"
#include "lwm2_history.h"
#include "owncost.h"
#include "processors.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

static int sink_file(void *arg, const char *buf, size_t len)
{
	return fwrite(buf, 1, len, arg) == len ? 0 : -1;
}

/* Where a metric's extreme is ("min_at", "max_at"): [rank, node] or
 * [rank, node, pid, exe]; the fields untouched when at says neither. */
static void where_at(json_object *at, int32_t *rank, const char **node, int32_t *pid,
                     const char **exe)
{
	size_t n = at ? json_object_array_length(at) : 0;

	if (n < 2)
		return;
	*rank = json_object_get_int(json_object_array_get_idx(at, 0));
	*node = json_object_get_string(json_object_array_get_idx(at, 1));
	if (n == 4) {
		*pid = json_object_get_int(json_object_array_get_idx(at, 2));
		*exe = json_object_get_string(json_object_array_get_idx(at, 3));
	}
}

void lwm2_scope_from_json(struct lwm2_scope *s, json_object *js, const char *title,
                          uint32_t cpus_per_task)
{
	json_object *ms = ju_get(js, LWM2_KEY_METRICS, json_type_object);
	json_object *miss = ju_get(js, LWM2_KEY_MISSING, json_type_object);
	int64_t v;

	memset(s, 0, sizeof(*s));
	s->title = title;
	s->processes = (uint64_t)ju_int_or(js, LWM2_KEY_PROCESSES, 0);
	s->mpi_processes = (uint64_t)ju_int_or(js, LWM2_KEY_MPI_PROCESSES, 0);
	s->nodes = (uint64_t)ju_int_or(js, LWM2_KEY_NODES, 0);
	s->incomplete = (uint64_t)ju_int_or(js, LWM2_KEY_INCOMPLETE, 0);
	s->partial = ju_get(js, LWM2_KEY_PARTIAL, json_type_boolean) &&
	             json_object_get_boolean(ju_get(js, LWM2_KEY_PARTIAL, json_type_boolean));
	s->cpus_per_task = cpus_per_task;
	s->io_uring = (uint64_t)ju_int_or(js, LWM2_KEY_IO_URING_PROCESSES, 0);
	s->mmap_write = (uint64_t)ju_int_or(js, LWM2_KEY_MMAP_WRITE_PROCESSES, 0);
	for (int i = 0; i < LWM2_NUNMEASURED; i++) {
		int64_t n = ju_int_or(ju_get(js, LWM2_KEY_UNMEASURED, json_type_object),
		                      lwm2_counter_names[LWM2_C_UNMEASURED_FIRST + i] +
		                          sizeof(LWM2_UNMEASURED_PREFIX) - 1,
		                      0);

		s->unmeasured[i] = n > 0 ? (uint64_t)n : 0;
	}
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		struct lwm2_metric_stat *st = &s->stat[k];
		json_object *m = ju_get(ms, lwm2_metric_ids[k], json_type_object);

		st->min_rank = st->max_rank = -1;
		if (m && ju_int(m, LWM2_KEY_N, &v) && v > 0 && ju_num(m, LWM2_KEY_MIN, &st->min) &&
		    ju_num(m, LWM2_KEY_AVG, &st->avg) && ju_num(m, LWM2_KEY_MAX, &st->max)) {
			st->n = (uint64_t)v;
			where_at(ju_get(m, LWM2_KEY_MIN_AT, json_type_array), &st->min_rank,
			         &st->min_node, &st->min_pid, &st->min_exe);
			where_at(ju_get(m, LWM2_KEY_MAX_AT, json_type_array), &st->max_rank,
			         &st->max_node, &st->max_pid, &st->max_exe);
			continue;
		}
		st->n = 0;
		st->reason = miss ? ju_str(miss, lwm2_metric_ids[k]) : NULL;
		if (!st->reason)
			st->reason = "not in this digest";
	}
}

/* Text the user chose (an image name) on one line of a terminal: control
 * characters (C0, DEL, C1), bytes that are not UTF-8 and backslashes are
 * written as \xNN (\\ for a backslash), so that no name can start a line
 * or move the cursor. */
static void put_escaped(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	for (size_t k = 0; k < n;) {
		size_t c = lwm2_utf8_char(s + k, n - k);

		if (c == 1 && s[k] >= 0x20 && s[k] != 0x7f && s[k] != '\\') {
			fputc(s[k], out);
		} else if (c == 1 && s[k] == '\\') {
			fputs("\\\\", out);
		} else if (c > 1 && !(s[k] == 0xc2 && s[k + 1] < 0xa0)) {
			fwrite(s + k, 1, c, out);
		} else {
			/* one byte at a time: a C1 control's two, or a stray one */
			size_t e = c ? c : 1;
			for (size_t i = 0; i < e; i++)
				fprintf(out, "\\x%02x", s[k + i]);
			c = e;
		}
		k += c;
	}
}

/* One line per container the digest lists ("containers"), the main one
 * (most CPU time) first; nothing for a job that ran in none. */
static void containers_render(json_object *d, FILE *out)
{
	json_object *a = ju_get(d, LWM2_KEY_CONTAINERS, json_type_array);
	json_object *scope = ju_get(d, LWM2_KEY_SCOPE, json_type_object);
	int64_t all = scope ? ju_int_or(scope, LWM2_KEY_PROCESSES, 0) : 0;
	int64_t omitted = ju_int_or(d, LWM2_KEY_CONTAINERS_OMITTED, 0);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *c = json_object_array_get_idx(a, i);
		const char *rt = ju_str(c, LWM2_KEY_RUNTIME), *im = ju_str(c, LWM2_KEY_IMAGE);
		int64_t np = ju_int_or(c, LWM2_KEY_PROCESSES, 0);
		double share, cpu;

		fputs("Container:", out);
		if (rt && *rt) {
			fputc(' ', out);
			put_escaped(out, rt);
		}
		if (im && *im) {
			fputc(' ', out);
			put_escaped(out, im);
		}
		if (!(rt && *rt) && !(im && *im))
			fputs(" ?", out);
		fprintf(out, " (%" PRId64 " of %" PRId64 " processes", np, all > np ? all : np);
		if (ju_num(c, LWM2_KEY_CPU_S, &cpu) && cpu > 0 &&
		    ju_num(c, LWM2_KEY_CPU_SHARE, &share) && share >= 0)
			fprintf(out, ", %.1f %% of CPU time", share);
		fputs(")\n", out);
	}
	if (omitted > 0)
		fprintf(out, "Container: %" PRId64 " more processes in other containers\n",
		        omitted);
}

/* The application's queries of its own counters ("view"), one line;
 * nothing for a job that made none. */
static void view_render(json_object *d, FILE *out)
{
	json_object *v = ju_get(d, LWM2_KEY_VIEW, json_type_object);
	int64_t q = v ? ju_int_or(v, LWM2_KEY_QUERIES, 0) : 0;
	int64_t r = v ? ju_int_or(v, LWM2_KEY_RANKS, 0) : 0;
	double s = 0;

	if (q <= 0)
		return;
	if (!ju_num(v, LWM2_KEY_SECONDS, &s) || !(s >= 0))
		s = 0;
	fprintf(out, "Application view (lwm2_view): %" PRId64 " quer%s by %" PRId64 " rank%s, ", q,
	        q == 1 ? "y" : "ies", r, r == 1 ? "" : "s");
	fprintf(out, s < 1 ? "%.2g s\n" : "%.2f s\n", s);
}

/* "rank 3@n1", or "solver[4711]@n1" for a process without a rank. */
static void where_text(json_object *at, FILE *out)
{
	int32_t rank = -1, pid = 0;
	const char *node = NULL, *exe = NULL;

	where_at(at, &rank, &node, &pid, &exe);
	if (rank >= 0)
		fprintf(out, "rank %d", rank);
	else
		fprintf(out, "%s[%d]", exe && *exe ? exe : "pid", pid);
	if (node && *node)
		fprintf(out, "@%s", node);
}

static void seconds_text(double s, FILE *out)
{
	fprintf(out, s < 1 ? "%.3g s" : "%.2f s", s);
}

/* The program's named regions ("regions"): a line each, busiest first,
 * with the spread of its time over the processes that entered it; nothing
 * for a job that named none. */
static void regions_render(json_object *d, FILE *out)
{
	json_object *r = ju_get(d, LWM2_KEY_REGIONS, json_type_object);
	json_object *names = r ? ju_get(r, LWM2_KEY_NAMES, json_type_array) : NULL;
	json_object *other = r ? ju_get(r, LWM2_KEY_OTHER, json_type_object) : NULL;
	int64_t folded = r ? ju_int_or(r, LWM2_KEY_FOLDED, 0) : 0;
	double x;

	if (!r)
		return;
	fputs("Named regions (lwm2_region_begin/end), time of each process that entered one:\n",
	      out);
	for (size_t i = 0; names && i < json_object_array_length(names); i++) {
		json_object *e = json_object_array_get_idx(names, i);
		json_object *t = ju_get(e, LWM2_KEY_SECONDS, json_type_object);
		json_object *sh = ju_get(e, LWM2_KEY_SHARE, json_type_object);
		int64_t calls = ju_int_or(e, LWM2_KEY_CALLS, 0),
		        n = t ? ju_int_or(t, LWM2_KEY_N, 0) : 0;
		double avg, min, max;

		if (!t || !ju_num(t, LWM2_KEY_AVG, &avg) || !ju_num(t, LWM2_KEY_MIN, &min) ||
		    !ju_num(t, LWM2_KEY_MAX, &max))
			continue;
		fputs("  ", out);
		put_escaped(out, ju_str(e, LWM2_KEY_NAME) ? ju_str(e, LWM2_KEY_NAME) : "?");
		fprintf(out, ": %" PRId64 " call%s by %" PRId64 " process%s, ", calls,
		        calls == 1 ? "" : "s", n, n == 1 ? "" : "es");
		if (n > 1)
			fputs("avg ", out);
		seconds_text(avg, out);
		if (n > 1) {
			fputs(" (min ", out);
			seconds_text(min, out);
			fputs(" ", out);
			where_text(ju_get(t, LWM2_KEY_MIN_AT, json_type_array), out);
			fputs(", max ", out);
			seconds_text(max, out);
			fputs(" ", out);
			where_text(ju_get(t, LWM2_KEY_MAX_AT, json_type_array), out);
			fputs(")", out);
		}
		if (sh && ju_num(sh, LWM2_KEY_AVG, &x))
			fprintf(out, ", %.1f %% of %s wall time", x, n > 1 ? "their" : "its");
		fputc('\n', out);
	}
	if (folded > 0) {
		fprintf(out, "  %" PRId64 " more name%s folded: %" PRId64 " calls, ", folded,
		        folded == 1 ? "" : "s", other ? ju_int_or(other, LWM2_KEY_CALLS, 0) : 0);
		seconds_text(other && ju_num(other, LWM2_KEY_SECONDS, &x) ? x : 0, out);
		fputc('\n', out);
	}
}

/* Where the memory peak comes from, in the words of lwm2(1)'s Fit. */
static const char *fit_mem_source(json_object *p)
{
	const char *s = ju_str(p, LWM2_KEY_SOURCE);

	if (s && !strcmp(s, "cgroup"))
		return "the job's cgroup peak";
	if (s && !strcmp(s, "mixed"))
		return "the cgroup peak or the processes' peaks, per node";
	return "sum of the processes' peaks";
}

static void fit_advice(json_object *p, FILE *out)
{
	const char *a = ju_str(p, LWM2_KEY_ADVICE);

	if (a)
		fprintf(out, " -> next time: %s", a);
	fputc('\n', out);
}

static bool fit_measured(json_object *p, const char *label, FILE *out)
{
	char text[128];

	if (!lwm2_fit_not_measured(p, text, sizeof(text)))
		return true;
	fprintf(out, "  %s: %s\n", label, text);
	return false;
}

/* The "fit" block: what the job asked for against what it used, one line
 * each, with the request for next time where the fit is poor.  A figure
 * that was not measured says so; it is never shown as 0. */
static void fit_render(json_object *d, FILE *out)
{
	json_object *f = ju_get(d, LWM2_KEY_FIT, json_type_object), *p;
	double eff = 0;
	int64_t a, b;
	char t1[32], t2[32];

	if (!f)
		return;
	fputs("Fit (asked for against used)\n", out);
	if (ju_str(f, LWM2_KEY_NO_ADVICE))
		fprintf(out, "  (advice not given: %s)\n", ju_str(f, LWM2_KEY_NO_ADVICE));
	p = ju_get(f, LWM2_KEY_FIT_CPU, json_type_object);
	if (fit_measured(p, "CPU", out)) {
		int64_t cores = ju_int_or(p, LWM2_KEY_ALLOCATED_CORES, 0);
		double busy;

		ju_num(p, LWM2_KEY_EFFICIENCY, &eff);
		/* the cores busy on average, over the time the efficiency is
		 * set against (elapsed, or the processes' longer span) */
		busy = eff * (double)cores;
		fprintf(out,
		        busy < 10 ? "  CPU: %.1f of %" PRId64 " core%s busy (%.0f %%)"
		                  : "  CPU: %.0f of %" PRId64 " core%s busy (%.0f %%)",
		        busy, cores, cores == 1 ? "" : "s", eff * 100);
		fit_advice(p, out);
	}
	p = ju_get(f, LWM2_KEY_FIT_MEMORY, json_type_object);
	if (fit_measured(p, "Memory", out)) {
		fprintf(out, "  Memory: peak %" PRId64 " MB of %" PRId64 " MB asked per node (%s)",
		        ju_int_or(p, LWM2_KEY_PEAK_PER_NODE_MB, 0),
		        ju_int_or(p, LWM2_KEY_REQUESTED_PER_NODE_MB, 0), fit_mem_source(p));
		fit_advice(p, out);
	} else if (p && ju_int(p, LWM2_KEY_PEAK_PER_NODE_MB, &a)) {
		fprintf(out, "  (peak %" PRId64 " MB per node, %s)\n", a, fit_mem_source(p));
	}
	p = ju_get(f, LWM2_KEY_FIT_TIME, json_type_object);
	if (fit_measured(p, "Time", out)) {
		const char *v = ju_str(p, LWM2_KEY_VERDICT);
		lwm2_fit_time_str((uint64_t)ju_int_or(p, LWM2_KEY_ELAPSED_S, 0), t1, sizeof(t1));
		lwm2_fit_time_str((uint64_t)ju_int_or(p, LWM2_KEY_LIMIT_S, 0), t2, sizeof(t2));
		if (v && !strcmp(v, "unlimited"))
			fprintf(out, "  Time: ran %s, no time limit", t1);
		else
			fprintf(out, "  Time: ran %s of a %s limit", t1, t2);
		if (v && !strcmp(v, "low") && !ju_str(p, LWM2_KEY_ADVICE))
			fputs(" (a short job: no advice)", out);
		fit_advice(p, out);
	}
	p = ju_get(f, LWM2_KEY_FIT_GPU, json_type_object);
	if (!fit_measured(p, "GPU", out))
		return;
	if (!ju_int(p, LWM2_KEY_ALLOCATED, &a) || a <= 0) {
		fputs("  GPU: none allocated\n", out);
	} else {
		b = ju_int_or(p, LWM2_KEY_USED, 0);
		fprintf(out, "  GPU: %" PRId64 " of %" PRId64 " allocated saw CUDA activity", b, a);
		fit_advice(p, out);
	}
}

static void put_time(FILE *out, const char *label, int64_t t)
{
	char b[64];
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm))
		return;
	fprintf(out, "%s%s", label, b);
}

/* Counters some records lacked or this lwm2 does not know, from the job's
 * totals: a node upgraded while the job ran leaves records of two builds
 * (lwm2_record.h); a counter no process had is "not measured", one of a
 * newer build is shown by its name.  Nothing for a job of one build. */
static void counters_render(json_object *d, FILE *out)
{
	json_object *t =
	    ju_get(ju_get(d, LWM2_KEY_SCOPE, json_type_object), LWM2_KEY_TOTALS, json_type_object);
	int absent = 0, newer = 0;

	if (!t)
		return;
	/* in the counters' order, whatever the JSON's member order */
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		if (ju_get(t, lwm2_counter_names[c], json_type_string))
			fprintf(out, "%s %s",
			        absent++ ? "," : "Counters not measured (an older lwm2):",
			        lwm2_counter_names[c]);
	if (absent)
		fputc('\n', out);
	json_object_object_foreach(t, key2, val2)
	{
		int known = 0;

		for (int c = 0; c < LWM2_NCOUNTERS && !known; c++)
			known = strcmp(key2, lwm2_counter_names[c]) == 0;
		if (!known && json_object_is_type(val2, json_type_int))
			fprintf(out, "%s %s %" PRId64,
			        newer++ ? "," : "Counters of a newer lwm2:", key2,
			        json_object_get_int64(val2));
	}
	if (newer)
		fputc('\n', out);
}

void lwm2_scope_events_from_digest(struct lwm2_scope *s, json_object *d)
{
	lwm2_hwc_events_json_text(ju_get(d, LWM2_KEY_COUNTER_EVENTS, json_type_object),
	                          s->hwc_events, sizeof(s->hwc_events));
}

/* "Counted with: fp_ops PAPI_FP_INS, ..." : the event of each hardware
 * counter role, which the sequential metrics' labels follow; nothing
 * where the records did not say (no counters, an older lwm2). */
static void counter_events_render(json_object *d, FILE *out)
{
	json_object *ev = ju_get(d, LWM2_KEY_COUNTER_EVENTS, json_type_object);
	int n = 0;

	if (!ev)
		return;
	json_object_object_foreach(ev, role, val)
	{
		if (!json_object_is_type(val, json_type_string))
			continue;
		fputs(n++ ? ", " : "Counted with: ", out);
		put_escaped(out, role);
		fputc(' ', out);
		put_escaped(out, json_object_get_string(val));
	}
	if (n)
		fputc('\n', out);
}

/* A digest made of others (lwm2 diff --output, lwm2 mean, lwm2 combine):
 * the operation and its operands, so that its figures are never taken for
 * a run's. */
void lwm2_derived_render(json_object *d, FILE *out)
{
	json_object *der = ju_get(d, LWM2_KEY_DERIVED, json_type_object);
	json_object *ops = ju_get(der, LWM2_KEY_OPERANDS, json_type_array);
	const char *op = ju_str(der, LWM2_KEY_OPERATION);
	size_t n = ops ? json_object_array_length(ops) : 0;
	bool diff = op && !strcmp(op, "diff");

	if (!der)
		return;
	fprintf(out, "Derived: %s of %zu digests, not a run:",
	        diff                         ? "the difference B - A"
	        : op && !strcmp(op, "mean")  ? "the mean"
	        : op && !strcmp(op, "merge") ? "the merge (each metric from the first that has it)"
	                                     : "an operation this lwm2 does not know",
	        n);
	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(ops, i);
		const char *src = ju_str(o, LWM2_KEY_SOURCE);

		fprintf(out, "%s", i ? "," : "");
		if (diff && i < 2)
			fprintf(out, " %c =", i ? 'B' : 'A');
		fputc(' ', out);
		put_escaped(out, src ? src : "?");
	}
	fputc('\n', out);
	if (ju_get(der, LWM2_KEY_RANKS_ALIGNED, json_type_boolean))
		fprintf(
		    out, "Derived: %s\n",
		    json_object_get_boolean(ju_get(der, LWM2_KEY_RANKS_ALIGNED, json_type_boolean))
		        ? "process by process (the operands' ranks line up)"
		        : "of the averages only (the operands' ranks do not line up)");
}

/* A scope's derived metrics (lwm2_derived_apply): "n/a" and why where
 * there is no figure. */
void lwm2_derived_metrics_render(json_object *scope, FILE *out)
{
	json_object *dm = ju_get(scope, LWM2_KEY_DERIVED_METRICS, json_type_object);
	char b[32];
	double v;

	if (!dm || !json_object_object_length(dm))
		return;
	fputs("Derived metrics\n", out);
	json_object_object_foreach(dm, name, m)
	{
		const char *why = ju_str(m, LWM2_KEY_WHY), *expr = ju_str(m, LWM2_KEY_EXPR);

		fprintf(out, "  %-22s %14s", name,
		        ju_num(m, LWM2_KEY_VALUE, &v) ? ju_double_text(v, b, sizeof(b)) : "n/a");
		if (expr)
			fprintf(out, "  = %s", expr);
		if (why && !ju_num(m, LWM2_KEY_VALUE, &v))
			fprintf(out, " (%s)", why);
		fputc('\n', out);
	}
}

int lwm2_digest_render(json_object *d, FILE *out, const struct lwm2_render_opts *opts)
{
	static const struct lwm2_render_opts dflt = {0};
	const struct lwm2_render_opts *o = opts ? opts : &dflt;
	json_object *job = ju_get(d, LWM2_KEY_JOB, json_type_object), *steps, *flags;
	struct lwm2_scope s;
	struct lwm2_render_opts derived_opts;
	char title[400];
	const char *str;
	int64_t v, start, end;
	uint32_t cpt;
	int rc = 0;

	/* differences and means are no run: no rule judges them */
	if (ju_get(d, LWM2_KEY_DERIVED, json_type_object)) {
		derived_opts = *o;
		derived_opts.flags |= LWM2_RENDER_NO_GUIDANCE;
		o = &derived_opts;
	}

	if (!job || !ju_get(d, LWM2_KEY_SCOPE, json_type_object)) {
		errno = EINVAL;
		return -1;
	}
	cpt = (uint32_t)ju_int_or(job, LWM2_KEY_CPUS_PER_TASK, 0);
	str = ju_str(job, LWM2_KEY_CLUSTER);
	snprintf(title, sizeof(title), "job %" PRId64 "%s%s", ju_int_or(job, LWM2_KEY_JOB_ID, 0),
	         str ? " on cluster " : "", str ? str : "");
	fprintf(out, "Job %" PRId64, ju_int_or(job, LWM2_KEY_JOB_ID, 0));
	if ((str = ju_str(job, LWM2_KEY_USER)))
		fprintf(out, ", user %s", str);
	if ((str = ju_str(job, LWM2_KEY_ACCOUNT)))
		fprintf(out, ", account %s", str);
	if ((str = ju_str(job, LWM2_KEY_PARTITION)))
		fprintf(out, ", partition %s", str);
	if ((str = ju_str(job, LWM2_KEY_STATE)))
		fprintf(out, ", %s", str);
	fputc('\n', out);
	if ((str = ju_str(job, LWM2_KEY_NODES)) && *str)
		fprintf(out, "Nodes %s", str);
	else if (ju_int(job, LWM2_KEY_NODE_COUNT, &v) && v)
		fprintf(out, "Nodes %" PRId64, v);
	start = ju_int_or(job, LWM2_KEY_START, 0);
	end = ju_int_or(job, LWM2_KEY_END, 0);
	put_time(out, ", start ", start);
	put_time(out, ", end ", end);
	if (start > 0 && end >= start)
		fprintf(out, ", elapsed %" PRId64 " s", end - start);
	fputc('\n', out);
	if ((flags = ju_get(d, LWM2_KEY_FLAGS, json_type_array)) &&
	    json_object_array_length(flags)) {
		fputs("Flags", out);
		for (size_t i = 0; i < json_object_array_length(flags); i++)
			fprintf(out, " %s",
			        json_object_get_string(json_object_array_get_idx(flags, i)));
		fputc('\n', out);
	}
	lwm2_derived_render(d, out);
	fit_render(d, out);
	lwm2_app_render(d, out);
	lwm2_processors_render(d, out);
	containers_render(d, out);
	view_render(d, out);
	regions_render(d, out);
	counters_render(d, out);
	counter_events_render(d, out);
	lwm2_own_cost_render(d, out);
	lwm2_scope_from_json(&s, ju_get(d, LWM2_KEY_SCOPE, json_type_object), title, cpt);
	lwm2_scope_events_from_digest(&s, d);
	if (lwm2_render_scope(&s, o->flags, sink_file, out) != 0)
		rc = -1;
	lwm2_derived_metrics_render(ju_get(d, LWM2_KEY_SCOPE, json_type_object), out);
	/* findings of the grid (grid.h): other jobs in the slices where this
	 * job's own rates fell */
	if (!(o->flags & LWM2_RENDER_NO_GUIDANCE) &&
	    (steps = ju_get(d, LWM2_KEY_INTERFERENCE, json_type_array)) &&
	    json_object_array_length(steps)) {
		fputs("Interference\n", out);
		for (size_t i = 0; i < json_object_array_length(steps); i++) {
			json_object *f = json_object_array_get_idx(steps, i);
			const char *t = ju_str(f, LWM2_KEY_TEXT), *r = ju_str(f, LWM2_KEY_RULE);
			if (t)
				fprintf(out, "  * %s [%s]\n", t, r ? r : "interference");
		}
	}
	if (!(o->flags & LWM2_RENDER_NO_GUIDANCE))
		lwm2_history_render(d, out);
	steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);
	if (o->steps && steps) {
		for (size_t i = 0; i < json_object_array_length(steps); i++) {
			json_object *js = json_object_array_get_idx(steps, i);
			char st[600];
			int64_t id = ju_int_or(js, LWM2_KEY_STEP_ID, 0);
			const char *name = id == 0xfffffffbLL   ? "batch"
			                   : id == 0xfffffffcLL ? "extern"
			                   : id == 0xfffffffaLL ? "interactive"
			                                        : NULL;
			if (name)
				snprintf(st, sizeof(st), "%s step %s", title, name);
			else
				snprintf(st, sizeof(st), "%s step %" PRId64, title, id);
			fputc('\n', out);
			lwm2_scope_from_json(&s, js, st, cpt);
			lwm2_scope_events_from_digest(&s, d);
			if (lwm2_render_scope(&s, o->flags, sink_file, out) != 0)
				rc = -1;
			lwm2_derived_metrics_render(js, out);
		}
	}
	if (ju_get(d, LWM2_KEY_STEPS_OMITTED, json_type_int))
		fprintf(out, "(%" PRId64 " steps omitted to fit the accounting field)\n",
		        ju_int_or(d, LWM2_KEY_STEPS_OMITTED, 0));
	if (fflush(out) != 0 || ferror(out))
		rc = -1;
	return rc;
}
