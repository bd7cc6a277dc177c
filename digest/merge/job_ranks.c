/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The per-process table of the full job digest ("ranks"): one row per
 * process with the metrics a per-rank view needs (distributions over the
 * processes, outliers named by rank and node, time shares per rank).
 * Only in the full form (jobcomp/lwm2's log): the compact form for
 * AdminComment drops it, since it grows with the number of processes.
 */
#include "digest_internal.h"
#include "hwc_events.h"
#include "lwm2_keys.h"
#include "strset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The metrics kept per process: the shares and rates the report plots.
 * Readers map the columns by the names in "cols". */
const int lwm2_rank_metrics[] = {
    LWM2_M_duration,   LWM2_M_mpi_time,      LWM2_M_mpi_p2p_time,     LWM2_M_mpi_coll_time,
    LWM2_M_mpiio_time, LWM2_M_posix_io_time, LWM2_M_bytes_written,    LWM2_M_bytes_read,
    LWM2_M_write_bw,   LWM2_M_read_bw,       LWM2_M_avg_threads,      LWM2_M_threads_total,
    LWM2_M_cpi,        LWM2_M_fp_fraction,   LWM2_M_l1_hit_ratio,     LWM2_M_llc_miss_freq,
    LWM2_M_cuda_time,  LWM2_M_mpi_p2p_freq,  LWM2_M_mpi_p2p_msg_size, LWM2_M_fp_rate,
};

/* The index of the node name in the digest's node list, added at its end
 * if new (numbered by the set, which a job of 10,000 nodes needs: a list
 * searched for each node record takes seconds); -1 out of memory. */
static int node_index(json_object *names, struct lwm2_strset *set, const char *name)
{
	size_t index;
	int r = lwm2_strset_add(set, name, &index);

	if (r < 0 || (r > 0 && json_object_array_add(names, json_object_new_string(name)) != 0))
		return -1;
	return (int)index;
}

/* Thread rows a digest keeps (threads as a scope): the first ones of the
 * job's processes in the table's order, the rest counted as omitted (a
 * job of thousands of multithreaded ranks would otherwise make a log line
 * of megabytes). */
#define THREAD_ROWS_MAX 4096

/* The columns of a thread row: the process's row, the thread's id, flags
 * and CPU time, its samples per earmark, its counters (the record's
 * names and units). */
static json_object *thread_cols(void)
{
	json_object *cols = json_object_new_array();
	char name[64];

	json_object_array_add(cols, json_object_new_string("process"));
	json_object_array_add(cols, json_object_new_string("tid"));
	json_object_array_add(cols, json_object_new_string("flags"));
	json_object_array_add(cols, json_object_new_string("cpu_ns"));
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		snprintf(name, sizeof(name), "samples_%s", lwm2_earmark_names[e]);
		json_object_array_add(cols, json_object_new_string(name));
	}
	for (int c = 0; c < LWM2_THREAD_NCOUNTERS; c++)
		json_object_array_add(cols, json_object_new_string(lwm2_thread_counter_names[c]));
	return cols;
}

/* The threads of the process entry pj (node record "threads") as rows of
 * the process at row, those beyond the bound counted in *omitted. */
static void thread_rows(json_object *trows, json_object *pj, size_t row, uint64_t *omitted)
{
	json_object *th = ju_get(pj, "threads", json_type_array);

	for (size_t i = 0; th && i < json_object_array_length(th); i++) {
		json_object *t = json_object_array_get_idx(th, i), *r;
		json_object *sm = ju_get(t, "samples", json_type_array);
		json_object *c = ju_get(t, "c", json_type_object);

		if (json_object_array_length(trows) >= THREAD_ROWS_MAX) {
			(*omitted)++;
			continue;
		}
		r = json_object_new_array_ext(4 + LWM2_NEARMARKS + LWM2_THREAD_NCOUNTERS);
		json_object_array_add(r, ju_u64(row));
		json_object_array_add(r, json_object_new_int64(ju_int_or(t, "tid", 0)));
		json_object_array_add(r, json_object_new_int64(ju_int_or(t, "flags", 0)));
		json_object_array_add(r, json_object_new_int64(ju_int_or(t, "cpu_ns", 0)));
		for (int e = 0; e < LWM2_NEARMARKS; e++) {
			json_object *v = sm ? json_object_array_get_idx(sm, (size_t)e) : NULL;

			json_object_array_add(
			    r, json_object_new_int64(v ? json_object_get_int64(v) : 0));
		}
		for (int k = 0; k < LWM2_THREAD_NCOUNTERS; k++)
			json_object_array_add(
			    r, json_object_new_int64(
			           c ? ju_int_or(c, lwm2_thread_counter_names[k], 0) : 0));
		json_object_array_add(trows, r);
	}
}

json_object *lwm2_job_digest_ranks(json_object *const *nodes, size_t n)
{
	json_object *o = json_object_new_object(), *names = json_object_new_array(),
	            *cols = json_object_new_array(), *rows = json_object_new_array(),
	            *trows = json_object_new_array();
	struct lwm2_strset set = {NULL, NULL, 0, 0};
	uint64_t omitted = 0;

	if (!o || !names || !cols || !rows || !trows)
		goto nomem;
	json_object_array_add(cols, json_object_new_string("step"));
	json_object_array_add(cols, json_object_new_string("node"));
	json_object_array_add(cols, json_object_new_string("rank"));
	json_object_array_add(cols, json_object_new_string("flags"));
	for (size_t k = 0; k < LWM2_NRANK_METRICS; k++)
		json_object_array_add(
		    cols, json_object_new_string(lwm2_metric_ids[lwm2_rank_metrics[k]]));
	for (size_t i = 0; i < n; i++) {
		int map[LWM2_MAP_MAX];
		size_t nmap;
		json_object *procs = nodes[i] ? ju_get(nodes[i], "procs", json_type_array) : NULL;
		const char *name = nodes[i] ? ju_str(nodes[i], "node") : NULL;
		int64_t step = nodes[i] ? ju_int_or(nodes[i], "step_id", 0) : 0;
		int ni;
		/* the node's counted events: what its processes' metrics need */
		char events[LWM2_HWC_EVENTS_LEN];

		if (!procs || !name || lwm2_counter_map(nodes[i], map, LWM2_MAP_MAX, &nmap) != 0)
			continue;
		if ((ni = node_index(names, &set, name)) < 0)
			goto nomem;
		lwm2_hwc_events_json_text(
		    ju_get(nodes[i], LWM2_KEY_COUNTER_EVENTS, json_type_object), events,
		    sizeof(events));
		for (size_t p = 0; p < json_object_array_length(procs); p++) {
			json_object *pj = json_object_array_get_idx(procs, p), *row;
			struct lwm2_proc_values pv;
			struct lwm2_metrics m;
			int64_t flags = ju_int_or(pj, "flags", 0);
			int32_t rank = (int32_t)ju_int_or(pj, "rank", -1);

			if (rank < 0)
				rank = (int32_t)ju_int_or(pj, "task", -1);
			/* an exec'd image is not a process of its own */
			if ((flags & LWM2_F_EXEC) || lwm2_proc_from_json(pj, map, nmap, &pv) != 0)
				continue;
			pv.hwc_events = events;
			lwm2_metrics_compute(&pv, &m);
			if (!(row = json_object_new_array_ext((int)(4 + LWM2_NRANK_METRICS))))
				goto nomem;
			json_object_array_add(row, json_object_new_int64(step));
			json_object_array_add(row, json_object_new_int(ni));
			json_object_array_add(row, json_object_new_int(rank));
			json_object_array_add(row, json_object_new_int64(flags));
			for (size_t k = 0; k < LWM2_NRANK_METRICS; k++) {
				const struct lwm2_metric_value *v = &m.m[lwm2_rank_metrics[k]];
				json_object_array_add(row, v->valid ? ju_double(v->value) : NULL);
			}
			json_object_array_add(rows, row);
			thread_rows(trows, pj, json_object_array_length(rows) - 1, &omitted);
		}
	}
	lwm2_strset_free(&set);
	ju_add(o, "nodes", names);
	ju_add(o, "cols", cols);
	ju_add(o, "rows", rows);
	/* threads as a scope: where a process had several */
	if (json_object_array_length(trows) || omitted) {
		json_object *t = json_object_new_object();

		ju_add(t, "cols", thread_cols());
		ju_add(t, "rows", trows);
		if (omitted)
			ju_add(t, "omitted", ju_u64(omitted));
		ju_add(o, LWM2_KEY_THREADS, t);
	} else {
		json_object_put(trows);
	}
	return o;
nomem:
	lwm2_strset_free(&set);
	json_object_put(o);
	json_object_put(names);
	json_object_put(cols);
	json_object_put(rows);
	json_object_put(trows);
	errno = ENOMEM;
	return NULL;
}
