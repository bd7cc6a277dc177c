/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Node records: the merge of one node's rank records for one step.
 *
 * Per process the node record keeps every counter (one array in the order
 * of "counters", so a reader built with a different counter list can map
 * them by name) and what the metrics need besides; per node the totals and
 * one slice series, put on one slice length: a process whose series was
 * coarsened has a longer slice, and every shorter slice of another process
 * lies inside exactly one longer slice because slices are aligned to
 * multiples of their length on the system clock.
 */
#include "digest_internal.h"
#include "lwm2_keys.h"
#include "grow.h"
#include "hwc_events.h"
#include "fileio.h"
#include "errmsg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Node series never get more slots than this; a wider span (clock jumps,
 * a hostile record) is coarsened further instead of allocated. */
#define NODE_MAX_SLOTS 4096u

static void logf_(lwm2_log_fn log, void *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void logf_(lwm2_log_fn log, void *arg, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log(arg, msg);
}

static const char *basename_(const char *p)
{
	const char *s = strrchr(p, '/');

	return s && s[1] ? s + 1 : p;
}

/* A process entry's counters ("c"); a process of an older build (a node
 * upgraded while the step ran) did not have this build's later counters
 * (ncounters of them): named in "absent", so that they read as not
 * measured rather than as the zeros in "c". */
static void add_counters(json_object *p, const uint64_t *counters, uint32_t ncounters)
{
	ju_add(p, "c", ju_u64_array(counters, LWM2_NCOUNTERS));
	if (ncounters < LWM2_NCOUNTERS) {
		json_object *a = json_object_new_array();

		for (uint32_t c = ncounters; c < LWM2_NCOUNTERS; c++)
			json_object_array_add(a, json_object_new_string(lwm2_counter_names[c]));
		ju_add(p, "absent", a);
	}
}

/* A process entry of "procs": the table's fields of the node record
 * (recjson.c), with what only the node record has between them. */
static json_object *proc_json(const struct lwm2_rank_record *r)
{
	json_object *p = json_object_new_object(), *reasons = NULL;

	lwm2_rank_part_to_json(r, LWM2_RP_NODE_RANK, p);
	lwm2_rank_part_to_json(r, LWM2_RP_NODE_PROC, p);
	ju_add(p, "exe", json_object_new_string(basename_(r->executable)));
	lwm2_rank_part_to_json(r, LWM2_RP_NODE_RUN, p);
	lwm2_identity_to_json(r, p);
	lwm2_rank_part_to_json(r, LWM2_RP_NODE_TIMES, p);
	ju_add(p, "samples", ju_u64_array(r->samples, LWM2_NEARMARKS));
	/* samples_main, the process's clock and what a read cost it (lwm2's
	 * own cost), the groups not measured */
	lwm2_rank_part_to_json(r, LWM2_RP_NODE_COST, p);
	for (int g = 0; g < LWM2_NGROUPS; g++) {
		if (!(r->missing & (1u << g)))
			continue;
		if (!reasons)
			reasons = json_object_new_object();
		ju_add(reasons, lwm2_group_names[g], json_object_new_string(r->missing_reason[g]));
	}
	if (reasons)
		ju_add(p, "reasons", reasons);
	lwm2_rank_part_to_json(r, LWM2_RP_NODE_USAGE, p);
	/* only a process that queried its view (lwm2_view(3)) */
	if (r->view_queries)
		lwm2_rank_part_to_json(r, LWM2_RP_NODE_VIEW, p);
	/* only a process that named regions */
	lwm2_record_regions_json(r, p, true);
	/* and only one of several threads */
	lwm2_record_threads_json(r, p);
	add_counters(p, r->counters, r->ncounters);
	return p;
}

static json_object *counter_names(void)
{
	json_object *a = json_object_new_array_ext(LWM2_NCOUNTERS);

	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		json_object_array_add(a, json_object_new_string(lwm2_counter_names[c]));
	return a;
}

/* Whether a series of n slices of length L from `first` fits the clock
 * range the merge accepts. */
static bool series_sane(uint64_t first, uint64_t n, uint64_t L)
{
	if (!n || !L)
		return false;
	/* 2^40 s is far beyond any real clock; this bounds the arithmetic. */
	return first < (1ull << 40) / L && first + n <= (1ull << 40) / L;
}

/* ---- executables: which commands ran, how often, how much CPU ---- */

/* Entries a node record keeps: the most frequent and the most costly. */
#define NODE_EXES_TOP 32

struct exe_acc {
	char name[LWM2_SUMMARY_NAME];
	uint64_t processes, images, cpu_us;
};

struct exe_tab {
	struct exe_acc *e;
	size_t n, cap;
};

static int exe_add(struct exe_tab *t, const char *name, size_t len, uint64_t processes,
                   uint64_t images, uint64_t cpu_us)
{
	struct exe_acc *a = NULL;

	if (len >= LWM2_SUMMARY_NAME)
		len = LWM2_SUMMARY_NAME - 1;
	for (size_t i = 0; i < t->n && !a; i++)
		if (strncmp(t->e[i].name, name, len) == 0 && !t->e[i].name[len])
			a = &t->e[i];
	if (!a) {
		if (LWM2_GROW(t->e, t->n, t->cap, 32) < 0)
			return -1;
		a = &t->e[t->n++];
		memset(a, 0, sizeof(*a));
		memcpy(a->name, name, len);
	}
	a->processes += processes;
	a->images += images;
	a->cpu_us += cpu_us;
	return 0;
}

LWM2_CMP_EXE_FNS(struct exe_acc, cmp_exe_count, cmp_exe_cpu)

/* The top NODE_EXES_TOP by count and by CPU time (their union), by count. */
static json_object *exes_json(struct exe_tab *t, size_t *omitted)
{
	json_object *a = json_object_new_array();
	size_t keep = 0;

	if (t->n > NODE_EXES_TOP) {
		qsort(t->e, t->n, sizeof(*t->e), cmp_exe_cpu);
		/* The most costly first, then the most frequent of the rest. */
		keep = NODE_EXES_TOP;
		qsort(t->e + keep, t->n - keep, sizeof(*t->e), cmp_exe_count);
		keep += NODE_EXES_TOP;
		if (keep > t->n)
			keep = t->n;
	} else {
		keep = t->n;
	}
	if (keep) /* qsort wants a valid array even for none */
		qsort(t->e, keep, sizeof(*t->e), cmp_exe_count);
	for (size_t i = 0; i < keep; i++) {
		json_object *e = json_object_new_object();
		ju_add(e, "exe", json_object_new_string(t->e[i].name[0] ? t->e[i].name : "?"));
		ju_add(e, "processes", ju_u64(t->e[i].processes));
		ju_add(e, "images", ju_u64(t->e[i].images));
		ju_add(e, "cpu_us", ju_u64(t->e[i].cpu_us));
		json_object_array_add(a, e);
	}
	*omitted = t->n - keep;
	return a;
}

/* ---- containers: which processes ran in which container ---- */

/* Distinct containers a node record lists; the processes of any further
 * one are counted in "containers_omitted" (a directory of records a user
 * fills must not make the merge quadratic). */
#define NODE_CONTAINERS_MAX 64

struct ctr_acc {
	char runtime[LWM2_CONTAINER_RUNTIME_LEN];
	char image[LWM2_CONTAINER_IMAGE_LEN];
	uint64_t processes, ranks, cpu_us;
};

struct ctr_tab {
	struct ctr_acc *e;
	size_t n, cap;
	uint64_t omitted; /* processes of containers beyond the list */
};

/* The user's bytes as valid UTF-8 (each byte of an invalid sequence
 * becomes '?'), so that the JSON made of them is valid for any reader;
 * control characters stay (JSON escapes them, the text digest too). */
static void utf8_clean(char *dst, const char *src, size_t cap)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = strnlen(src, cap - 1), k = 0;

	while (k < n) {
		size_t c = lwm2_utf8_char(s + k, n - k);

		if (!c) {
			dst[k++] = '?';
			continue;
		}
		memcpy(dst + k, s + k, c);
		k += c;
	}
	dst[k] = '\0';
}

/* A process that ended (not an image replaced by exec) in r's container;
 * a rank when it is not a fork child, as the application counts them. */
static void ctr_add(struct ctr_tab *t, const struct lwm2_rank_record *r)
{
	char rt[sizeof(r->container_runtime)], im[sizeof(r->container_image)];
	struct ctr_acc *a = NULL;

	if ((!r->container_runtime[0] && !r->container_image[0]) || (r->flags & LWM2_F_EXEC))
		return;
	utf8_clean(rt, r->container_runtime, sizeof(rt));
	utf8_clean(im, r->container_image, sizeof(im));
	for (size_t i = 0; i < t->n && !a; i++)
		if (!strcmp(t->e[i].runtime, rt) && !strcmp(t->e[i].image, im))
			a = &t->e[i];
	if (!a && t->n == NODE_CONTAINERS_MAX) {
		t->omitted++;
		return;
	}
	if (!a) {
		if (LWM2_GROW(t->e, t->n, t->cap, 4) < 0) {
			t->omitted++;
			return;
		}
		a = &t->e[t->n++];
		memset(a, 0, sizeof(*a));
		memcpy(a->runtime, rt, sizeof(rt));
		memcpy(a->image, im, sizeof(im));
	}
	a->processes++;
	a->ranks += !(r->flags & LWM2_F_FORK_CHILD);
	a->cpu_us += r->utime_us + r->stime_us;
}

static int cmp_ctr(const void *a, const void *b)
{
	const struct ctr_acc *x = a, *y = b;

	return lwm2_cmp_ctr(x->cpu_us, x->processes, x->runtime, x->image, y->cpu_us, y->processes,
	                    y->runtime, y->image);
}

/* "containers" (by CPU time) and "containers_omitted" into node; nothing
 * when no process ran in a container. */
static void ctr_json(struct ctr_tab *t, json_object *node)
{
	json_object *a;

	if (!t->n && !t->omitted)
		return;
	if (t->n)
		qsort(t->e, t->n, sizeof(*t->e), cmp_ctr);
	a = json_object_new_array_ext((int)t->n);
	for (size_t i = 0; i < t->n; i++) {
		json_object *e = json_object_new_object();
		ju_add(e, "runtime", json_object_new_string(t->e[i].runtime));
		ju_add(e, "image", json_object_new_string(t->e[i].image));
		ju_add(e, "processes", ju_u64(t->e[i].processes));
		ju_add(e, "ranks", ju_u64(t->e[i].ranks));
		ju_add(e, "cpu_us", ju_u64(t->e[i].cpu_us));
		json_object_array_add(a, e);
	}
	ju_add(node, "containers", a);
	if (t->omitted)
		ju_add(node, "containers_omitted", ju_u64(t->omitted));
}

/* The summary's part of the node record: "short", and its share of the
 * totals and of the executables. */
/*
 * One entry of "procs" for the short processes of one executable: counted
 * as "n" processes whose counters, CPU time and wall time (summed, from
 * start_ns) make one entry of the per-process statistics.
 */
static json_object *group_json(const struct lwm2_summary_header *sum,
                               const struct lwm2_summary_exe *e, uint32_t missing)
{
	json_object *p = json_object_new_object();
	int64_t start = sum->first_start_ns > 0 ? sum->first_start_ns : 0;

	ju_add(p, "rank", json_object_new_int(-1));
	ju_add(p, "task", json_object_new_int(-1));
	ju_add(p, "pid", json_object_new_int(0));
	ju_add(p, "ppid", json_object_new_int(0));
	ju_add(p, "flags",
	       json_object_new_int64(LWM2_F_SUMMARY | (e->processes ? 0 : LWM2_F_EXEC)));
	ju_add(p, "exe", json_object_new_string(e->name[0] ? e->name : "?"));
	ju_add(p, "n", ju_u64(e->processes));
	ju_add(p, "images", ju_u64(e->images));
	ju_add(p, "exit_ok", ju_u64(e->exit_ok));
	ju_add(p, "exit_failed", ju_u64(e->exit_failed));
	ju_add(p, "signaled", ju_u64(e->signaled));
	ju_add(p, "start_ns", json_object_new_int64(start));
	ju_add(
	    p, "end_ns",
	    json_object_new_int64(start + (int64_t)(e->wall_ns < INT64_MAX / 2 ? e->wall_ns : 0)));
	ju_add(p, "exit", json_object_new_int(e->exit_failed || e->signaled ? 1 : 0));
	ju_add(p, "signal", json_object_new_int(0));
	ju_add(p, "threads_total", ju_u64(e->processes));
	ju_add(p, "threads_max", json_object_new_int64(1));
	ju_add(p, "period_us", json_object_new_int64(0));
	ju_add(p, "samples", ju_u64_array(e->samples, LWM2_NEARMARKS));
	ju_add(p, "missing", json_object_new_int64(missing));
	if (missing) {
		/* the light mode's groups (short_json), with its words */
		json_object *reasons = json_object_new_object();

		for (int g = 0; g < LWM2_NGROUPS; g++)
			if (missing & (1u << g))
				ju_add(reasons, lwm2_group_names[g],
				       json_object_new_string(LWM2_LIGHT_REASON));
		ju_add(p, "reasons", reasons);
	}
	ju_add(p, "utime_us", ju_u64(e->utime_us));
	ju_add(p, "stime_us", ju_u64(e->stime_us));
	ju_add(p, "maxrss_kb", ju_u64(e->maxrss_kb));
	/* a summary of an older build's counters, as a record's "absent" */
	add_counters(p, e->counters, sum->ncounters);
	return p;
}

static json_object *short_json(const struct lwm2_summary_header *sum, uint64_t tot[],
                               uint64_t samples[], uint64_t *nproc, uint64_t *nimages,
                               struct exe_tab *exes, json_object *procs, uint32_t missing)
{
	const struct lwm2_summary_exe *sl = (const void *)(sum + 1);
	uint64_t c[LWM2_NCOUNTERS] = {0}, sm[LWM2_NEARMARKS] = {0};
	uint64_t np = 0, ni = 0, ok = 0, failed = 0, sig = 0, ut = 0, st = 0, wall = 0, rss = 0;
	json_object *o = json_object_new_object();

	for (uint32_t i = 0; i < LWM2_SUMMARY_SLOTS; i++) {
		const struct lwm2_summary_exe *e = &sl[i];
		if (!e->key || !e->images)
			continue;
		np += e->processes;
		ni += e->images;
		ok += e->exit_ok;
		failed += e->exit_failed;
		sig += e->signaled;
		ut += e->utime_us;
		st += e->stime_us;
		wall += e->wall_ns;
		if (e->maxrss_kb > rss)
			rss = e->maxrss_kb;
		for (int k = 0; k < LWM2_NCOUNTERS; k++)
			c[k] += e->counters[k];
		for (int k = 0; k < LWM2_NEARMARKS; k++)
			sm[k] += e->samples[k];
		exe_add(exes, e->name, strnlen(e->name, sizeof(e->name)), e->processes, e->images,
		        e->utime_us + e->stime_us);
		json_object_array_add(procs, group_json(sum, e, missing));
	}
	ju_add(o, "processes", ju_u64(np));
	ju_add(o, "images", ju_u64(ni));
	ju_add(o, "exit_ok", ju_u64(ok));
	ju_add(o, "exit_failed", ju_u64(failed));
	ju_add(o, "signaled", ju_u64(sig));
	ju_add(o, "utime_us", ju_u64(ut));
	ju_add(o, "stime_us", ju_u64(st));
	ju_add(o, "wall_ns", ju_u64(wall));
	ju_add(o, "maxrss_kb", ju_u64(rss));
	ju_add(o, "first_start_ns", json_object_new_int64(sum->first_start_ns));
	ju_add(o, "last_end_ns", json_object_new_int64(sum->last_end_ns));
	for (int k = 0; k < LWM2_NCOUNTERS; k++)
		tot[k] += c[k];
	for (int k = 0; k < LWM2_NEARMARKS; k++)
		samples[k] += sm[k];
	ju_add(o, "c", ju_u64_array(c, LWM2_NCOUNTERS));
	ju_add(o, "samples", ju_u64_array(sm, LWM2_NEARMARKS));
	*nproc += np;
	*nimages += ni;
	return o;
}

/*
 * The merge, one record at a time: nothing of a record is kept once it is
 * added, so memory does not grow with the records' size.  The node series
 * is on the longest slice length of any process (grown further if the span
 * would need more than NODE_MAX_SLOTS); when a record brings a longer
 * length or a wider span, the slots so far are put on the new length.
 * Lengths are their base times a power of two (coarsening doubles them),
 * so that regrouping gives what one pass over all records would.
 */
struct merge {
	const struct lwm2_node_ident *id;
	lwm2_log_fn log;
	void *log_arg;
	json_object *procs, *incomplete;
	uint64_t tot[LWM2_NCOUNTERS], samples[LWM2_NEARMARKS];
	uint64_t nproc, nmpi, nimages;
	/* the application's view queries (lwm2_view(3)): how many, their
	 * wall time, and the images that made any */
	uint64_t view_queries, view_ns, view_procs;
	uint32_t fl_any;
	bool have_reason[LWM2_NGROUPS];
	char reason[LWM2_NGROUPS][LWM2_REASON_LEN];
	int32_t *tasks;
	size_t ntasks, task_cap;
	bool tasks_unknown;
	/* the series */
	uint64_t maxlen, lo, hi, L, first, nslots;
	uint64_t *grid;
	bool approx;
	/* which commands ran, and the step's summary of short processes */
	struct exe_tab exes;
	struct ctr_tab containers;
	/* the events the counter roles were counted with */
	struct lwm2_hwc_events events;
	/* the groups every record of the node left empty for light mode, which
	 * the step's short processes (the summary keeps no reasons) share */
	uint32_t light;
	bool any_record;
	const struct lwm2_summary_header *sum;
};

static int merge_init(struct merge *m, const struct lwm2_node_ident *id, lwm2_log_fn log,
                      void *log_arg)
{
	memset(m, 0, sizeof(*m));
	m->id = id;
	m->log = log;
	m->log_arg = log_arg;
	m->lo = UINT64_MAX;
	m->procs = json_object_new_array();
	m->incomplete = json_object_new_array();
	if (!m->procs || !m->incomplete) {
		json_object_put(m->procs);
		json_object_put(m->incomplete);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void merge_free(struct merge *m)
{
	json_object_put(m->procs);
	json_object_put(m->incomplete);
	free(m->tasks);
	free(m->grid);
	free(m->exes.e);
	m->exes.e = NULL;
	free(m->containers.e);
	m->containers.e = NULL;
	m->procs = m->incomplete = NULL;
	m->tasks = NULL;
	m->grid = NULL;
}

/* Put the grid on length L from `first` on, for a span [lo, hi). */
static int regrid(struct merge *m, uint64_t L, uint64_t lo, uint64_t hi)
{
	uint64_t first = lo / L, nslots = (hi + L - 1) / L - first;
	uint64_t *g;

	if (m->grid && L == m->L && first == m->first && nslots == m->nslots)
		return 0;
	g = calloc(nslots * LWM2_NCOUNTERS, sizeof(*g));
	if (!g)
		return -1;
	if (m->grid) {
		if (L % m->L)
			m->approx = true; /* old slots straddle new ones */
		for (uint64_t k = 0; k < m->nslots; k++) {
			uint64_t slot = (m->first + k) * m->L / L - first;
			for (int c = 0; c < LWM2_NCOUNTERS; c++)
				g[slot * LWM2_NCOUNTERS + c] += m->grid[k * LWM2_NCOUNTERS + c];
		}
		free(m->grid);
	}
	m->grid = g;
	m->L = L;
	m->first = first;
	m->nslots = nslots;
	return 0;
}

/* Add n slices of length len_s from slice `first` on to the grid. */
static void series_add_slices(struct merge *m, uint64_t first, uint32_t n, uint32_t len_s,
                              const struct lwm2_slice *sl)
{
	uint64_t maxlen, lo, hi, L;

	if (!series_sane(first, n, len_s))
		return;
	maxlen = len_s > m->maxlen ? len_s : m->maxlen;
	lo = first * len_s;
	hi = (first + n) * len_s;
	lo = lo < m->lo ? lo : m->lo;
	hi = hi > m->hi ? hi : m->hi;
	L = maxlen;
	while ((hi + L - 1) / L - lo / L > NODE_MAX_SLOTS)
		L *= 2;
	if (L > maxlen)
		m->approx = true;
	/* Never finer than the grid so far: its slots cannot be split. */
	while (L < m->L)
		L *= 2;
	if (regrid(m, L, lo, hi) < 0)
		return;
	m->maxlen = maxlen;
	m->lo = lo;
	m->hi = hi;
	if (L % len_s)
		m->approx = true; /* lengths of different bases: slices straddle */
	for (uint32_t k = 0; k < n; k++) {
		uint64_t slot = (first + k) * len_s / L - m->first;
		uint64_t *row = m->grid + slot * LWM2_NCOUNTERS;
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			row[c] += sl[k].counters[c];
	}
}

static void series_add(struct merge *m, const struct lwm2_rank_record *r)
{
	series_add_slices(m, r->first_slice, r->nslices, r->slice_length_s, lwm2_record_slices(r));
}

/* The summary's slices: the short processes' share of the series. */
static void series_add_summary(struct merge *m, const struct lwm2_summary_header *sum)
{
	const struct lwm2_summary_slice *sl = lwm2_summary_slices(sum);
	const uint64_t mask = (1ull << LWM2_SUMMARY_LEN_BITS) - 1;

	for (uint32_t i = 0; i < LWM2_SUMMARY_SLICES; i++)
		if (sl[i].key)
			series_add_slices(m, sl[i].key >> LWM2_SUMMARY_LEN_BITS, 1,
			                  (uint32_t)(sl[i].key & mask), &sl[i].s);
}

static json_object *series_json(const struct merge *m)
{
	json_object *s, *cols;

	if (!m->grid)
		return NULL;
	s = json_object_new_object();
	ju_add(s, "first_slice", ju_u64(m->first));
	ju_add(s, "slice_length_s", ju_u64(m->L));
	ju_add(s, "n", ju_u64(m->nslots));
	cols = json_object_new_object();
	/* Only the counters that moved: most jobs touch a few of them. */
	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		json_object *col;
		bool any = false;
		for (uint64_t k = 0; k < m->nslots && !any; k++)
			any = m->grid[k * LWM2_NCOUNTERS + c] != 0;
		if (!any)
			continue;
		col = json_object_new_array_ext((int)m->nslots);
		for (uint64_t k = 0; k < m->nslots; k++)
			json_object_array_add(col, ju_u64(m->grid[k * LWM2_NCOUNTERS + c]));
		ju_add(cols, lwm2_counter_names[c], col);
	}
	ju_add(s, "c", cols);
	return s;
}

static bool belongs(const struct lwm2_node_ident *id, const struct lwm2_rank_record *r,
                    const char *file, lwm2_log_fn log, void *arg)
{
	if (!id || !id->job_id)
		return true;
	if (r->job_id != id->job_id || r->step_id != id->step_id) {
		logf_(log, arg,
		      "lwm2: merge: couldn't use %s: it belongs to job %llu step %u, not job %llu "
		      "step %u",
		      file, (unsigned long long)r->job_id, r->step_id,
		      (unsigned long long)id->job_id, id->step_id);
		return false;
	}
	return true;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/* Add one valid record; false when it is not this step's (logged). */
static bool merge_add(struct merge *m, const struct lwm2_rank_record *r, const char *file)
{
	if (!belongs(m->id, r, file ? file : "a record", m->log, m->log_arg))
		return false;
	json_object_array_add(m->procs, proc_json(r));
	m->nimages++;
	/* An image replaced by exec continues as the next record of the
	 * same process: count the process once. */
	if (!(r->flags & LWM2_F_EXEC)) {
		m->nproc++;
		if (r->flags & LWM2_F_MPI)
			m->nmpi++;
	}
	{
		const char *b = basename_(r->executable);
		bool ends = !(r->flags & LWM2_F_EXEC);

		/* CPU time is the process's: the last image has it all. */
		exe_add(&m->exes, b, strnlen(b, sizeof(r->executable)), ends, 1,
		        ends ? r->utime_us + r->stime_us : 0);
	}
	ctr_add(&m->containers, r);
	lwm2_hwc_events_add_text(&m->events, r->hwc_events);
	{
		uint32_t light = 0;

		for (int g = 0; g < LWM2_NGROUPS; g++)
			if ((r->missing & LWM2_LIGHT_GROUPS & (1u << g)) &&
			    !strcmp(r->missing_reason[g], LWM2_LIGHT_REASON))
				light |= 1u << g;
		m->light = m->any_record ? m->light & light : light;
		m->any_record = true;
	}
	if (r->view_queries) {
		m->view_queries += r->view_queries;
		m->view_ns += r->view_ns;
		m->view_procs++;
	}
	if (r->flags & LWM2_F_INCOMPLETE)
		json_object_array_add(m->incomplete, json_object_new_int(r->pid));
	m->fl_any |= r->flags;
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		m->tot[c] += r->counters[c];
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		m->samples[e] += r->samples[e];
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if ((r->missing & (1u << g)) && !m->have_reason[g]) {
			m->have_reason[g] = true;
			snprintf(m->reason[g], sizeof(m->reason[g]), "%s", r->missing_reason[g]);
		}
	/* Tasks of the step seen on this node: forked children and exec'd
	 * images share their task's id, so they must not make up for a
	 * missing task. */
	if (r->task_id >= 0 && !m->tasks_unknown) {
		if (LWM2_GROW(m->tasks, m->ntasks, m->task_cap, 64) < 0)
			m->tasks_unknown = true; /* do not claim tasks are missing */
		if (!m->tasks_unknown)
			m->tasks[m->ntasks++] = r->task_id;
	}
	series_add(m, r);
	return true;
}

static uint64_t distinct_tasks(struct merge *m)
{
	uint64_t d = 0;

	if (m->tasks_unknown)
		return UINT64_MAX;
	if (m->ntasks)
		qsort(m->tasks, m->ntasks, sizeof(*m->tasks), cmp_i32);
	for (size_t i = 0; i < m->ntasks; i++)
		d += i == 0 || m->tasks[i] != m->tasks[i - 1];
	/* Tasks whose processes were all short are in the summary's bitmap. */
	for (int32_t t = 0; m->sum && t < LWM2_SUMMARY_TASKS; t++)
		if ((m->sum->task_bits[t / 64] >> (t % 64)) & 1)
			d += !(m->ntasks &&
			       bsearch(&t, m->tasks, m->ntasks, sizeof(*m->tasks), cmp_i32));
	return d;
}

void lwm2_unmeasured_json(json_object *o, const uint64_t tot[])
{
	json_object *by;
	uint64_t n = lwm2_unmeasured_count(tot);

	if (!n)
		return;
	by = json_object_new_object();
	for (int i = 0; i < LWM2_NUNMEASURED; i++)
		if (tot[LWM2_C_UNMEASURED_FIRST + i])
			ju_add(by,
			       lwm2_counter_names[LWM2_C_UNMEASURED_FIRST + i] +
			           sizeof(LWM2_UNMEASURED_PREFIX) - 1,
			       ju_u64(tot[LWM2_C_UNMEASURED_FIRST + i]));
	ju_add(o, LWM2_KEY_UNMEASURED_PROCESSES, ju_u64(n));
	ju_add(o, LWM2_KEY_UNMEASURED, by);
}

/* The node record; the accumulator is spent. */
static json_object *merge_finish(struct merge *m)
{
	const struct lwm2_node_ident *id = m->id;
	json_object *node, *totals, *missing, *flags, *series, *shortp = NULL;
	size_t exes_omitted = 0;

	node = json_object_new_object();
	if (!node) {
		merge_free(m);
		errno = ENOMEM;
		return NULL;
	}
	ju_add(node, "lwm2_node_version", json_object_new_int(LWM2_NODE_VERSION));
	ju_add(node, "cluster", json_object_new_string(id && id->cluster ? id->cluster : ""));
	ju_add(node, "job_id", ju_u64(id ? id->job_id : 0));
	ju_add(node, "step_id", ju_u64(id ? id->step_id : 0));
	ju_add(node, "node", json_object_new_string(id && id->node ? id->node : ""));
	ju_add(node, "expected_tasks", ju_u64(id ? id->expected_tasks : 0));
	ju_add(node, "counters", counter_names());
	if (m->sum && id && id->job_id &&
	    (m->sum->job_id != id->job_id || m->sum->step_id != id->step_id)) {
		logf_(m->log, m->log_arg,
		      "lwm2: merge: couldn't use %s: it belongs to job %llu step %u, not job %llu "
		      "step %u",
		      LWM2_SUMMARY_FILE, (unsigned long long)m->sum->job_id, m->sum->step_id,
		      (unsigned long long)id->job_id, id->step_id);
		m->sum = NULL;
	}
	if (m->sum) {
		shortp = short_json(m->sum, m->tot, m->samples, &m->nproc, &m->nimages, &m->exes,
		                    m->procs, m->light);
		series_add_summary(m, m->sum);
	}
	ju_add(node, "procs", m->procs);
	ju_add(node, "incomplete", m->incomplete);
	/* Tasks the rank subset left out started unmeasured, by choice. */
	if (id)
		m->tot[LWM2_C_unmeasured_rank_subset] += id->unmeasured_tasks;

	totals = json_object_new_object();
	/* The processes that started unmeasured count among them. */
	ju_add(totals, "processes", ju_u64(m->nproc + lwm2_unmeasured_count(m->tot)));
	ju_add(totals, "mpi_processes", ju_u64(m->nmpi));
	ju_add(totals, "images", ju_u64(m->nimages));
	lwm2_unmeasured_json(totals, m->tot);
	ju_add(totals, "c", ju_u64_array(m->tot, LWM2_NCOUNTERS));
	ju_add(totals, "samples", ju_u64_array(m->samples, LWM2_NEARMARKS));
	if (m->view_queries) {
		/* the view queries (lwm2_view(3)), only where some were made */
		ju_add(totals, "view_queries", ju_u64(m->view_queries));
		ju_add(totals, "view_ns", ju_u64(m->view_ns));
		ju_add(totals, "view_procs", ju_u64(m->view_procs));
	}
	ju_add(node, "totals", totals);

	missing = json_object_new_object();
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (m->have_reason[g])
			ju_add(
			    missing, lwm2_group_names[g],
			    json_object_new_string(*m->reason[g] ? m->reason[g] : "not measured"));
	ju_add(node, "missing", missing);

	series = series_json(m);
	flags = json_object_new_array();
	if (json_object_array_length(m->incomplete))
		json_object_array_add(flags, json_object_new_string("incomplete"));
	if (m->fl_any & LWM2_F_PARTIAL)
		json_object_array_add(flags, json_object_new_string("partial"));
	if (m->fl_any & LWM2_F_COARSENED)
		json_object_array_add(flags, json_object_new_string("coarsened"));
	if (m->approx)
		json_object_array_add(flags, json_object_new_string("series_approximate"));
	if (id && id->expected_tasks && distinct_tasks(m) < id->expected_tasks)
		json_object_array_add(flags, json_object_new_string("missing_tasks"));
	ju_add(node, "flags", flags);
	if (series)
		ju_add(node, "series", series);
	if (shortp)
		ju_add(node, "short", shortp);
	ju_add(node, "exes", exes_json(&m->exes, &exes_omitted));
	if (exes_omitted)
		ju_add(node, "exes_omitted", ju_u64(exes_omitted));
	ctr_json(&m->containers, node);
	{
		json_object *ev = lwm2_hwc_events_json(&m->events);

		if (ev)
			ju_add(node, LWM2_KEY_COUNTER_EVENTS, ev);
	}
	m->procs = m->incomplete = NULL; /* now the node's */
	merge_free(m);
	return node;
}

json_object *lwm2_node_merge_records(const struct lwm2_node_ident *id,
                                     struct lwm2_rank_record *const *recs, const char *const *files,
                                     size_t n, lwm2_log_fn log, void *log_arg)
{
	struct merge m;

	if (merge_init(&m, id, log, log_arg) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (recs[i])
			merge_add(&m, recs[i], files ? files[i] : NULL);
	return merge_finish(&m);
}

/* The step's summary of short processes in dirfd: NULL when there is none
 * (or it cannot be used: logged, and *bad set). */
static struct lwm2_summary_header *read_summary(int dirfd, lwm2_log_fn log, void *log_arg,
                                                bool *bad)
{
	/* of this build's counters, or another's (lwm2_summary_upconvert) */
	const size_t size = lwm2_summary_size(LWM2_NCOUNTERS_LIMIT);
	unsigned char *buf, *up;
	size_t got = 0;
	char err[160] = "";

	buf = (unsigned char *)lwm2_read_file_at(dirfd, LWM2_SUMMARY_FILE, size, &got, err,
	                                         sizeof(err));
	if (!buf && errno == ENOENT)
		return NULL;
	if (!buf || lwm2_summary_check(buf, got, err, sizeof(err)) != 0)
		goto fail;
	if (got != LWM2_SUMMARY_SIZE) {
		if (!(up = (unsigned char *)lwm2_summary_upconvert(buf))) {
			lwm2_errprintf(0, err, sizeof(err), "out of memory");
			goto fail;
		}
		free(buf);
		buf = up;
	}
	/* Names are the processes' own: made terminated here. */
	for (uint32_t i = 0; i < LWM2_SUMMARY_SLOTS; i++) {
		struct lwm2_summary_exe *e =
		    (struct lwm2_summary_exe *)(void *)(buf + sizeof(struct lwm2_summary_header)) +
		    i;
		e->name[sizeof(e->name) - 1] = '\0';
	}
	return (struct lwm2_summary_header *)(void *)buf;
fail:
	logf_(log, log_arg, "lwm2: merge: couldn't read %s: %s", LWM2_SUMMARY_FILE, err);
	*bad = true;
	free(buf);
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_record_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && name[0] != '.' && strcmp(name + n - 5, ".lwm2") == 0;
}

/* A file name as it may go into a log line: bytes that are not printable
 * ASCII (a newline would forge a line) and backslashes escaped. */
static const char *escaped(const char *name, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p && k + 5 < len; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '\\')
			buf[k++] = (char)*p;
		else {
			buf[k++] = '\\';
			buf[k++] = 'x';
			buf[k++] = hex[*p >> 4];
			buf[k++] = hex[*p & 15];
		}
	}
	buf[k] = '\0';
	return buf;
}

/* The largest rank record file the writer makes: header and two slots of
 * the most slices it keeps. */
static uint64_t writer_file_max(void)
{
	return sizeof(struct lwm2_file_header) + 2 * lwm2_slot_capacity(LWM2_MAX_SLICES_LIMIT);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Inodes already merged (open addressing, ino 0 is never a file's). */
struct inoset {
	uint64_t *slot;
	size_t cap;
};

static bool inoset_add(struct inoset *s, uint64_t ino)
{
	size_t i;

	for (i = (size_t)(ino * 0x9e3779b97f4a7c15ull) & (s->cap - 1); s->slot[i];
	     i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == ino)
			return false;
	s->slot[i] = ino;
	return true;
}

/*
 * One file of the step directory, checked before a byte of it is read:
 * a regular file, one link (a hard link to another record, perhaps one
 * big record linked thousands of times, is refused), the owner the caller
 * wants, an inode not merged yet, no larger than the writer makes, within
 * what is left of the byte budget.  Read into *buf, reused across files.
 */
static const struct lwm2_rank_record *
read_checked(int dirfd, const char *name, const struct lwm2_merge_limits *lim, struct inoset *seen,
             uint64_t *budget, char **buf, size_t *cap, char *err, size_t errlen)
{
	const struct lwm2_rank_record *r = NULL;
	struct stat st;
	size_t got = 0;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		lwm2_errprintf(0, err, errlen, "open: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		lwm2_errprintf(0, err, errlen, "stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		lwm2_errprintf(0, err, errlen, "not a regular file");
		goto out;
	}
	if (st.st_nlink != 1) {
		lwm2_errprintf(0, err, errlen, "%llu links to the file; a record has one",
		               (unsigned long long)st.st_nlink);
		goto out;
	}
	if (lim->check_owner && st.st_uid != lim->owner) {
		lwm2_errprintf(0, err, errlen, "owned by uid %u, not the job's uid %u",
		               (unsigned)st.st_uid, (unsigned)lim->owner);
		goto out;
	}
	if ((uint64_t)st.st_size > writer_file_max()) {
		lwm2_errprintf(0, err, errlen,
		               "file of %lld bytes, larger than a record can be (%llu)",
		               (long long)st.st_size, (unsigned long long)writer_file_max());
		goto out;
	}
	if ((uint64_t)st.st_size > *budget) {
		lwm2_errprintf(0, err, errlen, "beyond the %llu MiB read for one step",
		               (unsigned long long)(lim->max_bytes >> 20));
		goto out;
	}
	if (seen->slot && !inoset_add(seen, (uint64_t)st.st_ino)) {
		lwm2_errprintf(0, err, errlen, "the same file as another record");
		goto out;
	}
	*budget -= (uint64_t)st.st_size;
	if ((size_t)st.st_size > *cap) {
		char *nb = realloc(*buf, (size_t)st.st_size);
		if (!nb) {
			lwm2_errprintf(0, err, errlen, "out of memory");
			goto out;
		}
		*buf = nb;
		*cap = (size_t)st.st_size;
	}
	/* The file may shrink while we read; take what is there. */
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, *buf + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			lwm2_errprintf(0, err, errlen, "read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	r = lwm2_record_pick(*buf, got, err, errlen);
out:
	close(fd);
	return r;
}

/* The record files' names in the directory, up to max_records (*more and
 * one more skipped beyond), sorted, so the same directory always gives
 * the same record.  Returns 0, or an errno with what was read so far in
 * *names. */
static int record_names(DIR *d, size_t max_records, char ***names, size_t *n, bool *more,
                        size_t *skipped)
{
	struct dirent *de;
	size_t cap = 0;

	while ((errno = 0, de = readdir(d))) {
		if (!is_record_name(de->d_name))
			continue;
		/* The directory is the user's: a flood of files must not make
		 * slurmstepd read forever. */
		if (*n == max_records) {
			*more = true;
			(*skipped)++;
			break;
		}
		if (LWM2_GROW(*names, *n, cap, 64) < 0)
			return ENOMEM;
		if (!((*names)[*n] = strdup(de->d_name)))
			return ENOMEM;
		(*n)++;
	}
	if (errno)
		return errno;
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_str);
	return 0;
}

/* The set of the files read, room for n of them.  Returns 0 or ENOMEM. */
static int inoset_init(struct inoset *seen, size_t n)
{
	for (seen->cap = 64; seen->cap < 2 * n; seen->cap *= 2)
		;
	seen->slot = calloc(seen->cap, sizeof(*seen->slot));
	return seen->slot ? 0 : ENOMEM;
}

/* One record read (r), or not (err says why): merged if it is the
 * step's, else skipped and logged (the first LWM2_NODE_LOG_MAX). */
static void merge_one(struct merge *m, const struct lwm2_node_ident *id,
                      const struct lwm2_rank_record *r, const char *name, const char *err,
                      size_t *skipped, size_t *logged, lwm2_log_fn log, void *log_arg)
{
	char esc[3 * NAME_MAX + 8];

	if (r) {
		/* A foreign record is logged like any other skipped one. */
		char why[256];

		if (!id || !id->job_id || (r->job_id == id->job_id && r->step_id == id->step_id)) {
			merge_add(m, r, name);
			return;
		}
		snprintf(why, sizeof(why), "it belongs to job %llu step %u, not job %llu step %u",
		         (unsigned long long)r->job_id, r->step_id, (unsigned long long)id->job_id,
		         id->step_id);
		(*skipped)++;
		if ((*logged)++ < LWM2_NODE_LOG_MAX)
			logf_(log, log_arg, "lwm2: merge: couldn't use %s: %s",
			      escaped(name, esc, sizeof(esc)), why);
		return;
	}
	(*skipped)++;
	if ((*logged)++ < LWM2_NODE_LOG_MAX)
		logf_(log, log_arg, "lwm2: merge: couldn't read %s: %s",
		      escaped(name, esc, sizeof(esc)), err);
}

/* Why records were left out, once each. */
static void log_skipped(lwm2_log_fn log, void *log_arg, bool more, size_t max_records, bool late,
                        unsigned max_ms, size_t logged, size_t skipped)
{
	if (more)
		logf_(
		    log, log_arg,
		    "lwm2: merge: couldn't read every record: more than %zu in the directory, the "
		    "rest skipped",
		    max_records);
	if (late)
		logf_(log, log_arg,
		      "lwm2: merge: couldn't read every record within %u ms, the rest skipped",
		      max_ms);
	if (logged > LWM2_NODE_LOG_MAX)
		logf_(log, log_arg,
		      "lwm2: merge: skipped %zu records in all, the first %u of them named above",
		      skipped, LWM2_NODE_LOG_MAX);
}

/* The node record from the merged records and the summary file, with
 * what was skipped; NULL (errno set) where it could not be made. */
static json_object *merge_node(struct merge *m, int dirfd, lwm2_log_fn log, void *log_arg,
                               size_t skipped)
{
	struct lwm2_summary_header *sum;
	bool sum_bad = false;
	json_object *node;

	sum = read_summary(dirfd, log, log_arg, &sum_bad);
	if (sum_bad)
		skipped++;
	m->sum = sum;
	m->log = log;
	m->log_arg = log_arg;
	node = merge_finish(m);
	free(sum);
	if (!node)
		return NULL;
	ju_add(node, "skipped", ju_u64(skipped));
	if (skipped) {
		json_object *fl = ju_get(node, "flags", json_type_array);
		json_object_array_add(fl, json_object_new_string("skipped_records"));
	}
	return node;
}

json_object *lwm2_node_merge_limited(int dirfd, const struct lwm2_node_ident *id,
                                     const struct lwm2_merge_limits *limits, lwm2_log_fn log,
                                     void *log_arg)
{
	static const struct lwm2_merge_limits none = {0};
	const struct lwm2_merge_limits *lim = limits ? limits : &none;
	size_t max_records = lim->max_records ? lim->max_records : LWM2_NODE_MAX_RECORDS;
	uint64_t budget = lim->max_bytes ? lim->max_bytes : UINT64_MAX;
	struct inoset seen = {0};
	struct timespec t0;
	struct merge m;
	char **names = NULL, *buf = NULL;
	struct lwm2_rank_record *up = NULL;
	size_t n = 0, bufcap = 0, skipped = 0, logged = 0;
	bool more = false, late = false;
	json_object *node = NULL;
	DIR *d;
	int fd, saved = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	if ((saved = record_names(d, max_records, &names, &n, &more, &skipped)) != 0)
		goto out;
	if ((lim->check_owner || lim->max_bytes) && (saved = inoset_init(&seen, n)) != 0)
		goto out;
	if (merge_init(&m, id, NULL, NULL) < 0) {
		saved = errno;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char err[256];
		const struct lwm2_rank_record *r;

		if (lim->max_ms && ms_since(&t0) > lim->max_ms) {
			late = true;
			skipped += n - i;
			break;
		}
		r = read_checked(dirfd, names[i], lim, &seen, &budget, &buf, &bufcap, err,
		                 sizeof(err));
		/* Another version's or build's record is merged in this
		 * build's layout. */
		free(up);
		up = NULL;
		if (r && !lwm2_record_native(r)) {
			if (!(up = lwm2_record_upconvert(r))) {
				saved = ENOMEM;
				goto out;
			}
			r = up;
		}
		merge_one(&m, id, r, names[i], err, &skipped, &logged, log, log_arg);
	}
	log_skipped(log, log_arg, more, max_records, late, lim->max_ms, logged, skipped);
	if (!(node = merge_node(&m, dirfd, log, log_arg, skipped)))
		saved = errno;
out:
	free(up);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(buf);
	free(seen.slot);
	closedir(d);
	if (!node)
		errno = saved ? saved : EIO;
	return node;
}

json_object *lwm2_node_merge(int dirfd, const struct lwm2_node_ident *id, lwm2_log_fn log,
                             void *log_arg)
{
	return lwm2_node_merge_limited(dirfd, id, NULL, log, log_arg);
}

/* Map of the node record's counter order onto this build's. */
int lwm2_counter_map(json_object *node, int map[], size_t maxn, size_t *n)
{
	json_object *names = ju_get(node, "counters", json_type_array);
	size_t len;

	if (!names)
		return -1;
	len = json_object_array_length(names);
	if (len > maxn)
		return -1;
	for (size_t i = 0; i < len; i++) {
		json_object *s = json_object_array_get_idx(names, i);
		map[i] = -1;
		if (!json_object_is_type(s, json_type_string))
			return -1;
		/* Same build, same order: one comparison per name. */
		if (i < LWM2_NCOUNTERS &&
		    strcmp(json_object_get_string(s), lwm2_counter_names[i]) == 0) {
			map[i] = (int)i;
			continue;
		}
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			if (strcmp(json_object_get_string(s), lwm2_counter_names[c]) == 0)
				map[i] = c;
	}
	*n = len;
	return 0;
}

int lwm2_proc_from_json(json_object *p, const int *map, size_t nmap, struct lwm2_proc_values *pv)
{
	json_object *c = ju_get(p, "c", json_type_array), *s, *reasons;
	int64_t start, end, v;

	memset(pv, 0, sizeof(*pv));
	if (!c || json_object_array_length(c) != nmap)
		return -1;
	/* Counters the node record does not name (an older build wrote it)
	 * and those its process lacked ("absent") were not measured. */
	for (int k = 0; k < LWM2_NCOUNTERS; k++)
		pv->absent[k] = true;
	for (size_t i = 0; i < nmap; i++)
		if (map[i] >= 0)
			pv->absent[map[i]] = false;
	if ((s = ju_get(p, "absent", json_type_array)))
		for (size_t i = 0; i < json_object_array_length(s); i++) {
			const char *n = json_object_get_string(json_object_array_get_idx(s, i));
			for (int k = 0; n && k < LWM2_NCOUNTERS; k++)
				if (strcmp(n, lwm2_counter_names[k]) == 0)
					pv->absent[k] = true;
		}
	for (size_t i = 0; i < nmap; i++) {
		json_object *x = json_object_array_get_idx(c, i);
		if (!json_object_is_type(x, json_type_int))
			return -1;
		if (map[i] >= 0 && (v = json_object_get_int64(x)) > 0)
			pv->counters[map[i]] = (uint64_t)v;
		/* A library without message counts wrote no such column. */
		if (map[i] == LWM2_C_mpi_p2p_msgs_sent)
			pv->has_msg_counts = true;
	}
	if (!ju_int(p, "start_ns", &start) || !ju_int(p, "end_ns", &end))
		return -1;
	/* In unsigned arithmetic: two crafted times apart by more than
	 * INT64_MAX would overflow a signed difference. */
	pv->wall_ns = end > start ? (uint64_t)end - (uint64_t)start : 0;
	if ((s = ju_get(p, "samples", json_type_array)))
		for (size_t i = 0; i < json_object_array_length(s); i++)
			if ((v = json_object_get_int64(json_object_array_get_idx(s, i))) > 0)
				pv->samples_total += (uint64_t)v;
	if (ju_int(p, "samples_main", &v)) {
		pv->samples_main = v > 0 ? (uint64_t)v : 0;
		pv->has_samples_main = true;
	}
	v = ju_int_or(p, "period_us", 0);
	pv->sample_period_us = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
	v = ju_int_or(p, "threads_total", 0);
	pv->threads_total = v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
	pv->missing = (uint32_t)ju_int_or(p, "missing", 0) & ((1u << LWM2_NGROUPS) - 1);
	pv->flags = (uint32_t)ju_int_or(p, "flags", 0);
	reasons = ju_get(p, "reasons", json_type_object);
	for (int g = 0; g < LWM2_NGROUPS; g++)
		pv->missing_reason[g] = reasons ? ju_str(reasons, lwm2_group_names[g]) : NULL;
	return 0;
}
