/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Record sizes, merge times and digest sizes, with the project's own record
 * writer (lwm2_file_header_init, lwm2_record_seal), node merge
 * (lwm2_node_merge) and digest builder (lwm2_job_digest_build, _compact):
 *
 *   merge sizes                     sizeof a record and a slice
 *   merge ranks DIR N SLICES        write N rank record files into DIR
 *   merge node DIR REPS             median ms of lwm2_node_merge over DIR
 *   merge job NODES PPN REPS        median ms of building a job digest from
 *                                   NODES node records of PPN processes, and
 *                                   the sizes of its full and compact forms
 *   merge stepend DIR SPOOL REPS    median ms of what slurmstepd does at
 *                                   step end: lwm2_node_merge over DIR and
 *                                   lwm2_node_write_signed into SPOOL
 *   merge log N                     a JSON-lines log of N digests on stdout,
 *                                   in the shape jobcomp/lwm2 appends
 *
 * The log holds small jobs: 2 nodes of 4 processes, 10 slices each.
 * The processes look like a 10-minute MPI job with I/O: every counter group
 * but CUDA is set, slices of 60 s, with values that differ per rank so that
 * min/avg/max and outliers are not trivial.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "lwm2_digest.h"
#include "lwm2_record.h"

#define JOB_ID  4242u
#define SLICE_S 60u
#define T0_NS   1700000000000000000ll

static struct lwm2_rank_record *mk_rank(uint32_t nslices, int rank, int node)
{
	size_t len = sizeof(struct lwm2_rank_record) + (size_t)nslices * sizeof(struct lwm2_slice);
	struct lwm2_rank_record *r = calloc(1, len);
	struct lwm2_slice *s;
	uint64_t f = 1000 + (uint64_t)(rank * 7919 % 997);

	if (!r)
		return NULL;
	s = (struct lwm2_slice *)(void *)(r + 1);
	r->job_id = JOB_ID;
	r->step_id = 0;
	r->task_id = rank;
	r->local_task_id = rank;
	r->node_id = node;
	r->mpi_rank = rank;
	r->mpi_size = 10000;
	r->pid = 10000 + rank;
	r->ppid = 9999;
	r->flags = LWM2_F_MPI | LWM2_F_MPI_FINALIZED;
	r->missing = 1u << LWM2_G_CUDA;
	strcpy(r->missing_reason[LWM2_G_CUDA], "the process never used CUDA");
	r->runtimes = LWM2_RT_MPI_OMPI | LWM2_RT_PTHREADS;
	snprintf(r->hostname, sizeof(r->hostname), "node%05d", node);
	strcpy(r->executable, "/opt/apps/solver/bin/solver");
	strcpy(r->mpi_library, "Open MPI v4.1.4, package: Debian OpenMPI");
	r->start_ns = T0_NS;
	r->end_ns = T0_NS + (int64_t)nslices * SLICE_S * 1000000000ll;
	r->utime_us = 590000000 + f;
	r->stime_us = 2000000 + f;
	r->maxrss_kb = 800000 + f;
	r->minflt = 200000 + f;
	r->nvcsw = 3000 + f;
	r->nivcsw = 400 + f;
	r->clock_source = LWM2_CLOCK_TSC;
	r->clock_cost_ps = 7000;
	r->threads_total = 3;
	r->threads_max = 3;
	r->sample_period_us = 10000;
	r->sample_signal = 41;
	r->samples[LWM2_EARMARK_compute] = 50000 + f;
	r->samples[LWM2_EARMARK_mpi] = 9000 + f;
	r->samples[LWM2_EARMARK_io] = 1000 + f;
	r->samples_main = 60000;
	r->slice_length_s = SLICE_S;
	r->nslices = nslices;
	r->first_slice = (uint64_t)(T0_NS / 1000000000ll) / SLICE_S;
	for (uint32_t i = 0; i < nslices; i++) {
		uint64_t *c = s[i].counters;

		for (int k = 0; k < LWM2_NCOUNTERS; k++)
			if (k < LWM2_C_cuda_calls || k > LWM2_C_cuda_other_copy_bytes)
				c[k] = f * (uint64_t)(k + 1) * (i + 1);
		for (int k = 0; k < LWM2_NCOUNTERS; k++)
			r->counters[k] += c[k];
	}
	return r;
}

/* The writer's file layout: header, then two slots, the newer sealed. */
static long write_rank(int dirfd, const char *name, const struct lwm2_rank_record *r)
{
	uint32_t cap = (uint32_t)lwm2_slot_capacity(r->nslices);
	size_t len = sizeof(struct lwm2_file_header) + 2 * (size_t)cap;
	char *buf = calloc(1, len);
	struct lwm2_rank_record *slot;
	long rc = -1;
	int fd;

	if (!buf)
		return -1;
	slot = (void *)(buf + sizeof(struct lwm2_file_header));
	lwm2_file_header_init((struct lwm2_file_header *)buf, cap);
	memcpy(slot, r, sizeof(*r) + (size_t)r->nslices * sizeof(struct lwm2_slice));
	slot->generation = 1;
	lwm2_record_seal(slot);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len)
		rc = (long)len;
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static json_object *mk_node(int node, int ppn, uint32_t nslices)
{
	struct lwm2_rank_record **recs = calloc((size_t)ppn, sizeof(*recs));
	char host[64];
	struct lwm2_node_ident id = {
	    .cluster = "bench", .job_id = JOB_ID, .step_id = 0, .node = host};
	json_object *o;

	snprintf(host, sizeof(host), "node%05d", node);
	if (!recs)
		return NULL;
	for (int i = 0; i < ppn; i++)
		if (!(recs[i] = mk_rank(nslices, node * ppn + i, node)))
			return NULL;
	id.expected_tasks = (uint32_t)ppn;
	o = lwm2_node_merge_records(&id, recs, NULL, (size_t)ppn, NULL, NULL);
	for (int i = 0; i < ppn; i++)
		free(recs[i]);
	free(recs);
	return o;
}

static const struct lwm2_job_meta meta = {
    .cluster = "bench",
    .job_id = JOB_ID,
    .user = "alice",
    .account = "physics",
    .partition = "batch",
    .nodes = "node[00000-09999]",
    .start = 1700000000,
    .end = 1700000600,
    .state = "COMPLETED",
};

static int cmd_ranks(const char *dir, int n, uint32_t nslices)
{
	int dirfd;
	long len = 0;

	mkdir(dir, 0700);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0)
		return 1;
	for (int i = 0; i < n; i++) {
		struct lwm2_rank_record *r = mk_rank(nslices, i, 0);
		char name[64];

		snprintf(name, sizeof(name), "%d.lwm2", 10000 + i);
		if (!r || (len = write_rank(dirfd, name, r)) < 0)
			return 1;
		free(r);
	}
	printf("ranks %d slices %u file_bytes %ld\n", n, nslices, len);
	close(dirfd);
	return 0;
}

static int cmd_node(const char *dir, int reps)
{
	struct lwm2_node_ident id = {
	    .cluster = "bench", .job_id = JOB_ID, .step_id = 0, .node = "node00000"};
	double *t = calloc((size_t)reps, sizeof(double));
	size_t bytes = 0;
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);

	if (dirfd < 0 || !t)
		return 1;
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now_ns();
		json_object *o = lwm2_node_merge(dirfd, &id, NULL, NULL);

		t[i] = (bench_now_ns() - t0) / 1e6;
		if (!o)
			return 1;
		bytes = strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	double m = bench_median(t, (size_t)reps);
	printf("node_merge_ms %.3f iqr_ms %.3f node_json_bytes %zu\n", m,
	       bench_iqr(t, (size_t)reps), bytes);
	return 0;
}

static int cmd_stepend(const char *dir, const char *spool, int reps)
{
	struct lwm2_node_ident id = {
	    .cluster = "bench", .job_id = JOB_ID, .step_id = 0, .node = "node00000"};
	double *t = calloc((size_t)reps, sizeof(double)),
	       *ts = calloc((size_t)reps, sizeof(double));
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	/* run.sh's private munged where the machine's does not answer */
	const char *sock = getenv("LWM2_BENCH_MUNGE_SOCKET");
	char err[256];

	if (dirfd < 0 || !t || !ts)
		return 1;
	mkdir(spool, 0700);
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now_ns(), t1;
		json_object *o = lwm2_node_merge(dirfd, &id, NULL, NULL);

		t1 = bench_now_ns();
		if (!o ||
		    (sock && *sock
		         ? lwm2_node_write_signed_socket(spool, &id, o, sock, err, sizeof(err))
		         : lwm2_node_write_signed(spool, &id, o, err, sizeof(err))) < 0) {
			fprintf(stderr, "couldn't write a signed node record: %s\n",
			        o ? err : "merge");
			return 1;
		}
		t[i] = (bench_now_ns() - t0) / 1e6;
		ts[i] = (bench_now_ns() - t1) / 1e6;
		json_object_put(o);
	}
	double m = bench_median(t, (size_t)reps);

	printf("stepend_ms %.3f iqr_ms %.3f sign_ms %.3f\n", m, bench_iqr(t, (size_t)reps),
	       bench_median(ts, (size_t)reps));
	return 0;
}

static int cmd_job(int nnodes, int ppn, int reps)
{
	json_object **nodes = calloc((size_t)nnodes, sizeof(*nodes));
	double *t = calloc((size_t)reps, sizeof(double)),
	       *tc = calloc((size_t)reps, sizeof(double));
	size_t full = 0, compact = 0, compact_max = 0;
	struct lwm2_job_meta m = meta;

	if (!nodes || !t || !tc)
		return 1;
	m.node_count = (uint32_t)nnodes;
	for (int i = 0; i < nnodes; i++)
		if (!(nodes[i] = mk_node(i, ppn, 10)))
			return 1;
	for (int i = 0; i < reps; i++) {
		double t0 = bench_now_ns();
		json_object *d = lwm2_job_digest_build(&m, nodes, (size_t)nnodes);
		double t1 = bench_now_ns();
		char *c = d ? lwm2_job_digest_compact(d, 0) : NULL;

		t[i] = (t1 - t0) / 1e6;
		tc[i] = (bench_now_ns() - t1) / 1e6;
		if (!c)
			return 1;
		compact = strlen(c);
		free(c);
		if ((c = lwm2_job_digest_compact(d, LWM2_COMPACT_CAP_MAX))) {
			compact_max = strlen(c);
			free(c);
		}
		full = strlen(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
		json_object_put(d);
	}
	double mb = bench_median(t, (size_t)reps);

	printf("nodes %d ppn %d build_ms %.3f iqr_ms %.3f compact_ms %.3f full_bytes %zu "
	       "compact_bytes %zu compact_uncut_bytes %zu\n",
	       nnodes, ppn, mb, bench_iqr(t, (size_t)reps), bench_median(tc, (size_t)reps), full,
	       compact, compact_max);
	for (int i = 0; i < nnodes; i++)
		json_object_put(nodes[i]);
	free(nodes);
	return 0;
}

static int cmd_log(long n)
{
	json_object *nodes[2], *d, *job = NULL;
	struct lwm2_job_meta m = meta;

	m.node_count = 2;
	m.nodes = "node[00000-00001]";
	for (int i = 0; i < 2; i++)
		if (!(nodes[i] = mk_node(i, 4, 10)))
			return 1;
	if (!(d = lwm2_job_digest_build(&m, nodes, 2)))
		return 1;
	json_object_object_get_ex(d, "job", &job);
	for (long i = 0; i < n; i++) {
		uint32_t id = 100000 + (uint32_t)i;
		int64_t end = 1700000000 + i;

		if (job)
			json_object_object_add(job, "job_id", json_object_new_int64(id));
		printf("{\"cluster\":\"bench\",\"job_id\":%" PRIu32
		       ",\"user\":\"u%ld\",\"uid\":%ld,"
		       "\"account\":\"a%ld\",\"partition\":\"batch\",\"name\":\"job%ld\","
		       "\"nodes\":\"node[00000-00001]\",\"node_count\":2,\"submit\":%" PRId64
		       ",\"start\":%" PRId64 ",\"end\":%" PRId64 ",\"state\":\"COMPLETED\","
		       "\"exit_code\":\"0:0\",\"status\":\"ok\",\"records_accepted\":2,"
		       "\"records_rejected\":0,\"digest\":%s}\n",
		       id, i % 50, 5000 + i % 50, i % 7, i, end - 1100, end - 600, end,
		       json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
	}
	json_object_put(d);
	for (int i = 0; i < 2; i++)
		json_object_put(nodes[i]);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (strcmp(cmd, "sizes") == 0) {
		printf("record_bytes %zu slice_bytes %zu header_bytes %zu slot_default_bytes %zu\n",
		       sizeof(struct lwm2_rank_record), sizeof(struct lwm2_slice),
		       sizeof(struct lwm2_file_header),
		       lwm2_slot_capacity(LWM2_MAX_SLICES_DEFAULT));
		return 0;
	}
	if (strcmp(cmd, "ranks") == 0 && argc == 5)
		return cmd_ranks(argv[2], atoi(argv[3]), (uint32_t)atoi(argv[4]));
	if (strcmp(cmd, "node") == 0 && argc == 4)
		return cmd_node(argv[2], atoi(argv[3]));
	if (strcmp(cmd, "job") == 0 && argc == 5)
		return cmd_job(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (strcmp(cmd, "stepend") == 0 && argc == 5)
		return cmd_stepend(argv[2], argv[3], atoi(argv[4]));
	if (strcmp(cmd, "log") == 0 && argc == 3)
		return cmd_log(atol(argv[2]));
	fprintf(stderr, "usage: merge sizes | ranks DIR N SLICES | node DIR REPS | "
	                "job NODES PPN REPS | stepend DIR SPOOL REPS | log N\n");
	return 2;
}
