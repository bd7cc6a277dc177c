/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Declarations shared by the digest library's files (not installed). */
#ifndef LWM2_DIGEST_INTERNAL_H
#define LWM2_DIGEST_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "jsonutil.h"
#include "lwm2_record.h"
#include "lwm2_digest.h"

/* Counter arrays of a node record name their order in "counters"; map[i]
 * is this build's index of the i-th name, -1 when unknown here. */
#define LWM2_MAP_MAX 256
int lwm2_counter_map(json_object *node, int map[], size_t maxn, size_t *n);

/* Processes started unmeasured among counter totals tot (this build's
 * counters), which the "processes" beside them count too. */
static inline uint64_t lwm2_unmeasured_count(const uint64_t tot[])
{
	uint64_t n = 0;

	for (int i = 0; i < LWM2_NUNMEASURED; i++)
		n += tot[LWM2_C_UNMEASURED_FIRST + i];
	return n;
}
/* Where there are any, "unmeasured_processes" and "unmeasured" (REASON:
 * count) into o (node.c). */
void lwm2_unmeasured_json(json_object *o, const uint64_t tot[]);

/* The metric inputs of one process entry of a node record. */
int lwm2_proc_from_json(json_object *proc, const int *map, size_t nmap,
                        struct lwm2_proc_values *pv);

/* The CPU time (user and system, us) of one process entry of a node
 * record (job.c). */
uint64_t lwm2_proc_cpu_us(json_object *proc);

/* The CPU time (user and system) of the job's processes in the node
 * records, images replaced by exec left to their successors (job.c). */
uint64_t lwm2_job_cpu_us(json_object *const *nodes, size_t n);

/* Counts per step (the ranks of an application or a container in each
 * step), the first max steps of a job (job.c). */
struct lwm2_step_counts {
	struct lwm2_step_count {
		uint64_t step, n;
	} * v;
	size_t n;
};

/* n more for the step, added as new unless max steps are there already;
 * -1 out of memory. */
int lwm2_step_counts_add(struct lwm2_step_counts *c, uint64_t step, uint64_t n, size_t max);

/* The largest count of a step. */
uint64_t lwm2_step_counts_max(const struct lwm2_step_counts *c);

/* The per-process table of the full digest ("ranks", job_ranks.c). */
json_object *lwm2_job_digest_ranks(json_object *const *nodes, size_t n);

/*
 * The places where the rank record's fields go in its two JSON forms,
 * each a run of fields of the table in recjson.c, written in the table's
 * order.  A writer adds the parts of its form in turn, with what is its
 * own (nested objects, arrays, names of numbers) between them.
 */
enum lwm2_rank_part {
	LWM2_RP_NONE, /* not in that form */
	/* a process entry ("procs") of the node record (node.c) */
	LWM2_RP_NODE_RANK, /* its first member, before the task (the dump: after) */
	LWM2_RP_NODE_PROC,
	LWM2_RP_NODE_RUN,
	LWM2_RP_NODE_TIMES,
	LWM2_RP_NODE_COST,
	LWM2_RP_NODE_USAGE,
	LWM2_RP_NODE_VIEW,
	/* the rank record as `lwm2 dump` prints it (recjson.c) */
	LWM2_RP_DUMP_HEAD,
	LWM2_RP_DUMP_WHO,
	LWM2_RP_DUMP_WHERE,
	LWM2_RP_DUMP_CONTAINER,
	LWM2_RP_DUMP_VIEW,
	LWM2_RP_DUMP_USAGE,
	LWM2_RP_DUMP_SAMPLES,
	LWM2_RP_DUMP_SERIES,
};

/* r's named regions (version 5) into o, where it has any: the node
 * record's compact form ("regions": [[name, calls, ns]...],
 * "regions_folded", "regions_other": [calls, ns]) or the dump's (objects
 * named as the struct's members). */
void lwm2_record_regions_json(const struct lwm2_rank_record *r, json_object *o, bool node_form);

/* r's threads (version 5) into o, where it had more than one: "threads":
 * [{"tid", "flags", "cpu_ns", "samples": [per earmark], "c": {counter:
 * value, the non-zero ones}}], "threads_folded", "threads_other_cpu_ns";
 * the same in the node record and the dump. */
void lwm2_record_threads_json(const struct lwm2_rank_record *r, json_object *o);

/* The fields of r that go into part, added to o under that form's keys. */
void lwm2_rank_part_to_json(const struct lwm2_rank_record *r, enum lwm2_rank_part part,
                            json_object *o);

/*
 * Bytes of the UTF-8 character s starts (n bytes at most are there), 0
 * when s does not start a valid one (a stray continuation byte, a
 * truncated or overlong sequence, a surrogate, beyond U+10FFFF).  For
 * text the user chose (a container's image name) on its way into JSON
 * and onto a terminal.
 */
static inline size_t lwm2_utf8_char(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned lo = 0x80, hi = 0xbf;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* The second byte's range excludes overlong forms and surrogates. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* The order of executables in a digest, heavier first: by processes, then
 * CPU time, then name; by CPU time first with cpu_first.  For qsort's
 * comparators of the tables that hold them (job.c, node.c). */
static inline int lwm2_cmp_exe(uint64_t pa, uint64_t ca, const char *na, uint64_t pb, uint64_t cb,
                               const char *nb, int cpu_first)
{
	if (cpu_first && ca != cb)
		return ca > cb ? -1 : 1;
	if (pa != pb)
		return pa > pb ? -1 : 1;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return strcmp(na, nb);
}

/* The order of containers in a digest, heavier first: by CPU time, then
 * processes, then runtime and image (job.c, node.c). */
static inline int lwm2_cmp_ctr(uint64_t ca, uint64_t pa, const char *ra, const char *ia,
                               uint64_t cb, uint64_t pb, const char *rb, const char *ib)
{
	int c;

	if (ca != cb)
		return ca > cb ? -1 : 1;
	if (pa != pb)
		return pa > pb ? -1 : 1;
	c = strcmp(ra, rb);
	return c ? c : strcmp(ia, ib);
}

/* qsort's comparators by_count and by_cpu (lwm2_cmp_exe) of an array of
 * T, a table's entry with name, processes and cpu_us. */
#define LWM2_CMP_EXE_FNS(T, by_count, by_cpu)                                                      \
	static int by_count(const void *a, const void *b)                                          \
	{                                                                                          \
		const T *x = a, *y = b;                                                            \
		return lwm2_cmp_exe(x->processes, x->cpu_us, x->name, y->processes, y->cpu_us,     \
		                    y->name, 0);                                                   \
	}                                                                                          \
	static int by_cpu(const void *a, const void *b)                                            \
	{                                                                                          \
		const T *x = a, *y = b;                                                            \
		return lwm2_cmp_exe(x->processes, x->cpu_us, x->name, y->processes, y->cpu_us,     \
		                    y->name, 1);                                                   \
	}

#endif /* LWM2_DIGEST_INTERNAL_H */
