/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Node records of known content for the jobcomp and `lwm2 digest` tests. */
#ifndef LWM2_TEST_MKNODE_H
#define LWM2_TEST_MKNODE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_digest.h"
#include "lwm2_record.h"

/*
 * One node record of step `step` of job `job` on `host`: nproc MPI
 * processes (ranks rank0...), each with 100 point-to-point calls of 64
 * bytes and 1 s of its 10 s in MPI.
 */
static inline json_object *mk_node(const char *cluster, uint32_t job, uint32_t step,
                                   const char *host, int nproc, int rank0)
{
	struct lwm2_node_ident id = {
	    .cluster = cluster, .job_id = job, .step_id = step, .node = host};
	struct lwm2_rank_record **recs = calloc((size_t)nproc, sizeof(*recs));
	json_object *node;
	int i;

	for (i = 0; i < nproc; i++) {
		struct lwm2_rank_record *r = calloc(1, sizeof(*r));

		r->mpi_rank = rank0 + i;
		r->task_id = rank0 + i;
		r->pid = 1000 + rank0 + i;
		r->flags = LWM2_F_MPI;
		r->threads_total = 1;
		r->job_id = job;
		r->step_id = step;
		r->slice_length_s = 10;
		r->start_ns = 1700000000000000000ll;
		r->end_ns = r->start_ns + 10000000000ll;
		strcpy(r->hostname, host);
		strcpy(r->executable, "/opt/app/bin/solver");
		r->counters[LWM2_C_mpi_p2p_ns] = 1000000000ull;
		r->counters[LWM2_C_mpi_p2p_calls] = 100;
		r->counters[LWM2_C_mpi_p2p_bytes_sent] = 100 * 64;
		recs[i] = r;
	}
	node = lwm2_node_merge_records(&id, recs, NULL, (size_t)nproc, NULL, NULL);
	for (i = 0; i < nproc; i++)
		free(recs[i]);
	free(recs);
	return node;
}

#endif /* LWM2_TEST_MKNODE_H */
