/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Timing of the digest library's two budgets: merging 256 rank records
 * into a node record (target: 20 ms) and building a job digest from
 * 10,000 node records (target: 1 s).  Not a test (timings depend on the
 * machine): `make -C digest bench_digest && digest/bench_digest`.
 * Arguments: slices per record, node records, processes per node record.
 */
#include "digest_internal.h"
#include "mkrecord.h"

#include <stdio.h>
#include <time.h>

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double wall(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int nslices = argc > 1 ? atoi(argv[1]) : 256;
	int nnodes = argc > 2 ? atoi(argv[2]) : 10000;
	int ppn = argc > 3 ? atoi(argv[3]) : 8;
	char dir[] = "/tmp/lwm2-bench-XXXXXX";
	struct lwm2_node_ident id = {.cluster = "c", .node = "n1"};
	double best_w = 1e9, best_c = 1e9;
	json_object **nv;
	struct lwm2_rank_record **recs;
	int dfd;

	if (!mkdtemp(dir) || (dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return 1;
	for (int i = 0; i < 256; i++) {
		char n[32];
		struct lwm2_rank_record *r = mk_rec((uint32_t)nslices, i, "n1");
		r->first_slice = 170000000;
		for (int c = 0; c < LWM2_NCOUNTERS; c++)
			r->counters[c] = (uint64_t)(i * c + 1);
		for (uint32_t k = 0; k < r->nslices; k++)
			for (int c = 0; c < 8; c++)
				mk_slices(r)[k].counters[c] = k + (uint32_t)c;
		snprintf(n, sizeof(n), "r%d.lwm2", i);
		if (write_rec(dfd, n, r) != 0)
			return 1;
		free(r);
	}
	for (int rep = 0; rep < 5; rep++) {
		double w = wall(), c = cpu();
		json_object *nd = lwm2_node_merge(dfd, &id, NULL, NULL);
		w = wall() - w;
		c = cpu() - c;
		if (w < best_w)
			best_w = w;
		if (c < best_c)
			best_c = c;
		json_object_put(nd);
	}
	printf("merge of 256 rank records, %d slices each: %.1f ms wall, %.1f ms CPU (best of 5)\n",
	       nslices, best_w * 1e3, best_c * 1e3);
	for (int i = 0; i < 256; i++) {
		char n[32];
		snprintf(n, sizeof(n), "r%d.lwm2", i);
		unlinkat(dfd, n, 0);
	}
	close(dfd);
	rmdir(dir);

	nv = calloc((size_t)nnodes, sizeof(*nv));
	recs = calloc((size_t)ppn, sizeof(*recs));
	for (int k = 0; k < nnodes; k++) {
		char h[32];
		snprintf(h, sizeof(h), "node%05d", k);
		struct lwm2_node_ident nid = {.cluster = "c", .job_id = 1, .node = h};
		for (int i = 0; i < ppn; i++) {
			recs[i] = mk_rec(16, k * ppn + i, h);
			recs[i]->job_id = 1;
			recs[i]->first_slice = 170000000;
			recs[i]->counters[LWM2_C_mpi_p2p_ns] =
			    (uint64_t)((k * ppn + i) % 997) * 1000000;
			recs[i]->counters[LWM2_C_mpi_p2p_calls] = 10;
			for (int c = 0; c < 16; c++)
				mk_slices(recs[i])[c].counters[LWM2_C_mpi_p2p_ns] = (uint64_t)c;
		}
		nv[k] = lwm2_node_merge_records(&nid, recs, NULL, (size_t)ppn, NULL, NULL);
		for (int i = 0; i < ppn; i++)
			free(recs[i]);
	}
	{
		struct lwm2_job_meta meta = {
		    .cluster = "c", .job_id = 1, .node_count = (uint32_t)nnodes};
		double w = wall(), c = cpu(), w2, c2;
		json_object *d = lwm2_job_digest_build(&meta, nv, (size_t)nnodes);
		char *compact;
		w = wall() - w;
		c = cpu() - c;
		w2 = wall();
		c2 = cpu();
		compact = lwm2_job_digest_compact(d, 0);
		w2 = wall() - w2;
		c2 = cpu() - c2;
		printf(
		    "job digest from %d node records of %d processes: %.1f ms wall, %.1f ms CPU; "
		    "compact form %zu bytes in %.2f ms wall, %.2f ms CPU\n",
		    nnodes, ppn, w * 1e3, c * 1e3, compact ? strlen(compact) : 0, w2 * 1e3,
		    c2 * 1e3);
		free(compact);
		json_object_put(d);
	}
	for (int k = 0; k < nnodes; k++)
		json_object_put(nv[k]);
	free(nv);
	free(recs);
	return 0;
}
