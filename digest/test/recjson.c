/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rank record's fields in its two JSON forms, to the byte: a process
 * entry of the node record (a stored format that other builds of lwm2
 * read: its keys and their order never change) and the rank record as
 * `lwm2 dump` prints it (what users read).  Both come from one table
 * (recjson.c); the expected texts are those the two writers printed
 * before they shared it.  The counters are left out of the comparison:
 * they come from the counter table, which grows (doc/HACKING.md).
 */
#include "digest_internal.h"
#include "mkrecord.h"
#include "tap.h"

#include <stdio.h>

/* Every field the table knows set, each to a value of its own; variant 1
 * a signalled process with groups not measured, no container, no view, no
 * counter events. */
static struct lwm2_rank_record *full_record(int v)
{
	struct lwm2_rank_record *r = calloc(1, sizeof(*r) + 3 * sizeof(struct lwm2_slice));

	*r = (struct lwm2_rank_record){
	    .version = 3,
	    .generation = 7,
	    .ncounters = LWM2_NCOUNTERS,
	    .flags = LWM2_F_MPI | LWM2_F_MPI_FINALIZED |
	             (v ? LWM2_F_SIGNALED | LWM2_F_IO_URING : LWM2_F_MMAP_WRITE),
	    .missing = v ? (1u << 0) | (1u << 3) : 0,
	    .job_id = 4242,
	    .step_id = 3,
	    .task_id = 20 + v,
	    .local_task_id = 30 + v,
	    .node_id = 1,
	    .mpi_rank = 10 + v,
	    .mpi_size = 64,
	    .mpi_thread_provided = 2,
	    .pid = 5000 + v,
	    .ppid = 4000 + v,
	    .runtimes = LWM2_RT_FORTRAN | LWM2_RT_OPENMP | LWM2_RT_MPI_OMPI,
	    .hostname = "nodeA",
	    .executable = "/home/u/bin/app.exe",
	    .mpi_library = "Open MPI v4.1.5",
	    .start_ns = 1700000000000000000ll + v,
	    .end_ns = 1700000025000000017ll + v,
	    .exit_status = v ? 0 : 3,
	    .term_signal = v ? 9 : 0,
	    .utime_us = 1111111 + v,
	    .stime_us = 222222 + v,
	    .maxrss_kb = 333333 + v,
	    .minflt = 44444 + v,
	    .majflt = 55 + v,
	    .nvcsw = 666 + v,
	    .nivcsw = 777 + v,
	    .clock_source = 1,
	    .clock_cost_ps = 8888 + v,
	    .threads_total = 9 + v,
	    .threads_max = 7 + v,
	    .sample_period_us = 10000 + v,
	    .sample_signal = 34 + v,
	    .samples = {100 + v, 200 + v, 300 + v, 400 + v},
	    .samples_main = 123 + v,
	    .slice_length_s = 10,
	    .nslices = 3,
	    .first_slice = 170000000,
	    .language = v ? LWM2_LANG_FORTRAN : LWM2_LANG_CXX,
	    .identity_flags = LWM2_ID_DONE,
	    .build_id_len = 20,
	    .runtime_libs = "gomp.1 gfortran.5",
	    .cuda_runtime_version = 12020,
	    .launch_ntasks = 64,
	    .launch_nnodes = 2,
	    .launch_cpus_per_task = 4,
	    .launch_omp_threads = v ? -1 : 4,
	    .view_queries = v ? 0 : 31,
	    .view_ns = v ? 0 : 987654,
	};
	for (int i = 0; i < 20; i++)
		r->build_id[i] = (uint8_t)(i * 11 + v);
	if (v) {
		strcpy(r->missing_reason[0], "reason zero");
		strcpy(r->missing_reason[3], "reason three");
	} else {
		strcpy(r->container_runtime, "pyxis");
		strcpy(r->container_image, "nvcr.io/nvidia/pytorch:24.01");
		strcpy(r->hwc_events, "cycles=perf::TASK-CLOCK");
	}
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		for (uint32_t k = 0; k < r->nslices; k++)
			mk_slices(r)[k].counters[c] = 10 * c + k;
	return r;
}

/* The process entry of r's node record, without its counters. */
static char *node_entry(struct lwm2_rank_record *r)
{
	struct lwm2_node_ident id = {.cluster = "c", .node = "nodeA"};
	json_object *node = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
	json_object *procs = ju_get(node, "procs", json_type_array);
	json_object *p = procs ? json_object_array_get_idx(procs, 0) : NULL;
	char *text = NULL;

	if (p) {
		json_object_object_del(p, "c");
		text = strdup(json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(node);
	return text;
}

/* r as `lwm2 dump` prints it, without its counters and series. */
static char *dump_text(const struct lwm2_rank_record *r)
{
	json_object *o = lwm2_record_to_json(r);
	char *text;

	json_object_object_del(o, "counters");
	json_object_object_del(ju_get(o, "series", json_type_object), "c");
	text = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return text;
}

static const char *const want_node[2] = {
    "{\"rank\":10,\"task\":20,\"pid\":5000,\"ppid\":4000,\"flags\":1120,\"exe\":\"app.exe\","
    "\"language\":2,\"runtimes\":37,"
    "\"build_id\":\"000b16212c37424d58636e79848f9aa5b0bbc6d1\","
    "\"mpi_library\":\"Open MPI v4.1.5\",\"runtime_libs\":\"gomp.1 gfortran.5\","
    "\"cuda_runtime\":12020,\"launch\":[64,2,4,4],\"start_ns\":1700000000000000000,"
    "\"end_ns\":1700000025000000017,\"exit\":3,\"signal\":0,\"threads_total\":9,"
    "\"threads_max\":7,\"period_us\":10000,\"samples\":[100,200,300,400],"
    "\"samples_main\":123,\"clock_source\":1,\"clock_ps\":8888,\"missing\":0,"
    "\"utime_us\":1111111,\"stime_us\":222222,\"maxrss_kb\":333333,\"view_queries\":31,"
    "\"view_ns\":987654}",
    "{\"rank\":11,\"task\":21,\"pid\":5001,\"ppid\":4001,\"flags\":624,\"exe\":\"app.exe\","
    "\"language\":3,\"runtimes\":37,"
    "\"build_id\":\"010c17222d38434e59646f7a85909ba6b1bcc7d2\","
    "\"mpi_library\":\"Open MPI v4.1.5\",\"runtime_libs\":\"gomp.1 gfortran.5\","
    "\"cuda_runtime\":12020,\"launch\":[64,2,4,-1],\"start_ns\":1700000000000000001,"
    "\"end_ns\":1700000025000000018,\"exit\":0,\"signal\":9,\"threads_total\":10,"
    "\"threads_max\":8,\"period_us\":10001,\"samples\":[101,201,301,401],"
    "\"samples_main\":124,\"clock_source\":1,\"clock_ps\":8889,\"missing\":9,"
    "\"reasons\":{\"posix\":\"reason zero\",\"hwc\":\"reason three\"},\"utime_us\":1111112,"
    "\"stime_us\":222223,\"maxrss_kb\":333334}",
};

static const char *const want_dump[2] = {
    "{\"type\":\"lwm2 rank record\",\"version\":3,\"generation\":7,\"flags\":1120,"
    "\"flag_names\":[\"mpi\",\"mpi_finalized\",\"mmap_write\"],\"missing\":{},"
    "\"job_id\":4242,\"step_id\":3,\"task_id\":20,\"local_task_id\":30,\"node_id\":1,"
    "\"mpi_rank\":10,\"mpi_size\":64,\"mpi_thread_provided\":2,\"pid\":5000,\"ppid\":4000,"
    "\"runtimes\":37,\"runtime_names\":[\"fortran\",\"openmp\",\"open-mpi\"],"
    "\"language\":\"c++\",\"hostname\":\"nodeA\","
    "\"executable\":\"\\/home\\/u\\/bin\\/app.exe\",\"mpi_library\":\"Open MPI v4.1.5\","
    "\"identity\":{\"build_id\":\"000b16212c37424d58636e79848f9aa5b0bbc6d1\","
    "\"mpi_library\":\"Open MPI v4.1.5\",\"runtime_libs\":\"gomp.1 gfortran.5\","
    "\"cuda_runtime\":12020,\"launch\":[64,2,4,4]},\"container\":{\"runtime\":\"pyxis\","
    "\"image\":\"nvcr.io\\/nvidia\\/pytorch:24.01\"},\"view\":{\"queries\":31,\"ns\":987654},"
    "\"start_ns\":1700000000000000000,\"end_ns\":1700000025000000017,\"exit_status\":3,"
    "\"term_signal\":0,\"utime_us\":1111111,\"stime_us\":222222,\"maxrss_kb\":333333,"
    "\"minflt\":44444,\"majflt\":55,\"nvcsw\":666,\"nivcsw\":777,\"clock_source\":1,"
    "\"clock_cost_ps\":8888,\"threads_total\":9,\"threads_max\":7,\"sample_period_us\":10000,"
    "\"sample_signal\":34,\"hwc_events\":\"cycles=perf::TASK-CLOCK\","
    "\"samples\":{\"compute\":100,\"mpi\":200,\"io\":300,\"cuda\":400},"
    "\"samples_main\":123,\"series\":{\"first_slice\":170000000,\"slice_length_s\":10,"
    "\"n\":3}}",
    "{\"type\":\"lwm2 rank record\",\"version\":3,\"generation\":7,\"flags\":624,"
    "\"flag_names\":[\"signaled\",\"mpi\",\"mpi_finalized\",\"io_uring\"],"
    "\"missing\":{\"posix\":\"reason zero\",\"hwc\":\"reason three\"},\"job_id\":4242,"
    "\"step_id\":3,\"task_id\":21,\"local_task_id\":31,\"node_id\":1,\"mpi_rank\":11,"
    "\"mpi_size\":64,\"mpi_thread_provided\":2,\"pid\":5001,\"ppid\":4001,\"runtimes\":37,"
    "\"runtime_names\":[\"fortran\",\"openmp\",\"open-mpi\"],\"language\":\"fortran\","
    "\"hostname\":\"nodeA\",\"executable\":\"\\/home\\/u\\/bin\\/app.exe\","
    "\"mpi_library\":\"Open MPI v4.1.5\","
    "\"identity\":{\"build_id\":\"010c17222d38434e59646f7a85909ba6b1bcc7d2\","
    "\"mpi_library\":\"Open MPI v4.1.5\",\"runtime_libs\":\"gomp.1 gfortran.5\","
    "\"cuda_runtime\":12020,\"launch\":[64,2,4,-1]},\"start_ns\":1700000000000000001,"
    "\"end_ns\":1700000025000000018,\"exit_status\":0,\"term_signal\":9,\"utime_us\":1111112,"
    "\"stime_us\":222223,\"maxrss_kb\":333334,\"minflt\":44445,\"majflt\":56,\"nvcsw\":667,"
    "\"nivcsw\":778,\"clock_source\":1,\"clock_cost_ps\":8889,\"threads_total\":10,"
    "\"threads_max\":8,\"sample_period_us\":10001,\"sample_signal\":35,"
    "\"samples\":{\"compute\":101,\"mpi\":201,\"io\":301,\"cuda\":401},\"samples_main\":124,"
    "\"series\":{\"first_slice\":170000000,\"slice_length_s\":10,\"n\":3}}",
};

int main(void)
{
	for (int v = 0; v < 2; v++) {
		struct lwm2_rank_record *r = full_record(v);
		char *node = node_entry(r), *dump = dump_text(r);

		is_str(node, want_node[v], "record %d: the node record's process entry", v);
		is_str(dump, want_dump[v], "record %d: lwm2 dump", v);
		free(node);
		free(dump);
		free(r);
	}
	return done_testing();
}
