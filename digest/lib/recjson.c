/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A rank record as JSON, every field by name (what `lwm2 dump` prints). */
#include "digest_internal.h"

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

	ju_add(o, "job_id", ju_u64(r->job_id));
	ju_add(o, "step_id", json_object_new_int64(r->step_id));
	ju_add(o, "task_id", json_object_new_int(r->task_id));
	ju_add(o, "local_task_id", json_object_new_int(r->local_task_id));
	ju_add(o, "node_id", json_object_new_int(r->node_id));
	ju_add(o, "mpi_rank", json_object_new_int(r->mpi_rank));
	ju_add(o, "mpi_size", json_object_new_int(r->mpi_size));
	ju_add(o, "mpi_thread_provided", json_object_new_int(r->mpi_thread_provided));
	ju_add(o, "pid", json_object_new_int(r->pid));
	ju_add(o, "ppid", json_object_new_int(r->ppid));
	ju_add(o, "runtimes", json_object_new_int64(r->runtimes));
	ju_add(o, "runtime_names", BIT_NAMES_JSON(r->runtimes, runtime_names));
	ju_add(o, "language",
	       json_object_new_string(r->language == LWM2_LANG_C         ? "c"
	                              : r->language == LWM2_LANG_CXX     ? "c++"
	                              : r->language == LWM2_LANG_FORTRAN ? "fortran"
	                                                                 : "unknown"));
	ju_add(o, "hostname", json_object_new_string(r->hostname));
	ju_add(o, "executable", json_object_new_string(r->executable));
	ju_add(o, "mpi_library", json_object_new_string(r->mpi_library));
	/* The identity as the node record has it. */
	id = json_object_new_object();
	lwm2_identity_to_json(r, id);
	ju_add(o, "identity", id);
	if (r->container_runtime[0] || r->container_image[0]) {
		/* version 3; the fields are terminated (validated) */
		json_object *c = json_object_new_object();
		ju_add(c, "runtime", json_object_new_string(r->container_runtime));
		ju_add(c, "image", json_object_new_string(r->container_image));
		ju_add(o, "container", c);
	}
	if (r->view_queries) {
		/* version 3: the application's view queries (lwm2_view(3)) */
		json_object *v = json_object_new_object();
		ju_add(v, "queries", ju_u64(r->view_queries));
		ju_add(v, "ns", ju_u64(r->view_ns));
		ju_add(o, "view", v);
	}
}

/* What the process used: its times and resources as the kernel counts
 * them, its clock and sampling, the samples and the counters. */
static void record_usage(json_object *o, const struct lwm2_rank_record *r)
{
	json_object *m;

	ju_add(o, "start_ns", json_object_new_int64(r->start_ns));
	ju_add(o, "end_ns", json_object_new_int64(r->end_ns));
	ju_add(o, "exit_status", json_object_new_int(r->exit_status));
	ju_add(o, "term_signal", json_object_new_int(r->term_signal));
	ju_add(o, "utime_us", ju_u64(r->utime_us));
	ju_add(o, "stime_us", ju_u64(r->stime_us));
	ju_add(o, "maxrss_kb", ju_u64(r->maxrss_kb));
	ju_add(o, "minflt", ju_u64(r->minflt));
	ju_add(o, "majflt", ju_u64(r->majflt));
	ju_add(o, "nvcsw", ju_u64(r->nvcsw));
	ju_add(o, "nivcsw", ju_u64(r->nivcsw));
	ju_add(o, "clock_source", json_object_new_int64(r->clock_source));
	ju_add(o, "clock_cost_ps", json_object_new_int64(r->clock_cost_ps));
	ju_add(o, "threads_total", json_object_new_int64(r->threads_total));
	ju_add(o, "threads_max", json_object_new_int64(r->threads_max));
	ju_add(o, "sample_period_us", json_object_new_int64(r->sample_period_us));
	ju_add(o, "sample_signal", json_object_new_int(r->sample_signal));
	m = json_object_new_object();
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		ju_add(m, lwm2_earmark_names[e], ju_u64(r->samples[e]));
	ju_add(o, "samples", m);
	ju_add(o, "samples_main", ju_u64(r->samples_main));
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

	ju_add(m, "first_slice", ju_u64(r->first_slice));
	ju_add(m, "slice_length_s", json_object_new_int64(r->slice_length_s));
	ju_add(m, "n", json_object_new_int64(r->nslices));
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
	ju_add(o, "version", json_object_new_int64(r->version));
	ju_add(o, "generation", ju_u64(r->generation));
	ju_add(o, "flags", json_object_new_int64(r->flags));
	ju_add(o, "flag_names", BIT_NAMES_JSON(r->flags, flag_names));
	m = json_object_new_object();
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (r->missing & (1u << g))
			ju_add(m, lwm2_group_names[g],
			       json_object_new_string(r->missing_reason[g]));
	ju_add(o, "missing", m);
	record_who(o, r);
	record_usage(o, r);
	ju_add(o, "series", series_json(r));
	return o;
}
