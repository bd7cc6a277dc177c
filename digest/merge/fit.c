/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The digest's "fit" block: what the job asked for (cores, memory, time
 * limit, GPUs; slurmctld's numbers, via jobcomp) against what its
 * processes used, with a verdict and, where the fit is poor, the request
 * for next time.  The rules and thresholds are doc/lwm2.1's "Fit"
 * section; change both together.
 */
#include "digest_internal.h"
#include "lwm2_keys.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPU: "low" under half the allocated cores busy on average (seff and
 * jobstats report the efficiency; jobstats' alerts start at comparable
 * levels); "over" above 110 % (more threads than cores, possible where
 * Slurm does not confine the job). */
#define FIT_CPU_LOW  0.5
#define FIT_CPU_OVER 1.1
/* Memory: "low" when the busiest node peaked under half its request and
 * at least 1 GiB of the request went unused (smaller waste is not worth a
 * change of script); the advice adds 25 % to the peak, since running
 * short of memory kills the job. */
#define FIT_MEM_LOW       0.5
#define FIT_MEM_MIN_WASTE 1024
#define FIT_MEM_HEADROOM  1.25
/* Time: "low" under half the limit; the advice adds 50 % (run times
 * vary, and the limit kills) rounded up to 15 minutes.  Jobs shorter
 * than 5 minutes get no advice: backfill gains little from them.  A job
 * with no limit at all ("unlimited") is told its run time, no advice:
 * the site chose a partition without limits. */
#define FIT_TIME_LOW      0.5
#define FIT_TIME_HEADROOM 1.5
#define FIT_TIME_ROUND    900
#define FIT_TIME_SHORT    300

struct fit_node {
	const char *name;
	uint64_t cpu_us;
	uint64_t rss_kb; /* sum of the processes' peaks */
	uint64_t cg_kb;  /* the job's cgroup peak, where every record has it */
	uint32_t records, cg_records;
	uint64_t cuda_proc; /* processes that made CUDA calls */
};

/* A node's memory peak: its job cgroup's where slurmstepd read it at the
 * end of each of the job's steps there (the last reading covers them
 * all), else the sum of the processes' peaks. */
static uint64_t node_mem_kb(const struct fit_node *f)
{
	return f->records && f->cg_records == f->records && f->cg_kb ? f->cg_kb : f->rss_kb;
}

static bool node_mem_cgroup(const struct fit_node *f)
{
	return f->records && f->cg_records == f->records && f->cg_kb;
}

static struct fit_node *node_of(struct fit_node *v, size_t *nv, const char *name)
{
	for (size_t i = 0; i < *nv; i++)
		if (strcmp(v[i].name, name) == 0)
			return &v[i];
	v[*nv].name = name;
	return &v[(*nv)++];
}

/* Per node (a node's records of every step together): CPU time, the sum
 * of the process peaks, processes with CUDA activity.  An image that exec
 * replaced is left out: its process goes on in the next record, which
 * holds its CPU time and peak. */
/* The nodes' processes summed per node into v; *span_s the time from the
 * first process's start to the last one's end (0 when none says). */
static size_t gather(json_object *const *nodes, size_t n, struct fit_node *v, double *span_s)
{
	size_t nv = 0;
	int64_t first = INT64_MAX, last = 0;

	for (size_t i = 0; i < n; i++) {
		const char *name = nodes[i] ? ju_str(nodes[i], LWM2_KEY_NODE) : NULL;
		json_object *procs = name ? ju_get(nodes[i], "procs", json_type_array) : NULL;
		struct fit_node *f;

		if (!procs)
			continue;
		f = node_of(v, &nv, name);
		f->records++;
		{
			json_object *cg = ju_get(nodes[i], LWM2_KEY_CGROUP, json_type_object);
			int64_t kb = cg ? ju_int_or(cg, LWM2_KEY_JOB_MEM_PEAK_KB, 0) : 0;

			if (kb > 0) {
				f->cg_records++;
				f->cg_kb = (uint64_t)kb > f->cg_kb ? (uint64_t)kb : f->cg_kb;
			}
		}
		for (size_t k = 0; k < json_object_array_length(procs); k++) {
			json_object *p = json_object_array_get_idx(procs, k);
			json_object *c = ju_get(p, LWM2_KEY_C, json_type_array);
			int64_t rss = ju_int_or(p, "maxrss_kb", 0);

			int64_t t0 = ju_int_or(p, "start_ns", 0), t1 = ju_int_or(p, "end_ns", 0);

			if (t0 > 0 && t1 >= t0) {
				first = t0 < first ? t0 : first;
				last = t1 > last ? t1 : last;
			}
			if (ju_int_or(p, LWM2_KEY_FLAGS, 0) & LWM2_F_EXEC)
				continue;
			f->cpu_us += lwm2_proc_cpu_us(p);
			/* a summary of short processes holds their largest
			 * peak: they need not have lived at once */
			f->rss_kb += (uint64_t)(rss > 0 ? rss : 0);
			if (c && json_object_array_length(c) > LWM2_C_cuda_calls &&
			    json_object_get_int64(json_object_array_get_idx(c, LWM2_C_cuda_calls)) >
			        0)
				f->cuda_proc++;
		}
	}
	*span_s = last > first ? (double)(last - first) / 1e9 : 0;
	return nv;
}

/* The MPI ranks of the job's largest step: its MPI processes, added up
 * over the step's node records (a process an exec replaced counted
 * once).  0 for a job without MPI. */
static uint64_t mpi_ranks(json_object *const *nodes, size_t n)
{
	enum { STEPS = 64 };
	struct {
		int64_t step;
		uint64_t ranks;
	} s[STEPS];
	size_t ns = 0;
	uint64_t top = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *procs = nodes[i] ? ju_get(nodes[i], "procs", json_type_array) : NULL;
		int64_t step = nodes[i] ? ju_int_or(nodes[i], LWM2_KEY_STEP, 0) : 0;
		uint64_t mpi = 0;
		size_t k;

		for (size_t j = 0; procs && j < json_object_array_length(procs); j++) {
			int64_t fl =
			    ju_int_or(json_object_array_get_idx(procs, j), LWM2_KEY_FLAGS, 0);

			mpi += (fl & LWM2_F_MPI) && !(fl & LWM2_F_EXEC);
		}
		if (!mpi)
			continue;
		for (k = 0; k < ns && s[k].step != step; k++)
			;
		if (k == ns) {
			if (ns == STEPS)
				continue;
			s[ns].step = step;
			s[ns++].ranks = 0;
		}
		s[k].ranks += mpi;
		top = s[k].ranks > top ? s[k].ranks : top;
	}
	return top;
}

static json_object *part(const char *verdict)
{
	json_object *o = json_object_new_object();

	ju_add(o, LWM2_KEY_VERDICT, json_object_new_string(verdict));
	return o;
}

/* A figure not measured, and why, in words the text digest prints after
 * it ("CPU: not measured (allocated cores unknown)"). */
static json_object *not_measured(const char *why)
{
	json_object *o = part("not_measured");

	ju_add(o, LWM2_KEY_WHY, json_object_new_string(why));
	return o;
}

const char *lwm2_fit_not_measured(json_object *p, char *buf, size_t len)
{
	const char *v = p ? ju_str(p, LWM2_KEY_VERDICT) : NULL;
	const char *why = p ? ju_str(p, LWM2_KEY_WHY) : NULL;

	if (v && strcmp(v, "not_measured") != 0)
		return NULL;
	if (why)
		snprintf(buf, len, "not measured (%s)", why);
	else
		snprintf(buf, len, "not measured");
	return buf;
}

static void advise(json_object *o, const char *advice)
{
	ju_add(o, LWM2_KEY_ADVICE, json_object_new_string(advice));
}

static uint64_t kb_to_mb(uint64_t kb)
{
	return (kb + 1023) / 1024;
}

/* A memory size for --mem: whole GiB from 1 GiB up, else 128 MiB steps. */
void lwm2_fit_mem_option(uint64_t mb, char *buf, size_t len)
{
	if (mb >= 1024)
		snprintf(buf, len, "--mem=%" PRIu64 "G", (mb + 1023) / 1024);
	else
		snprintf(buf, len, "--mem=%" PRIu64 "M", mb ? (mb + 127) / 128 * 128 : 128);
}

/* Slurm's time format: [D-]HH:MM:SS. */
void lwm2_fit_time_str(uint64_t s, char *buf, size_t len)
{
	if (s >= 86400)
		snprintf(buf, len, "%" PRIu64 "-%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, s / 86400,
		         s % 86400 / 3600, s % 3600 / 60, s % 60);
	else
		snprintf(buf, len, "%02" PRIu64 ":%02" PRIu64 ":%02" PRIu64, s / 3600,
		         s % 3600 / 60, s % 60);
}

/* over_s: the time the CPU time is set against, elapsed or more (see
 * lwm2_fit_json). */
static json_object *fit_cpu(const struct lwm2_job_meta *m, uint64_t cpu_us, int64_t elapsed,
                            double over_s, uint64_t ranks)
{
	json_object *o;
	double busy, eff;
	char adv[64];

	if (!m->cpus)
		return not_measured("allocated cores unknown");
	if (elapsed < 0)
		return not_measured("the job's start or end unknown");
	if (over_s <= 0)
		return not_measured("no run time measured");
	busy = (double)cpu_us / 1e6 / over_s;
	eff = busy / m->cpus;
	o = part(eff < FIT_CPU_LOW ? "low" : eff > FIT_CPU_OVER ? "over" : "ok");
	ju_add(o, LWM2_KEY_ALLOCATED_CORES, ju_u64(m->cpus));
	ju_add(o, LWM2_KEY_CPU_S, ju_double(round((double)cpu_us / 1e3) / 1e3));
	ju_add(o, LWM2_KEY_ELAPSED_S, ju_u64((uint64_t)elapsed));
	ju_add(o, LWM2_KEY_EFFICIENCY, ju_double(round(eff * 1000) / 1000));
	if (eff >= FIT_CPU_LOW && eff <= FIT_CPU_OVER)
		return o;
	{
		/* The cores kept busy on average, rounded up to whole cores
		 * (a tenth of a core spare): CPU time is elastic, a job on
		 * fewer cores runs a little longer but does not fail. */
		uint64_t cores = (uint64_t)ceil(busy - 0.1);
		uint32_t cpt = m->cpus_per_task;

		if (cores < 1)
			cores = 1;
		/* never fewer tasks than the MPI ranks that did the work: an
		 * MPI job's cores idle in communication, and fewer ranks is
		 * another run, not the same one on fewer cores */
		if (cores < ranks)
			cores = ranks;
		if (cpt > 1 && m->cpus % cpt == 0) {
			uint64_t tasks = m->cpus / cpt, per = (cores + tasks - 1) / tasks;
			snprintf(adv, sizeof(adv), "--cpus-per-task=%" PRIu64, per);
			cores = per * tasks;
		} else {
			snprintf(adv, sizeof(adv), "--ntasks=%" PRIu64, cores);
		}
		/* nothing to say when it comes to what the job asked for (one
		 * core kept idle is not given back) */
		if (cores != m->cpus)
			advise(o, adv);
	}
	return o;
}

static json_object *fit_mem(const struct lwm2_job_meta *m, const struct fit_node *v, size_t nv)
{
	uint64_t sum = 0, top = 0, req = m->mem_req_per_node_mb;
	size_t ncg = 0;
	json_object *o;
	char adv[64];

	for (size_t i = 0; i < nv; i++) {
		uint64_t kb = node_mem_kb(&v[i]);

		sum += kb;
		top = kb > top ? kb : top;
		ncg += node_mem_cgroup(&v[i]);
	}
	sum = kb_to_mb(sum);
	top = kb_to_mb(top);
	if (!req || !top) {
		o = not_measured(!req ? "no memory request known" : "no memory peak measured");
	} else if (top > req) {
		o = part("over");
	} else if ((double)top < FIT_MEM_LOW * (double)req && req - top >= FIT_MEM_MIN_WASTE) {
		o = part("low");
	} else {
		o = part("ok");
	}
	if (m->mem_req_mb)
		ju_add(o, LWM2_KEY_REQUESTED_MB, ju_u64(m->mem_req_mb));
	if (req)
		ju_add(o, LWM2_KEY_REQUESTED_PER_NODE_MB, ju_u64(req));
	if (top) {
		ju_add(o, LWM2_KEY_PEAK_MB, ju_u64(sum));
		ju_add(o, LWM2_KEY_PEAK_PER_NODE_MB, ju_u64(top));
		/* the job's cgroup peak on every node where Slurm confines
		 * the job; else the sum of the processes' own peaks, an upper
		 * bound of what they held at once; "mixed" where some nodes
		 * had one and some the other */
		ju_add(o, LWM2_KEY_SOURCE,
		       json_object_new_string(ncg == nv ? "cgroup"
		                              : ncg     ? "mixed"
		                                        : "processes"));
	}
	if (req && top && (top > req || strcmp(ju_str(o, LWM2_KEY_VERDICT), "low") == 0)) {
		lwm2_fit_mem_option((uint64_t)ceil((double)top * FIT_MEM_HEADROOM), adv,
		                    sizeof(adv));
		advise(o, adv);
	}
	return o;
}

static json_object *fit_time(const struct lwm2_job_meta *m, int64_t elapsed)
{
	uint64_t lim = m->time_limit_s, want = 0;
	bool timeout = m->state && strcmp(m->state, "TIMEOUT") == 0;
	json_object *o;
	char adv[64], t[32];

	if (!lim && !m->time_unlimited)
		return not_measured("time limit unknown");
	if (elapsed < 0)
		return not_measured("the job's start or end unknown");
	if (!lim) {
		/* nothing to set the run time against: the run time only */
		o = part("unlimited");
		ju_add(o, LWM2_KEY_ELAPSED_S, ju_u64((uint64_t)elapsed));
		return o;
	}
	if (timeout || (uint64_t)elapsed >= lim) {
		o = part("over");
		/* it needed more than it had, how much more is unknown */
		want = lim * 2;
	} else if ((double)elapsed < FIT_TIME_LOW * (double)lim) {
		o = part("low");
		if (elapsed >= FIT_TIME_SHORT)
			want = (uint64_t)ceil((double)elapsed * FIT_TIME_HEADROOM);
	} else {
		o = part("ok");
	}
	ju_add(o, LWM2_KEY_LIMIT_S, ju_u64(lim));
	ju_add(o, LWM2_KEY_ELAPSED_S, ju_u64((uint64_t)elapsed));
	if (want) {
		want = (want + FIT_TIME_ROUND - 1) / FIT_TIME_ROUND * FIT_TIME_ROUND;
		lwm2_fit_time_str(want, t, sizeof(t));
		snprintf(adv, sizeof(adv), "--time=%s", t);
		advise(o, adv);
	}
	return o;
}

static json_object *fit_gpu(const struct lwm2_job_meta *m, const struct fit_node *v, size_t nv,
                            json_object *per_node[])
{
	uint64_t per, used = 0, top = 0, nodes = m->node_count ? m->node_count : (nv ? nv : 1);
	json_object *o;
	char adv[64];

	if (!m->gpus_known)
		return not_measured("GPUs allocated unknown");
	/* Records name no device: each process with CUDA activity counts
	 * as one GPU, at most the node's share of the allocation. */
	per = (m->gpus + nodes - 1) / nodes;
	for (size_t i = 0; i < nv; i++) {
		uint64_t u = v[i].cuda_proc < per ? v[i].cuda_proc : per;
		used += u;
		top = u > top ? u : top;
		if (m->gpus)
			ju_add(per_node[i], LWM2_KEY_USED, ju_u64(u));
	}
	if (used > m->gpus)
		used = m->gpus;
	o = part(used < m->gpus ? "low" : "ok");
	ju_add(o, LWM2_KEY_ALLOCATED, ju_u64(m->gpus));
	ju_add(o, LWM2_KEY_USED, ju_u64(used));
	if (used < m->gpus) {
		if (top)
			snprintf(adv, sizeof(adv), "--gres=gpu:%" PRIu64, top);
		else
			snprintf(adv, sizeof(adv), "--gres=none");
		advise(o, adv);
	}
	return o;
}

/* A job shorter than the site's AdviceMinRuntime: the figures and
 * verdicts stay, the advice goes, and the block says why once.  Start-up
 * and the whole-second clock dominate such a run: a 0.1 s MPI job of two
 * ranks that were busy a tenth of the time is no reason to ask for one
 * core. */
static void withhold_advice(json_object *fit, uint32_t min_s)
{
	static const char *const parts[] = {LWM2_KEY_FIT_CPU, LWM2_KEY_FIT_MEMORY,
	                                    LWM2_KEY_FIT_TIME, LWM2_KEY_FIT_GPU};
	bool any = false;
	char why[96], t[32];

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		json_object *p = ju_get(fit, parts[i], json_type_object);

		if (p && ju_str(p, LWM2_KEY_ADVICE)) {
			json_object_object_del(p, LWM2_KEY_ADVICE);
			any = true;
		}
	}
	if (!any)
		return;
	lwm2_fit_time_str(min_s, t, sizeof(t));
	snprintf(why, sizeof(why), "the job ran less than %s", t);
	ju_add(fit, LWM2_KEY_NO_ADVICE, json_object_new_string(why));
}

json_object *lwm2_fit_json(const struct lwm2_job_meta *m, json_object *const *nodes, size_t n)
{
	int64_t elapsed = m && m->start > 0 && m->end >= m->start ? m->end - m->start : -1;
	json_object *fit, *arr, **per;
	struct fit_node *v;
	double span_s = 0, over_s;
	size_t nv;

	if (!m || !m->have_requests)
		return NULL;
	if (!(v = calloc(n ? n : 1, sizeof(*v))) || !(per = calloc(n ? n : 1, sizeof(*per)))) {
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	nv = gather(nodes, n, v, &span_s);
	/* Slurm's start and end are whole seconds: a job of 2.9 s can read
	 * as 2, and its one busy core as 1.4, one of 0.4 s as 0.  The
	 * processes' own span (ns) is at most the job's; the longer of the
	 * two is the better. */
	over_s = elapsed >= 0 && span_s > (double)elapsed ? span_s : (double)elapsed;
	fit = json_object_new_object();
	arr = json_object_new_array();
	for (size_t i = 0; i < nv; i++) {
		json_object *e = json_object_new_object();
		uint32_t nn = m->node_count ? m->node_count : (uint32_t)nv;

		ju_add(e, LWM2_KEY_NODE, json_object_new_string(v[i].name));
		ju_add(e, LWM2_KEY_CPU_S, ju_double(round((double)v[i].cpu_us / 1e3) / 1e3));
		/* against the average node's share of the cores */
		if (m->cpus && over_s > 0) /* elapsed known, or the span */
			ju_add(e, LWM2_KEY_EFFICIENCY,
			       ju_double(round((double)v[i].cpu_us / 1e6 / over_s /
			                       ((double)m->cpus / nn) * 1000) /
			                 1000));
		if (node_mem_kb(&v[i]))
			ju_add(e, LWM2_KEY_PEAK_MB, ju_u64(kb_to_mb(node_mem_kb(&v[i]))));
		per[i] = e;
		json_object_array_add(arr, e);
	}
	if (!nv) {
		/* no process measured: nothing to set against the requests */
		ju_add(fit, LWM2_KEY_FIT_CPU, not_measured("no process measured"));
		ju_add(fit, LWM2_KEY_FIT_MEMORY, not_measured("no process measured"));
	} else {
		ju_add(fit, LWM2_KEY_FIT_CPU,
		       fit_cpu(m, lwm2_job_cpu_us(nodes, n), elapsed, over_s, mpi_ranks(nodes, n)));
		ju_add(fit, LWM2_KEY_FIT_MEMORY, fit_mem(m, v, nv));
	}
	ju_add(fit, LWM2_KEY_FIT_TIME, fit_time(m, elapsed));
	ju_add(fit, LWM2_KEY_FIT_GPU,
	       nv ? fit_gpu(m, v, nv, per) : not_measured("no process measured"));
	ju_add(fit, LWM2_KEY_NODES, arr);
	if (over_s >= 0 && over_s < m->advice_min_runtime_s)
		withhold_advice(fit, m->advice_min_runtime_s);
	free(per);
	free(v);
	return fit;
}
