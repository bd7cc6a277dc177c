/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job digest: node records of every step folded into min/avg/max per
 * metric, per step and for the whole job.  One pass over the processes,
 * constant work per process and metric; node names are only referenced
 * until the output is written, so 10,000 node records need no copies.
 */
#include "digest_internal.h"
#include "grow.h"
#include "hwc_events.h"
#include "lwm2_keys.h"
#include "jsontext.h"
#include "lwm2_history.h"
#include "owncost.h"
#include "processors.h"
#include "regions.h"
#include "stat.h"
#include "strhash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define INCOMPLETE_LIST_MAX 32
/* Executables of a scope, by name (names point into the node records). */
struct exe_ent {
	const char *name;
	uint64_t processes, cpu_us;
};

struct exe_set {
	struct exe_ent *e; /* open addressing, cap a power of two */
	size_t n, cap;
};

/* Counters a newer build's node record names that this build does not
 * know: summed by name into the scope's totals (lwm2_record.h says how
 * the counter table grows). */
#define NEWER_MAX 16
struct newer_counter {
	char name[64];
	uint64_t total;
};

static void newer_add(struct newer_counter *t, size_t *n, const char *name, uint64_t v)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(t[i].name, name) == 0)
			break;
	if (i == *n) {
		if (*n == NEWER_MAX || strlen(name) >= sizeof(t[i].name))
			return;
		snprintf(t[i].name, sizeof(t[i].name), "%s", name);
		t[i].total = 0;
		(*n)++;
	}
	t[i].total += v;
}

struct scope_acc {
	uint64_t step_id;
	uint64_t procs, mpi, incomplete, node_records;
	uint64_t io_uring, mmap_write;
	bool partial;
	uint64_t totals[LWM2_NCOUNTERS];
	/* process entries read, and those that measured each counter (an
	 * older build's lack this build's later counters) */
	uint64_t entries, measured[LWM2_NCOUNTERS];
	/* counters of a newer build than this one, kept by name */
	struct newer_counter newer[NEWER_MAX];
	size_t nnewer;
	struct lwm2_stat m[LWM2_NMETRICS];
	struct exe_set exes;
};

/* Executables listed per scope, by count and by CPU time. */
#define TOP_EXES 8

static int exe_put(struct exe_set *x, const char *name, uint64_t processes, uint64_t cpu_us)
{
	size_t i;

	if (2 * (x->n + 1) > x->cap) {
		size_t nc = x->cap ? 2 * x->cap : 64;
		struct exe_ent *ne = calloc(nc, sizeof(*ne));
		if (!ne)
			return -1;
		for (size_t k = 0; k < x->cap; k++) {
			if (!x->e[k].name)
				continue;
			for (i = lwm2_strhash(x->e[k].name) & (nc - 1); ne[i].name;
			     i = (i + 1) & (nc - 1))
				;
			ne[i] = x->e[k];
		}
		free(x->e);
		x->e = ne;
		x->cap = nc;
	}
	for (i = lwm2_strhash(name) & (x->cap - 1); x->e[i].name; i = (i + 1) & (x->cap - 1))
		if (strcmp(x->e[i].name, name) == 0)
			break;
	if (!x->e[i].name) {
		x->e[i].name = name;
		x->n++;
	}
	x->e[i].processes += processes;
	x->e[i].cpu_us += cpu_us;
	return 0;
}

LWM2_CMP_EXE_FNS(struct exe_ent, cmp_ent_count, cmp_ent_cpu)

/* {"by_count": [...], "by_cpu": [...]}: the TOP_EXES first of each, or
 * NULL when no node record listed executables. */
static json_object *exes_json(const struct exe_set *x)
{
	struct exe_ent *v;
	json_object *o, *a;
	size_t k = 0;

	if (!x->n || !(v = malloc(x->n * sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < x->cap; i++)
		if (x->e[i].name)
			v[k++] = x->e[i];
	o = json_object_new_object();
	for (int pass = 0; pass < 2; pass++) {
		qsort(v, k, sizeof(*v), pass ? cmp_ent_cpu : cmp_ent_count);
		a = json_object_new_array();
		for (size_t i = 0; i < k && i < TOP_EXES; i++) {
			json_object *e = json_object_new_object();
			ju_add(e, LWM2_KEY_EXE, json_object_new_string(v[i].name));
			ju_add(e, LWM2_KEY_PROCESSES, ju_u64(v[i].processes));
			ju_add(e, LWM2_KEY_CPU_S, ju_double((double)v[i].cpu_us / 1e6));
			json_object_array_add(a, e);
		}
		ju_add(o, pass ? LWM2_KEY_BY_CPU : LWM2_KEY_BY_COUNT, a);
	}
	ju_add(o, LWM2_KEY_DISTINCT, ju_u64(k));
	free(v);
	return o;
}

/* ---- containers: where the job's processes ran ---- */

/* Distinct containers of a job kept (node records list up to 64 each);
 * the processes of any further one count as omitted. */
#define JOB_CONTAINERS_MAX 1024
/* Containers the digest lists, by CPU time; the main one first. */
#define TOP_CONTAINERS 8
#define CTR_STEPS_MAX  256

struct ctr_ent {
	const char *runtime, *image; /* NULL: free slot; point into node records */
	uint64_t processes, cpu_us;
	struct lwm2_step_counts steps; /* ranks per step, summed over its nodes */
};

struct ctr_set {
	struct ctr_ent *e; /* open addressing, cap a power of two */
	size_t n, cap;
	uint64_t omitted;   /* processes in containers not kept */
	uint64_t cpu_total; /* CPU time of all the job's processes, us */
};

static uint64_t ctr_hash(const char *runtime, const char *image)
{
	return lwm2_strhash(runtime) * 31 ^ lwm2_strhash(image);
}

static struct ctr_ent *ctr_find(struct ctr_set *x, const char *runtime, const char *image)
{
	size_t i;

	if (2 * (x->n + 1) > x->cap) {
		size_t nc = x->cap ? 2 * x->cap : 16;
		struct ctr_ent *ne = calloc(nc, sizeof(*ne));
		if (!ne)
			return NULL;
		for (size_t k = 0; k < x->cap; k++) {
			if (!x->e[k].runtime)
				continue;
			for (i = ctr_hash(x->e[k].runtime, x->e[k].image) & (nc - 1); ne[i].runtime;
			     i = (i + 1) & (nc - 1))
				;
			ne[i] = x->e[k];
		}
		free(x->e);
		x->e = ne;
		x->cap = nc;
	}
	for (i = ctr_hash(runtime, image) & (x->cap - 1); x->e[i].runtime;
	     i = (i + 1) & (x->cap - 1))
		if (!strcmp(x->e[i].runtime, runtime) && !strcmp(x->e[i].image, image))
			return &x->e[i];
	x->e[i].runtime = runtime;
	x->e[i].image = image;
	x->n++;
	return &x->e[i];
}

int lwm2_step_counts_add(struct lwm2_step_counts *c, uint64_t step, uint64_t n, size_t max)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].step == step) {
			c->v[i].n += n;
			return 0;
		}
	if (c->n >= max)
		return 0;
	if (!(c->n & (c->n + 1)) || !c->v) {
		struct lwm2_step_count *nv = realloc(c->v, (2 * c->n + 2) * sizeof(*nv));
		if (!nv)
			return -1;
		c->v = nv;
	}
	c->v[c->n].step = step;
	c->v[c->n++].n = n;
	return 0;
}

uint64_t lwm2_step_counts_max(const struct lwm2_step_counts *c)
{
	uint64_t r = 0;

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].n > r)
			r = c->v[i].n;
	return r;
}

/* A node record's "containers" (absent from records of older libraries
 * and of processes outside containers). */
static int ctr_add_node(struct ctr_set *x, json_object *node, uint64_t step)
{
	json_object *a = ju_get(node, LWM2_KEY_CONTAINERS, json_type_array);
	int64_t v = ju_int_or(node, LWM2_KEY_CONTAINERS_OMITTED, 0);

	if (v > 0)
		x->omitted += (uint64_t)v;
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *c = json_object_array_get_idx(a, i);
		const char *rt = ju_str(c, LWM2_KEY_RUNTIME), *im = ju_str(c, LWM2_KEY_IMAGE);
		int64_t np = ju_int_or(c, LWM2_KEY_PROCESSES, 0),
		        nr = ju_int_or(c, LWM2_KEY_RANKS, 0);
		int64_t cpu = ju_int_or(c, "cpu_us", 0);
		struct ctr_ent *e;

		if (!rt || !im || np < 0 || nr < 0 || cpu < 0)
			continue;
		if (x->n >= JOB_CONTAINERS_MAX) {
			/* a new one is not kept; a known one still counts */
			size_t k;
			for (k = ctr_hash(rt, im) & (x->cap - 1); x->e[k].runtime;
			     k = (k + 1) & (x->cap - 1))
				if (!strcmp(x->e[k].runtime, rt) && !strcmp(x->e[k].image, im))
					break;
			if (!x->e[k].runtime) {
				x->omitted += (uint64_t)np;
				continue;
			}
		}
		if (!(e = ctr_find(x, rt, im)))
			return -1;
		e->processes += (uint64_t)np;
		e->cpu_us += (uint64_t)cpu;
		if (lwm2_step_counts_add(&e->steps, step, (uint64_t)nr, CTR_STEPS_MAX) < 0)
			return -1;
	}
	return 0;
}

static int cmp_ctr(const void *a, const void *b)
{
	const struct ctr_ent *x = *(const struct ctr_ent *const *)a,
	                     *y = *(const struct ctr_ent *const *)b;

	return lwm2_cmp_ctr(x->cpu_us, x->processes, x->runtime, x->image, y->cpu_us, y->processes,
	                    y->runtime, y->image);
}

/* The CPU time of all the job's processes (short ones included), the
 * denominator of a container's share: a second pass over the processes,
 * made only for a job that ran in a container.  CPU time is the
 * process's: its last image has it all, an image replaced by exec none. */
uint64_t lwm2_proc_cpu_us(json_object *proc)
{
	int64_t ut = ju_int_or(proc, "utime_us", 0), st = ju_int_or(proc, "stime_us", 0);

	return (uint64_t)(ut > 0 ? ut : 0) + (uint64_t)(st > 0 ? st : 0);
}

uint64_t lwm2_job_cpu_us(json_object *const *nodes, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *procs = nodes[i] ? ju_get(nodes[i], "procs", json_type_array) : NULL;

		if (!procs || !ju_str(nodes[i], LWM2_KEY_NODE))
			continue; /* not used for the digest (add_node) */
		for (size_t k = 0; k < json_object_array_length(procs); k++) {
			json_object *p = json_object_array_get_idx(procs, k);

			if (!(ju_int_or(p, LWM2_KEY_FLAGS, 0) & LWM2_F_EXEC))
				t += lwm2_proc_cpu_us(p);
		}
	}
	return t;
}

/* "containers" (the TOP_CONTAINERS with the most CPU time, the main one
 * first) and "containers_omitted" into d; nothing when no process ran in
 * a container. */
static int ctr_json(struct ctr_set *x, json_object *d, json_object *const *nodes, size_t n)
{
	const struct ctr_ent **v;
	uint64_t omitted = x->omitted;
	json_object *a;
	size_t k = 0;

	if (!x->n && !x->omitted)
		return 0;
	x->cpu_total = lwm2_job_cpu_us(nodes, n);
	if (!(v = malloc((x->n ? x->n : 1) * sizeof(*v))))
		return -1;
	for (size_t i = 0; i < x->cap; i++)
		if (x->e[i].runtime)
			v[k++] = &x->e[i];
	if (k)
		qsort(v, k, sizeof(*v), cmp_ctr);
	a = json_object_new_array();
	for (size_t i = 0; i < k; i++) {
		json_object *e;
		if (i >= TOP_CONTAINERS) {
			omitted += v[i]->processes;
			continue;
		}
		e = json_object_new_object();
		ju_add(e, LWM2_KEY_RUNTIME, json_object_new_string(v[i]->runtime));
		ju_add(e, LWM2_KEY_IMAGE, json_object_new_string(v[i]->image));
		ju_add(e, LWM2_KEY_PROCESSES, ju_u64(v[i]->processes));
		ju_add(e, LWM2_KEY_RANKS, ju_u64(lwm2_step_counts_max(&v[i]->steps)));
		ju_add(e, LWM2_KEY_CPU_S, ju_double((double)v[i]->cpu_us / 1e6));
		ju_add(e, LWM2_KEY_CPU_SHARE,
		       ju_double(x->cpu_total ? 100.0 * (double)v[i]->cpu_us / (double)x->cpu_total
		                              : 0));
		json_object_array_add(a, e);
	}
	ju_add(d, LWM2_KEY_CONTAINERS, a);
	if (omitted)
		ju_add(d, LWM2_KEY_CONTAINERS_OMITTED, ju_u64(omitted));
	free(v);
	return 0;
}

static void ctr_free(struct ctr_set *x)
{
	for (size_t i = 0; i < x->cap; i++)
		free(x->e[i].steps.v);
	free(x->e);
	x->e = NULL;
	x->n = x->cap = 0;
}

struct build {
	struct scope_acc job;
	struct scope_acc *steps;
	size_t nsteps, capsteps, last;
	const char **node_names;
	size_t nnames;
	json_object *incomplete;
	uint64_t nincomplete;
	bool partial, skipped;
	struct lwm2_app_acc *app; /* the job's application */
	struct ctr_set containers;
	/* the application's view queries (lwm2_view(3)): how many, their
	 * wall time, the images that made any */
	uint64_t view_queries, view_ns, view_ranks;
	/* the events the counter roles were counted with, over the nodes */
	struct lwm2_hwc_events events;
	/* the program's named regions (lwm2_view(3)) */
	struct lwm2_region_set regions;
};

/* A process's view queries (node record "view_queries", "view_ns": only
 * where it made some; an image replaced by exec counts its own). */
static void view_add(struct build *b, json_object *p)
{
	int64_t q = ju_int_or(p, "view_queries", 0), ns = ju_int_or(p, "view_ns", 0);

	if (q <= 0)
		return;
	b->view_queries += (uint64_t)q;
	b->view_ns += ns > 0 ? (uint64_t)ns : 0;
	b->view_ranks++;
}

/* "view" into d, only when some process made queries. */
static void view_json(const struct build *b, json_object *d)
{
	json_object *v;

	if (!b->view_queries)
		return;
	v = json_object_new_object();
	ju_add(v, LWM2_KEY_QUERIES, ju_u64(b->view_queries));
	ju_add(v, LWM2_KEY_RANKS, ju_u64(b->view_ranks));
	ju_add(v, LWM2_KEY_SECONDS, ju_double((double)b->view_ns / 1e9));
	ju_add(d, LWM2_KEY_VIEW, v);
}

static void acc_init(struct scope_acc *s, uint64_t step)
{
	memset(s, 0, sizeof(*s));
	s->step_id = step;
}

static struct scope_acc *step_acc(struct build *b, uint64_t step)
{
	if (b->last < b->nsteps && b->steps[b->last].step_id == step)
		return &b->steps[b->last];
	for (size_t i = 0; i < b->nsteps; i++)
		if (b->steps[i].step_id == step)
			return &b->steps[b->last = i];
	if (LWM2_GROW(b->steps, b->nsteps, b->capsteps, 8) < 0)
		return NULL;
	acc_init(&b->steps[b->nsteps], step);
	b->last = b->nsteps;
	return &b->steps[b->nsteps++];
}

static bool has_flag(json_object *node, const char *flag)
{
	json_object *fl = ju_get(node, LWM2_KEY_FLAGS, json_type_array);

	for (size_t i = 0; fl && i < json_object_array_length(fl); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(fl, i));
		if (s && strcmp(s, flag) == 0)
			return true;
	}
	return false;
}

/* The node's executables. */
static int add_node_exes(struct build *b, struct scope_acc *sa, json_object *node)
{
	json_object *exes = ju_get(node, "exes", json_type_array);

	for (size_t i = 0; exes && i < json_object_array_length(exes); i++) {
		json_object *e = json_object_array_get_idx(exes, i);
		const char *n = ju_str(e, LWM2_KEY_EXE);
		int64_t np = ju_int_or(e, LWM2_KEY_PROCESSES, 0), cpu = ju_int_or(e, "cpu_us", 0);

		if (!n || np < 0 || cpu < 0)
			continue;
		if (exe_put(&sa->exes, n, (uint64_t)np, (uint64_t)cpu) != 0 ||
		    exe_put(&b->job.exes, n, (uint64_t)np, (uint64_t)cpu) != 0)
			return -1;
	}
	return 0;
}

/* What a process entry of a node record adds to a scope's counters. */
static void counters_add(struct scope_acc *sa, const struct lwm2_proc_values *pv,
                         json_object *names, json_object *p, const int *map, size_t nmap)
{
	json_object *c = ju_get(p, LWM2_KEY_C, json_type_array);

	sa->entries++;
	for (int k = 0; k < LWM2_NCOUNTERS; k++) {
		sa->totals[k] += pv->counters[k];
		sa->measured[k] += !pv->absent[k];
	}
	for (size_t i = 0; i < nmap && c && names; i++) {
		int64_t v = json_object_get_int64(json_object_array_get_idx(c, i));
		if (map[i] < 0 && v > 0)
			newer_add(sa->newer, &sa->nnewer,
			          json_object_get_string(json_object_array_get_idx(names, i)),
			          (uint64_t)v);
	}
}

static int add_node(struct build *b, json_object *node)
{
	int map[LWM2_MAP_MAX];
	size_t nmap;
	json_object *procs = ju_get(node, "procs", json_type_array);
	const char *name = ju_str(node, LWM2_KEY_NODE);
	uint64_t step = (uint64_t)ju_int_or(node, LWM2_KEY_STEP_ID, 0);
	struct scope_acc *sa;
	bool partial;
	json_object *events = ju_get(node, LWM2_KEY_COUNTER_EVENTS, json_type_object);
	/* the node's events, which its processes' metrics are read by: a
	 * role without an event there was not counted (metrics.c) */
	char events_text[LWM2_HWC_EVENTS_LEN];

	json_object *names = ju_get(node, "counters", json_type_array);

	if (!procs || !name || lwm2_counter_map(node, map, LWM2_MAP_MAX, &nmap) != 0) {
		b->skipped = true;
		return 0;
	}
	if (!(sa = step_acc(b, step)))
		return -1;
	b->node_names[b->nnames++] = name;
	sa->node_records++;
	lwm2_hwc_events_add_json(&b->events, events);
	lwm2_hwc_events_json_text(events, events_text, sizeof(events_text));
	partial = has_flag(node, "partial") || has_flag(node, "skipped_records") ||
	          has_flag(node, "missing_tasks");
	sa->partial |= partial;
	b->job.partial |= partial;
	for (size_t i = 0; i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		struct lwm2_proc_values pv;
		struct lwm2_metrics m;
		int64_t flags = ju_int_or(p, LWM2_KEY_FLAGS, 0);
		int32_t rank = (int32_t)ju_int_or(p, LWM2_KEY_RANK, -1);

		if (rank < 0)
			rank = (int32_t)ju_int_or(p, "task", -1);
		if (lwm2_proc_from_json(p, map, nmap, &pv) != 0) {
			sa->partial = b->job.partial = true;
			continue;
		}
		pv.hwc_events = events_text;
		counters_add(sa, &pv, names, p, map, nmap);
		counters_add(&b->job, &pv, names, p, map, nmap);
		view_add(b, p);
		{
			/* every image's regions, one replaced by exec's too */
			struct lwm2_where w = {rank, (int32_t)ju_int_or(p, LWM2_KEY_PID, 0), name,
			                       ju_str(p, LWM2_KEY_EXE)};
			int64_t t0 = ju_int_or(p, "start_ns", 0), t1 = ju_int_or(p, "end_ns", 0);

			if (lwm2_regions_add_proc(&b->regions, p, &w,
			                          t1 > t0 && t0 > 0 ? (double)(t1 - t0) / 1e9 : 0) <
			    0)
				return -1;
		}
		if (flags & LWM2_F_INCOMPLETE) {
			sa->incomplete++;
			b->job.incomplete++;
			if (b->nincomplete++ < INCOMPLETE_LIST_MAX) {
				json_object *e = json_object_new_object();
				ju_add(e, LWM2_KEY_STEP, ju_u64(step));
				ju_add(e, LWM2_KEY_NODE, json_object_new_string(name));
				ju_add(e, LWM2_KEY_RANK, json_object_new_int(rank));
				ju_add(e, LWM2_KEY_PID,
				       json_object_new_int((int32_t)ju_int_or(p, LWM2_KEY_PID, 0)));
				json_object_array_add(b->incomplete, e);
			}
		}
		/* An image replaced by exec is the same process as the next
		 * image: its counters count, it is not another process. */
		if (flags & LWM2_F_EXEC)
			continue;
		/* A group of short processes of one executable (LWM2_F_SUMMARY)
		 * counts as its "n" processes, and as one entry below. */
		{
			int64_t np = flags & LWM2_F_SUMMARY ? ju_int_or(p, LWM2_KEY_N, 0) : 1;

			if (np > 0) {
				sa->procs += (uint64_t)np;
				b->job.procs += (uint64_t)np;
			}
		}
		if (flags & LWM2_F_MPI) {
			sa->mpi++;
			b->job.mpi++;
		}
		if (flags & LWM2_F_IO_URING) {
			sa->io_uring++;
			b->job.io_uring++;
		}
		if (flags & LWM2_F_MMAP_WRITE) {
			sa->mmap_write++;
			b->job.mmap_write++;
		}
		lwm2_metrics_compute(&pv, &m);
		struct lwm2_where w = {rank, (int32_t)ju_int_or(p, LWM2_KEY_PID, 0), name,
		                       ju_str(p, LWM2_KEY_EXE)};
		for (int k = 0; k < LWM2_NMETRICS; k++) {
			lwm2_stat_add(&sa->m[k], &m.m[k], &w);
			lwm2_stat_add(&b->job.m[k], &m.m[k], &w);
		}
		if (lwm2_app_add(b->app, p, &m, name, step) < 0)
			return -1;
	}
	if (ctr_add_node(&b->containers, node, step) < 0)
		return -1;
	return add_node_exes(b, sa, node);
}

static json_object *scope_json(const struct scope_acc *s, uint64_t nodes)
{
	json_object *o = json_object_new_object(), *ms, *miss, *tot, *ex;

	/* The processes that started unmeasured count among them. */
	ju_add(o, LWM2_KEY_PROCESSES, ju_u64(s->procs + lwm2_unmeasured_count(s->totals)));
	ju_add(o, LWM2_KEY_MPI_PROCESSES, ju_u64(s->mpi));
	ju_add(o, LWM2_KEY_NODES, ju_u64(nodes));
	ju_add(o, LWM2_KEY_INCOMPLETE, ju_u64(s->incomplete));
	ju_add(o, LWM2_KEY_PARTIAL, json_object_new_boolean(s->partial));
	ju_add(o, LWM2_KEY_IO_URING_PROCESSES, ju_u64(s->io_uring));
	ju_add(o, LWM2_KEY_MMAP_WRITE_PROCESSES, ju_u64(s->mmap_write));
	lwm2_unmeasured_json(o, s->totals);
	ms = json_object_new_object();
	miss = json_object_new_object();
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		const struct lwm2_stat *a = &s->m[k];
		if (!a->n && lwm2_metric_on_request(k))
			continue; /* counted only where asked for: not missing */
		if (!a->n) {
			ju_add(miss, lwm2_metric_ids[k],
			       json_object_new_string(a->reason[0]
			                                  ? a->reason
			                                  : lwm2_why_texts[LWM2_WHY_NO_PROCESSES]));
			continue;
		}
		ju_add(ms, lwm2_metric_ids[k], lwm2_stat_json(a));
	}
	ju_add(o, LWM2_KEY_METRICS, ms);
	ju_add(o, LWM2_KEY_MISSING, miss);
	tot = json_object_new_object();
	/* A counter that no process had (their library is older than it) is
	 * "not measured", never 0; a newer build's counters keep their names. */
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		if (s->totals[c])
			ju_add(tot, lwm2_counter_names[c], ju_u64(s->totals[c]));
		else if (s->entries && !s->measured[c])
			ju_add(tot, lwm2_counter_names[c], json_object_new_string("not measured"));
	for (size_t i = 0; i < s->nnewer; i++)
		if (!json_object_object_get_ex(tot, s->newer[i].name, NULL))
			ju_add(tot, s->newer[i].name, ju_u64(s->newer[i].total));
	ju_add(o, LWM2_KEY_TOTALS, tot);
	if ((ex = exes_json(&s->exes)))
		ju_add(o, LWM2_KEY_EXECUTABLES, ex);
	return o;
}

static void free_exes(struct build *b)
{
	free(b->job.exes.e);
	for (size_t i = 0; i < b->nsteps; i++)
		free(b->steps[i].exes.e);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_step(const void *a, const void *b)
{
	const struct scope_acc *x = a, *y = b;

	return x->step_id < y->step_id ? -1 : x->step_id > y->step_id;
}

static void opt_str(json_object *o, const char *key, const char *v)
{
	if (v)
		ju_add(o, key, json_object_new_string(v));
}

/* Nodes of the job: distinct names over all steps. */
static uint64_t distinct_nodes(struct build *b)
{
	uint64_t distinct = 0;

	if (b->nnames) {
		qsort(b->node_names, b->nnames, sizeof(*b->node_names), cmp_name);
		distinct = 1;
		for (size_t i = 1; i < b->nnames; i++)
			distinct += strcmp(b->node_names[i], b->node_names[i - 1]) != 0;
	}
	return distinct;
}

/* The job's identity from Slurm (an empty object without meta). */
static json_object *job_json(const struct lwm2_job_meta *meta)
{
	json_object *job = json_object_new_object();

	if (meta) {
		opt_str(job, LWM2_KEY_CLUSTER, meta->cluster);
		ju_add(job, LWM2_KEY_JOB_ID, ju_u64(meta->job_id));
		opt_str(job, LWM2_KEY_USER, meta->user);
		opt_str(job, LWM2_KEY_ACCOUNT, meta->account);
		opt_str(job, LWM2_KEY_PARTITION, meta->partition);
		opt_str(job, LWM2_KEY_NODES, meta->nodes);
		ju_add(job, LWM2_KEY_NODE_COUNT, ju_u64(meta->node_count));
		ju_add(job, LWM2_KEY_CPUS_PER_TASK, ju_u64(meta->cpus_per_task));
		ju_add(job, LWM2_KEY_START, json_object_new_int64(meta->start));
		ju_add(job, LWM2_KEY_END, json_object_new_int64(meta->end));
		opt_str(job, LWM2_KEY_STATE, meta->state);
	}
	return job;
}

/* The steps' scopes, by step id. */
static json_object *steps_json(struct build *b)
{
	json_object *steps;

	if (b->nsteps)
		qsort(b->steps, b->nsteps, sizeof(*b->steps), cmp_step);
	steps = json_object_new_array_ext((int)(b->nsteps ? b->nsteps : 1));
	for (size_t i = 0; i < b->nsteps; i++) {
		json_object *s = scope_json(&b->steps[i], b->steps[i].node_records);
		ju_add(s, LWM2_KEY_STEP_ID, ju_u64(b->steps[i].step_id));
		json_object_array_add(steps, s);
	}
	return steps;
}

/* What the digest lacks, as flags. */
static json_object *flags_json(const struct build *b, const struct lwm2_job_meta *meta,
                               uint64_t distinct)
{
	json_object *flags = json_object_new_array();

	if (b->job.incomplete)
		json_object_array_add(flags, json_object_new_string("incomplete"));
	if (b->job.partial)
		json_object_array_add(flags, json_object_new_string("partial"));
	if (meta && meta->node_count && distinct < meta->node_count)
		json_object_array_add(flags, json_object_new_string("missing_nodes"));
	if (b->skipped)
		json_object_array_add(flags, json_object_new_string("bad_node_records"));
	if (!b->job.procs)
		json_object_array_add(flags, json_object_new_string("no_data"));
	if (b->job.io_uring)
		json_object_array_add(flags, json_object_new_string("io_partial"));
	return flags;
}

/* The space-time grid rows share the node records' series. */
static json_object *grid_json(json_object *const *nodes, size_t n)
{
	json_object *grid = json_object_new_array();

	for (size_t i = 0; i < n; i++) {
		json_object *s = nodes[i] ? ju_get(nodes[i], "series", json_type_object) : NULL,
		            *row;
		json_object *c = s ? ju_get(s, LWM2_KEY_C, json_type_object) : NULL;
		if (!c)
			continue;
		row = json_object_new_object();
		ju_add(row, LWM2_KEY_STEP,
		       ju_u64((uint64_t)ju_int_or(nodes[i], LWM2_KEY_STEP_ID, 0)));
		ju_add(row, LWM2_KEY_NODE,
		       json_object_new_string(ju_str(nodes[i], LWM2_KEY_NODE) ?: ""));
		ju_add(row, LWM2_KEY_FIRST_SLICE,
		       ju_u64((uint64_t)ju_int_or(s, LWM2_KEY_FIRST_SLICE, 0)));
		ju_add(row, LWM2_KEY_SLICE_LENGTH_S,
		       ju_u64((uint64_t)ju_int_or(s, LWM2_KEY_SLICE_LENGTH_S, 0)));
		ju_add(row, LWM2_KEY_N, ju_u64((uint64_t)ju_int_or(s, LWM2_KEY_N, 0)));
		ju_add(row, LWM2_KEY_C, json_object_get(c));
		json_object_array_add(grid, row);
	}
	return grid;
}

json_object *lwm2_job_digest_build(const struct lwm2_job_meta *meta, json_object *const *nodes,
                                   size_t n)
{
	struct build b;
	json_object *d = NULL, *app, *cpus, *cost, *ranks, *regions;
	uint64_t distinct;

	memset(&b, 0, sizeof(b));
	acc_init(&b.job, UINT64_MAX);
	b.node_names = malloc((n ? n : 1) * sizeof(*b.node_names));
	b.incomplete = json_object_new_array();
	b.app = lwm2_app_new();
	if (!b.node_names || !b.incomplete || !b.app)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (nodes[i] && add_node(&b, nodes[i]) != 0)
			goto nomem;
	distinct = distinct_nodes(&b);
	if (meta && meta->node_count && distinct < meta->node_count)
		b.job.partial = true;

	d = json_object_new_object();
	ju_add(d, LWM2_KEY_DIGEST_VERSION, json_object_new_int(LWM2_DIGEST_VERSION));
	ju_add(d, LWM2_KEY_JOB, job_json(meta));
	if (meta && meta->have_requests) {
		json_object *fit = lwm2_fit_json(meta, nodes, n);
		if (!fit) {
			json_object_put(d);
			goto nomem;
		}
		ju_add(d, LWM2_KEY_FIT, fit);
	}
	if ((app = lwm2_app_json(b.app)))
		ju_add(d, LWM2_KEY_APPLICATION, app);
	if ((cpus = lwm2_processors_json(nodes, n)))
		ju_add(d, LWM2_KEY_PROCESSORS, cpus);
	if ((cpus = lwm2_hwc_events_json(&b.events)))
		ju_add(d, LWM2_KEY_COUNTER_EVENTS, cpus);
	if (ctr_json(&b.containers, d, nodes, n) < 0) {
		json_object_put(d);
		goto nomem;
	}
	view_json(&b, d);
	if ((regions = lwm2_regions_json(&b.regions)))
		ju_add(d, LWM2_KEY_REGIONS, regions);
	if ((cost = lwm2_own_cost_json(nodes, n)))
		ju_add(d, LWM2_KEY_LWM2_COST, cost);
	ju_add(d, LWM2_KEY_SCOPE, scope_json(&b.job, distinct));
	ju_add(d, LWM2_KEY_STEPS, steps_json(&b));
	ju_add(d, LWM2_KEY_INCOMPLETE_LIST, b.incomplete);
	b.incomplete = NULL;
	ju_add(d, LWM2_KEY_FLAGS, flags_json(&b, meta, distinct));
	ju_add(d, LWM2_KEY_GRID, grid_json(nodes, n));
	if (!(ranks = lwm2_job_digest_ranks(nodes, n))) {
		json_object_put(d);
		d = NULL;
		errno = ENOMEM;
	} else {
		ju_add(d, LWM2_KEY_RANKS, ranks);
	}
	free_exes(&b);
	ctr_free(&b.containers);
	lwm2_app_free(b.app);
	lwm2_regions_free(&b.regions);
	free(b.steps);
	free(b.node_names);
	return d;
nomem:
	json_object_put(b.incomplete);
	lwm2_app_free(b.app);
	ctr_free(&b.containers);
	lwm2_regions_free(&b.regions);
	free_exes(&b);
	free(b.steps);
	free(b.node_names);
	errno = ENOMEM;
	return NULL;
}

/* How far the compact form is cut down. */
struct cut {
	size_t incomplete_keep;
	bool executables;       /* the top-executables lists (the log keeps them) */
	size_t containers_keep; /* SIZE_MAX: all listed; the rest counted as omitted */
	bool step_missing;      /* each step's reasons for what it lacks (the job's stay) */
	bool step_totals;
	size_t steps_keep; /* SIZE_MAX: all */
	bool job_totals;
	size_t regions_keep; /* the busiest named regions; SIZE_MAX: all */
};

static json_object *shallow_without(json_object *o, const char *const *drop, size_t ndrop)
{
	json_object *c = json_object_new_object();

	json_object_object_foreach(o, k, v)
	{
		bool skip = false;
		for (size_t i = 0; i < ndrop; i++)
			skip |= strcmp(k, drop[i]) == 0;
		if (!skip)
			ju_add(c, k, json_object_get(v));
	}
	return c;
}

/* The first keep containers of d into c, the processes of the others
 * added to "containers_omitted". */
static void cut_containers(json_object *c, json_object *d, size_t keep)
{
	json_object *a = ju_get(d, LWM2_KEY_CONTAINERS, json_type_array), *n;
	int64_t omitted = ju_int_or(d, LWM2_KEY_CONTAINERS_OMITTED, 0);

	if (!a || json_object_array_length(a) <= keep)
		return;
	n = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		int64_t np = ju_int_or(e, LWM2_KEY_PROCESSES, 0);

		if (i < keep)
			json_object_array_add(n, json_object_get(e));
		else if (np > 0)
			omitted += np;
	}
	ju_add(c, LWM2_KEY_CONTAINERS, n);
	ju_add(c, LWM2_KEY_CONTAINERS_OMITTED, json_object_new_int64(omitted));
}

/* The busiest keep named regions of d into c, the others folded into
 * "other" as the digest folds what it cannot keep (none: no "regions"). */
static void cut_regions(json_object *c, json_object *d, size_t keep)
{
	json_object *r = ju_get(d, LWM2_KEY_REGIONS, json_type_object), *nr, *names, *kept, *other;
	uint64_t folded, calls;
	double seconds;

	names = r ? ju_get(r, LWM2_KEY_NAMES, json_type_array) : NULL;
	if (!names || json_object_array_length(names) <= keep)
		return;
	if (!keep) {
		json_object_object_del(c, LWM2_KEY_REGIONS);
		return;
	}
	other = ju_get(r, LWM2_KEY_OTHER, json_type_object);
	folded = (uint64_t)ju_int_or(r, LWM2_KEY_FOLDED, 0);
	calls = other ? (uint64_t)ju_int_or(other, LWM2_KEY_CALLS, 0) : 0;
	if (!other || !ju_num(other, LWM2_KEY_SECONDS, &seconds))
		seconds = 0;
	kept = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		json_object *e = json_object_array_get_idx(names, i);
		json_object *t = ju_get(e, LWM2_KEY_SECONDS, json_type_object);
		double avg;

		if (i < keep) {
			json_object_array_add(kept, json_object_get(e));
			continue;
		}
		folded++;
		calls += (uint64_t)ju_int_or(e, LWM2_KEY_CALLS, 0);
		if (t && ju_num(t, LWM2_KEY_AVG, &avg))
			seconds += avg * (double)ju_int_or(t, LWM2_KEY_N, 0);
	}
	nr = json_object_new_object();
	ju_add(nr, LWM2_KEY_NAMES, kept);
	ju_add(nr, LWM2_KEY_FOLDED, ju_u64(folded));
	other = json_object_new_object();
	ju_add(other, LWM2_KEY_CALLS, ju_u64(calls));
	ju_add(other, LWM2_KEY_SECONDS, ju_double(seconds));
	ju_add(nr, LWM2_KEY_OTHER, other);
	json_object_object_add(c, LWM2_KEY_REGIONS, nr);
}

static json_object *compact_obj(json_object *d, const struct cut *cut)
{
	static const char *const top_drop[] = {LWM2_KEY_GRID, LWM2_KEY_STEPS,
	                                       LWM2_KEY_INCOMPLETE_LIST, LWM2_KEY_SCOPE,
	                                       LWM2_KEY_RANKS};
	static const char *const totals[] = {LWM2_KEY_EXECUTABLES, LWM2_KEY_TOTALS};
	/* what a step loses as the cuts go on: its reasons for what it lacks
	 * (the job's stay), its executables, its totals */
	static const char *const step_cut[] = {LWM2_KEY_MISSING, LWM2_KEY_EXECUTABLES,
	                                       LWM2_KEY_TOTALS};
	json_object *c = shallow_without(d, top_drop, 5), *steps, *inc, *nsteps, *scope, *fit;
	size_t ns, keep;

	/* The fit block without its per-node list, which grows with the
	 * nodes (the log keeps it): the AdminComment stays bounded. */
	if ((fit = ju_get(d, LWM2_KEY_FIT, json_type_object))) {
		static const char *const per_node[] = {LWM2_KEY_NODES};
		ju_add(c, LWM2_KEY_FIT, shallow_without(fit, per_node, 1));
	}
	scope = ju_get(d, LWM2_KEY_SCOPE, json_type_object);
	if (scope)
		ju_add(c, LWM2_KEY_SCOPE,
		       cut->job_totals ? shallow_without(scope, totals, cut->executables ? 0 : 1)
		                       : shallow_without(scope, totals, 2));
	inc = ju_get(d, LWM2_KEY_INCOMPLETE_LIST, json_type_array);
	if (inc) {
		json_object *a = json_object_new_array();
		for (size_t i = 0; i < json_object_array_length(inc) && i < cut->incomplete_keep;
		     i++)
			json_object_array_add(a,
			                      json_object_get(json_object_array_get_idx(inc, i)));
		ju_add(c, LWM2_KEY_INCOMPLETE_LIST, a);
	}
	steps = ju_get(d, LWM2_KEY_STEPS, json_type_array);
	ns = steps ? json_object_array_length(steps) : 0;
	keep = cut->steps_keep < ns ? cut->steps_keep : ns;
	nsteps = json_object_new_array();
	/* Keep the first and the last steps: the setup and the main run are
	 * usually there. */
	for (size_t i = 0; i < ns; i++) {
		json_object *s;
		if (keep < ns && i >= (keep + 1) / 2 && i < ns - keep / 2)
			continue;
		s = json_object_array_get_idx(steps, i);
		if (!cut->step_totals)
			json_object_array_add(nsteps, shallow_without(s, step_cut, 3));
		else if (!cut->step_missing)
			json_object_array_add(
			    nsteps, shallow_without(s, step_cut, cut->executables ? 1 : 2));
		else
			json_object_array_add(nsteps,
			                      shallow_without(s, totals, cut->executables ? 0 : 1));
	}
	ju_add(c, LWM2_KEY_STEPS, nsteps);
	if (keep < ns)
		ju_add(c, LWM2_KEY_STEPS_OMITTED, ju_u64(ns - keep));
	cut_containers(c, d, cut->containers_keep);
	cut_regions(c, d, cut->regions_keep);
	ju_add(c, LWM2_KEY_COMPACT, json_object_new_boolean(1));
	return c;
}

char *lwm2_job_digest_compact(json_object *digest, size_t cap)
{
	struct cut cut = {SIZE_MAX, true, SIZE_MAX, true, true, SIZE_MAX, true, SIZE_MAX};
	size_t plen = strlen(LWM2_DIGEST_PREFIX);

	if (!digest || !json_object_is_type(digest, json_type_object)) {
		errno = EINVAL;
		return NULL;
	}
	if (!cap)
		cap = LWM2_COMPACT_CAP_DEFAULT;
	if (cap > LWM2_COMPACT_CAP_MAX)
		cap = LWM2_COMPACT_CAP_MAX;
	for (int stage = 0;; stage++) {
		json_object *c = compact_obj(digest, &cut);
		const char *full =
		    c ? json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN) : NULL;
		size_t len = 0;
		/* Derived values (rates, times, shares) at 6 significant
		 * digits, integers exact: the full digest in the log keeps
		 * every double; here the bytes go to figures, not to digits. */
		char *s =
		    full ? lwm2_json_shorten_numbers(full, full + strlen(full), 6, &len) : NULL;
		json_object *steps = ju_get(digest, LWM2_KEY_STEPS, json_type_array);
		size_t ns = steps ? json_object_array_length(steps) : 0;

		json_object_put(c);
		if (!s) {
			errno = ENOMEM;
			return NULL;
		}
		if (plen + len + 1 <= cap) {
			char *out = malloc(plen + len + 1);
			if (out) {
				memcpy(out, LWM2_DIGEST_PREFIX, plen);
				memcpy(out + plen, s, len + 1);
			}
			free(s);
			if (!out)
				errno = ENOMEM;
			return out;
		}
		free(s);
		/* Cheapest losses first; each stage is marked in the output. */
		if (cut.incomplete_keep > 8)
			cut.incomplete_keep = 8;
		else if (cut.executables)
			cut.executables = false;
		else if (cut.regions_keep > 8)
			cut.regions_keep = 8; /* the busiest, the rest folded */
		else if (cut.containers_keep > 1)
			cut.containers_keep = 1; /* the main one */
		else if (cut.step_missing)
			cut.step_missing = false; /* the reasons are text, the totals figures */
		else if (cut.step_totals)
			cut.step_totals = false;
		else if (cut.steps_keep > 2 && ns > 2)
			cut.steps_keep = (cut.steps_keep > ns ? ns : cut.steps_keep) / 2;
		else if (cut.steps_keep > 0 && ns > 0)
			cut.steps_keep = 0;
		else if (cut.regions_keep)
			cut.regions_keep = 0;
		else if (cut.job_totals)
			cut.job_totals = false;
		else if (cut.incomplete_keep)
			cut.incomplete_keep = 0;
		else {
			errno = E2BIG;
			return NULL;
		}
	}
}
