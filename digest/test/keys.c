/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The digest's member names are the ones lwm2_keys.h declares, object by
 * object: every member the writers produce (the full digest, its compact
 * form, a version 1 digest brought up to date, the history and the
 * interference findings) is listed, and every listed member is produced
 * by one of them.  A name added to a writer only, or to the list only,
 * fails here.
 */
#include "digest_internal.h"
#include "grid.h"
#include "lwm2_history.h"
#include "lwm2_algebra.h"
#include "lwm2_keys.h"
#include "mkrecord.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

struct member {
	const char *path, *key;
	int seen;
};

static struct member listed[] = {
#define X(path, key) {path, key, 0},
    LWM2_DIGEST_KEYS(X)
#undef X
};
#define NLISTED (sizeof(listed) / sizeof(listed[0]))

/* Objects whose members are named by data (metric ids, counter names),
 * not by the structure: their names are not walked, their values are. */
static int named_by_data(const char *key)
{
	return !strcmp(key, LWM2_KEY_METRICS) || !strcmp(key, LWM2_KEY_MISSING) ||
	       !strcmp(key, LWM2_KEY_V1_METRICS) || !strcmp(key, LWM2_KEY_TOTALS) ||
	       !strcmp(key, LWM2_KEY_C) || !strcmp(key, LWM2_KEY_DERIVED_METRICS) ||
	       !strcmp(key, LWM2_KEY_COUNTER_EVENTS);
}

static int unlisted;

static void walk(json_object *o, const char *path, int by_data)
{
	char sub[512];

	if (json_object_is_type(o, json_type_array)) {
		snprintf(sub, sizeof(sub), "%s[]", path);
		for (size_t i = 0; i < json_object_array_length(o); i++)
			walk(json_object_array_get_idx(o, i), sub, 0);
		return;
	}
	if (!json_object_is_type(o, json_type_object))
		return;
	json_object_object_foreach(o, key, val)
	{
		size_t i;

		if (by_data) {
			/* a metric's statistics: the path ends in a star for the id */
			snprintf(sub, sizeof(sub), "%s/*", path);
			walk(val, sub, 0);
			continue;
		}
		for (i = 0; i < NLISTED; i++)
			if (!strcmp(listed[i].path, path) && !strcmp(listed[i].key, key))
				break;
		if (i == NLISTED) {
			diag("written but not listed: %s/%s", path, key);
			unlisted++;
		} else {
			listed[i].seen = 1;
		}
		snprintf(sub, sizeof(sub), "%s/%s", path, key);
		walk(val, sub, named_by_data(key));
	}
}

static void set_id(struct lwm2_rank_record *r, const char *exe, uint8_t build)
{
	snprintf(r->executable, sizeof(r->executable), "%s", exe);
	r->identity_flags = LWM2_ID_DONE;
	r->build_id_len = 4;
	memset(r->build_id, build, 4);
	strcpy(r->mpi_library, "Open MPI v4.1.5");
	r->language = LWM2_LANG_FORTRAN;
	strcpy(r->runtime_libs, "gomp.1");
	r->cuda_runtime_version = 12020;
	r->launch_ntasks = 4;
	r->launch_nnodes = 1;
	r->launch_cpus_per_task = 1;
	r->launch_omp_threads = -1;
}

/* A step of a main program (two builds), ten other executables, and
 * slices for the grid; the main program in one container, each other
 * executable in one of its own (more than the digest lists). */
static json_object *mk_node(uint32_t step)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = step, .node = "n1"};
	struct lwm2_rank_record *recs[14];
	json_object *node;
	char exe[64], ctr[64];

	for (int i = 0; i < 14; i++) {
		recs[i] = mk_rec(2, i, "n1");
		recs[i]->job_id = 7;
		recs[i]->step_id = step;
		recs[i]->counters[LWM2_C_mpi_p2p_ns] = 1000000000ull;
		recs[i]->counters[LWM2_C_mpi_p2p_calls] = 1000;
		recs[i]->counters[LWM2_C_posix_write_bytes] = 1000;
		mk_slices(recs[i])[0].counters[LWM2_C_posix_write_bytes] = 500;
		mk_slices(recs[i])[1].counters[LWM2_C_posix_write_bytes] = 500;
		recs[i]->utime_us = i < 4 ? 9000000 : 1000;
		recs[i]->maxrss_kb = 20480; /* the "fit" block's memory peak */
		/* processes it started unmeasured, one of each reason */
		for (int u = 0; i == 5 && u < LWM2_NUNMEASURED; u++)
			recs[i]->counters[LWM2_C_UNMEASURED_FIRST + u] = 1;
		snprintf(exe, sizeof(exe), "/opt/tool%d", i);
		set_id(recs[i], i < 4 ? "/opt/app/bin/solver" : exe, i == 3 ? 2 : 1);
		snprintf(ctr, sizeof(ctr), "podman:localhost/tool%d:latest", i);
		lwm2_record_set_container(recs[i], i < 4 ? "charliecloud:/img/solver" : ctr);
		/* the "counter_events" member */
		snprintf(recs[i]->hwc_events, sizeof(recs[i]->hwc_events),
		         "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS");
		recs[i]->clock_source = LWM2_CLOCK_TSC; /* lwm2_cost's clock */
		recs[i]->clock_cost_ps = 9000;
		if (i < 4) {
			recs[i]->view_queries = 3; /* the "view" member */
			recs[i]->view_ns = 30000;
			/* the "regions" member, with names folded */
			recs[i]->regions_n = 1;
			snprintf(recs[i]->regions[0].name, sizeof(recs[i]->regions[0].name),
			         "solver");
			recs[i]->regions[0].calls = 10;
			recs[i]->regions[0].ns = 500000000ull * (uint64_t)(i + 1);
			recs[i]->regions_folded = 2;
			recs[i]->regions_other_calls = 4;
			recs[i]->regions_other_ns = 1000;
		}
	}
	recs[0]->flags |= LWM2_F_INCOMPLETE;
	node = lwm2_node_merge_records(&id, recs, NULL, 14, NULL, NULL);
	for (int i = 0; i < 14; i++)
		free(recs[i]);
	if (node) {
		/* the processor, as slurmstepd adds it (spank/stepd.c) */
		json_object *cpu = json_object_new_object();

		ju_add(cpu, LWM2_KEY_MODEL, json_object_new_string("Test CPU @ 2.00GHz"));
		ju_add(cpu, LWM2_KEY_SOCKETS, json_object_new_int64(2));
		ju_add(cpu, LWM2_KEY_CORES_PER_SOCKET, json_object_new_int64(8));
		ju_add(cpu, LWM2_KEY_THREADS_PER_CORE, json_object_new_int64(2));
		ju_add(cpu, LWM2_KEY_MHZ_NOMINAL, ju_double(2000));
		ju_add(cpu, LWM2_KEY_MHZ_MEASURED, ju_double(2600));
		ju_add(node, LWM2_KEY_CPU, cpu);
	}
	return node;
}

/* A job of 20 slices of 1 s on node, moving bytes[i] in ns[i] through
 * the counters named bytes_c and ns_c. */
static void grid_job(struct lwm2_grid *g, int64_t id, const char *node, const char *bytes_c,
                     const char *ns_c, double (*bytes)(int), double (*ns)(int))
{
	json_object *d = json_object_new_object(), *job = json_object_new_object();
	json_object *grid = json_object_new_array(), *e = json_object_new_object();
	json_object *c = json_object_new_object(), *b = json_object_new_array();
	json_object *t = json_object_new_array();

	for (int i = 0; i < 20; i++) {
		json_object_array_add(b, json_object_new_double(bytes(i)));
		json_object_array_add(t, json_object_new_double(ns(i)));
	}
	ju_add(job, LWM2_KEY_JOB_ID, json_object_new_int64(id));
	ju_add(job, LWM2_KEY_START, json_object_new_int64(1700000000));
	ju_add(job, LWM2_KEY_END, json_object_new_int64(1700000020));
	ju_add(d, LWM2_KEY_JOB, job);
	ju_add(c, bytes_c, b);
	ju_add(c, ns_c, t);
	ju_add(e, LWM2_KEY_STEP, json_object_new_int(0));
	ju_add(e, LWM2_KEY_NODE, json_object_new_string(node));
	ju_add(e, LWM2_KEY_FIRST_SLICE, json_object_new_int64(1700000000));
	ju_add(e, LWM2_KEY_N, json_object_new_int(20));
	ju_add(e, LWM2_KEY_SLICE_LENGTH_S, json_object_new_int(1));
	ju_add(e, LWM2_KEY_C, c);
	json_object_array_add(grid, e);
	ju_add(d, LWM2_KEY_GRID, grid);
	if (lwm2_grid_add(g, d) != 0)
		diag("grid: job %lld not added", (long long)id);
	json_object_put(d);
}

/* The victim: 100 MB (or 1 GB of MPI) a second, five (ten) times slower in
 * slices 8 to 11; the other job: 1 GB a second in those slices only. */
static int slow(int i)
{
	return i >= 8 && i < 12;
}
static double v_bytes(int i)
{
	(void)i;
	return 100e6;
}
static double v_ns(int i)
{
	return slow(i) ? 1e9 : 0.2e9;
}
static double m_bytes(int i)
{
	(void)i;
	return 1e9;
}
static double m_ns(int i)
{
	return slow(i) ? 1e9 : 0.1e9;
}
static double a_bytes(int i)
{
	return slow(i) ? 1e9 : 0;
}
static double a_ns(int i)
{
	return slow(i) ? 0.9e9 : 0;
}

/* The interference findings of the grid rule's own cases: a job writing
 * slowly while another wrote much on the shared file system, and one
 * whose MPI slowed while another's traffic shared its node. */
static json_object *interference(void)
{
	struct lwm2_grid g = {0}, m = {0};
	json_object *f, *fm;

	grid_job(&g, 100, "n1", "posix_write_bytes", "posix_write_ns", v_bytes, v_ns);
	grid_job(&g, 200, "n3", "posix_write_bytes", "posix_write_ns", a_bytes, a_ns);
	f = lwm2_grid_interference(&g, 100, NULL);
	grid_job(&m, 800, "n1", "mpi_p2p_bytes_sent", "mpi_p2p_ns", m_bytes, m_ns);
	grid_job(&m, 900, "n1", "mpi_p2p_bytes_sent", "mpi_p2p_ns", a_bytes, a_ns);
	fm = lwm2_grid_interference(&m, 800, NULL);
	for (size_t i = 0; f && fm && i < json_object_array_length(fm); i++)
		json_object_array_add(f, json_object_get(json_object_array_get_idx(fm, i)));
	json_object_put(fm);
	lwm2_grid_free(&g);
	lwm2_grid_free(&m);
	return f;
}

/* A job of 300 processes of 16 threads each: more thread rows than a
 * digest keeps (the "omitted" member of "ranks"' "threads"). */
static json_object *many_threads(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 9, .node_count = 1};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 9, .step_id = 0, .node = "n1"};
	struct lwm2_rank_record *recs[300];
	json_object *node, *d;

	for (int i = 0; i < 300; i++) {
		struct lwm2_rank_record *r = recs[i] = mk_rec(0, i, "n1");

		r->job_id = 9;
		r->threads_n = LWM2_THREADS_MAX;
		for (int k = 0; k < LWM2_THREADS_MAX; k++) {
			r->threads[k].tid = 1000 * i + k;
			r->threads[k].flags = k ? LWM2_TH_ENDED : LWM2_TH_MAIN;
			r->threads[k].cpu_ns = 1000000ull * (uint64_t)(k + 1);
			r->threads[k].samples[0] = 10;
			r->threads[k].counters[LWM2_TC_mpi_ns] = 5000;
		}
		r->threads_folded = 1;
		r->threads_other_cpu_ns = 100;
		lwm2_record_seal(r);
	}
	node = lwm2_node_merge_records(&id, recs, NULL, 300, NULL, NULL);
	d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
	for (int i = 0; i < 300; i++)
		free(recs[i]);
	json_object_put(node);
	return d;
}

int main(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1",
	                             .job_id = 7,
	                             .user = "alice",
	                             .account = "proj",
	                             .partition = "batch",
	                             .nodes = "n1",
	                             .node_count = 1,
	                             .cpus_per_task = 1,
	                             .start = 1700000000,
	                             .end = 1700000100,
	                             .state = "COMPLETED",
	                             /* requests that every "fit" member
	                              * shows, advice included */
	                             .have_requests = true,
	                             .cpus = 64,
	                             .time_limit_s = 60,
	                             .mem_req_mb = 100000,
	                             .mem_req_per_node_mb = 100000,
	                             .gpus = 4,
	                             .gpus_known = true};
	struct lwm2_hist_entry cur = {.ranks = 4};
	struct lwm2_hist_result res = {.compared = 5, .same_app = 6, .rank_lo = 4, .rank_hi = 4};
	json_object *nodes[2], *d, *c, *old, *f;
	char err[256] = "", *text;
	int missing = 0;

	nodes[0] = mk_node(0);
	nodes[1] = mk_node(1);
	d = lwm2_job_digest_build(&meta, nodes, 2);
	ok(d != NULL, "digest built");

	/* what lwm2_history_update and the worker's grid add to it */
	snprintf(cur.exe, sizeof(cur.exe), "solver");
	snprintf(cur.build_id, sizeof(cur.build_id), "01010101");
	snprintf(res.prev_build, sizeof(res.prev_build), "02020202");
	res.nfind = 1;
	res.find[0].rule = &lwm2_history_rules[0];
	snprintf(res.find[0].text, sizeof(res.find[0].text), "slower");
	ju_add(d, LWM2_KEY_HISTORY, lwm2_hist_result_json(&cur, &res));
	f = interference();
	ok(f && json_object_array_length(f) == 2,
	   "the grid finds interference, of writes and of MPI");
	if (f)
		ju_add(d, LWM2_KEY_INTERFERENCE, f);
	walk(d, "", 0);
	c = many_threads();
	ok(c != NULL, "a digest of 300 processes of 16 threads built");
	walk(c, "", 0);
	json_object_put(c);

	/* the compact form, cut until steps are dropped */
	text = lwm2_job_digest_compact(d, 0);
	c = text ? lwm2_digest_parse(text, strlen(text), err, sizeof(err)) : NULL;
	ok(c != NULL, "compact form parses: %s", err);
	walk(c, "", 0);
	json_object_put(c);
	free(text);
	/* caps ever smaller until the compact form gives up step details */
	c = NULL;
	for (size_t cap = 16000; cap >= 1000 && !c; cap -= 250) {
		if (!(text = lwm2_job_digest_compact(d, cap)))
			continue;
		c = lwm2_digest_parse(text, strlen(text), err, sizeof(err));
		free(text);
		if (c && !ju_get(c, LWM2_KEY_STEPS_OMITTED, json_type_int)) {
			json_object_put(c);
			c = NULL;
		}
	}
	ok(c != NULL, "a small cap: the compact form omits steps");
	walk(c, "", 0);
	json_object_put(c);

	/* requests unknown: every "fit" figure not measured, and why */
	{
		struct lwm2_job_meta unknown = meta;

		unknown.cpus = 0;
		unknown.time_limit_s = 0;
		unknown.mem_req_mb = unknown.mem_req_per_node_mb = 0;
		unknown.gpus_known = false;
		c = lwm2_job_digest_build(&unknown, nodes, 2);
		ok(c != NULL, "digest built, requests unknown");
		walk(c, "", 0);
		json_object_put(c);
	}

	/* a job shorter than AdviceMinRuntime: the advice withheld, and why */
	{
		struct lwm2_job_meta brief = meta;

		brief.advice_min_runtime_s = 3600;
		c = lwm2_job_digest_build(&brief, nodes, 2);
		ok(c != NULL, "digest built, advice withheld");
		walk(c, "", 0);
		json_object_put(c);
	}

	/* a version 1 digest, brought up to this version on reading */
	old = lwm2_job_digest_build(&meta, nodes, 2);
	ju_add(old, LWM2_KEY_DIGEST_VERSION, json_object_new_int(1));
	ok(lwm2_digest_upgrade(old) == 1, "a version 1 digest is up-converted");
	walk(old, "", 0);
	json_object_put(old);

	/* a digest made of two (lwm2 diff --output), with derived metrics, one
	 * of them without a figure */
	{
		struct lwm2_derived_set ds = {0};
		json_object *two[2] = {d, d};
		const char *what[2] = {"a", "b"};

		c = lwm2_digest_algebra(LWM2_ALGEBRA_DIFF, two, what, 2, err, sizeof(err));
		ok(c != NULL, "a difference is a digest: %s", c ? "" : err);
		ok(lwm2_derived_add(&ds, "r=mpi_time/duration", err, sizeof(err)) == 0,
		   "a derived metric: %s", err);
		lwm2_derived_apply(&ds, c);
		walk(c, "", 0);
		json_object_put(c);
		lwm2_derived_free(&ds);
	}

	is_int(unlisted, 0, "every member written is listed in lwm2_keys.h");
	for (size_t i = 0; i < NLISTED; i++)
		if (!listed[i].seen) {
			diag("listed but never written: %s/%s", listed[i].path, listed[i].key);
			missing++;
		}
	is_int(missing, 0, "every member listed in lwm2_keys.h is written (%zu members)", NLISTED);
	json_object_put(d);
	json_object_put(nodes[0]);
	json_object_put(nodes[1]);
	return done_testing();
}
