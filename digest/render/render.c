/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text rendering of a digest scope with guidance.  No stdio, no malloc and
 * no locale: this code runs inside every measured process at exit, possibly
 * after a fatal signal, so it formats numbers itself into stack buffers.
 */
#include "lwm2_render.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WRAP    78
#define COL_MIN 56
#define COL_AVG 68
#define COL_MAX 80
#define COL_LOC 92

struct out {
	lwm2_sink_fn sink;
	void *arg;
	int failed;
	size_t n;
	size_t col;
	char buf[1024];
};

static void flush(struct out *o)
{
	if (o->n && !o->failed && o->sink(o->arg, o->buf, o->n) < 0)
		o->failed = 1;
	o->n = 0;
}

static void put(struct out *o, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (o->n == sizeof(o->buf))
			flush(o);
		o->buf[o->n++] = s[i];
		o->col = s[i] == '\n' ? 0 : o->col + 1;
	}
}

static void puts_(struct out *o, const char *s)
{
	if (s)
		put(o, s, strlen(s));
}

static void pad_to(struct out *o, size_t col)
{
	while (o->col < col)
		put(o, " ", 1);
	if (o->col > col)
		put(o, " ", 1);
}

/* Unsigned decimal into buf (at least 21 bytes); returns the length. */
static size_t utoa(uint64_t v, char *buf)
{
	char tmp[21];
	size_t n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		buf[len++] = tmp[--n];
	buf[len] = '\0';
	return len;
}

static void putu(struct out *o, uint64_t v)
{
	char b[24];
	put(o, b, utoa(v, b));
}

static void puti(struct out *o, int64_t v)
{
	if (v < 0) {
		put(o, "-", 1);
		putu(o, (uint64_t)(-(v + 1)) + 1);
	} else {
		putu(o, (uint64_t)v);
	}
}

/* v >= 0 with `dec` decimals, rounded half up. */
static size_t fixed(double v, int dec, char *buf, size_t len)
{
	uint64_t scale = 1, x, ip;
	char ib[24];
	size_t n, k = 0;

	for (int i = 0; i < dec; i++)
		scale *= 10;
	/* A crafted digest can hold any double: beyond what an integer holds
	 * (or NaN, or negative) the conversion would be undefined. */
	if (!(v >= 0 && v * (double)scale + 0.5 < 1e19)) {
		int w = snprintf(buf, len, "%.3g", v);
		return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
	}
	x = (uint64_t)(v * (double)scale + 0.5);
	ip = x / scale;
	n = utoa(ip, ib);
	for (size_t i = 0; i < n && k + 1 < len; i++)
		buf[k++] = ib[i];
	if (dec > 0 && k + 1 < len)
		buf[k++] = '.';
	for (int i = dec - 1; i >= 0 && k + 1 < len; i--) {
		uint64_t d = x;
		for (int j = 0; j < i; j++)
			d /= 10;
		buf[k++] = (char)('0' + d % 10);
	}
	buf[k] = '\0';
	return k;
}

/* Three significant digits for 0 <= v < 1000 (after scaling). */
static size_t sig3(double v, char *buf, size_t len)
{
	int dec = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
	return fixed(v, dec, buf, len);
}

static void cat(char *buf, size_t len, size_t *k, const char *s)
{
	while (*s && *k + 1 < len)
		buf[(*k)++] = *s++;
	buf[*k] = '\0';
}

char *lwm2_format_value(double v, const char *unit, char *buf, size_t len)
{
	static const char *const si[] = {"", "k", "M", "G", "T", "P", "E"};
	size_t k = 0;
	int p = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (v != v || v > 1e30 || v < -1e30) {
		cat(buf, len, &k, "n/a");
		return buf;
	}
	if (v < 0) {
		cat(buf, len, &k, "-");
		v = -v;
	}
	if (strcmp(unit, "%") == 0) {
		k += fixed(v, v < 9.995 ? 2 : 1, buf + k, len - k);
		cat(buf, len, &k, " %");
		return buf;
	}
	if (strcmp(unit, "s") == 0 && v >= 999.5) {
		k += fixed(v, 0, buf + k, len - k);
		cat(buf, len, &k, " s");
		return buf;
	}
	while (v >= 999.5 && p < 6) {
		v /= 1000;
		p++;
	}
	if (v > 0 && v < 0.001 && strcmp(unit, "s") != 0) {
		cat(buf, len, &k, "<0.001");
	} else if (p == 0 && (strcmp(unit, "B") == 0 || !*unit) && v >= 0 && v < 1e19 &&
	           v == (double)(uint64_t)v) {
		/* whole bytes and counts read better without decimals */
		k += fixed(v, 0, buf + k, len - k);
	} else if (p == 0 && strcmp(unit, "B") == 0) {
		k += fixed(v, v >= 0 && v < 1e19 && v == (double)(uint64_t)v ? 0 : 1, buf + k,
		           len - k);
	} else {
		k += sig3(v, buf + k, len - k);
	}
	if (*unit || p) {
		cat(buf, len, &k, " ");
		cat(buf, len, &k, si[p]);
		cat(buf, len, &k, unit);
	}
	return buf;
}

int lwm2_sink_fd(void *arg, const char *buf, size_t len)
{
	int fd = (int)(intptr_t)arg;

	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Words of s, wrapped at WRAP columns, continuation lines at indent. */
static void wrapped(struct out *o, const char *s, size_t indent)
{
	while (*s) {
		const char *w = s;
		size_t n;

		while (*w == ' ')
			w++;
		n = strcspn(w, " ");
		if (!n)
			break;
		if (o->col > indent && o->col + 1 + n > WRAP)
			put(o, "\n", 1);
		else if (o->col > indent)
			put(o, " ", 1);
		while (o->col < indent)
			put(o, " ", 1);
		put(o, w, n);
		s = w + n;
	}
}

/* A note of the digest's: lead, the number of processes n, then text
 * wrapped. */
static void note_count(struct out *o, const char *lead, uint64_t n, const char *text)
{
	puts_(o, lead);
	putu(o, n);
	wrapped(o, text, 4);
	put(o, "\n", 1);
}

/* "rank 3@n1" for a rank; "fio[4711]@n1" for any other process, which
 * only its host, pid and executable tell apart; "sed[short]@n1" for the
 * short processes of one executable, kept together in the step's summary
 * (no single pid). */
static void location(struct out *o, int32_t rank, const char *node, int32_t pid, const char *exe)
{
	bool named = true;

	if (rank >= 0) {
		puts_(o, "rank ");
		puti(o, rank);
	} else if (pid > 0) {
		puts_(o, exe && *exe ? exe : "pid");
		puts_(o, "[");
		puti(o, pid);
		puts_(o, "]");
	} else if (exe && *exe) {
		puts_(o, exe);
		puts_(o, "[short]");
	} else {
		named = false;
	}
	if (node && *node) {
		puts_(o, named ? "@" : "");
		puts_(o, node);
	}
	if (!named && !(node && *node))
		puts_(o, "?");
}

static void metric_line(struct out *o, const struct lwm2_scope *s, int i, unsigned flags)
{
	const struct lwm2_metric_stat *st = &s->stat[i];
	const char *unit = lwm2_metric_units[i];
	char b[48], label[160];

	/* a role nobody asked for is no news in every digest */
	if (st->n == 0 && lwm2_metric_on_request(i))
		return;
	puts_(o, "  ");
	puts_(o, lwm2_metric_label(s->hwc_events, i, label, sizeof(label)));
	if (*unit) {
		puts_(o, " [");
		puts_(o, unit);
		puts_(o, "]");
	}
	pad_to(o, COL_MIN);
	if (st->n == 0) {
		/* One line per metric, however long: users grep for it. */
		puts_(o, "n/a (");
		puts_(o, st->reason && *st->reason ? st->reason : "not measured");
		puts_(o, ")\n");
		return;
	}
	if (flags & LWM2_RENDER_SINGLE) {
		puts_(o, lwm2_format_value(st->avg, unit, b, sizeof(b)));
		put(o, "\n", 1);
		return;
	}
	puts_(o, lwm2_format_value(st->min, unit, b, sizeof(b)));
	pad_to(o, COL_AVG);
	puts_(o, lwm2_format_value(st->avg, unit, b, sizeof(b)));
	pad_to(o, COL_MAX);
	puts_(o, lwm2_format_value(st->max, unit, b, sizeof(b)));
	if (!(flags & LWM2_RENDER_NO_LOCATIONS) && st->n > 1 && st->max != st->min) {
		pad_to(o, COL_LOC);
		puts_(o, "min ");
		location(o, st->min_rank, st->min_node, st->min_pid, st->min_exe);
		puts_(o, ", max ");
		location(o, st->max_rank, st->max_node, st->max_pid, st->max_exe);
	}
	put(o, "\n", 1);
	/* a rate of each process adds up to the job's */
	if (i == LWM2_M_fp_rate && st->n > 1) {
		puts_(o, "    of the job: ");
		puts_(o, lwm2_format_value(st->avg * (double)st->n, unit, b, sizeof(b)));
		puts_(o, ", the sum over ");
		putu(o, st->n);
		puts_(o, " processes\n");
	}
}

static void cond_evidence(struct out *o, const struct lwm2_cond *c, const struct lwm2_scope *s)
{
	const struct lwm2_metric_stat *st;
	const char *unit;
	char b[48], label[160];

	if (c->kind == LWM2_COND_NONE)
		return;
	st = &s->stat[c->metric];
	unit = lwm2_metric_units[c->metric];
	puts_(o, lwm2_metric_label(s->hwc_events, c->metric, label, sizeof(label)));
	puts_(o, ": avg ");
	puts_(o, lwm2_format_value(st->avg, unit, b, sizeof(b)));
	if (st->n > 1) {
		puts_(o, ", min ");
		puts_(o, lwm2_format_value(st->min, unit, b, sizeof(b)));
		puts_(o, ", max ");
		puts_(o, lwm2_format_value(st->max, unit, b, sizeof(b)));
	}
}

struct text_buf {
	char *p;
	size_t len, n;
};

static int to_text_buf(void *arg, const char *buf, size_t len)
{
	struct text_buf *t = arg;
	size_t room = t->len - 1 - t->n;

	if (len > room)
		len = room;
	memcpy(t->p + t->n, buf, len);
	t->n += len;
	return 0;
}

static void unmeasured_text(struct out *o, const struct lwm2_scope *s)
{
	const char *sep = " (";

	putu(o, lwm2_scope_unmeasured(s));
	puts_(o, " process(es) started unmeasured");
	for (int i = 0; i < LWM2_NUNMEASURED; i++) {
		if (!s->unmeasured[i])
			continue;
		puts_(o, sep);
		puts_(o, lwm2_counter_names[LWM2_C_UNMEASURED_FIRST + i] +
		             sizeof(LWM2_UNMEASURED_PREFIX) - 1);
		put(o, " ", 1);
		putu(o, s->unmeasured[i]);
		sep = ", ";
	}
	put(o, ")", 1);
}

size_t lwm2_render_unmeasured(const struct lwm2_scope *s, char *buf, size_t len)
{
	struct text_buf t = {buf, len, 0};
	struct out o = {.sink = to_text_buf, .arg = &t};

	if (!len)
		return 0;
	if (lwm2_scope_unmeasured(s)) {
		unmeasured_text(&o, s);
		flush(&o);
	}
	buf[t.n] = '\0';
	return t.n;
}

int lwm2_render_scope(const struct lwm2_scope *s, unsigned flags, lwm2_sink_fn sink, void *arg)
{
	struct out o = {.sink = sink, .arg = arg};
	int group = -1, fired = 0;

	puts_(&o, "lwm2 digest: ");
	puts_(&o, s->title ? s->title : "");
	put(&o, "\n", 1);
	if (!(flags & LWM2_RENDER_SINGLE)) {
		pad_to(&o, COL_MIN);
		puts_(&o, "min");
		pad_to(&o, COL_AVG);
		puts_(&o, "avg");
		pad_to(&o, COL_MAX);
		puts_(&o, "max");
		put(&o, "\n", 1);
	}
	for (int i = 0; i < LWM2_NMETRICS; i++) {
		if ((int)lwm2_metric_groups[i] != group) {
			group = (int)lwm2_metric_groups[i];
			puts_(&o, lwm2_mgroup_titles[group]);
			put(&o, "\n", 1);
			if (group == LWM2_MG_GENERAL) {
				puts_(&o, "  Number of processes");
				pad_to(&o, COL_MIN);
				putu(&o, s->processes);
				puts_(&o, " (");
				putu(&o, s->mpi_processes);
				puts_(&o, " MPI) on ");
				putu(&o, s->nodes);
				puts_(&o, s->nodes == 1 ? " node\n" : " nodes\n");
			}
		}
		metric_line(&o, s, i, flags);
	}
	if (s->incomplete || s->partial || s->io_uring || s->mmap_write ||
	    lwm2_scope_unmeasured(s)) {
		puts_(&o, "Notes\n");
		if (lwm2_scope_unmeasured(s)) {
			puts_(&o, "  * ");
			unmeasured_text(&o, s);
			put(&o, ":", 1);
			wrapped(&o,
			        "counted among the processes, without figures of their own "
			        "(spank_lwm2(8), what is not measured).",
			        4);
			put(&o, "\n", 1);
		}
		if (s->io_uring)
			note_count(&o, "  * I/O partial: ", s->io_uring,
			           " process(es) set up an io_uring; I/O submitted through it is "
			           "not counted, so their file I/O figures are too low.");
		if (s->mmap_write)
			note_count(&o, "  * ", s->mmap_write,
			           " process(es) mapped files shared and writable; data stored "
			           "through such a mapping is not counted as written.");
		if (s->incomplete)
			note_count(
			    &o, "  * ", s->incomplete,
			    " process(es) did not reach their normal end (killed, crashed or "
			    "still running); their data ends at their last time slice.");
		if (s->partial) {
			puts_(&o, "  * ");
			wrapped(&o,
			        "Partial data: a memory budget was hit or node records are "
			        "missing; totals may be low.",
			        4);
			put(&o, "\n", 1);
		}
	}
	if (!(flags & LWM2_RENDER_NO_GUIDANCE)) {
		for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
			const struct lwm2_guidance_rule *g = &lwm2_guidance_rules[r];
			if (!lwm2_guidance_fires(g, s))
				continue;
			if (!fired++)
				puts_(&o, "Guidance\n");
			puts_(&o, "  * ");
			wrapped(&o, g->finding, 4);
			puts_(&o, "\n    (");
			cond_evidence(&o, &g->cond[0], s);
			if (g->cond[1].kind != LWM2_COND_NONE &&
			    g->cond[1].metric != g->cond[0].metric) {
				puts_(&o, "; ");
				cond_evidence(&o, &g->cond[1], s);
			}
			puts_(&o, ") [");
			puts_(&o, g->id);
			puts_(&o, "]\n    ");
			wrapped(&o, g->meaning, 4);
			puts_(&o, "\n    Next:");
			wrapped(&o, g->next, 4);
			put(&o, "\n", 1);
		}
		if (!fired)
			puts_(&o, "Guidance: no metric is outside the expected range.\n");
	}
	flush(&o);
	return o.failed ? -1 : 0;
}

static void stat_single(struct lwm2_metric_stat *st, const struct lwm2_metric_value *v,
                        int32_t rank, const char *node)
{
	memset(st, 0, sizeof(*st));
	st->min_rank = st->max_rank = rank;
	st->min_node = st->max_node = node;
	if (v->valid) {
		st->n = 1;
		st->min = st->avg = st->max = v->value;
	} else {
		st->reason = v->reason;
	}
}

int lwm2_render_rank(const struct lwm2_rank_record *r, int fd)
{
	struct lwm2_proc_values pv;
	struct lwm2_metrics m;
	struct lwm2_scope s;
	char title[512];
	size_t k = 0;
	char num[24];
	const char *exe = r->executable, *slash;
	int32_t rank = r->mpi_rank >= 0 ? r->mpi_rank : r->task_id;

	/* executable and hostname are NUL-terminated: the reader and the
	 * writer both validate that. */
	slash = strrchr(exe, '/');
	if (slash && slash[1])
		exe = slash + 1;
	lwm2_proc_from_record(r, &pv);
	lwm2_metrics_compute(&pv, &m);
	memset(&s, 0, sizeof(s));
	cat(title, sizeof(title), &k, "process ");
	utoa((uint64_t)(r->pid < 0 ? 0 : r->pid), num);
	cat(title, sizeof(title), &k, num);
	cat(title, sizeof(title), &k, " (");
	cat(title, sizeof(title), &k, exe);
	cat(title, sizeof(title), &k, ")");
	if (rank >= 0) {
		cat(title, sizeof(title), &k, r->mpi_rank >= 0 ? ", MPI rank " : ", task ");
		utoa((uint64_t)rank, num);
		cat(title, sizeof(title), &k, num);
	}
	cat(title, sizeof(title), &k, " on ");
	cat(title, sizeof(title), &k, r->hostname);
	if (r->job_id) {
		cat(title, sizeof(title), &k, ", job ");
		utoa(r->job_id, num);
		cat(title, sizeof(title), &k, num);
	}
	s.title = title;
	s.processes = 1;
	s.mpi_processes = (r->flags & LWM2_F_MPI) ? 1 : 0;
	s.mpi_size = (r->flags & LWM2_F_MPI) && r->mpi_size > 0 ? (uint32_t)r->mpi_size : 0;
	s.nodes = 1;
	s.incomplete = (r->flags & LWM2_F_INCOMPLETE) ? 1 : 0;
	s.partial = (r->flags & LWM2_F_PARTIAL) != 0;
	memcpy(s.hwc_events, r->hwc_events, sizeof(s.hwc_events));
	s.io_uring = (r->flags & LWM2_F_IO_URING) ? 1 : 0;
	s.mmap_write = (r->flags & LWM2_F_MMAP_WRITE) ? 1 : 0;
	for (int i = 0; i < LWM2_NMETRICS; i++)
		stat_single(&s.stat[i], &m.m[i], rank, r->hostname);
	return lwm2_render_scope(&s, LWM2_RENDER_SINGLE, lwm2_sink_fd, (void *)(intptr_t)fd);
}
