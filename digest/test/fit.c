/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The digest's "fit" block from made-up records: each verdict, the advice
 * where the fit is poor and none where it is not, "not measured" for a
 * request that is unknown, and the text digest's lines.
 */
#include "digest_internal.h"
#include "lwm2_keys.h"
#include "mkrecord.h"
#include "tap.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define START 1700000000

/* Record flags every process of mk_node gets (LWM2_F_MPI: MPI ranks). */
static uint32_t mk_flags;

/* One node record of nproc processes on host, each with cpu_s seconds of
 * CPU time and a peak of rss_kb; cuda: processes that made CUDA calls. */
static json_object *mk_node(const char *host, int nproc, double cpu_s, uint64_t rss_kb, int cuda)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 5, .step_id = 0, .node = host};
	struct lwm2_rank_record *recs[16];
	json_object *node;

	for (int i = 0; i < nproc; i++) {
		recs[i] = mk_rec(1, i, host);
		recs[i]->job_id = 5;
		recs[i]->utime_us = (uint64_t)(cpu_s * 1e6 * 0.9);
		recs[i]->stime_us = (uint64_t)(cpu_s * 1e6) - recs[i]->utime_us;
		recs[i]->maxrss_kb = rss_kb;
		recs[i]->flags |= mk_flags;
		if (i < cuda)
			recs[i]->counters[LWM2_C_cuda_calls] = 100;
	}
	node = lwm2_node_merge_records(&id, recs, NULL, (size_t)nproc, NULL, NULL);
	for (int i = 0; i < nproc; i++)
		free(recs[i]);
	return node;
}

static json_object *fit_of(json_object *d, const char *what)
{
	json_object *f = d ? ju_get(d, LWM2_KEY_FIT, json_type_object) : NULL;

	return f ? ju_get(f, what, json_type_object) : NULL;
}

static const char *str_of(json_object *p, const char *key)
{
	const char *s = p ? ju_str(p, key) : NULL;

	return s ? s : "(none)";
}

static char *text_of(json_object *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	lwm2_digest_render(d, f, NULL);
	fclose(f);
	return buf;
}

/* The base job: 4 cores on one node for 1000 s, 2 GiB asked, 2 h limit,
 * no GPU. */
static struct lwm2_job_meta base(void)
{
	struct lwm2_job_meta m = {.cluster = "c1",
	                          .job_id = 5,
	                          .nodes = "n1",
	                          .node_count = 1,
	                          .start = START,
	                          .end = START + 1000,
	                          .state = "COMPLETED",
	                          .have_requests = true,
	                          .cpus = 4,
	                          .time_limit_s = 7200,
	                          .mem_req_mb = 2048,
	                          .mem_req_per_node_mb = 2048,
	                          .gpus = 0,
	                          .gpus_known = true};
	return m;
}

/* one thread busy out of 4 cores, 300 MB of 2 GiB */
static void busy_thread(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;
	double eff = -1;
	char *text;

	m = base();
	node = mk_node("n1", 1, 1000, 300 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	ok(p && ju_num(p, LWM2_KEY_EFFICIENCY, &eff) && eff > 0.24 && eff < 0.26,
	   "one busy thread on 4 cores: efficiency about 0.25 (%g)", eff);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "CPU verdict low");
	is_str(str_of(p, LWM2_KEY_ADVICE), "--ntasks=1", "CPU advice: one task");
	is_int(ju_int_or(p, LWM2_KEY_ALLOCATED_CORES, 0), 4, "allocated cores");
	is_int(ju_int_or(p, LWM2_KEY_ELAPSED_S, 0), 1000, "elapsed");
	p = fit_of(d, LWM2_KEY_FIT_MEMORY);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "300 MB of 2 GiB: memory low");
	is_int(ju_int_or(p, LWM2_KEY_PEAK_MB, 0), 300, "peak 300 MB");
	is_int(ju_int_or(p, LWM2_KEY_REQUESTED_MB, 0), 2048, "requested 2048 MB");
	is_str(str_of(p, LWM2_KEY_SOURCE), "processes", "the peak is the processes' sum");
	is_str(str_of(p, LWM2_KEY_ADVICE), "--mem=384M", "memory advice: 300 MB + 25 %% in 128M");
	p = fit_of(d, LWM2_KEY_FIT_TIME);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "1000 s of 2 h: time low");
	is_str(str_of(p, LWM2_KEY_ADVICE), "--time=00:30:00",
	       "time advice: 1000 s + 50 %% in 15 min steps");
	p = fit_of(d, LWM2_KEY_FIT_GPU);
	is_str(str_of(p, LWM2_KEY_VERDICT), "ok", "no GPU asked: ok");
	ok(p && !ju_str(p, LWM2_KEY_ADVICE), "no GPU advice");
	text = text_of(d);
	ok(text && strstr(text, "CPU: 1.0 of 4 cores busy (25 %) -> next time: --ntasks=1"),
	   "text: the CPU line");
	ok(text && strstr(text, "Memory: peak 300 MB of 2048 MB asked per node") &&
	       strstr(text, "-> next time: --mem=384M"),
	   "text: the memory line");
	ok(text && strstr(text, "Time: ran 00:16:40 of a 02:00:00 limit -> next time: "
	                        "--time=00:30:00"),
	   "text: the time line");
	ok(text && strstr(text, "  GPU: none allocated\n"), "text: no GPU allocated");
	if (text && !strstr(text, "Fit (asked"))
		diag("%s", text);
	free(text);
	{
		char *c = lwm2_job_digest_compact(d, 0);
		char err[200] = "";
		json_object *cd = c ? lwm2_digest_parse(c, strlen(c), err, sizeof(err)) : NULL;
		json_object *f = cd ? ju_get(cd, LWM2_KEY_FIT, json_type_object) : NULL;

		ok(f && ju_get(f, LWM2_KEY_FIT_CPU, json_type_object) &&
		       !ju_get(f, LWM2_KEY_NODES, json_type_array),
		   "compact form: the fit block without its per-node list %s", err);
		json_object_put(cd);
		free(c);
	}
	json_object_put(d);
	json_object_put(node);
}

/* what it asked for, used: no advice at all */
static void used_what_asked(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	char *text;

	m = base();
	m.end = START + 5000; /* of 7200 s */
	node = mk_node("n1", 4, 4800, 400 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_VERDICT), "ok", "4 busy of 4: ok");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_MEMORY), LWM2_KEY_VERDICT), "ok",
	       "1600 MB of 2048: ok");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_TIME), LWM2_KEY_VERDICT), "ok", "5000 s of 7200: ok");
	text = text_of(d);
	ok(text && strstr(text, "Fit (asked") && !strstr(text, "next time"),
	   "a job that used what it asked for gets no advice");
	free(text);
	json_object_put(d);
	json_object_put(node);
}

/* 24 h asked, 40 min run; 8 cores as 2 tasks of 4, 3 busy */
static void long_limit(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;

	m = base();
	m.cpus = 8;
	m.cpus_per_task = 4;
	m.time_limit_s = 86400;
	m.end = START + 2400;
	node = mk_node("n1", 3, 2400, 500 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_TIME), LWM2_KEY_ADVICE), "--time=01:00:00",
	       "40 min of 24 h: --time=01:00:00");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_ADVICE), "--cpus-per-task=2",
	       "3 busy of 2 tasks x 4: --cpus-per-task=2");
	json_object_put(d);
	json_object_put(node);
}

/* one core, mostly idle: low, but nothing smaller to ask for */
static void one_core(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;
	char *text;

	m = base();
	m.cpus = 1;
	node = mk_node("n1", 1, 100, 400 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "one core, 10 %% busy: low");
	ok(p && !ju_str(p, LWM2_KEY_ADVICE), "no advice to ask for the one core it has");
	text = text_of(d);
	ok(text && strstr(text, "CPU: 0.1 of 1 core busy (10 %)\n"), "text: 1 core, no advice");
	if (text && !strstr(text, "CPU: 0.1 of 1 core busy (10 %)\n"))
		diag("%s", text);
	free(text);
	json_object_put(d);
	json_object_put(node);
}

/* a short job: time low, no advice */
static void short_job(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;

	m = base();
	m.end = START + 60;
	node = mk_node("n1", 4, 60, 1800 * 1024 / 4, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_TIME);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "60 s of 2 h: low");
	ok(p && !ju_str(p, LWM2_KEY_ADVICE), "a short job gets no time advice");
	json_object_put(d);
	json_object_put(node);
}

/* a GPU allocated, no CUDA activity; then 2 of 2, one used */
static void gpus(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;
	int64_t v;
	char *text;

	m = base();
	m.gpus = 1;
	node = mk_node("n1", 4, 1000, 400 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_GPU);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "GPU allocated, unused: low");
	ok(p && ju_int(p, LWM2_KEY_USED, &v) && v == 0, "used 0");
	is_str(str_of(p, LWM2_KEY_ADVICE), "--gres=none", "GPU advice: none");
	text = text_of(d);
	ok(text && strstr(text, "GPU: 0 of 1 allocated saw CUDA activity -> next time: "
	                        "--gres=none"),
	   "text: the GPU line");
	free(text);
	json_object_put(d);
	json_object_put(node);
	m.gpus = 2;
	node = mk_node("n1", 4, 1000, 400 * 1024, 1);
	d = lwm2_job_digest_build(&m, &node, 1);
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_GPU), LWM2_KEY_ADVICE), "--gres=gpu:1",
	       "2 GPUs, 1 used: --gres=gpu:1");
	json_object_put(d);
	json_object_put(node);
}

/* requests not known: not measured, never 0 */
static void requests_unknown(void)
{
	static const struct {
		const char *part, *text;
	} why[] = {
	    {LWM2_KEY_FIT_CPU, "allocated cores unknown"},
	    {LWM2_KEY_FIT_MEMORY, "no memory request known"},
	    {LWM2_KEY_FIT_TIME, "time limit unknown"},
	    {LWM2_KEY_FIT_GPU, "GPUs allocated unknown"},
	};
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;
	char *text;

	m = base();
	m.cpus = 0;
	m.mem_req_mb = m.mem_req_per_node_mb = 0;
	m.time_limit_s = 0;
	m.gpus_known = false;
	node = mk_node("n1", 1, 1000, 300 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	is_str(str_of(p, LWM2_KEY_VERDICT), "not_measured", "cores unknown: CPU not measured");
	ok(p && !ju_get(p, LWM2_KEY_EFFICIENCY, json_type_double) &&
	       !ju_get(p, LWM2_KEY_ALLOCATED_CORES, json_type_int),
	   "no figure written for it");
	p = fit_of(d, LWM2_KEY_FIT_MEMORY);
	is_str(str_of(p, LWM2_KEY_VERDICT), "not_measured", "no memory request: not measured");
	ok(p && !ju_get(p, LWM2_KEY_REQUESTED_MB, json_type_int) && !ju_str(p, LWM2_KEY_ADVICE),
	   "no requested_mb, no advice");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_TIME), LWM2_KEY_VERDICT), "not_measured",
	       "limit unknown: time not measured");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_GPU), LWM2_KEY_VERDICT), "not_measured",
	       "GPUs unknown: not measured");
	for (size_t i = 0; i < sizeof(why) / sizeof(why[0]); i++)
		is_str(str_of(fit_of(d, why[i].part), LWM2_KEY_WHY), why[i].text,
		       "%s: why not measured", why[i].part);
	text = text_of(d);
	ok(text && strstr(text, "  CPU: not measured (allocated cores unknown)\n") &&
	       strstr(text, "  Memory: not measured (no memory request known)\n") &&
	       strstr(text, "  (peak 300 MB per node, sum of the processes' peaks)\n") &&
	       strstr(text, "  Time: not measured (time limit unknown)\n") &&
	       strstr(text, "  GPU: not measured (GPUs allocated unknown)\n"),
	   "text: not measured, each, and why");
	if (text && !strstr(text, "CPU: not measured (allocated"))
		diag("%s", text);
	free(text);
	json_object_put(d);
	json_object_put(node);
}

/* no time limit at all (INFINITE): the run time, no advice, however
 * long the job ran */
static void time_unlimited(void)
{
	struct lwm2_job_meta m = base();
	json_object *node = mk_node("n1", 1, 1000, 300 * 1024, 0), *d, *p;
	char *text;

	m.time_limit_s = 0;
	m.time_unlimited = true;
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_TIME);
	is_str(str_of(p, LWM2_KEY_VERDICT), "unlimited", "no time limit: verdict unlimited");
	is_int(p ? ju_int_or(p, LWM2_KEY_ELAPSED_S, -1) : -1, m.end - m.start,
	       "no time limit: the run time");
	ok(p && !ju_get(p, LWM2_KEY_LIMIT_S, json_type_int) && !ju_str(p, LWM2_KEY_ADVICE),
	   "no time limit: no limit_s, no advice");
	text = text_of(d);
	ok(text && strstr(text, "  Time: ran 00:16:40, no time limit\n"),
	   "text: the run time, no time limit");
	if (text && !strstr(text, "no time limit"))
		diag("%s", text);
	free(text);
	json_object_put(d);
	json_object_put(node);
}

/* a job of under a second (Slurm's start and end the same second): the
 * CPU time against the processes' own span */
static void sub_second(void)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 5, .step_id = 0, .node = "n1"};
	struct lwm2_job_meta m = base();
	struct lwm2_rank_record *r = mk_rec(1, 0, "n1");
	json_object *node, *d, *p;
	double eff = -1;
	char *text;

	r->job_id = 5;
	r->end_ns = r->start_ns + 500000000; /* 0.5 s */
	r->utime_us = 400000;                /* 0.4 s of CPU time */
	node = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
	m.cpus = 1;
	m.end = m.start;
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	ok(p && ju_num(p, LWM2_KEY_EFFICIENCY, &eff) && fabs(eff - 0.8) < 1e-9,
	   "0.4 s of CPU time in 0.5 s on one core: 80 %% (%g)", eff);
	text = text_of(d);
	ok(text && strstr(text, "  CPU: 0.8 of 1 core busy (80 %)"),
	   "text: 0.8 of 1 core busy, the efficiency's figure");
	if (text && !strstr(text, "0.8 of 1 core"))
		diag("%s", text);
	free(text);
	json_object_put(d);
	json_object_put(node);
	free(r);
}

/* memory over the request (no cgroup confinement), and the forms */
static void memory_over(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;
	json_object *p;
	char buf[64];

	m = base();
	node = mk_node("n1", 4, 1000, 1000 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_MEMORY);
	is_str(str_of(p, LWM2_KEY_VERDICT), "over", "4000 MB of 2048: over");
	is_str(str_of(p, LWM2_KEY_ADVICE), "--mem=5G", "advice: 4000 MB + 25 %% in GiB");
	json_object_put(d);
	json_object_put(node);
	lwm2_fit_time_str(90061, buf, sizeof(buf));
	is_str(buf, "1-01:01:01", "a day and more: D-HH:MM:SS");
}

/* no requests (a step digest, lwm2 merge): no block */
static void no_requests(void)
{
	struct lwm2_job_meta m;
	json_object *node;
	json_object *d;

	m = base();
	m.have_requests = false;
	node = mk_node("n1", 1, 10, 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	ok(d && !ju_get(d, LWM2_KEY_FIT, json_type_object), "no requests: no fit block");
	json_object_put(d);
	json_object_put(node);
}

/* Slurm's whole seconds: a job of 2.9 s whose one process kept a
 * core busy reads as 2 s; the process's own span (ns) is the time
 * its CPU time is set against, not the 1.4 busy cores 2 s would give */
static void whole_seconds(void)
{
	struct lwm2_job_meta m;
	json_object *d;
	json_object *p;
	double eff = -1;

	{
		struct lwm2_node_ident id = {.cluster = "c1", .job_id = 5, .node = "n1"};
		struct lwm2_rank_record *r = mk_rec(1, 0, "n1");
		json_object *nd;

		r->job_id = 5;
		r->start_ns = (int64_t)START * 1000000000 + 50000000;
		r->end_ns = r->start_ns + 2900000000ll;
		r->utime_us = 2800000;
		r->stime_us = 0;
		nd = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
		free(r);
		m = base();
		m.end = START + 2;
		d = lwm2_job_digest_build(&m, &nd, 1);
		p = fit_of(d, LWM2_KEY_FIT_CPU);
		eff = -1;
		if (p)
			ju_num(p, LWM2_KEY_EFFICIENCY, &eff);
		ok(eff > 0.23 && eff < 0.25,
		   "2.9 s read as 2 s: efficiency against the process's span (%g)", eff);
		is_str(str_of(p, LWM2_KEY_ADVICE), "--ntasks=1", "2.9 s read as 2 s: one task");
		json_object_put(d);
		json_object_put(nd);
	}
}

/* The job's cgroup peak (slurmstepd's "cgroup" in each node record)
 * where every record of a node has it: the largest reading, which
 * the processes' sum (1 GB here: four of 250 MB that need not have
 * lived at once) does not override; else the processes' sum */
static void cgroup_peak(void)
{
	struct lwm2_job_meta m;
	json_object *d;
	json_object *p;
	char *text;

	{
		json_object *nd[3], *cg;
		char text_buf[64];

		nd[0] = mk_node("n1", 4, 250, 250 * 1024, 0);
		nd[1] = mk_node("n1", 1, 10, 1024, 0);
		nd[2] = mk_node("n2", 1, 10, 100 * 1024, 0);
		for (int i = 0; i < 2; i++) {
			cg = json_object_new_object();
			ju_add(cg, LWM2_KEY_JOB_MEM_PEAK_KB, ju_u64(i ? 310 * 1024 : 290 * 1024));
			ju_add(nd[i], LWM2_KEY_CGROUP, cg);
		}
		m = base();
		d = lwm2_job_digest_build(&m, nd, 2);
		p = fit_of(d, LWM2_KEY_FIT_MEMORY);
		is_str(str_of(p, LWM2_KEY_SOURCE), "cgroup",
		       "cgroup peaks in every record: source");
		is_int(ju_int_or(p, LWM2_KEY_PEAK_PER_NODE_MB, 0), 310,
		       "the job cgroup's largest reading, not the processes' 1001 MB");
		is_str(str_of(p, LWM2_KEY_ADVICE), "--mem=512M", "advice from the cgroup peak");
		text = text_of(d);
		ok(text && strstr(text, "Memory: peak 310 MB of 2048 MB asked per node (the job's "
		                        "cgroup peak) -> next time: --mem=512M"),
		   "text: the cgroup peak, said so");
		free(text);
		json_object_put(d);

		/* a record without: that node's processes' sum */
		json_object_object_del(nd[1], LWM2_KEY_CGROUP);
		d = lwm2_job_digest_build(&m, nd, 2);
		p = fit_of(d, LWM2_KEY_FIT_MEMORY);
		is_str(str_of(p, LWM2_KEY_SOURCE), "processes", "a record without: processes");
		is_int(ju_int_or(p, LWM2_KEY_PEAK_PER_NODE_MB, 0), 1001, "the processes' sum");
		json_object_put(d);

		/* one node with, one without */
		m.nodes = "n[1-2]";
		m.node_count = 2;
		d = lwm2_job_digest_build(&m, (json_object *[]){nd[0], nd[2]}, 2);
		p = fit_of(d, LWM2_KEY_FIT_MEMORY);
		is_str(str_of(p, LWM2_KEY_SOURCE), "mixed", "one node each way: mixed");
		snprintf(text_buf, sizeof(text_buf), "%" PRId64, ju_int_or(p, LWM2_KEY_PEAK_MB, 0));
		is_str(text_buf, "390", "the job's peak: 290 MB (cgroup) and 100 MB (processes)");
		json_object_put(d);
		for (int i = 0; i < 3; i++)
			json_object_put(nd[i]);
	}
}

/* MPI ranks that wait in communication: never fewer tasks than ranks */
static void mpi_ranks_floor(void)
{
	struct lwm2_job_meta m = base();
	json_object *node, *d, *p;

	mk_flags = LWM2_F_MPI;
	/* 4 ranks on 4 cores, a quarter busy: low, and no advice */
	node = mk_node("n1", 4, 250, 100 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	is_str(str_of(p, LWM2_KEY_VERDICT), "low", "4 MPI ranks a quarter busy: CPU low");
	is_str(str_of(p, LWM2_KEY_ADVICE), "(none)", "and no --ntasks below the 4 ranks");
	json_object_put(d);
	json_object_put(node);
	/* 4 ranks on 8 cores: back to the 4 ranks' tasks */
	m.cpus = 8;
	node = mk_node("n1", 4, 250, 100 * 1024, 0);
	d = lwm2_job_digest_build(&m, &node, 1);
	p = fit_of(d, LWM2_KEY_FIT_CPU);
	is_str(str_of(p, LWM2_KEY_ADVICE), "--ntasks=4", "4 MPI ranks on 8 cores: --ntasks=4");
	json_object_put(d);
	json_object_put(node);
	mk_flags = 0;
}

/* lwm2.conf's AdviceMinRuntime: a shorter job keeps its figures and
 * verdicts, loses its advice, and says why once */
static void advice_min_runtime(void)
{
	struct lwm2_job_meta m = base();
	json_object *node = mk_node("n1", 1, 250, 100 * 1024, 0), *d, *f;
	char *text;
	const char *at;

	/* 1000 s: one of four cores busy, 100 MB of 2 GiB, 1000 s of 2 h */
	m.advice_min_runtime_s = 1001;
	d = lwm2_job_digest_build(&m, &node, 1);
	f = d ? ju_get(d, LWM2_KEY_FIT, json_type_object) : NULL;
	is_str(str_of(f, LWM2_KEY_NO_ADVICE), "the job ran less than 00:16:41",
	       "1000 s under a minimum of 1001 s: the fit says why there is no advice");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_VERDICT), "low",
	       "the CPU verdict stays");
	ok(!ju_str(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_ADVICE) &&
	       !ju_str(fit_of(d, LWM2_KEY_FIT_MEMORY), LWM2_KEY_ADVICE) &&
	       !ju_str(fit_of(d, LWM2_KEY_FIT_TIME), LWM2_KEY_ADVICE),
	   "no --ntasks, --mem or --time");
	is_int(ju_int_or(fit_of(d, LWM2_KEY_FIT_MEMORY), LWM2_KEY_PEAK_MB, 0), 100,
	       "the memory figures stay");
	text = text_of(d);
	at = text ? strstr(text, "  (advice not given: the job ran less than 00:16:41)\n") : NULL;
	if (!ok(at && !strstr(at + 10, "advice not given"), "the text says it once"))
		diag("%s", text ? text : "(no text)");
	ok(text && !strstr(text, "next time"), "and gives no request for next time");
	free(text);
	json_object_put(d);
	/* at the minimum: advice as before */
	m.advice_min_runtime_s = 1000;
	d = lwm2_job_digest_build(&m, &node, 1);
	f = d ? ju_get(d, LWM2_KEY_FIT, json_type_object) : NULL;
	ok(f && !ju_str(f, LWM2_KEY_NO_ADVICE), "1000 s at a minimum of 1000 s: no note");
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_ADVICE), "--ntasks=1",
	       "and the advice");
	json_object_put(d);
	json_object_put(node);

	/* 0.1 s of two MPI ranks on 4 cores, Slurm's start and end the same
	 * second, under the default 60 s */
	mk_flags = LWM2_F_MPI;
	node = mk_node("n1", 2, 0.005, 100 * 1024, 0);
	mk_flags = 0;
	m = base();
	m.end = START;
	m.advice_min_runtime_s = 60;
	d = lwm2_job_digest_build(&m, &node, 1);
	f = d ? ju_get(d, LWM2_KEY_FIT, json_type_object) : NULL;
	is_str(str_of(fit_of(d, LWM2_KEY_FIT_CPU), LWM2_KEY_ADVICE), "(none)",
	       "a 0.1 s two-rank MPI job: no --ntasks");
	is_str(str_of(f, LWM2_KEY_NO_ADVICE), "the job ran less than 00:01:00",
	       "and the reason, with the minimum");
	json_object_put(d);
	json_object_put(node);
}

int main(void)
{
	busy_thread();
	used_what_asked();
	long_limit();
	one_core();
	short_job();
	gpus();
	requests_unknown();
	time_unlimited();
	sub_second();
	memory_over();
	no_requests();
	whole_seconds();
	cgroup_peak();
	mpi_ranks_floor();
	advice_min_runtime();
	return done_testing();
}
