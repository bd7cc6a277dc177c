/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes jobcomp/lwm2 log lines of known content for the `lwm2 stats` and
 * `lwm2 diff` tests: one job per line of stdin, as key=value words:
 *
 *   job=ID user=U account=A partition=P state=S end=EPOCH elapsed=SECONDS
 *   cpus=N (0: leave out) procs=N nodes=LIST nnodes=N cpt=N steps=0,1
 *   mpi=PCT[:PCT] (first process, the others) io=PCT threads=N cpi=X
 *   mpi.STEP=PCT (that step only) nodigest=1
 *   lang=N (enum lwm2_language of every process) mpilib=NAME (the MPI
 *   library every process names; steps=4294967291 is the batch script)
 *   container=RUNTIME:IMAGE (every process) container0=RUNTIME:IMAGE (the
 *   first process: another container, or none with container0=)
 *   cpu=SECONDS (CPU time of every process) memreq=MB (the job's memory
 *   request: the log line's mem_req_mb and the digest's fit block, which
 *   the line then has) rss=MB (every process's peak resident size)
 *
 * Every process runs 10 s; its MPI and I/O shares, sampled threads and
 * CPI are what the words say.  The digest is built by the library from
 * node records merged from rank records, as jobcomp/lwm2 builds it.
 * With --digest, only the digest JSON of each job is written.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_digest.h"
#include "mkrecord.h"

struct spec {
	long job, end, elapsed, cpus, procs, nnodes, cpt;
	char user[64], account[64], partition[64], state[32], nodes[128], steps[128];
	char container[256], container0[256], mpilib[64];
	bool has_container0;
	uint32_t lang;
	double mpi0, mpi, io, threads, cpi, cpu_s;
	long memreq, rss;
	double step_mpi[8]; /* < 0: as mpi */
	bool nodigest;
};

static void parse(char *line, struct spec *s)
{
	char *save = NULL;

	memset(s, 0, sizeof(*s));
	s->procs = 4;
	s->nnodes = 1;
	s->elapsed = 3600;
	s->end = 1700000000;
	s->mpi0 = s->mpi = -1;
	for (int i = 0; i < 8; i++)
		s->step_mpi[i] = -1;
	strcpy(s->user, "u");
	strcpy(s->account, "a");
	strcpy(s->partition, "batch");
	strcpy(s->state, "COMPLETED");
	strcpy(s->nodes, "n1");
	strcpy(s->steps, "0");
	for (char *w = strtok_r(line, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		char *v = strchr(w, '=');

		if (!v)
			continue;
		*v++ = '\0';
		if (!strcmp(w, "job"))
			s->job = atol(v);
		else if (!strcmp(w, "user"))
			snprintf(s->user, sizeof(s->user), "%s", v);
		else if (!strcmp(w, "account"))
			snprintf(s->account, sizeof(s->account), "%s", v);
		else if (!strcmp(w, "partition"))
			snprintf(s->partition, sizeof(s->partition), "%s", v);
		else if (!strcmp(w, "state"))
			snprintf(s->state, sizeof(s->state), "%s", v);
		else if (!strcmp(w, "nodes"))
			snprintf(s->nodes, sizeof(s->nodes), "%s", v);
		else if (!strcmp(w, "steps"))
			snprintf(s->steps, sizeof(s->steps), "%s", v);
		else if (!strcmp(w, "lang"))
			s->lang = (uint32_t)atol(v);
		else if (!strcmp(w, "mpilib"))
			snprintf(s->mpilib, sizeof(s->mpilib), "%s", v);
		else if (!strcmp(w, "end"))
			s->end = atol(v);
		else if (!strcmp(w, "elapsed"))
			s->elapsed = atol(v);
		else if (!strcmp(w, "cpus"))
			s->cpus = atol(v);
		else if (!strcmp(w, "procs"))
			s->procs = atol(v);
		else if (!strcmp(w, "nnodes"))
			s->nnodes = atol(v);
		else if (!strcmp(w, "cpt"))
			s->cpt = atol(v);
		else if (!strcmp(w, "mpi")) {
			char *colon = strchr(v, ':');

			s->mpi0 = atof(v);
			s->mpi = colon ? atof(colon + 1) : s->mpi0;
		} else if (!strncmp(w, "mpi.", 4) && atoi(w + 4) >= 0 && atoi(w + 4) < 8)
			s->step_mpi[atoi(w + 4)] = atof(v);
		else if (!strcmp(w, "io"))
			s->io = atof(v);
		else if (!strcmp(w, "threads"))
			s->threads = atof(v);
		else if (!strcmp(w, "cpi"))
			s->cpi = atof(v);
		else if (!strcmp(w, "container"))
			snprintf(s->container, sizeof(s->container), "%s", v);
		else if (!strcmp(w, "container0")) {
			snprintf(s->container0, sizeof(s->container0), "%s", v);
			s->has_container0 = true;
		} else if (!strcmp(w, "cpu"))
			s->cpu_s = atof(v);
		else if (!strcmp(w, "memreq"))
			s->memreq = atol(v);
		else if (!strcmp(w, "rss"))
			s->rss = atol(v);
		else if (!strcmp(w, "nodigest"))
			s->nodigest = atoi(v) != 0;
	}
	if (s->procs < 1)
		s->procs = 1;
	if (s->nnodes < 1 || s->nnodes > s->procs)
		s->nnodes = 1;
}

/* The node records of one step: procs processes spread over nnodes. */
static int add_step(const struct spec *s, uint32_t step, json_object **nodes, size_t *n)
{
	double mpi_first = s->step_mpi[step < 8 ? step : 0] >= 0 ? s->step_mpi[step] : s->mpi0;
	double mpi_rest = s->step_mpi[step < 8 ? step : 0] >= 0 ? s->step_mpi[step] : s->mpi;

	for (long k = 0; k < s->nnodes; k++) {
		char host[32];
		long lo = s->procs * k / s->nnodes, hi = s->procs * (k + 1) / s->nnodes;
		struct lwm2_rank_record **recs = calloc((size_t)(hi - lo), sizeof(*recs));
		struct lwm2_node_ident id = {
		    .cluster = "c1", .job_id = (uint64_t)s->job, .step_id = step, .node = host};

		snprintf(host, sizeof(host), "n%ld", k + 1);
		for (long i = lo; i < hi; i++) {
			struct lwm2_rank_record *r = mk_rec(0, (int32_t)i, host);
			double mpi = i == 0 ? mpi_first : mpi_rest;

			r->job_id = (uint64_t)s->job;
			r->step_id = step;
			r->language = s->lang;
			if (s->mpilib[0]) {
				snprintf(r->mpi_library, sizeof(r->mpi_library), "%s", s->mpilib);
				r->identity_flags |= LWM2_ID_DONE;
			}
			if (mpi >= 0) {
				r->counters[LWM2_C_mpi_p2p_ns] = (uint64_t)(mpi * 1e8 + 0.5);
				r->counters[LWM2_C_mpi_p2p_calls] = 100;
				r->counters[LWM2_C_mpi_p2p_bytes_sent] = 100 * 65536;
			} else {
				r->flags &= ~(uint32_t)LWM2_F_MPI;
			}
			r->counters[LWM2_C_posix_write_ns] = (uint64_t)(s->io * 1e8 + 0.5);
			r->counters[LWM2_C_posix_write_calls] = s->io > 0 ? 10 : 0;
			r->counters[LWM2_C_posix_write_bytes] = s->io > 0 ? 1 << 20 : 0;
			if (s->threads > 0) {
				r->sample_period_us = 10000;
				r->samples[0] = (uint64_t)(s->threads * 1000 + 0.5);
				r->threads_total = (uint32_t)(s->threads + 0.999);
			}
			if (s->cpi > 0) {
				r->counters[LWM2_C_hwc_instructions] = 1000000000ull;
				r->counters[LWM2_C_hwc_cycles] = (uint64_t)(s->cpi * 1e9 + 0.5);
			} else {
				r->missing |= 1u << LWM2_G_HWC;
				strcpy(r->missing_reason[LWM2_G_HWC], "no hardware counters");
			}
			if (s->cpu_s > 0)
				r->utime_us = (uint64_t)(s->cpu_s * 1e6 + 0.5);
			if (s->rss > 0)
				r->maxrss_kb = (uint64_t)s->rss * 1024;
			lwm2_record_set_container(r, i == 0 && s->has_container0 ? s->container0
			                                                         : s->container);
			recs[i - lo] = r;
		}
		nodes[*n] = lwm2_node_merge_records(&id, recs, NULL, (size_t)(hi - lo), NULL, NULL);
		for (long i = lo; i < hi; i++)
			free(recs[i - lo]);
		free(recs);
		if (!nodes[(*n)++])
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool digest_only = argc > 1 && !strcmp(argv[1], "--digest");
	char line[4096];

	while (fgets(line, sizeof(line), stdin)) {
		struct spec s;
		json_object *nodes[64], *d;
		size_t n = 0;
		char *save = NULL, steps[128];
		struct lwm2_job_meta meta;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		parse(line, &s);
		memset(&meta, 0, sizeof(meta));
		meta.cluster = "c1";
		meta.job_id = (uint64_t)s.job;
		meta.user = s.user;
		meta.account = s.account;
		meta.partition = s.partition;
		meta.nodes = s.nodes;
		meta.node_count = (uint32_t)s.nnodes;
		meta.cpus_per_task = (uint32_t)s.cpt;
		meta.start = s.end - s.elapsed;
		meta.end = s.end;
		meta.state = s.state;
		if (s.memreq > 0) {
			/* a job as jobcomp/lwm2 logs it since the fit block */
			meta.have_requests = true;
			meta.cpus = (uint32_t)s.cpus;
			meta.mem_req_mb = (uint64_t)s.memreq;
			meta.mem_req_per_node_mb = (uint64_t)((s.memreq + s.nnodes - 1) / s.nnodes);
		}
		if (!digest_only) {
			printf("{\"cluster\":\"c1\",\"job_id\":%ld,\"user\":\"%s\",\"uid\":%d,"
			       "\"account\":\"%s\",\"partition\":\"%s\",\"name\":\"app%ld\","
			       "\"nodes\":\"%s\",\"node_count\":%ld,",
			       s.job, s.user, 5000 + (int)(s.user[0] & 0x3f), s.account,
			       s.partition, s.job % 3, s.nodes, s.nnodes);
			if (s.cpus)
				printf("\"cpus\":%ld,", s.cpus);
			if (s.memreq > 0)
				printf("\"mem_req_mb\":%ld,", s.memreq);
			printf("\"submit\":%ld,\"start\":%ld,\"end\":%ld,\"state\":\"%s\","
			       "\"exit_code\":\"0:0\",",
			       s.end - s.elapsed - 10, s.end - s.elapsed, s.end, s.state);
		}
		if (s.nodigest) {
			if (!digest_only)
				printf(
				    "\"status\":\"no_records\",\"reason\":\"no node records\"}\n");
			continue;
		}
		snprintf(steps, sizeof(steps), "%s", s.steps);
		for (char *t = strtok_r(steps, ",", &save); t && n + (size_t)s.nnodes <= 64;
		     t = strtok_r(NULL, ",", &save))
			if (add_step(&s, (uint32_t)atol(t), nodes, &n) < 0) {
				fprintf(stderr, "mkstatslog: couldn't build node records\n");
				return 1;
			}
		if (!(d = lwm2_job_digest_build(&meta, nodes, n))) {
			fprintf(stderr, "mkstatslog: couldn't build the digest\n");
			return 1;
		}
		if (digest_only)
			printf("%s\n", json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
		else
			printf("\"status\":\"ok\",\"digest\":%s}\n",
			       json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
		json_object_put(d);
		for (size_t i = 0; i < n; i++)
			json_object_put(nodes[i]);
	}
	return 0;
}
