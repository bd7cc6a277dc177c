/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes one jobcomp/lwm2 log line of known content for the `lwm2 report`
 * tests, its digest built by the library from node records merged from
 * rank records, as jobcomp/lwm2 builds it:
 *
 *   mkreportlog JOB USER NPROCS NNODES START [FIRST_NODE [regions] [threads]] > LOG
 *
 * NPROCS MPI processes on nodes n<FIRST_NODE>... (default 1), spread
 * evenly; each runs 100 s from START (epoch seconds) in 10 slices of 10 s,
 * 10 % in point-to-point and 5 % in collective MPI calls, except rank 3,
 * which spends 80 % in point-to-point calls (the outlier).  Processes on
 * the first node write 1 MB per slice to files; every process runs one
 * thread busy all the time.  With "regions", the program's named regions
 * too: every rank entered "solver" 10 times for 10 + rank seconds, ranks 0
 * to 3 "halo <exchange>" 1,000 times for 2 s, and rank 0 folded 3 more
 * names into 7 calls of 0.5 s (a record keeps only its busiest).  With
 * "threads", the even ranks ran three threads (threads as a scope): the
 * main one (90 s of CPU, samples 80 % compute and 20 % MPI, 20 s in MPI,
 * 1 s in file I/O of 10 MB, 2e11 cycles for 1e11 instructions), an I/O
 * helper that ended (5 s, samples 50 % compute and 50 % I/O, 4 s in I/O
 * of 1 MB) and an idle one without samples (0.01 s); rank 0 folded two
 * more; odd ranks ran one thread.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_digest.h"
#include "mkrecord.h"

#define NSL 10

/* The named regions of rank r (see above), as preload/region.c fills them. */
static void add_regions(struct lwm2_rank_record *rec, long r)
{
	struct lwm2_region_entry *e = rec->regions;

	snprintf(e[0].name, sizeof(e[0].name), "solver");
	e[0].calls = 10;
	e[0].ns = (uint64_t)(10 + r) * 1000000000ull;
	rec->regions_n = 1;
	if (r < 4) {
		snprintf(e[1].name, sizeof(e[1].name), "halo <exchange>");
		e[1].calls = 1000;
		e[1].ns = 2000000000ull;
		rec->regions_n = 2;
	}
	if (r == 0) {
		rec->regions_folded = 3;
		rec->regions_other_calls = 7;
		rec->regions_other_ns = 500000000ull;
	}
}

/* The threads of an even rank r (see above), as preload/thread_scope.c
 * fills them. */
static void add_threads(struct lwm2_rank_record *rec, long r)
{
	struct lwm2_thread_entry *t = rec->threads;

	t[0].tid = (int32_t)(10000 + 10 * r);
	t[0].flags = LWM2_TH_MAIN;
	t[0].cpu_ns = 90000000000ull;
	t[0].samples[LWM2_EARMARK_compute] = 7200;
	t[0].samples[LWM2_EARMARK_mpi] = 1800;
	t[0].counters[LWM2_TC_mpi_ns] = 20000000000ull;
	t[0].counters[LWM2_TC_io_ns] = 1000000000ull;
	t[0].counters[LWM2_TC_io_bytes] = 10000000;
	t[0].counters[LWM2_TC_cycles] = 200000000000ull;
	t[0].counters[LWM2_TC_instructions] = 100000000000ull;
	t[1].tid = t[0].tid + 1;
	t[1].flags = LWM2_TH_ENDED;
	t[1].cpu_ns = 5000000000ull;
	t[1].samples[LWM2_EARMARK_compute] = 250;
	t[1].samples[LWM2_EARMARK_io] = 250;
	t[1].counters[LWM2_TC_io_ns] = 4000000000ull;
	t[1].counters[LWM2_TC_io_bytes] = 1000000;
	t[2].tid = t[0].tid + 2;
	t[2].cpu_ns = 10000000;
	rec->threads_n = 3;
	rec->threads_total = 3;
	if (r == 0) {
		rec->threads_folded = 2;
		rec->threads_other_cpu_ns = 3000000;
		rec->threads_total = 5;
	}
}

int main(int argc, char **argv)
{
	uint32_t job;
	long nprocs, nnodes, first_node;
	int64_t start;
	const char *user;
	bool regions = false, threads = false;
	json_object **nodes, *digest;
	char nodelist[64];

	if (argc < 6) {
		fprintf(stderr, "usage: mkreportlog JOB USER NPROCS NNODES START [FIRST_NODE "
		                "[regions] [threads]]\n");
		return 2;
	}
	job = (uint32_t)atol(argv[1]);
	user = argv[2];
	nprocs = atol(argv[3]);
	nnodes = atol(argv[4]);
	start = atoll(argv[5]);
	first_node = argc > 6 ? atol(argv[6]) : 1;
	for (int a = 7; a < argc; a++) {
		regions |= strcmp(argv[a], "regions") == 0;
		threads |= strcmp(argv[a], "threads") == 0;
	}
	if (nprocs < 1 || nnodes < 1 || nnodes > nprocs || start < 0 || start % 10) {
		fprintf(stderr, "mkreportlog: bad arguments (START a multiple of 10)\n");
		return 2;
	}
	nodes = calloc((size_t)nnodes, sizeof(*nodes));
	for (long n = 0; n < nnodes; n++) {
		long r0 = n * nprocs / nnodes, r1 = (n + 1) * nprocs / nnodes;
		struct lwm2_rank_record **recs = calloc((size_t)(r1 - r0), sizeof(*recs));
		char host[32];
		struct lwm2_node_ident id = {.cluster = "lwm2", .job_id = job, .step_id = 0};

		snprintf(host, sizeof(host), "n%ld", first_node + n);
		id.node = host;
		id.expected_tasks = (uint32_t)(r1 - r0);
		for (long r = r0; r < r1; r++) {
			struct lwm2_rank_record *rec = mk_rec(NSL, (int32_t)r, host);
			struct lwm2_slice *sl = mk_slices(rec);
			uint64_t p2p = r == 3 ? 8000000000ull : 1000000000ull, coll = 500000000ull;

			rec->job_id = job;
			rec->step_id = 0;
			rec->start_ns = start * 1000000000ll;
			rec->end_ns = rec->start_ns + 100000000000ll;
			rec->first_slice = (uint64_t)start / 10;
			rec->sample_period_us = 10000;
			rec->samples[0] = 10000;
			rec->counters[LWM2_C_mpi_p2p_calls] = 1000;
			rec->counters[LWM2_C_mpi_p2p_bytes_sent] = 1000 * 4096;
			rec->counters[LWM2_C_mpi_coll_calls] = 100;
			for (int k = 0; k < NSL; k++) {
				sl[k].counters[LWM2_C_mpi_p2p_ns] = p2p;
				sl[k].counters[LWM2_C_mpi_coll_ns] = coll;
				rec->counters[LWM2_C_mpi_p2p_ns] += p2p;
				rec->counters[LWM2_C_mpi_coll_ns] += coll;
				if (n == 0) {
					sl[k].counters[LWM2_C_posix_write_bytes] = 1000000;
					sl[k].counters[LWM2_C_posix_write_calls] = 10;
					sl[k].counters[LWM2_C_posix_write_ns] = 100000000;
					rec->counters[LWM2_C_posix_write_bytes] += 1000000;
					rec->counters[LWM2_C_posix_write_calls] += 10;
					rec->counters[LWM2_C_posix_write_ns] += 100000000;
				}
			}
			if (regions)
				add_regions(rec, r);
			if (threads && r % 2 == 0)
				add_threads(rec, r);
			recs[r - r0] = rec;
		}
		nodes[n] = lwm2_node_merge_records(&id, recs, NULL, (size_t)(r1 - r0), NULL, NULL);
		for (long r = r0; r < r1; r++)
			free(recs[r - r0]);
		free(recs);
		if (!nodes[n]) {
			fprintf(stderr, "mkreportlog: couldn't merge node %ld\n", n);
			while (n-- > 0)
				json_object_put(nodes[n]);
			free(nodes);
			return 1;
		}
	}
	if (nnodes == 1)
		snprintf(nodelist, sizeof(nodelist), "n%ld", first_node);
	else
		snprintf(nodelist, sizeof(nodelist), "n[%ld-%ld]", first_node,
		         first_node + nnodes - 1);
	{
		struct lwm2_job_meta meta = {
		    .cluster = "lwm2",
		    .job_id = job,
		    .user = user,
		    .account = "a0",
		    .partition = "batch",
		    .nodes = nodelist,
		    .node_count = (uint32_t)nnodes,
		    .start = start,
		    .end = start + 100,
		    .state = "COMPLETED",
		};
		digest = lwm2_job_digest_build(&meta, nodes, (size_t)nnodes);
	}
	if (!digest) {
		fprintf(stderr, "mkreportlog: couldn't build the digest\n");
		return 1;
	}
	printf("{\"cluster\":\"lwm2\",\"job_id\":%" PRIu32 ",\"user\":\"%s\",\"uid\":5000,"
	       "\"account\":\"a0\",\"partition\":\"batch\",\"name\":\"solver\",\"nodes\":\"%s\","
	       "\"node_count\":%ld,\"cpus\":%ld,\"submit\":%" PRId64 ",\"start\":%" PRId64
	       ",\"end\":%" PRId64 ",\"state\":\"COMPLETED\",\"exit_code\":\"0:0\","
	       "\"status\":\"ok\",\"records_accepted\":%ld,\"records_rejected\":0,\"digest\":%s}\n",
	       job, user, nodelist, nnodes, nprocs, start - 10, start, start + 100, nnodes,
	       json_object_to_json_string_ext(digest, JSON_C_TO_STRING_PLAIN));
	json_object_put(digest);
	for (long n = 0; n < nnodes; n++)
		json_object_put(nodes[n]);
	free(nodes);
	return 0;
}
