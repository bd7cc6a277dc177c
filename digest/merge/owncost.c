/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2's own cost in a job: the time its wrappers, its sampling, its
 * heartbeat and its start and end work in every process took, as a share
 * of the job's CPU time ("lwm2_cost" in the digest, one line in the text).
 *
 * Nothing in a process times lwm2 itself: a clock read around every
 * wrapper would double what it measures.  The figure is estimated from
 * what the node records count exactly (calls, samples, images, the
 * processes' span) times what one of each costs.  The per-call part is
 * two reads of the process's own clock, whose cost each process measures
 * at start (clock_ps in the node record), plus the wrapper's bookkeeping;
 * the other costs were measured by make bench on a 2-core VM of the
 * project's kind (bench/README.md): they are the table below, one place,
 * and lwm2(1) lists it.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "digest_internal.h"
#include "lwm2_keys.h"
#include "lwm2_record.h"
#include "owncost.h"

/* What one of each costs, in ns.  Per call: the bookkeeping of a wrapper
 * besides its two clock reads (bench: a 1-byte write +19 ns with two TSC
 * reads of about 7 ns; an MPI ping-pong +13..44 ns).  Per sample: the
 * handler, its signal delivery and return (bench's sampling row: +0.08 %
 * CPU at 1000 Hz on 2 threads).  Per image: the library's start and end
 * work, its loading included (bench: +0.27 ms for a command of a measured
 * script).  Per heartbeat: a record folded and written (an upper bound:
 * the write of a 2 KiB record into its mapped file). */
static const struct {
	const char *what;
	double ns;
} cost_of[] = {
#define OWN_CALL 0
    {"wrapped call, besides its two clock reads", 5},
#define OWN_SAMPLE 1
    {"sample", 400},
#define OWN_IMAGE 2
    {"process image, start and end", 270000},
#define OWN_HEARTBEAT 3
    {"heartbeat", 20000},
};

/* A clock read where no process of a node said (short processes only). */
#define OWN_CLOCK_PS_DEFAULT 25000

/* The counters that count a wrapped, timed call: each call, once (the
 * syncs are also metadata calls, the transfers also CUDA calls, MPI_Init
 * also another MPI call, so those are not listed). */
static const int call_counters[] = {
    LWM2_C_posix_read_calls, LWM2_C_posix_write_calls, LWM2_C_posix_meta_calls,
    LWM2_C_posix_aio_calls,  LWM2_C_mpi_p2p_calls,     LWM2_C_mpi_coll_calls,
    LWM2_C_mpiio_read_calls, LWM2_C_mpiio_write_calls, LWM2_C_mpiio_meta_calls,
    LWM2_C_mpi_other_calls,  LWM2_C_cuda_calls,
};

struct own_acc {
	double calls, samples, images, heartbeats;
	double call_ns, sample_ns, image_ns, heartbeat_ns;
	int64_t clock_ps_max;
	unsigned clock_sources; /* bit per enum lwm2_clock_source seen */
};

static void add_proc(struct own_acc *a, json_object *p, const int *map, size_t nmap, double slice_s,
                     int64_t node_clock_ps)
{
	struct lwm2_proc_values pv;
	int64_t flags = ju_int_or(p, LWM2_KEY_FLAGS, 0), clock_ps = ju_int_or(p, "clock_ps", 0);
	double calls = 0, samples = 0, images;

	if (lwm2_proc_from_json(p, map, nmap, &pv) != 0)
		return;
	for (size_t i = 0; i < sizeof(call_counters) / sizeof(call_counters[0]); i++)
		calls += (double)pv.counters[call_counters[i]];
	samples = (double)pv.samples_total;
	if (clock_ps > a->clock_ps_max && !(flags & LWM2_F_SUMMARY))
		a->clock_ps_max = clock_ps; /* measured by the process itself */
	if (clock_ps <= 0)
		clock_ps = node_clock_ps;
	if (flags & LWM2_F_SUMMARY) {
		int64_t n = ju_int_or(p, "images", 0);

		images = n > 0 ? (double)n : 0; /* a record's count, never below 0 */
	} else {
		int64_t src = ju_int_or(p, "clock_source", 0);

		images = 1;
		if (src > 0 && src < 32)
			a->clock_sources |= 1u << src;
		/* the heartbeat writes once a slice of a process that lives
		 * past its first */
		if (slice_s > 0)
			a->heartbeats += floor((double)pv.wall_ns / 1e9 / slice_s);
	}
	a->calls += calls;
	a->call_ns += calls * (cost_of[OWN_CALL].ns + 2.0 * (double)clock_ps / 1000.0);
	a->samples += samples;
	a->images += images;
}

/* The largest clock cost any full record of the node measured, for its
 * short processes, which do not keep theirs. */
static int64_t node_clock_ps(json_object *procs)
{
	int64_t m = 0;

	for (size_t k = 0; k < json_object_array_length(procs); k++) {
		int64_t ps = ju_int_or(json_object_array_get_idx(procs, k), "clock_ps", 0);
		m = ps > m ? ps : m;
	}
	return m > 0 ? m : OWN_CLOCK_PS_DEFAULT;
}

static void add_node(struct own_acc *a, json_object *node)
{
	json_object *procs = ju_get(node, "procs", json_type_array);
	json_object *series = ju_get(node, "series", json_type_object);
	int map[LWM2_MAP_MAX];
	size_t nmap = 0;
	double slice_s = series ? (double)ju_int_or(series, "slice_length_s", 0) : 0;
	int64_t clock_ps;

	if (!procs || lwm2_counter_map(node, map, LWM2_MAP_MAX, &nmap) != 0)
		return;
	clock_ps = node_clock_ps(procs);
	for (size_t k = 0; k < json_object_array_length(procs); k++)
		add_proc(a, json_object_array_get_idx(procs, k), map, nmap, slice_s, clock_ps);
}

static const char *clock_name(unsigned sources)
{
	switch (sources) {
	case 1u << LWM2_CLOCK_TSC:
		return "tsc";
	case 1u << LWM2_CLOCK_MONOTONIC:
		return "monotonic";
	case 0:
		return "none";
	default:
		return "mixed";
	}
}

/* A sum of counts as a JSON integer: the sums are doubles (counts of
 * 64 bits each, many of them), which the digest's integers hold up to
 * 2^63 - 1, as every count it writes (ju_u64). */
static json_object *count_json(double sum)
{
	if (!(sum > 0))
		return ju_u64(0);
	return ju_u64(sum < 9223372036854775808.0 ? (uint64_t)sum : INT64_MAX);
}

json_object *lwm2_own_cost_json(json_object *const *nodes, size_t n)
{
	struct own_acc a;
	json_object *o;
	double total_s;
	uint64_t cpu_us;

	memset(&a, 0, sizeof(a));
	for (size_t i = 0; i < n; i++)
		if (nodes[i] && ju_str(nodes[i], LWM2_KEY_NODE))
			add_node(&a, nodes[i]);
	if (a.images <= 0)
		return NULL;
	a.sample_ns = a.samples * cost_of[OWN_SAMPLE].ns;
	a.image_ns = a.images * cost_of[OWN_IMAGE].ns;
	a.heartbeat_ns = a.heartbeats * cost_of[OWN_HEARTBEAT].ns;
	total_s = (a.call_ns + a.sample_ns + a.image_ns + a.heartbeat_ns) / 1e9;
	o = json_object_new_object();
	ju_add(o, LWM2_KEY_SECONDS, ju_double(round(total_s * 1e6) / 1e6));
	if ((cpu_us = lwm2_job_cpu_us(nodes, n)))
		ju_add(o, LWM2_KEY_COST_SHARE,
		       ju_double(round(total_s / ((double)cpu_us / 1e6) * 1e8) / 1e6));
	ju_add(o, LWM2_KEY_CALLS, count_json(a.calls));
	ju_add(o, LWM2_KEY_WRAPPERS_S, ju_double(round(a.call_ns / 1e3) / 1e6));
	ju_add(o, LWM2_KEY_SAMPLES, count_json(a.samples));
	ju_add(o, LWM2_KEY_SAMPLING_S, ju_double(round(a.sample_ns / 1e3) / 1e6));
	ju_add(o, LWM2_KEY_IMAGES, count_json(a.images));
	ju_add(o, LWM2_KEY_START_END_S, ju_double(round(a.image_ns / 1e3) / 1e6));
	ju_add(o, LWM2_KEY_HEARTBEATS, count_json(a.heartbeats));
	ju_add(o, LWM2_KEY_HEARTBEAT_S, ju_double(round(a.heartbeat_ns / 1e3) / 1e6));
	ju_add(o, LWM2_KEY_CLOCK, json_object_new_string(clock_name(a.clock_sources)));
	if (a.clock_ps_max > 0)
		ju_add(o, LWM2_KEY_CLOCK_READ_NS, ju_double((double)a.clock_ps_max / 1000.0));
	return o;
}

void lwm2_own_cost_render(json_object *d, FILE *out)
{
	json_object *c = ju_get(d, LWM2_KEY_LWM2_COST, json_type_object);
	double s = 0, share = -1, read_ns = 0;
	const char *clock;

	if (!c || !ju_num(c, LWM2_KEY_SECONDS, &s) || !(s >= 0))
		return;
	if (!ju_num(c, LWM2_KEY_COST_SHARE, &share) || !(share >= 0))
		share = -1;
	clock = ju_str(c, LWM2_KEY_CLOCK);
	fputs("lwm2 used ", out);
	if (share >= 0)
		fprintf(out, "%.2g %% of this job's CPU time, ", share);
	fprintf(out,
	        "%.2g s (estimated: %" PRId64 " calls, %" PRId64 " process starts, %" PRId64
	        " samples",
	        s, ju_int_or(c, LWM2_KEY_CALLS, 0), ju_int_or(c, LWM2_KEY_IMAGES, 0),
	        ju_int_or(c, LWM2_KEY_SAMPLES, 0));
	if (clock && ju_num(c, LWM2_KEY_CLOCK_READ_NS, &read_ns) && read_ns > 0)
		fprintf(out, "; clock %s, %.3g ns a read", clock, read_ns);
	fputs(")\n", out);
}
