/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Write N hand-built rank records into a directory, for the script tests
 * of the lwm2 command (they then need no preload library).  Process i
 * spends (i + 1) s of a 10 s run in MPI and writes (i + 1) MiB.  With
 * MKRECORDS_CONTAINER=RUNTIME:IMAGE in the environment they ran in that
 * container (the fuzz corpus's seeds).
 */
#include "mkrecord.h"

#include <stdio.h>

int main(int argc, char **argv)
{
	int n, dfd;
	/* Optional: slices per record (up to the writer's limit), the job and
	 * step they claim, a name prefix: the hostile cases of the SPANK tests
	 * plant records of the step's own job. */
	uint32_t nslices = argc > 3 ? (uint32_t)atoi(argv[3]) : 4;
	uint64_t job = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	uint32_t step = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 10) : 0;
	const char *prefix = argc > 6 ? argv[6] : "rank";

	if (argc < 3 || argc > 7 || (n = atoi(argv[2])) < 1 || nslices < 4 ||
	    nslices > LWM2_MAX_SLICES_LIMIT) {
		fprintf(stderr, "usage: mkrecords DIR N [SLICES [JOB [STEP [PREFIX]]]]\n");
		return 2;
	}
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (dfd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct lwm2_rank_record *r = mk_rec(nslices, i, "n1");
		char name[64];

		r->first_slice = 170000000;
		lwm2_record_set_container(r, getenv("MKRECORDS_CONTAINER"));
		r->job_id = job;
		r->step_id = step;
		r->counters[LWM2_C_mpi_p2p_ns] = (uint64_t)(i + 1) * 1000000000ull;
		r->counters[LWM2_C_mpi_p2p_calls] = 1000;
		r->counters[LWM2_C_mpi_p2p_bytes_sent] = 1000 * 512;
		r->counters[LWM2_C_posix_write_bytes] = (uint64_t)(i + 1) << 20;
		r->counters[LWM2_C_posix_write_ns] = 100000000;
		for (int k = 0; k < 4; k++)
			mk_slices(r)[k].counters[LWM2_C_posix_write_bytes] =
			    ((uint64_t)(i + 1) << 20) / 4;
		snprintf(name, sizeof(name), "%.40s%d.lwm2", prefix, i);
		if (write_rec(dfd, name, r) != 0) {
			perror(name);
			return 1;
		}
		free(r);
	}
	close(dfd);
	return 0;
}
