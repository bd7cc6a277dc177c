/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A rank record as JSON, every field by name (what `lwm2 dump` prints),
 * and the fields a node record keeps of each process (node.c). */
#include "digest_internal.h"

#include <stddef.h>

/*
 * The rank record's fields as JSON: one row a member, with the JSON
 * number or string it becomes and, for each of the two forms, its key and
 * the part (enum lwm2_rank_part) it goes into, or NULL, NONE where that
 * form leaves it out or writes it in a way of its own (named beside it).
 *
 * The two forms name the same member differently, and both names stay:
 * - the node record's keys are short because a node record holds every
 *   process of a node, and they are a stored format: node records are
 *   signed, kept, and read by the lwm2 of other builds on the same
 *   cluster (nodes and the controller upgraded at different times), so a
 *   key here is never renamed, only added;
 * - the dump's keys are the struct members' names, what a user reads and
 *   scripts against in `lwm2 dump`'s output.
 * The table lives here, with the dump, because this file is the rank
 * record's JSON: node.c already writes each process's identity through
 * it (lwm2_identity_to_json), and keeping the table private means a field
 * reaches either form only through one row.
 *
 * A new field is one row: where it goes in each form is its part, and
 * within a part the rows' order is the keys' order (both forms' orders
 * are kept byte for byte, hence the node record's rank in a part of its
 * own and samples_main before the clock).
 *
 * X(member, type, node record key, part, dump key, part)
 */
#define RANK_FIELDS(X)                                                                             \
	X(version, U32, NULL, NONE, "version", DUMP_HEAD)                                          \
	X(generation, U64, NULL, NONE, "generation", DUMP_HEAD)                                    \
	X(job_id, U64, NULL, NONE, "job_id", DUMP_WHO)                                             \
	X(step_id, U32, NULL, NONE, "step_id", DUMP_WHO)                                           \
	X(task_id, I32, "task", NODE_PROC, "task_id", DUMP_WHO)                                    \
	X(local_task_id, I32, NULL, NONE, "local_task_id", DUMP_WHO)                               \
	X(node_id, I32, NULL, NONE, "node_id", DUMP_WHO)                                           \
	X(mpi_rank, I32, "rank", NODE_RANK, "mpi_rank", DUMP_WHO)                                  \
	X(mpi_size, I32, NULL, NONE, "mpi_size", DUMP_WHO)                                         \
	X(mpi_thread_provided, I32, NULL, NONE, "mpi_thread_provided", DUMP_WHO)                   \
	X(pid, I32, "pid", NODE_PROC, "pid", DUMP_WHO)                                             \
	X(ppid, I32, "ppid", NODE_PROC, "ppid", DUMP_WHO)                                          \
	X(flags, U32, "flags", NODE_PROC, "flags", DUMP_HEAD)                                      \
	/* the dump: the language's name (record_who) */                                           \
	X(language, U32, "language", NODE_RUN, NULL, NONE)                                         \
	X(runtimes, U32, "runtimes", NODE_RUN, "runtimes", DUMP_WHO)                               \
	X(hostname, STR, NULL, NONE, "hostname", DUMP_WHERE)                                       \
	/* the node record: "exe", the base name (proc_json) */                                    \
	X(executable, STR, NULL, NONE, "executable", DUMP_WHERE)                                   \
	X(mpi_library, STR, NULL, NONE, "mpi_library", DUMP_WHERE)                                 \
	X(container_runtime, STR, NULL, NONE, "runtime", DUMP_CONTAINER)                           \
	X(container_image, STR, NULL, NONE, "image", DUMP_CONTAINER)                               \
	X(view_queries, U32, "view_queries", NODE_VIEW, "queries", DUMP_VIEW)                      \
	X(view_ns, U64, "view_ns", NODE_VIEW, "ns", DUMP_VIEW)                                     \
	X(start_ns, I64, "start_ns", NODE_TIMES, "start_ns", DUMP_USAGE)                           \
	X(end_ns, I64, "end_ns", NODE_TIMES, "end_ns", DUMP_USAGE)                                 \
	X(exit_status, I32, "exit", NODE_TIMES, "exit_status", DUMP_USAGE)                         \
	X(term_signal, I32, "signal", NODE_TIMES, "term_signal", DUMP_USAGE)                       \
	X(utime_us, U64, "utime_us", NODE_USAGE, "utime_us", DUMP_USAGE)                           \
	X(stime_us, U64, "stime_us", NODE_USAGE, "stime_us", DUMP_USAGE)                           \
	X(maxrss_kb, U64, "maxrss_kb", NODE_USAGE, "maxrss_kb", DUMP_USAGE)                        \
	X(minflt, U64, NULL, NONE, "minflt", DUMP_USAGE)                                           \
	X(majflt, U64, NULL, NONE, "majflt", DUMP_USAGE)                                           \
	X(nvcsw, U64, NULL, NONE, "nvcsw", DUMP_USAGE)                                             \
	X(nivcsw, U64, NULL, NONE, "nivcsw", DUMP_USAGE)                                           \
	X(samples_main, U64, "samples_main", NODE_COST, "samples_main", DUMP_SAMPLES)              \
	X(clock_source, U32, "clock_source", NODE_COST, "clock_source", DUMP_USAGE)                \
	X(clock_cost_ps, U32, "clock_ps", NODE_COST, "clock_cost_ps", DUMP_USAGE)                  \
	/* the dump: each missing group's reason by name (lwm2_record_to_json) */                  \
	X(missing, U32, "missing", NODE_COST, NULL, NONE)                                          \
	X(threads_total, U32, "threads_total", NODE_TIMES, "threads_total", DUMP_USAGE)            \
	X(threads_max, U32, "threads_max", NODE_TIMES, "threads_max", DUMP_USAGE)                  \
	X(sample_period_us, U32, "period_us", NODE_TIMES, "sample_period_us", DUMP_USAGE)          \
	X(sample_signal, I32, NULL, NONE, "sample_signal", DUMP_USAGE)                             \
	X(first_slice, U64, NULL, NONE, "first_slice", DUMP_SERIES)                                \
	X(slice_length_s, U32, NULL, NONE, "slice_length_s", DUMP_SERIES)                          \
	X(nslices, U32, NULL, NONE, "n", DUMP_SERIES)

/* A field's type: the member's C type, which makes its JSON value. */
enum field_type { FT_I32, FT_U32, FT_I64, FT_U64, FT_STR };
#define CTYPE_I32 int32_t
#define CTYPE_U32 uint32_t
#define CTYPE_I64 int64_t
#define CTYPE_U64 uint64_t
#define CTYPE_STR char *

/* A row's type must be its member's: a wrong one would read the wrong
 * bytes. */
#define FIELD_TYPE_CHECK(m, t, nk, np, dk, dp)                                                     \
	_Static_assert(_Generic(((struct lwm2_rank_record *)NULL)->m, CTYPE_##t : 1, default : 0), \
	               "the type of " #m " is not " #t);
RANK_FIELDS(FIELD_TYPE_CHECK)

struct rank_field {
	size_t offset;
	enum field_type type;
	enum lwm2_rank_part node_part, dump_part;
	const char *node_key, *dump_key;
};

#define FIELD_ROW(m, t, nk, np, dk, dp)                                                            \
	{offsetof(struct lwm2_rank_record, m), FT_##t, LWM2_RP_##np, LWM2_RP_##dp, nk, dk},
static const struct rank_field rank_fields[] = {RANK_FIELDS(FIELD_ROW)};

static json_object *field_json(const struct lwm2_rank_record *r, const struct rank_field *f)
{
	const char *p = (const char *)r + f->offset;
	int32_t i32;
	uint32_t u32;
	int64_t i64;
	uint64_t u64;

	switch (f->type) {
	case FT_I32:
		memcpy(&i32, p, sizeof(i32));
		return json_object_new_int(i32);
	case FT_U32:
		memcpy(&u32, p, sizeof(u32));
		return json_object_new_int64(u32);
	case FT_I64:
		memcpy(&i64, p, sizeof(i64));
		return json_object_new_int64(i64);
	case FT_U64:
		memcpy(&u64, p, sizeof(u64));
		return ju_u64(u64);
	case FT_STR:
		/* the record's strings are terminated (lwm2_record_validate) */
		return json_object_new_string(p);
	}
	return NULL;
}

void lwm2_rank_part_to_json(const struct lwm2_rank_record *r, enum lwm2_rank_part part,
                            json_object *o)
{
	for (size_t i = 0; i < sizeof(rank_fields) / sizeof(rank_fields[0]); i++) {
		const struct rank_field *f = &rank_fields[i];
		const char *key = f->node_part == part   ? f->node_key
		                  : f->dump_part == part ? f->dump_key
		                                         : NULL;

		if (key && part != LWM2_RP_NONE)
			ju_add(o, key, field_json(r, f));
	}
}

void lwm2_build_id_hex(const struct lwm2_rank_record *r, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;

	for (uint32_t i = 0; i < r->build_id_len && i < LWM2_BUILD_ID_MAX && k + 2 < len; i++) {
		out[k++] = hex[r->build_id[i] >> 4];
		out[k++] = hex[r->build_id[i] & 15];
	}
	if (len)
		out[k] = '\0';
}

void lwm2_identity_to_json(const struct lwm2_rank_record *r, json_object *o)
{
	char hex[2 * LWM2_BUILD_ID_MAX + 1];
	json_object *a;

	if (!(r->identity_flags & LWM2_ID_DONE))
		return;
	lwm2_build_id_hex(r, hex, sizeof(hex));
	if (hex[0])
		ju_add(o, "build_id", json_object_new_string(hex));
	if (r->mpi_library[0])
		ju_add(o, "mpi_library", json_object_new_string(r->mpi_library));
	if (r->runtime_libs[0])
		ju_add(o, "runtime_libs", json_object_new_string(r->runtime_libs));
	if (r->cuda_runtime_version > 0)
		ju_add(o, "cuda_runtime", json_object_new_int(r->cuda_runtime_version));
	/* [tasks, nodes, cpus per task, OMP_NUM_THREADS]; -1: not set */
	a = json_object_new_array_ext(4);
	json_object_array_add(a, json_object_new_int(r->launch_ntasks));
	json_object_array_add(a, json_object_new_int(r->launch_nnodes));
	json_object_array_add(a, json_object_new_int(r->launch_cpus_per_task));
	json_object_array_add(a, json_object_new_int(r->launch_omp_threads));
	ju_add(o, "launch", a);
}

struct bit_name {
	uint32_t bit;
	const char *name;
};

/* The record's flags by name. */
static const struct bit_name flag_names[] = {
    {LWM2_F_INCOMPLETE, "incomplete"},
    {LWM2_F_PARTIAL, "partial"},
    {LWM2_F_EXEC, "exec"},
    {LWM2_F_FORK_CHILD, "fork_child"},
    {LWM2_F_SIGNALED, "signaled"},
    {LWM2_F_MPI, "mpi"},
    {LWM2_F_MPI_FINALIZED, "mpi_finalized"},
    {LWM2_F_SAMPLING_OFF, "sampling_off"},
    {LWM2_F_COARSENED, "coarsened"},
    {LWM2_F_IO_URING, "io_uring"},
    {LWM2_F_MMAP_WRITE, "mmap_write"},
    {LWM2_F_ASIDE, "aside"},
};

/* The runtimes seen in the process, by name. */
static const struct bit_name runtime_names[] = {
    {LWM2_RT_FORTRAN, "fortran"}, {LWM2_RT_CXX, "c++"},           {LWM2_RT_OPENMP, "openmp"},
    {LWM2_RT_CUDA, "cuda"},       {LWM2_RT_PTHREADS, "pthreads"}, {LWM2_RT_MPI_OMPI, "open-mpi"},
    {LWM2_RT_MPI_MPICH, "mpich"}, {LWM2_RT_PAPI_APP, "papi"},
};

/* The names of the bits set in bits, in the table's order. */
static json_object *bit_names_json(uint32_t bits, const struct bit_name *t, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		if (bits & t[i].bit)
			json_object_array_add(a, json_object_new_string(t[i].name));
	return a;
}

#define BIT_NAMES_JSON(bits, t) bit_names_json(bits, t, sizeof(t) / sizeof(t[0]))

/* Who the process is: its job, task and rank, what it runs, where, in
 * which container, and its view queries. */
static void record_who(json_object *o, const struct lwm2_rank_record *r)
{
	json_object *id;

	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_WHO, o);
	ju_add(o, "runtime_names", BIT_NAMES_JSON(r->runtimes, runtime_names));
	ju_add(o, "language", json_object_new_string(lwm2_language_name(r->language)));
	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_WHERE, o);
	/* The identity as the node record has it. */
	id = json_object_new_object();
	lwm2_identity_to_json(r, id);
	ju_add(o, "identity", id);
	if (r->container_runtime[0] || r->container_image[0]) {
		/* version 3; the fields are terminated (validated) */
		json_object *c = json_object_new_object();
		lwm2_rank_part_to_json(r, LWM2_RP_DUMP_CONTAINER, c);
		ju_add(o, "container", c);
	}
	if (r->view_queries) {
		/* version 3: the application's view queries (lwm2_view(3)) */
		json_object *v = json_object_new_object();
		lwm2_rank_part_to_json(r, LWM2_RP_DUMP_VIEW, v);
		ju_add(o, "view", v);
	}
}

void lwm2_record_regions_json(const struct lwm2_rank_record *r, json_object *o, bool node_form)
{
	json_object *a;

	if (!r->regions_n && !r->regions_folded)
		return;
	a = json_object_new_array_ext((int)r->regions_n);
	/* validated: at most LWM2_REGIONS_MAX, names terminated */
	for (uint32_t i = 0; i < r->regions_n; i++) {
		const struct lwm2_region_entry *e = &r->regions[i];
		json_object *x;

		if (node_form) {
			x = json_object_new_array_ext(3);
			json_object_array_add(x, json_object_new_string(e->name));
			json_object_array_add(x, ju_u64(e->calls));
			json_object_array_add(x, ju_u64(e->ns));
		} else {
			x = json_object_new_object();
			ju_add(x, "name", json_object_new_string(e->name));
			ju_add(x, "calls", ju_u64(e->calls));
			ju_add(x, "ns", ju_u64(e->ns));
		}
		json_object_array_add(a, x);
	}
	ju_add(o, "regions", a);
	if (!r->regions_folded)
		return;
	ju_add(o, "regions_folded", ju_u64(r->regions_folded));
	if (node_form) {
		a = json_object_new_array_ext(2);
		json_object_array_add(a, ju_u64(r->regions_other_calls));
		json_object_array_add(a, ju_u64(r->regions_other_ns));
		ju_add(o, "regions_other", a);
	} else {
		ju_add(o, "regions_other_calls", ju_u64(r->regions_other_calls));
		ju_add(o, "regions_other_ns", ju_u64(r->regions_other_ns));
	}
}

void lwm2_record_threads_json(const struct lwm2_rank_record *r, json_object *o)
{
	json_object *a;

	/* one thread is its process: nothing to drill down to */
	if (r->threads_n <= 1 && !r->threads_folded)
		return;
	a = json_object_new_array_ext((int)r->threads_n);
	/* validated: at most LWM2_THREADS_MAX */
	for (uint32_t i = 0; i < r->threads_n; i++) {
		const struct lwm2_thread_entry *t = &r->threads[i];
		json_object *x = json_object_new_object(), *c = json_object_new_object();

		ju_add(x, "tid", json_object_new_int(t->tid));
		ju_add(x, "flags", ju_u64(t->flags));
		ju_add(x, "cpu_ns", ju_u64(t->cpu_ns));
		ju_add(x, "samples", ju_u64_array(t->samples, LWM2_NEARMARKS));
		for (int k = 0; k < LWM2_THREAD_NCOUNTERS; k++)
			if (t->counters[k])
				ju_add(c, lwm2_thread_counter_names[k], ju_u64(t->counters[k]));
		ju_add(x, "c", c);
		json_object_array_add(a, x);
	}
	ju_add(o, "threads", a);
	if (r->threads_folded) {
		ju_add(o, "threads_folded", ju_u64(r->threads_folded));
		ju_add(o, "threads_other_cpu_ns", ju_u64(r->threads_other_cpu_ns));
	}
}

/* What the process used: its times and resources as the kernel counts
 * them, its clock and sampling, the samples and the counters. */
static void record_usage(json_object *o, const struct lwm2_rank_record *r)
{
	json_object *m;

	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_USAGE, o);
	/* version 4: the event each counter role was counted with, where
	 * any was (the node record has them per node: "counter_events") */
	if (r->hwc_events[0])
		ju_add(o, "hwc_events", json_object_new_string(r->hwc_events));
	m = json_object_new_object();
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		ju_add(m, lwm2_earmark_names[e], ju_u64(r->samples[e]));
	ju_add(o, "samples", m);
	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_SAMPLES, o);
	m = json_object_new_object();
	/* a record of an older build (lwm2_record_upconvert) lacks the later
	 * counters: not measured, not 0 */
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		ju_add(m, lwm2_counter_names[c],
		       r->ncounters < LWM2_NCOUNTERS_V3 || (uint32_t)c < r->ncounters
		           ? ju_u64(r->counters[c])
		           : json_object_new_string("not measured"));
	ju_add(o, "counters", m);
}

/* The time series: per counter that is not 0 throughout, one value per
 * slice. */
static json_object *series_json(const struct lwm2_rank_record *r)
{
	const struct lwm2_slice *sl = lwm2_record_slices(r);
	json_object *m = json_object_new_object(), *cols, *a;

	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_SERIES, m);
	cols = json_object_new_object();
	for (int c = 0; c < LWM2_NCOUNTERS; c++) {
		bool any = false;
		for (uint32_t k = 0; k < r->nslices && !any; k++)
			any = sl[k].counters[c] != 0;
		if (!any)
			continue;
		a = json_object_new_array_ext((int)r->nslices);
		for (uint32_t k = 0; k < r->nslices; k++)
			json_object_array_add(a, ju_u64(sl[k].counters[c]));
		ju_add(cols, lwm2_counter_names[c], a);
	}
	ju_add(m, "c", cols);
	return m;
}

json_object *lwm2_record_to_json(const struct lwm2_rank_record *r)
{
	json_object *o = json_object_new_object(), *m;

	if (!o)
		return NULL;
	ju_add(o, "type", json_object_new_string("lwm2 rank record"));
	lwm2_rank_part_to_json(r, LWM2_RP_DUMP_HEAD, o);
	ju_add(o, "flag_names", BIT_NAMES_JSON(r->flags, flag_names));
	m = json_object_new_object();
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (r->missing & (1u << g))
			ju_add(m, lwm2_group_names[g],
			       json_object_new_string(r->missing_reason[g]));
	ju_add(o, "missing", m);
	record_who(o, r);
	record_usage(o, r);
	/* version 5: the program's named regions (lwm2_view(3)) */
	lwm2_record_regions_json(r, o, false);
	/* version 5: its threads */
	lwm2_record_threads_json(r, o);
	ju_add(o, "series", series_json(r));
	return o;
}
