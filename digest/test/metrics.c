/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Metrics arithmetic, value formatting, guidance rules, rank rendering. */
#include "lwm2_render.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct setc {
	int c;
	uint64_t v;
};

/* One case: counters and process values in, one metric out. */
static const struct mcase {
	const char *name;
	uint64_t wall_ns;
	uint64_t samples;
	uint32_t period_us;
	uint32_t threads;
	uint32_t missing;
	struct setc set[6];
	int metric;
	int valid;
	double want;
	const char *reason_has;
	int not_mpi; /* the process never initialised MPI */
} mcases[] = {
    {"MPI share of 4 threads waiting at once: at most 100 %",
     10000000000ull,
     0,
     0,
     4,
     0,
     {{LWM2_C_mpi_coll_ns, 36000000000ull}, {LWM2_C_mpi_coll_calls, 4}},
     LWM2_M_mpi_time,
     1,
     100.0,
     NULL,
     0},
    {"I/O share of 3 threads writing at once: at most 100 %",
     10000000000ull,
     0,
     0,
     3,
     0,
     {{LWM2_C_posix_write_ns, 25000000000ull}, {LWM2_C_posix_write_calls, 3}},
     LWM2_M_posix_io_time,
     1,
     100.0,
     NULL,
     0},
    {"I/O share below the wall time: as it is",
     10000000000ull,
     0,
     0,
     3,
     0,
     {{LWM2_C_posix_write_ns, 2500000000ull}, {LWM2_C_posix_write_calls, 3}},
     LWM2_M_posix_io_time,
     1,
     25.0,
     NULL,
     0},
    {"CPI = cycles / instructions",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_hwc_cycles, 3000000000ull}, {LWM2_C_hwc_instructions, 2000000000ull}},
     LWM2_M_cpi,
     1,
     1.5,
     NULL,
     0},
    {"FP fraction in % of instructions",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_hwc_fp_ops, 250}, {LWM2_C_hwc_instructions, 1000}},
     LWM2_M_fp_fraction,
     1,
     25.0,
     NULL,
     0},
    {"L1 hit ratio = 1 - misses / accesses",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_hwc_l1d_accesses, 1000}, {LWM2_C_hwc_l1d_misses, 50}},
     LWM2_M_l1_hit_ratio,
     1,
     95.0,
     NULL,
     0},
    {"L1 misses > accesses is rejected",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_hwc_l1d_accesses, 10}, {LWM2_C_hwc_l1d_misses, 50}},
     LWM2_M_l1_hit_ratio,
     0,
     0,
     "level-1 counters were not measured together",
     0},
    {"LLC miss frequency per second of wall time",
     4000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_hwc_llc_misses, 8000000}, {LWM2_C_hwc_cycles, 1}},
     LWM2_M_llc_miss_freq,
     1,
     2000000.0,
     NULL,
     0},
    {"write bandwidth = bytes / time in write",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_write_bytes, 1000000000ull}, {LWM2_C_posix_write_ns, 2000000000ull}},
     LWM2_M_write_bw,
     1,
     5e8,
     NULL,
     0},
    {"read bandwidth = bytes / time in read",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_read_bytes, 300}, {LWM2_C_posix_read_ns, 3000}},
     LWM2_M_read_bw,
     1,
     1e8,
     NULL,
     0},
    {"read bandwidth without read time is missing",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_read_bytes, 300}},
     LWM2_M_read_bw,
     0,
     0,
     "no time in read",
     0},
    {"avg threads = samples / (wall / period)",
     10000000000ull,
     3000,
     10000,
     4,
     0,
     {{0, 0}},
     LWM2_M_avg_threads,
     1,
     3.0,
     NULL,
     0},
    {"avg threads missing with sampling off",
     10000000000ull,
     3000,
     0,
     4,
     0,
     {{0, 0}},
     LWM2_M_avg_threads,
     0,
     0,
     "sampling was off",
     0},
    {"threads total", 10000000000ull, 0, 0, 7, 0, {{0, 0}}, LWM2_M_threads_total, 1, 7, NULL, 0},
    {"MPI share adds p2p, collective, MPI-IO and other",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_p2p_ns, 1000000000ull},
      {LWM2_C_mpi_coll_ns, 500000000ull},
      {LWM2_C_mpiio_write_ns, 250000000ull},
      {LWM2_C_mpi_other_ns, 250000000ull}},
     LWM2_M_mpi_time,
     1,
     20.0,
     NULL,
     0},
    {"MPI share leaves MPI_Init and MPI_Finalize out",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_coll_ns, 500000000ull}, {LWM2_C_mpi_init_ns, 9000000000ull}},
     LWM2_M_mpi_time,
     1,
     5.0,
     NULL,
     0},
    {"MPI_Init and MPI_Finalize have their own share",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_coll_ns, 500000000ull}, {LWM2_C_mpi_init_ns, 9000000000ull}},
     LWM2_M_mpi_init_time,
     1,
     90.0,
     NULL,
     0},
    {"write bandwidth counts the time in fsync/fdatasync",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_write_bytes, 1000000000ull},
      {LWM2_C_posix_write_ns, 500000000ull},
      {LWM2_C_posix_sync_ns, 1500000000ull}},
     LWM2_M_write_bw,
     1,
     5e8,
     NULL,
     0},
    {"sync share of the wall time",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_sync_ns, 1500000000ull}, {LWM2_C_posix_meta_ns, 1500000000ull}},
     LWM2_M_sync_time,
     1,
     15.0,
     NULL,
     0},
    {"p2p share",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_p2p_ns, 1000000000ull}},
     LWM2_M_mpi_p2p_time,
     1,
     10.0,
     NULL,
     0},
    {"avg p2p message size: sent + received per message, not per call",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_p2p_calls, 40},
      {LWM2_C_mpi_p2p_bytes_sent, 600},
      {LWM2_C_mpi_p2p_bytes_recv, 400},
      {LWM2_C_mpi_p2p_msgs_sent, 6},
      {LWM2_C_mpi_p2p_msgs_recv, 4}},
     LWM2_M_mpi_p2p_msg_size,
     1,
     100.0,
     NULL,
     0},
    {"avg p2p message size without calls is missing",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{0, 0}},
     LWM2_M_mpi_p2p_msg_size,
     0,
     0,
     "no point-to-point messages",
     0},
    {"collective received size",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_coll_calls, 4}, {LWM2_C_mpi_coll_bytes_recv, 4096}},
     LWM2_M_mpi_coll_recv_size,
     1,
     1024.0,
     NULL,
     0},
    {"p2p call frequency",
     2000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_p2p_calls, 5000}},
     LWM2_M_mpi_p2p_freq,
     1,
     2500.0,
     NULL,
     0},
    {"collective transfer rate = sent / time",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_coll_bytes_sent, 1000000}, {LWM2_C_mpi_coll_ns, 1000000000ull}},
     LWM2_M_mpi_coll_rate,
     1,
     1e6,
     NULL,
     0},
    {"MPI group missing overrides zero counters",
     10000000000ull,
     0,
     0,
     1,
     1u << LWM2_G_MPI,
     {{0, 0}},
     LWM2_M_mpi_time,
     0,
     0,
     "not measured: no MPI here",
     0},
    {"HWC group missing gives the platform reason",
     10000000000ull,
     0,
     0,
     1,
     1u << LWM2_G_HWC,
     {{LWM2_C_hwc_cycles, 5}, {LWM2_C_hwc_instructions, 5}},
     LWM2_M_cpi,
     0,
     0,
     "not measured: no hardware counters",
     0},
    {"CPI without instructions is missing",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{0, 0}},
     LWM2_M_cpi,
     0,
     0,
     "not measured: no hardware counters on this platform",
     0},
    {"POSIX I/O share adds read, write and metadata",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_posix_read_ns, 1000000000ull},
      {LWM2_C_posix_write_ns, 1000000000ull},
      {LWM2_C_posix_meta_ns, 500000000ull}},
     LWM2_M_posix_io_time,
     1,
     25.0,
     NULL,
     0},
    {"CUDA h2d average volume",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_cuda_h2d_count, 4}, {LWM2_C_cuda_h2d_bytes, 4000}, {LWM2_C_cuda_calls, 9}},
     LWM2_M_cuda_h2d_size,
     1,
     1000.0,
     NULL,
     0},
    {"CUDA transfer frequency counts all copies",
     1000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_cuda_h2d_count, 4},
      {LWM2_C_cuda_d2h_count, 3},
      {LWM2_C_cuda_other_copy_count, 1},
      {LWM2_C_cuda_calls, 8}},
     LWM2_M_cuda_transfer_freq,
     1,
     8.0,
     NULL,
     0},
    {"CUDA time share",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_cuda_ns, 2500000000ull}, {LWM2_C_cuda_calls, 8}},
     LWM2_M_cuda_time,
     1,
     25.0,
     NULL,
     0},
    {"CUDA metrics without CUDA calls are not applicable",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{0, 0}},
     LWM2_M_cuda_time,
     0,
     0,
     "no CUDA calls",
     0},
    {"MPI metrics of a non-MPI process are not applicable",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{LWM2_C_mpi_p2p_ns, 5}},
     LWM2_M_mpi_time,
     0,
     0,
     "not an MPI process",
     1},
    {"MPI-IO share of a non-MPI process is not applicable",
     10000000000ull,
     0,
     0,
     1,
     0,
     {{0, 0}},
     LWM2_M_mpiio_time,
     0,
     0,
     "not an MPI process",
     1},
    {"duration in seconds", 2500000000ull, 0, 0, 1, 0, {{0, 0}}, LWM2_M_duration, 1, 2.5, NULL, 0},
    {"no wall time: duration missing",
     0,
     0,
     0,
     1,
     0,
     {{0, 0}},
     LWM2_M_duration,
     0,
     0,
     "no run time",
     0},
};

static const struct fcase {
	double v;
	const char *unit;
	const char *want;
} fcases[] = {
    {0, "B", "0 B"},
    {512, "B", "512 B"},
    {1250000000.0, "B/s", "1.25 GB/s"},
    {3200, "/s", "3.20 k/s"},
    {12.54, "%", "12.5 %"},
    {1.5, "", "1.50"},
    {7, "", "7"},
    {93.14, "s", "93.1 s"},
    {3600, "s", "3600 s"},
    {999.7, "B", "1.00 kB"},
    {0.0004, "/s", "<0.001 /s"},
};

static void scope_with(struct lwm2_scope *s, int metric, double min, double avg, double max,
                       uint64_t n)
{
	s->stat[metric].n = n;
	s->stat[metric].min = min;
	s->stat[metric].avg = avg;
	s->stat[metric].max = max;
}

static void metric_cases(void)
{
	for (size_t i = 0; i < sizeof(mcases) / sizeof(mcases[0]); i++) {
		const struct mcase *c = &mcases[i];
		struct lwm2_proc_values pv;
		struct lwm2_metrics m;

		memset(&pv, 0, sizeof(pv));
		pv.wall_ns = c->wall_ns;
		pv.samples_total = c->samples;
		pv.sample_period_us = c->period_us;
		pv.threads_total = c->threads;
		pv.missing = c->missing;
		pv.flags = c->not_mpi ? 0 : LWM2_F_MPI;
		pv.missing_reason[LWM2_G_MPI] = "no MPI here";
		pv.missing_reason[LWM2_G_HWC] = "no hardware counters";
		pv.samples_main = c->samples;
		pv.has_samples_main = true;
		pv.has_msg_counts = true;
		for (size_t k = 0; k < 6; k++)
			if (c->set[k].v)
				pv.counters[c->set[k].c] = c->set[k].v;
		lwm2_metrics_compute(&pv, &m);
		ok(m.m[c->metric].valid == c->valid, "%s: valid=%d", c->name, c->valid);
		if (c->valid)
			ok(fabs(m.m[c->metric].value - c->want) <= 1e-9 * fabs(c->want),
			   "%s: %g == %g", c->name, m.m[c->metric].value, c->want);
		else
			ok(strstr(m.m[c->metric].reason, c->reason_has) != NULL,
			   "%s: reason '%s' has '%s'", c->name, m.m[c->metric].reason,
			   c->reason_has);
	}
}

static void format_cases(void)
{
	char b[64];

	for (size_t i = 0; i < sizeof(fcases) / sizeof(fcases[0]); i++)
		is_str(lwm2_format_value(fcases[i].v, fcases[i].unit, b, sizeof(b)), fcases[i].want,
		       "format %g %s", fcases[i].v, fcases[i].unit);
}

/* Metric table: ids unique and found by name, seed order kept. */
static void metric_table(void)
{
	for (int i = 0; i < LWM2_NMETRICS; i++)
		if (lwm2_metric_index(lwm2_metric_ids[i]) != i)
			ok(0, "metric %s found at its index", lwm2_metric_ids[i]);
	{
		struct lwm2_proc_values pv;
		struct lwm2_metrics m;

		memset(&pv, 0, sizeof(pv));
		pv.wall_ns = 10000000000ull;
		pv.flags = LWM2_F_MPI;
		pv.sample_period_us = 10000;
		pv.samples_total = 100;
		pv.counters[LWM2_C_mpi_p2p_bytes_sent] = 1000;
		lwm2_metrics_compute(&pv, &m);
		ok(!m.m[LWM2_M_mpi_p2p_msg_size].valid &&
		       !strcmp(m.m[LWM2_M_mpi_p2p_msg_size].reason,
		               lwm2_why_texts[LWM2_WHY_OLD_RECORD]),
		   "message size of a record without message counts: %s",
		   m.m[LWM2_M_mpi_p2p_msg_size].reason);
		ok(!m.m[LWM2_M_thread_ratio].valid && !strcmp(m.m[LWM2_M_thread_ratio].reason,
		                                              lwm2_why_texts[LWM2_WHY_OLD_RECORD]),
		   "thread ratio of a record without main-thread samples: %s",
		   m.m[LWM2_M_thread_ratio].reason);
	}
}

/* Threads: the seed's ratio and the busy threads, apart.  A
 * busy-polling rank on a shared core: 90 samples in 10 s at
 * 10 ms, 80 of them on the main thread. */
static void thread_metrics(void)
{
	struct lwm2_proc_values pv;
	struct lwm2_metrics m;

	memset(&pv, 0, sizeof(pv));
	pv.wall_ns = 10000000000ull;
	pv.sample_period_us = 10000;
	pv.samples_total = 90;
	pv.samples_main = 80;
	pv.has_samples_main = true;
	pv.threads_total = 3;
	lwm2_metrics_compute(&pv, &m);
	ok(m.m[LWM2_M_thread_ratio].valid && fabs(m.m[LWM2_M_thread_ratio].value - 1.125) < 1e-9,
	   "thread ratio = all samples / main-thread samples: %g", m.m[LWM2_M_thread_ratio].value);
	ok(m.m[LWM2_M_avg_threads].valid && fabs(m.m[LWM2_M_avg_threads].value - 0.09) < 1e-9,
	   "busy threads = samples / (wall / period): %g", m.m[LWM2_M_avg_threads].value);
	pv.samples_main = 0;
	lwm2_metrics_compute(&pv, &m);
	is_str(m.m[LWM2_M_thread_ratio].reason, "no samples of the main thread",
	       "thread ratio without main-thread samples");
}

/* One text per cause: no two causes share a text, and every text is
 * used as it stands in the table. */
static void reasons(void)
{
	for (int i = 0; i < LWM2_NWHYS; i++)
		for (int j = i + 1; j < LWM2_NWHYS; j++)
			if (!strcmp(lwm2_why_texts[i], lwm2_why_texts[j]))
				ok(0, "reasons %d and %d differ", i, j);
	{
		/* The same cause in two processes (no counter moved; the library
		 * said there are none) reads the same. */
		struct lwm2_proc_values pa, pb;
		struct lwm2_metrics ma, mb;

		memset(&pa, 0, sizeof(pa));
		pa.wall_ns = 10000000000ull;
		pb = pa;
		pb.missing = 1u << LWM2_G_HWC;
		pb.missing_reason[LWM2_G_HWC] = "no hardware counters on this platform";
		lwm2_metrics_compute(&pa, &ma);
		lwm2_metrics_compute(&pb, &mb);
		is_str(ma.m[LWM2_M_cpi].reason, mb.m[LWM2_M_cpi].reason,
		       "no PMU: one reason whether the library or the counters tell");
		is_str(ma.m[LWM2_M_llc_miss_freq].reason, mb.m[LWM2_M_cpi].reason,
		       "no PMU: the same reason for every hardware-counter metric");
	}
	ok(LWM2_M_duration < LWM2_M_mpi_time && LWM2_M_mpi_coll_rate < LWM2_M_mpiio_time &&
	       LWM2_M_read_bw < LWM2_M_avg_threads && LWM2_M_llc_miss_freq < LWM2_M_cuda_time,
	   "metric sections in the seed's order");
	is_int(lwm2_metric_index("nonexistent"), -1, "unknown metric id");
}

/* Guidance rules: each rule's conditions refer to valid metrics, and
 * firing follows the thresholds. */
static void guidance_thresholds(void)
{
	for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
		const struct lwm2_guidance_rule *g = &lwm2_guidance_rules[r];
		ok(g->cond[0].kind != LWM2_COND_NONE && g->cond[0].metric >= 0 &&
		       g->cond[0].metric < LWM2_NMETRICS && g->finding && g->next,
		   "rule %s is well-formed", g->id);
	}
	{
		struct lwm2_scope s;
		const struct lwm2_guidance_rule *share = NULL, *imb = NULL, *thr = NULL;

		for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
			if (!strcmp(lwm2_guidance_rules[r].id, "mpi-share"))
				share = &lwm2_guidance_rules[r];
			if (!strcmp(lwm2_guidance_rules[r].id, "mpi-imbalance"))
				imb = &lwm2_guidance_rules[r];
			if (!strcmp(lwm2_guidance_rules[r].id, "threads-vs-cores"))
				thr = &lwm2_guidance_rules[r];
		}
		if (!share || !imb || !thr) {
			ok(0, "rules mpi-share, mpi-imbalance and threads-vs-cores are there");
			return;
		}
		memset(&s, 0, sizeof(s));
		ok(!lwm2_guidance_fires(share, &s), "mpi-share silent without data");
		s.processes = s.mpi_processes = 4;
		scope_with(&s, LWM2_M_duration, 100, 100, 100, 4);
		scope_with(&s, LWM2_M_mpi_time, 30, share->cond[0].value + 1, 50, 4);
		ok(lwm2_guidance_fires(share, &s), "mpi-share fires above its threshold");
		scope_with(&s, LWM2_M_mpi_time, 30, share->cond[0].value - 1, 50, 4);
		ok(!lwm2_guidance_fires(share, &s), "mpi-share silent below its threshold");
		scope_with(&s, LWM2_M_mpi_time, 2, 20, 40, 4);
		ok(imb && lwm2_guidance_fires(imb, &s), "mpi-imbalance fires on 2 %% vs 40 %%");
		scope_with(&s, LWM2_M_mpi_time, 38, 39, 40, 4);
		ok(!lwm2_guidance_fires(imb, &s), "mpi-imbalance silent on 38 %% vs 40 %%");
		scope_with(&s, LWM2_M_avg_threads, 1, 1.2, 1.5, 4);
		ok(thr && !lwm2_guidance_fires(thr, &s), "threads-vs-cores needs the core count");
		s.cpus_per_task = 8;
		ok(lwm2_guidance_fires(thr, &s), "threads-vs-cores: 1.2 threads on 8 cores");
		/* Preconditions: the same values in a run too short, or in a
		 * job without MPI, do not fire. */
		scope_with(&s, LWM2_M_mpi_time, 30, 60, 90, 4);
		ok(lwm2_guidance_fires(share, &s), "mpi-share fires in a 100 s run of 4 ranks");
		scope_with(&s, LWM2_M_duration, 2, 2, 2, 4);
		ok(!lwm2_guidance_fires(share, &s), "mpi-share silent in a 2 s run");
		ok(!lwm2_guidance_applies(share, &s), "... because it does not apply");
		scope_with(&s, LWM2_M_duration, 100, 100, 100, 4);
		s.mpi_processes = 1;
		ok(!lwm2_guidance_fires(share, &s), "mpi-share silent for one MPI process");
		s.mpi_size = 4;
		ok(lwm2_guidance_fires(share, &s), "... but fires for one rank of four");
		s.mpi_size = 0;
		s.mpi_processes = 4;
		/* busy-polling ranks on a loaded node: 0.09 threads busy on the
		 * one core each was given */
		scope_with(&s, LWM2_M_avg_threads, 0.05, 0.09, 0.6, 4);
		s.cpus_per_task = 1;
		ok(lwm2_guidance_fires(thr, &s), "threads-vs-cores: 0.09 busy on 1 core each");
		scope_with(&s, LWM2_M_avg_threads, 3, 3.5, 4, 4);
		s.cpus_per_task = 2;
		for (size_t r = 0; r < lwm2_nguidance_rules; r++)
			if (!strcmp(lwm2_guidance_rules[r].id, "threads-oversubscribed"))
				ok(lwm2_guidance_fires(&lwm2_guidance_rules[r], &s),
				   "threads-oversubscribed: 3.5 busy threads on 2 cores");
	}
}

/* A process tree without MPI (a shell loop, fio and its
 * workers): one process does all the I/O, yet collective MPI-IO
 * is no advice for it. */
static void guidance_without_mpi(void)
{
	struct lwm2_scope s;
	const struct lwm2_guidance_rule *io = NULL, *ioshare = NULL;

	for (size_t r = 0; r < lwm2_nguidance_rules; r++) {
		if (!strcmp(lwm2_guidance_rules[r].id, "io-imbalance"))
			io = &lwm2_guidance_rules[r];
		if (!strcmp(lwm2_guidance_rules[r].id, "io-share"))
			ioshare = &lwm2_guidance_rules[r];
	}
	memset(&s, 0, sizeof(s));
	s.processes = 5;
	scope_with(&s, LWM2_M_duration, 30, 30, 30, 5);
	scope_with(&s, LWM2_M_posix_io_time, 0, 18, 90, 5);
	ok(io && !lwm2_guidance_fires(io, &s), "io-imbalance silent without MPI");
	ok(ioshare && lwm2_guidance_fires(ioshare, &s), "io-share still fires there");
	s.mpi_processes = 5;
	ok(lwm2_guidance_fires(io, &s), "io-imbalance fires for 5 MPI ranks");
	scope_with(&s, LWM2_M_duration, 3, 3, 3, 5);
	ok(!lwm2_guidance_fires(io, &s) && !lwm2_guidance_fires(ioshare, &s),
	   "neither fires in a 3 s run");
}

/* The one-process digest names the seed's metrics and the missing
 * reasons; a high MPI share brings its guidance. */
static void render_rank(void)
{
	size_t len = sizeof(struct lwm2_rank_record);
	struct lwm2_rank_record *r = calloc(1, len);
	char path[] = "/tmp/lwm2-render-XXXXXX", *text;
	int fd = mkstemp(path);
	off_t n;

	r->pid = 4711;
	r->mpi_rank = 3;
	r->mpi_size = 4;
	r->task_id = 3;
	r->flags = LWM2_F_MPI | LWM2_F_INCOMPLETE;
	strcpy(r->hostname, "n1");
	strcpy(r->executable, "/usr/bin/solver");
	r->start_ns = 1000000000000ll;
	r->end_ns = r->start_ns + 10000000000ll;
	r->counters[LWM2_C_mpi_p2p_ns] = 6000000000ull;
	r->counters[LWM2_C_mpi_p2p_calls] = 100;
	r->missing = 1u << LWM2_G_HWC;
	strcpy(r->missing_reason[LWM2_G_HWC], "no hardware counters on this platform");
	r->threads_total = 1;
	ok(fd >= 0 && lwm2_render_rank(r, fd) == 0, "render_rank writes to an fd");
	n = lseek(fd, 0, SEEK_END);
	text = calloc(1, (size_t)n + 1);
	ok(pread(fd, text, (size_t)n, 0) == n, "read the rendered text back");
	ok(strstr(text, "process 4711 (solver), MPI rank 3 on n1") != NULL, "title");
	for (int i = 0; i < LWM2_NMETRICS; i++)
		if (!strstr(text, lwm2_metric_labels[i]) != lwm2_metric_on_request(i))
			ok(0, "label %s rendered (on request only: %d)", lwm2_metric_labels[i],
			   lwm2_metric_on_request(i));
	ok(strstr(text, "Time in MPI calls, without Init/Finalize [%]") && strstr(text, "60.0 %"),
	   "MPI share rendered with its unit");
	ok(strstr(text, "n/a (not measured: no hardware counters on this platform)") != NULL,
	   "missing CPI says why");
	ok(strstr(text, "[mpi-share]") && strstr(text, "Score-P"),
	   "high MPI share gives guidance and a tool");
	ok(strstr(text, "did not reach their normal end") != NULL, "incomplete noted");
	ok(lwm2_render_rank(r, -1) == -1, "a bad fd is an error, not a crash");
	close(fd);
	unlink(path);
	free(text);
	free(r);
}

/* The floating-point rate, and what a role that was not counted gives. */
static void counted_roles(void)
{
	struct lwm2_proc_values pv;
	struct lwm2_metrics m;

	memset(&pv, 0, sizeof(pv));
	pv.wall_ns = 4000000000ull;
	pv.counters[LWM2_C_hwc_cycles] = 8000000000ull;
	pv.counters[LWM2_C_hwc_instructions] = 4000000000ull;
	pv.counters[LWM2_C_hwc_fp_ops] = 1000000000ull;
	pv.hwc_events = "cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS fp_ops=PAPI_FP_OPS";
	lwm2_metrics_compute(&pv, &m);
	ok(m.m[LWM2_M_fp_rate].valid && fabs(m.m[LWM2_M_fp_rate].value - 2.5e8) < 1e-3,
	   "FLOP rate: 1e9 operations in 4 s of wall time are 2.5e8 /s (%g)",
	   m.m[LWM2_M_fp_rate].value);
	ok(m.m[LWM2_M_cpi].valid && fabs(m.m[LWM2_M_cpi].value - 2) < 1e-9, "CPI beside it: 2");
	ok(!m.m[LWM2_M_l1_hit_ratio].valid &&
	       strstr(m.m[LWM2_M_l1_hit_ratio].reason, "no event was counted for it"),
	   "a role the events leave out: not measured, not 0 (%s)",
	   m.m[LWM2_M_l1_hit_ratio].reason);
	ok(!m.m[LWM2_M_llc_miss_freq].valid, "nor its frequency (%s)",
	   m.m[LWM2_M_llc_miss_freq].reason);
	pv.hwc_events = "cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS";
	pv.counters[LWM2_C_hwc_fp_ops] = 0;
	lwm2_metrics_compute(&pv, &m);
	ok(!m.m[LWM2_M_fp_rate].valid && !m.m[LWM2_M_fp_fraction].valid,
	   "fp_ops not counted: no rate and no share, not 0 (%s)", m.m[LWM2_M_fp_rate].reason);
	pv.hwc_events = NULL;
	lwm2_metrics_compute(&pv, &m);
	ok(m.m[LWM2_M_fp_rate].valid && m.m[LWM2_M_fp_rate].value == 0,
	   "events not known (a record before version 4): every role taken as counted, as then");
	memset(&pv, 0, sizeof(pv));
	pv.wall_ns = 4000000000ull;
	lwm2_metrics_compute(&pv, &m);
	ok(!m.m[LWM2_M_fp_rate].valid &&
	       strstr(m.m[LWM2_M_fp_rate].reason, "no hardware counters on this platform"),
	   "no counter moved: the rate says no counters (%s)", m.m[LWM2_M_fp_rate].reason);
}

/* The roles counted only where an event is named for them: integer
 * instructions, loads and stores, level 2, TLB. */
static void named_roles(void)
{
	struct lwm2_proc_values pv;
	struct lwm2_metrics m;

	memset(&pv, 0, sizeof(pv));
	pv.wall_ns = 2000000000ull;
	pv.counters[LWM2_C_hwc_cycles] = 1000;
	pv.counters[LWM2_C_hwc_instructions] = 1000000;
	pv.counters[LWM2_C_hwc_int_ops] = 400000;
	pv.counters[LWM2_C_hwc_loads] = 200000;
	pv.counters[LWM2_C_hwc_stores] = 100000;
	pv.counters[LWM2_C_hwc_l2d_accesses] = 1000;
	pv.counters[LWM2_C_hwc_l2d_misses] = 250;
	pv.counters[LWM2_C_hwc_tlb_misses] = 5000;
	pv.hwc_events = "cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS int_ops=PAPI_INT_INS "
	                "loads=PAPI_LD_INS stores=PAPI_SR_INS l2d_misses=PAPI_L2_DCM "
	                "l2d_accesses=PAPI_L2_DCA tlb_misses=PAPI_TLB_DM";
	lwm2_metrics_compute(&pv, &m);
	ok(m.m[LWM2_M_int_fraction].valid && fabs(m.m[LWM2_M_int_fraction].value - 40) < 1e-9,
	   "integer share: 40 %% (%g)", m.m[LWM2_M_int_fraction].value);
	ok(m.m[LWM2_M_mem_fraction].valid && fabs(m.m[LWM2_M_mem_fraction].value - 30) < 1e-9,
	   "loads and stores: 30 %% (%g)", m.m[LWM2_M_mem_fraction].value);
	ok(m.m[LWM2_M_l2_hit_ratio].valid && fabs(m.m[LWM2_M_l2_hit_ratio].value - 75) < 1e-9,
	   "L2 hit ratio: 75 %% (%g)", m.m[LWM2_M_l2_hit_ratio].value);
	ok(m.m[LWM2_M_tlb_miss_freq].valid && fabs(m.m[LWM2_M_tlb_miss_freq].value - 2500) < 1e-9,
	   "TLB misses: 2500 /s (%g)", m.m[LWM2_M_tlb_miss_freq].value);
	pv.hwc_events = "cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS loads=PAPI_LD_INS";
	lwm2_metrics_compute(&pv, &m);
	ok(!m.m[LWM2_M_mem_fraction].valid && !m.m[LWM2_M_int_fraction].valid,
	   "loads without stores: no share of the two (%s)", m.m[LWM2_M_mem_fraction].reason);
	pv.hwc_events = NULL;
	lwm2_metrics_compute(&pv, &m);
	ok(!m.m[LWM2_M_tlb_miss_freq].valid && m.m[LWM2_M_cpi].valid,
	   "events not known (a record before version 4): the named roles were not counted, the "
	   "defaults were");
	pv.hwc_events = "l2d_misses=PAPI_L2_DCM l2d_accesses=PAPI_L2_DCA";
	pv.counters[LWM2_C_hwc_l2d_misses] = 2000;
	lwm2_metrics_compute(&pv, &m);
	ok(!m.m[LWM2_M_l2_hit_ratio].valid && strstr(m.m[LWM2_M_l2_hit_ratio].reason,
	                                             "level-2 counters were not measured together"),
	   "L2 misses above accesses: not measured together (%s)", m.m[LWM2_M_l2_hit_ratio].reason);
	ok(lwm2_metric_on_request(LWM2_M_tlb_miss_freq) &&
	       lwm2_metric_on_request(LWM2_M_mem_fraction) && !lwm2_metric_on_request(LWM2_M_cpi) &&
	       !lwm2_metric_on_request(LWM2_M_fp_rate) && !lwm2_metric_on_request(LWM2_M_mpi_time),
	   "the named roles' metrics are shown on request, the others always");
}

/* A label never names what a role usually counts when something else was
 * counted there. */
static void labels(void)
{
	static const struct {
		const char *events;
		int metric;
		const char *want;
	} cases[] = {
	    {NULL, LWM2_M_fp_rate, "Floating-point rate"},
	    {"", LWM2_M_fp_fraction, "Floating-point share of all instructions"},
	    {"fp_ops=PAPI_FP_OPS instructions=PAPI_TOT_INS", LWM2_M_fp_rate,
	     "Floating-point operations per second (FLOP rate)"},
	    {"fp_ops=PAPI_FP_INS", LWM2_M_fp_rate, "Floating-point instructions per second"},
	    {"instructions=PAPI_TOT_INS fp_ops=PAPI_FP_INS", LWM2_M_fp_fraction,
	     "Floating-point instructions among all instructions"},
	    {"fp_ops=perf::TASK-CLOCK", LWM2_M_fp_rate, "perf::TASK-CLOCK per second"},
	    {"instructions=PAPI_TOT_INS fp_ops=PAPI_VEC_INS", LWM2_M_fp_fraction,
	     "PAPI_VEC_INS among all instructions"},
	    {"fp_ops=PAPI_FP_INS|PAPI_FP_OPS", LWM2_M_fp_rate,
	     "PAPI_FP_INS|PAPI_FP_OPS per second"},
	    {"cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS", LWM2_M_cpi,
	     "Average cycles per instruction (CPI)"},
	    {"cycles=perf::CYCLES|PAPI_TOT_CYC instructions=perf::INSTRUCTIONS", LWM2_M_cpi,
	     "Average cycles per instruction (CPI)"},
	    {"cycles=perf::TASK-CLOCK instructions=PAPI_TOT_INS", LWM2_M_cpi,
	     "perf::TASK-CLOCK per instruction"},
	    {"cycles=PAPI_TOT_CYC instructions=PAPI_FP_INS", LWM2_M_cpi,
	     "PAPI_TOT_CYC per PAPI_FP_INS"},
	    {"l1d_misses=PAPI_L2_DCM l1d_accesses=PAPI_L1_DCA", LWM2_M_l1_hit_ratio,
	     "1 - PAPI_L2_DCM / PAPI_L1_DCA"},
	    {"llc_misses=PAPI_L2_TCM", LWM2_M_llc_miss_freq, "Last-level cache miss frequency"},
	    {"llc_misses=PAPI_TLB_DM", LWM2_M_llc_miss_freq, "PAPI_TLB_DM per second"},
	    {"fp_ops=perf::TASK-CLOCK", LWM2_M_mpi_time,
	     "Time in MPI calls, without Init/Finalize"},
	    {"loads=PAPI_LD_INS stores=PAPI_SR_INS instructions=PAPI_TOT_INS", LWM2_M_mem_fraction,
	     "Loads and stores among all instructions"},
	    {"loads=perf::L1-DCACHE-LOADS stores=PAPI_SR_INS", LWM2_M_mem_fraction,
	     "Loads and stores among all instructions"},
	    {"loads=PAPI_LD_INS stores=perf::MINOR-FAULTS", LWM2_M_mem_fraction,
	     "PAPI_LD_INS and perf::MINOR-FAULTS among all instructions"},
	    {"tlb_misses=perf::PAGE-FAULTS", LWM2_M_tlb_miss_freq, "perf::PAGE-FAULTS per second"},
	    {"l2d_misses=PAPI_L2_TCM l2d_accesses=PAPI_L2_TCA", LWM2_M_l2_hit_ratio,
	     "Level-2 data cache hit ratio"},
	};
	char buf[160], tiny[8];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(lwm2_metric_label(cases[i].events, cases[i].metric, buf, sizeof(buf)),
		       cases[i].want, "label of %s with %s", lwm2_metric_ids[cases[i].metric],
		       cases[i].events ? cases[i].events : "(no events)");
	is_str(lwm2_metric_label("fp_ops=perf::TASK-CLOCK", LWM2_M_fp_rate, tiny, sizeof(tiny)),
	       "perf::T", "a label cut to its buffer, terminated");
}

int main(void)
{
	metric_cases();
	counted_roles();
	named_roles();
	labels();
	format_cases();
	metric_table();
	thread_metrics();
	reasons();
	guidance_thresholds();
	guidance_without_mpi();
	render_rank();
	return done_testing();
}
