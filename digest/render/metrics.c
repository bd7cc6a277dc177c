/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The digest metrics of one process, from its counters (signal-safe). */
#include "hwc_roles.h"
#include "lwm2_render.h"
#include "lwm2_sums.h"

#include <string.h>

const char *const lwm2_metric_ids[LWM2_NMETRICS] = {
#define LWM2_X(id, group, unit, label) #id,
    LWM2_METRICS(LWM2_X)
#undef LWM2_X
};

const char *const lwm2_metric_units[LWM2_NMETRICS] = {
#define LWM2_X(id, group, unit, label) unit,
    LWM2_METRICS(LWM2_X)
#undef LWM2_X
};

const char *const lwm2_metric_labels[LWM2_NMETRICS] = {
#define LWM2_X(id, group, unit, label) label,
    LWM2_METRICS(LWM2_X)
#undef LWM2_X
};

const enum lwm2_metric_group lwm2_metric_groups[LWM2_NMETRICS] = {
#define LWM2_X(id, group, unit, label) LWM2_MG_##group,
    LWM2_METRICS(LWM2_X)
#undef LWM2_X
};

const char *const lwm2_why_texts[LWM2_NWHYS] = {
#define LWM2_X(name, text) text,
    LWM2_WHYS(LWM2_X)
#undef LWM2_X
};

const char *const lwm2_mgroup_titles[LWM2_NMGROUPS] = {
    "General information",       "Message-passing performance", "I/O performance",
    "Multithreaded performance", "Sequential performance",      "CUDA performance",
};

int lwm2_metric_index(const char *id)
{
	for (int i = 0; i < LWM2_NMETRICS; i++)
		if (strcmp(lwm2_metric_ids[i], id) == 0)
			return i;
	return -1;
}

void lwm2_proc_from_record(const struct lwm2_rank_record *r, struct lwm2_proc_values *pv)
{
	memset(pv, 0, sizeof(*pv));
	memcpy(pv->counters, r->counters, sizeof(pv->counters));
	/* an older build's record, brought to this layout, has fewer */
	for (uint32_t c = r->ncounters; c < LWM2_NCOUNTERS; c++)
		pv->absent[c] = true;
	/* Unsigned: a crafted record's times may lie more than INT64_MAX apart. */
	pv->wall_ns = r->end_ns > r->start_ns ? (uint64_t)r->end_ns - (uint64_t)r->start_ns : 0;
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		pv->samples_total += r->samples[e];
	pv->samples_main = r->samples_main;
	pv->has_samples_main = true;
	pv->has_msg_counts = true;
	pv->sample_period_us = r->sample_period_us;
	pv->threads_total = r->threads_total;
	pv->missing = r->missing;
	pv->flags = r->flags;
	for (int g = 0; g < LWM2_NGROUPS; g++)
		pv->missing_reason[g] = r->missing_reason[g];
	pv->hwc_events = r->hwc_events;
}

static void set_reason(struct lwm2_metric_value *v, const char *a, const char *b)
{
	size_t n = 0, cap = sizeof(v->reason) - 1;

	v->valid = false;
	v->value = 0;
	for (const char *p = a; p && *p && n < cap; p++)
		v->reason[n++] = *p;
	for (const char *p = b; p && *p && n < cap; p++)
		v->reason[n++] = *p;
	v->reason[n] = '\0';
}

static void set_value(struct lwm2_metric_value *v, double x)
{
	v->valid = true;
	v->value = x;
	v->reason[0] = '\0';
}

/* Metric -> the record group that measures it (-1: always measured). */
static int metric_record_group(int m)
{
	switch (lwm2_metric_groups[m]) {
	case LWM2_MG_MPI:
		return LWM2_G_MPI;
	case LWM2_MG_IO:
		return m == LWM2_M_mpiio_time ? LWM2_G_MPI : LWM2_G_POSIX;
	case LWM2_MG_THREADS:
		return m == LWM2_M_avg_threads || m == LWM2_M_thread_ratio ? LWM2_G_SAMPLING : -1;
	case LWM2_MG_SEQ:
		return LWM2_G_HWC;
	case LWM2_MG_CUDA:
		return LWM2_G_CUDA;
	default:
		return -1;
	}
}

static void set_why(struct lwm2_metric_value *v, enum lwm2_why why)
{
	set_reason(v, lwm2_why_texts[why], NULL);
}

/* num / den, or missing with why when den is zero. */
static void ratio(struct lwm2_metric_value *v, double num, double den, double scale,
                  enum lwm2_why why)
{
	if (den <= 0)
		set_why(v, why);
	else
		set_value(v, num / den * scale);
}

/* A share of the process's wall time spent in some calls, in percent.
 * The calls' time is summed over the process's threads, and threads that
 * wait at once (an MPI progress thread beside the main one, I/O threads)
 * sum to more than the wall time: the share of the wall time in which
 * some thread was in such a call is at most 100 %, and is shown so, in
 * every view that reads this metric. */
static void share(struct lwm2_metric_value *v, double ns, double wall_ns, enum lwm2_why why)
{
	ratio(v, ns < wall_ns ? ns : wall_ns, wall_ns, 100, why);
}

/* The message-passing group: MPI time and its parts, message and
 * collective sizes, frequencies and rates. */
static void mpi_metrics(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	const uint64_t *c = pv->counters;
	const enum lwm2_why no_wall = LWM2_WHY_NO_WALL;
	double wall_s = (double)pv->wall_ns / 1e9;
	double p2p_ns = (double)c[LWM2_C_mpi_p2p_ns], coll_ns = (double)c[LWM2_C_mpi_coll_ns];
	double mpiio_ns = (double)c[LWM2_C_mpiio_read_ns] + (double)c[LWM2_C_mpiio_write_ns] +
	                  (double)c[LWM2_C_mpiio_meta_ns];
	/* MPI_Init and MPI_Finalize have their own row: in a short run they
	 * would be most of "MPI time" (lwm2_sums.h). */
	double mpi_ns = (double)LWM2_SUM(c, lwm2_mpi_time_ids);
	double msgs = (double)c[LWM2_C_mpi_p2p_msgs_sent] + (double)c[LWM2_C_mpi_p2p_msgs_recv];

	/* Shares are of the process's wall time (share(): at most 100 %). */
	share(&m[LWM2_M_mpi_time], mpi_ns, (double)pv->wall_ns, no_wall);
	share(&m[LWM2_M_mpi_init_time], (double)c[LWM2_C_mpi_init_ns], (double)pv->wall_ns,
	      no_wall);
	share(&m[LWM2_M_mpi_p2p_time], p2p_ns, (double)pv->wall_ns, no_wall);
	share(&m[LWM2_M_mpi_coll_time], coll_ns, (double)pv->wall_ns, no_wall);
	/* A message is a send (posted or started) or a receive as it
	 * completes; Wait, Test, Probe and the like move none, so dividing by
	 * calls would make messages look far smaller than they are. */
	if (!pv->has_msg_counts)
		set_why(&m[LWM2_M_mpi_p2p_msg_size], LWM2_WHY_OLD_RECORD);
	else
		ratio(&m[LWM2_M_mpi_p2p_msg_size],
		      (double)c[LWM2_C_mpi_p2p_bytes_sent] + (double)c[LWM2_C_mpi_p2p_bytes_recv],
		      msgs, 1, LWM2_WHY_NO_P2P_MSGS);
	ratio(&m[LWM2_M_mpi_coll_sent_size], (double)c[LWM2_C_mpi_coll_bytes_sent],
	      (double)c[LWM2_C_mpi_coll_calls], 1, LWM2_WHY_NO_COLL_CALLS);
	ratio(&m[LWM2_M_mpi_coll_recv_size], (double)c[LWM2_C_mpi_coll_bytes_recv],
	      (double)c[LWM2_C_mpi_coll_calls], 1, LWM2_WHY_NO_COLL_CALLS);
	ratio(&m[LWM2_M_mpi_p2p_freq], (double)c[LWM2_C_mpi_p2p_calls], wall_s, 1, no_wall);
	ratio(&m[LWM2_M_mpi_coll_freq], (double)c[LWM2_C_mpi_coll_calls], wall_s, 1, no_wall);
	ratio(&m[LWM2_M_mpi_p2p_rate], (double)c[LWM2_C_mpi_p2p_bytes_sent], p2p_ns, 1e9,
	      LWM2_WHY_NO_P2P_TIME);
	ratio(&m[LWM2_M_mpi_coll_rate], (double)c[LWM2_C_mpi_coll_bytes_sent], coll_ns, 1e9,
	      LWM2_WHY_NO_COLL_TIME);
	share(&m[LWM2_M_mpiio_time], mpiio_ns, (double)pv->wall_ns, no_wall);
}

/* The file I/O group: shares, bytes and bandwidths. */
static void io_metrics(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	const uint64_t *c = pv->counters;
	const enum lwm2_why no_wall = LWM2_WHY_NO_WALL;
	double posix_ns = (double)LWM2_SUM(c, lwm2_posix_io_time_ids);

	share(&m[LWM2_M_posix_io_time], posix_ns, (double)pv->wall_ns, no_wall);
	/* fsync/fdatasync time is also metadata time, so it is already part
	 * of posix_io_time. */
	share(&m[LWM2_M_sync_time], (double)c[LWM2_C_posix_sync_ns], (double)pv->wall_ns, no_wall);
	/* POSIX and asynchronous bytes (lwm2_sums.h); asynchronous requests'
	 * time is not read or write time, so they stay out of the bandwidths. */
	set_value(&m[LWM2_M_bytes_written], (double)LWM2_SUM(c, lwm2_write_bytes_ids));
	set_value(&m[LWM2_M_bytes_read], (double)LWM2_SUM(c, lwm2_read_bytes_ids));
	/* A write returns when the data is in the page cache; a writer that
	 * syncs waits for the device there, so the sync time belongs to the
	 * write bandwidth (else an fsync-bound writer shows memory speed). */
	ratio(&m[LWM2_M_write_bw], (double)c[LWM2_C_posix_write_bytes],
	      (double)c[LWM2_C_posix_write_ns] + (double)c[LWM2_C_posix_sync_ns], 1e9,
	      LWM2_WHY_NO_WRITE_TIME);
	ratio(&m[LWM2_M_read_bw], (double)c[LWM2_C_posix_read_bytes],
	      (double)c[LWM2_C_posix_read_ns], 1e9, LWM2_WHY_NO_READ_TIME);
}

/* The threads group, from the samples. */
static void thread_metrics(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	double wall_s = (double)pv->wall_ns / 1e9;

	/* The seed's ratio: samples of all threads / samples of the main
	 * thread.  Every running thread is sampled once per period of its CPU
	 * time, so busy threads: samples / (wall / period). */
	if (pv->sample_period_us == 0) {
		set_why(&m[LWM2_M_thread_ratio], LWM2_WHY_SAMPLING_OFF);
		set_why(&m[LWM2_M_avg_threads], LWM2_WHY_SAMPLING_OFF);
	} else {
		if (!pv->has_samples_main)
			set_why(&m[LWM2_M_thread_ratio], LWM2_WHY_OLD_RECORD);
		else
			ratio(&m[LWM2_M_thread_ratio], (double)pv->samples_total,
			      (double)pv->samples_main, 1, LWM2_WHY_NO_MAIN_SAMPLES);
		ratio(&m[LWM2_M_avg_threads], (double)pv->samples_total,
		      wall_s * 1e6 / (double)pv->sample_period_us, 1, LWM2_WHY_NO_WALL);
	}
	if (pv->threads_total)
		set_value(&m[LWM2_M_threads_total], (double)pv->threads_total);
	else
		set_why(&m[LWM2_M_threads_total], LWM2_WHY_NO_THREAD_COUNT);
}

/* Whether role was counted: named in the process's events, or the events
 * are not known (a record before version 4: every role with defaults
 * taken as counted, as then). */
static bool role_counted(const struct lwm2_proc_values *pv, enum lwm2_hwc_role role)
{
	const char *at;
	size_t len;

	/* A role without defaults was counted only where it is named. */
	if (!pv->hwc_events || !*pv->hwc_events)
		return role < LWM2_HWC_NDEFAULT;
	return lwm2_hwc_events_find(pv->hwc_events, lwm2_hwc_role_names[role], &at, &len);
}

/* The roles each metric of the group needs: a role that was not counted
 * leaves its counter at 0, which is no value (0 % floating point, 0 /s). */
static void roles_not_counted(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		int roles[3], n = lwm2_metric_roles(k, roles);

		for (int i = 0; i < n; i++)
			if (!role_counted(pv, (enum lwm2_hwc_role)roles[i])) {
				set_why(&m[k], LWM2_WHY_HWC_NOT_COUNTED);
				break;
			}
	}
}

/* A cache's hit ratio in percent, 1 - misses / accesses; more misses than
 * accesses means the two were not counted over the same time (one group
 * read apart from the other): no value, with apart as the reason. */
static void hit_ratio(struct lwm2_metric_value *v, uint64_t misses, uint64_t accesses,
                      enum lwm2_why apart, enum lwm2_why hw)
{
	if (misses > accesses)
		set_why(v, apart);
	else
		ratio(v, (double)(accesses - misses), (double)accesses, 100, hw);
}

/* The sequential group, from the hardware counters. */
static void hwc_metrics(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	const uint64_t *c = pv->counters;
	bool hwc_any = false;
	enum lwm2_why hw;

	for (int k = LWM2_C_hwc_cycles; k <= LWM2_C_hwc_llc_misses; k++)
		hwc_any |= c[k] != 0;
	for (int k = LWM2_C_hwc_int_ops; k <= LWM2_C_hwc_tlb_misses; k++)
		hwc_any |= c[k] != 0;
	/* No hardware counter moved at all: the same cause as the library's
	 * "no hardware counters", said in the same words. */
	hw = hwc_any ? LWM2_WHY_HWC_COUNTER : LWM2_WHY_HWC_NONE;
	ratio(&m[LWM2_M_cpi], (double)c[LWM2_C_hwc_cycles], (double)c[LWM2_C_hwc_instructions], 1,
	      hw);
	ratio(&m[LWM2_M_fp_fraction], (double)c[LWM2_C_hwc_fp_ops],
	      (double)c[LWM2_C_hwc_instructions], 100, hw);
	/* Per process, all its threads: the rank's rate, whose sum over the
	 * ranks is the job's. */
	if (!hwc_any)
		set_why(&m[LWM2_M_fp_rate], hw);
	else
		ratio(&m[LWM2_M_fp_rate], (double)c[LWM2_C_hwc_fp_ops], (double)pv->wall_ns / 1e9,
		      1, LWM2_WHY_NO_WALL);
	hit_ratio(&m[LWM2_M_l1_hit_ratio], c[LWM2_C_hwc_l1d_misses], c[LWM2_C_hwc_l1d_accesses],
	          LWM2_WHY_HWC_L1_APART, hw);
	if (c[LWM2_C_hwc_llc_misses] == 0 && c[LWM2_C_hwc_cycles] == 0)
		set_why(&m[LWM2_M_llc_miss_freq], hw);
	else
		ratio(&m[LWM2_M_llc_miss_freq], (double)c[LWM2_C_hwc_llc_misses],
		      (double)pv->wall_ns / 1e9, 1, LWM2_WHY_NO_WALL);
	ratio(&m[LWM2_M_int_fraction], (double)c[LWM2_C_hwc_int_ops],
	      (double)c[LWM2_C_hwc_instructions], 100, hw);
	ratio(&m[LWM2_M_mem_fraction], (double)c[LWM2_C_hwc_loads] + (double)c[LWM2_C_hwc_stores],
	      (double)c[LWM2_C_hwc_instructions], 100, hw);
	hit_ratio(&m[LWM2_M_l2_hit_ratio], c[LWM2_C_hwc_l2d_misses], c[LWM2_C_hwc_l2d_accesses],
	          LWM2_WHY_HWC_L2_APART, hw);
	ratio(&m[LWM2_M_tlb_miss_freq], (double)c[LWM2_C_hwc_tlb_misses], (double)pv->wall_ns / 1e9,
	      1, LWM2_WHY_NO_WALL);
	roles_not_counted(pv, m);
}

/* The CUDA group. */
static void cuda_metrics(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	const uint64_t *c = pv->counters;
	double xfers = (double)c[LWM2_C_cuda_h2d_count] + (double)c[LWM2_C_cuda_d2h_count] +
	               (double)c[LWM2_C_cuda_other_copy_count];

	share(&m[LWM2_M_cuda_time], (double)c[LWM2_C_cuda_ns], (double)pv->wall_ns,
	      LWM2_WHY_NO_WALL);
	ratio(&m[LWM2_M_cuda_h2d_size], (double)c[LWM2_C_cuda_h2d_bytes],
	      (double)c[LWM2_C_cuda_h2d_count], 1, LWM2_WHY_NO_H2D);
	ratio(&m[LWM2_M_cuda_d2h_size], (double)c[LWM2_C_cuda_d2h_bytes],
	      (double)c[LWM2_C_cuda_d2h_count], 1, LWM2_WHY_NO_D2H);
	ratio(&m[LWM2_M_cuda_transfer_freq], xfers, (double)pv->wall_ns / 1e9, 1, LWM2_WHY_NO_WALL);
}

/* What does not apply or was not measured overrides the values. */
static void not_measured(const struct lwm2_proc_values *pv, struct lwm2_metric_value *m)
{
	/* MPI metrics of a process that never initialised MPI, or CUDA
	 * metrics of one that never called CUDA, would be zeros that drag
	 * down every average: they are not applicable, not zero. */
	for (int i = 0; i < LWM2_NMETRICS; i++) {
		if (lwm2_metric_groups[i] == LWM2_MG_MPI && !(pv->flags & LWM2_F_MPI))
			set_why(&m[i], LWM2_WHY_NOT_MPI);
		if (i == LWM2_M_mpiio_time && !(pv->flags & LWM2_F_MPI))
			set_why(&m[i], LWM2_WHY_NOT_MPI);
		if (lwm2_metric_groups[i] == LWM2_MG_CUDA && pv->counters[LWM2_C_cuda_calls] == 0)
			set_why(&m[i], LWM2_WHY_NO_CUDA);
	}

	/* A group that was not measured overrides whatever the zero counters
	 * would have given: 0 % MPI is a finding, "not measured" is not. */
	for (int i = 0; i < LWM2_NMETRICS; i++) {
		int g = metric_record_group(i);
		if (g >= 0 && (pv->missing & (1u << g))) {
			const char *why = pv->missing_reason[g];
			set_reason(&m[i], lwm2_why_texts[LWM2_WHY_GROUP],
			           why && *why ? why : lwm2_group_names[g]);
		}
	}
}

void lwm2_metrics_compute(const struct lwm2_proc_values *pv, struct lwm2_metrics *out)
{
	struct lwm2_metric_value *m = out->m;

	ratio(&m[LWM2_M_duration], (double)pv->wall_ns, 1e9, 1, LWM2_WHY_NO_WALL);
	if (pv->wall_ns == 0)
		set_why(&m[LWM2_M_duration], LWM2_WHY_NO_WALL);
	mpi_metrics(pv, m);
	io_metrics(pv, m);
	thread_metrics(pv, m);
	hwc_metrics(pv, m);
	cuda_metrics(pv, m);
	not_measured(pv, m);
}
