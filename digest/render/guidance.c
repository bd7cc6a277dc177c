/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The guidance table: when a metric or a group of metrics does not match
 * expectations, what it may mean and which deeper tool to reach for.  This
 * is the one place the thresholds live; doc/digest-schema.md lists the same
 * rows and test/guidance.c fails when the two differ.
 */
#include "lwm2_render.h"

#define C1(k, m, v)                                                                                \
	{                                                                                          \
		{k, LWM2_M_##m, v, 0},                                                             \
		{                                                                                  \
			LWM2_COND_NONE, 0, 0, 0                                                    \
		}                                                                                  \
	}
#define C2(k1, m1, v1, k2, m2, v2)                                                                 \
	{                                                                                          \
		{k1, LWM2_M_##m1, v1, 0},                                                          \
		{                                                                                  \
			k2, LWM2_M_##m2, v2, 0                                                     \
		}                                                                                  \
	}

/* Preconditions: MPI job, processes, duration (s), bytes in one process. */
#define PRE(mpi, procs, dur, bytes)                                                                \
	{                                                                                          \
		mpi, procs, dur, bytes                                                             \
	}
/* A run shorter than this is mostly start-up and shutdown: shares and
 * thread figures of it say little about the application. */
#define MIN_RUN 10.0

const struct lwm2_guidance_rule lwm2_guidance_rules[] = {
    {"mpi-share", PRE(true, 2, MIN_RUN, 0), C1(LWM2_COND_AVG_GT, mpi_time, 20.0),
     "A large share of the run time is spent in MPI.",
     "Message passing is communication or synchronisation, not computation. If this share "
     "grows with the number of processes, the application has a scalability problem.",
     "Profile with Score-P and inspect the call paths in Cube; measure at several process "
     "counts and model the MPI time with Extra-P."},
    {"mpi-imbalance", PRE(true, 2, MIN_RUN, 0),
     C2(LWM2_COND_SPREAD_GT, mpi_time, 0.5, LWM2_COND_MAX_GT, mpi_time, 10.0),
     "MPI time differs strongly between processes (min/max asymmetry).",
     "Load or communication imbalance: processes wait for the slowest one. This usually "
     "prevents scaling to larger process counts.",
     "Trace with Score-P and let Scalasca's wait-state analysis locate the imbalance; "
     "follow it in Vampir's timeline."},
    {"mpi-small-messages", PRE(true, 2, MIN_RUN, 0),
     C2(LWM2_COND_AVG_LT, mpi_p2p_msg_size, 4096.0, LWM2_COND_AVG_GT, mpi_p2p_freq, 1000.0),
     "Communication is dominated by many small point-to-point messages.",
     "Network latency may be the limiting factor; aggregating messages or overlapping "
     "communication with computation may help.",
     "Score-P profile with message statistics in Cube; Vampir's communication matrix."},
    {"mpi-large-messages", PRE(true, 2, MIN_RUN, 0),
     C2(LWM2_COND_AVG_GT, mpi_p2p_msg_size, 1048576.0, LWM2_COND_AVG_GT, mpi_time, 10.0),
     "Most point-to-point messages are large.",
     "Network bandwidth may be the limiting factor, or the process placement across nodes.",
     "Vampir's communication matrix for the heavy pairs; compare the transfer rate with what "
     "the OSU micro-benchmarks reach on this network."},
    {"mpi-collectives", PRE(true, 2, MIN_RUN, 0), C1(LWM2_COND_AVG_GT, mpi_coll_time, 10.0),
     "Much time is spent in collective operations.",
     "Collectives synchronise: the time in them is often waiting for late processes rather "
     "than moving data.",
     "Scalasca's wait-state analysis (wait at N x N, barrier waits) on a Score-P trace."},
    {"io-share", PRE(false, 1, MIN_RUN, 0), C1(LWM2_COND_AVG_GT, posix_io_time, 10.0),
     "A large share of the run time is spent in POSIX file I/O.",
     "The application may load the I/O subsystem heavily. Check whether its I/O coincided "
     "with other jobs' I/O (the time slices of the digest); I/O performance varies between "
     "runs, so a bottleneck usually needs several runs under different load to confirm.",
     "Darshan for the access pattern (request sizes, offsets, metadata operations)."},
    {"mpiio-share", PRE(true, 1, MIN_RUN, 0), C1(LWM2_COND_AVG_GT, mpiio_time, 10.0),
     "A large share of the run time is spent in MPI file I/O.",
     "Independent or non-contiguous MPI-IO requests, or unsuitable hints, can make parallel "
     "I/O slow; so can other jobs' I/O at the same time.",
     "Darshan (MPI-IO and POSIX modules) for the access pattern; try collective I/O and "
     "the file system's striping hints."},
    {"io-slow-write", PRE(false, 1, 0, 1e9),
     C2(LWM2_COND_AVG_LT, write_bw, 50e6, LWM2_COND_MAX_GT, bytes_written, 1e9),
     "Writing was slow for the amount of data written.",
     "Small or unaligned writes, many metadata operations, or contention with other jobs.",
     "Darshan for request sizes and metadata; compare with a later run."},
    {"io-slow-read", PRE(false, 1, 0, 1e9),
     C2(LWM2_COND_AVG_LT, read_bw, 50e6, LWM2_COND_MAX_GT, bytes_read, 1e9),
     "Reading was slow for the amount of data read.",
     "Small or random reads, many metadata operations, or contention with other jobs.",
     "Darshan for request sizes and access pattern; compare with a later run."},
    {"io-imbalance", PRE(true, 2, MIN_RUN, 0),
     C2(LWM2_COND_SPREAD_GT, posix_io_time, 0.8, LWM2_COND_MAX_GT, posix_io_time, 10.0),
     "File I/O is concentrated on a few processes.",
     "I/O funnelled through one process serialises it and makes the others wait.",
     "Darshan per-process records; consider collective MPI-IO or a parallel I/O library."},
    {"threads-vs-cores", PRE(false, 1, MIN_RUN, 0), C1(LWM2_COND_AVG_LT_CPUS, avg_threads, 0.75),
     "Fewer threads were busy on average than cores were allocated per process.",
     "Long sequential phases (e.g. outside OpenMP parallel regions) or idle threads leave "
     "allocated cores unused; with one core per process, the processes waited (blocking "
     "I/O, sleeping) or shared their cores with other work on the node. Check the thread "
     "count settings and the binding as well.",
     "Score-P with OpenMP or pthread instrumentation and Cube; perf or likwid-perfctr per "
     "core to see which cores work."},
    {"threads-oversubscribed", PRE(false, 1, MIN_RUN, 0),
     C1(LWM2_COND_AVG_GT_CPUS, avg_threads, 1.25),
     "More threads were busy on average than cores were allocated per process.",
     "Threads compete for the allocated cores (more threads than cores, or threads spinning "
     "while they wait), so each runs slower than it could.",
     "Match the thread count to the allocation (OMP_NUM_THREADS, --cpus-per-task); perf or "
     "likwid-perfctr per core; Score-P for where threads spin."},
    {"threads-idle",
     PRE(false, 1, MIN_RUN, 0),
     {{LWM2_COND_AVG_LT_REF, LWM2_M_avg_threads, 0.5, LWM2_M_threads_total},
      /* MPI libraries start two or three helper threads of their own
       * that rarely run: only clearly multithreaded processes count. */
      {LWM2_COND_AVG_GT, LWM2_M_threads_total, 4.5, 0}},
     "Threads were started but were busy only a small part of the run.",
     "The degree of concurrency is lower than the number of threads suggests: sequential "
     "phases, serialisation on locks, or threads waiting for I/O.",
     "Score-P with OpenMP/pthread instrumentation (Cube, Vampir); perf for lock contention."},
    {"cpi-high", PRE(false, 1, 1.0, 0), C1(LWM2_COND_AVG_GT, cpi, 1.5),
     "Cycles per instruction are high.",
     "Memory access latency or pipeline hazards may be the reason; some operations (e.g. "
     "complex floating-point operations) simply take longer.",
     "perf stat and perf record, likwid-perfctr (groups MEM, CACHE, FLOPS), or PAPI-based "
     "tools such as HPCToolkit or Score-P with PAPI counters."},
    {"l1-low", PRE(false, 1, 1.0, 0), C1(LWM2_COND_AVG_LT, l1_hit_ratio, 90.0),
     "The level-1 data cache hit ratio is low.", "Low data locality; this may explain a high CPI.",
     "likwid-perfctr (L1/L2 cache groups), perf mem, or Cachegrind to find the loops; data "
     "layout and loop blocking are the usual cures."},
    {"llc-high", PRE(false, 1, 1.0, 0), C1(LWM2_COND_AVG_GT, llc_miss_freq, 5e7),
     "Last-level cache misses are frequent.",
     "This is the frequency of main-memory accesses and may point to memory-bandwidth "
     "saturation.",
     "likwid-perfctr (MEM group) and a roofline analysis (likwid-bench, Intel Advisor)."},
    {"cuda-share", PRE(false, 1, MIN_RUN, 0), C1(LWM2_COND_AVG_GT, cuda_time, 20.0),
     "A large share of the run time is spent in CUDA calls on the host.",
     "The host waits for the GPU or for transfers; these metrics are only a rough indicator.",
     "Nsight Systems for the timeline of kernels and transfers, then Nsight Compute for the "
     "heavy kernels."},
    {"cuda-small-transfers", PRE(false, 1, MIN_RUN, 0),
     C2(LWM2_COND_AVG_LT, cuda_h2d_size, 65536.0, LWM2_COND_AVG_GT, cuda_transfer_freq, 100.0),
     "Many small host-device transfers.",
     "Per-transfer latency dominates; batching transfers or pinned memory may help.",
     "Nsight Systems (CUDA memcpy rows)."},
    /* MPI ranks only: the processes of a batch script (a shell of hours,
     * commands of milliseconds) differ in duration by nature. */
    {"duration-imbalance", PRE(true, 2, 0, 0),
     C2(LWM2_COND_SPREAD_GT, duration, 0.2, LWM2_COND_MAX_GT, duration, 60.0),
     "Processes ran for very different times.",
     "Uneven work distribution, or processes that end early while others keep working.",
     "Score-P and Scalasca to see where the long-running processes spend their time."},
};

const size_t lwm2_nguidance_rules = sizeof(lwm2_guidance_rules) / sizeof(lwm2_guidance_rules[0]);

bool lwm2_guidance_applies(const struct lwm2_guidance_rule *rule, const struct lwm2_scope *s)
{
	const struct lwm2_pre *p = &rule->pre;
	const struct lwm2_metric_stat *d = &s->stat[LWM2_M_duration];
	const struct lwm2_metric_stat *br = &s->stat[LWM2_M_bytes_read];
	const struct lwm2_metric_stat *bw = &s->stat[LWM2_M_bytes_written];
	double bytes = 0;

	if (p->mpi && s->mpi_processes == 0)
		return false;
	/* One rank's own digest (LWM2_PRINT) is judged as part of its job. */
	if ((p->mpi ? (s->mpi_size > s->mpi_processes ? s->mpi_size : s->mpi_processes)
	            : s->processes) < p->min_procs)
		return false;
	if (p->min_duration_s > 0 && (d->n == 0 || d->max < p->min_duration_s))
		return false;
	if (br->n)
		bytes = br->max;
	if (bw->n && bw->max > bytes)
		bytes = bw->max;
	if (p->min_bytes > 0 && bytes < p->min_bytes)
		return false;
	return true;
}

static bool cond_holds(const struct lwm2_cond *c, const struct lwm2_scope *s)
{
	const struct lwm2_metric_stat *st;

	if (c->kind == LWM2_COND_NONE)
		return true;
	if (c->metric < 0 || c->metric >= LWM2_NMETRICS)
		return false;
	st = &s->stat[c->metric];
	if (st->n == 0)
		return false;
	switch (c->kind) {
	case LWM2_COND_AVG_GT:
		return st->avg > c->value;
	case LWM2_COND_AVG_LT:
		return st->avg < c->value;
	case LWM2_COND_MAX_GT:
		return st->max > c->value;
	case LWM2_COND_SPREAD_GT:
		return st->n >= 2 && st->max > 0 && (st->max - st->min) / st->max > c->value;
	case LWM2_COND_AVG_LT_CPUS:
		return s->cpus_per_task > 0 && st->avg < c->value * s->cpus_per_task;
	case LWM2_COND_AVG_GT_CPUS:
		return s->cpus_per_task > 0 && st->avg > c->value * s->cpus_per_task;
	case LWM2_COND_AVG_LT_REF:
		if (c->ref < 0 || c->ref >= LWM2_NMETRICS || s->stat[c->ref].n == 0)
			return false;
		return st->avg < c->value * s->stat[c->ref].avg;
	default:
		return false;
	}
}

bool lwm2_guidance_fires(const struct lwm2_guidance_rule *rule, const struct lwm2_scope *s)
{
	return lwm2_guidance_applies(rule, s) && cond_holds(&rule->cond[0], s) &&
	       cond_holds(&rule->cond[1], s);
}
