/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The grid rules on synthetic grids: interference found where another
 * job's volume coincides with a job's own fall, and silence where the
 * evidence is not strong (no other job, a neighbour streaming all the
 * time, little volume, a noisy job, too few slices, MPI on other nodes);
 * the sick-node rule finds a node that is slow in every job and none when
 * the slowest rank wanders; the index keeps its bounds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "tap.h"

#define T0 1700000000LL

/* A series of n slices of 1 s from T0 + off on each node of nodes
 * (comma-separated); the arrays (bytes and ns per slice, NULL: none) go
 * to every node. */
struct series {
	const char *nodes;
	int64_t off;
	int n;
	const double *wb, *wns, *mb, *mns;
};

static json_object *darr(const double *v, int n)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_double(v[i]));
	return a;
}

static json_object *mkjob(int64_t id, const struct series *s)
{
	json_object *d = json_object_new_object(), *job = json_object_new_object();
	json_object *grid = json_object_new_array();
	char buf[256], *save = NULL;

	json_object_object_add(job, "job_id", json_object_new_int64(id));
	json_object_object_add(job, "start", json_object_new_int64(T0 + s->off));
	json_object_object_add(job, "end", json_object_new_int64(T0 + s->off + s->n));
	json_object_object_add(d, "job", job);
	snprintf(buf, sizeof(buf), "%s", s->nodes);
	for (char *n = strtok_r(buf, ",", &save); n; n = strtok_r(NULL, ",", &save)) {
		json_object *e = json_object_new_object(), *c = json_object_new_object();
		json_object_object_add(e, "step", json_object_new_int(0));
		json_object_object_add(e, "node", json_object_new_string(n));
		json_object_object_add(e, "first_slice", json_object_new_int64(T0 + s->off));
		json_object_object_add(e, "n", json_object_new_int(s->n));
		json_object_object_add(e, "slice_length_s", json_object_new_int(1));
		if (s->wb) {
			json_object_object_add(c, "posix_write_bytes", darr(s->wb, s->n));
			json_object_object_add(c, "posix_write_ns", darr(s->wns, s->n));
		}
		if (s->mb) {
			json_object_object_add(c, "mpi_p2p_bytes_sent", darr(s->mb, s->n));
			json_object_object_add(c, "mpi_p2p_ns", darr(s->mns, s->n));
		}
		json_object_object_add(e, "c", c);
		json_object_array_add(grid, e);
	}
	json_object_object_add(d, "grid", grid);
	return d;
}

static void add(struct lwm2_grid *g, int64_t id, const struct series *s)
{
	json_object *d = mkjob(id, s);

	if (lwm2_grid_add(g, d) != 0)
		ok(0, "add job %lld", (long long)id);
	json_object_put(d);
}

/* Findings of job id: count, and the first one's text and rule. */
static json_object *findings(struct lwm2_grid *g, int64_t id)
{
	json_object *f = lwm2_grid_interference(g, id, NULL);

	if (!f)
		return json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(f); i++) {
		json_object *t;
		json_object_object_get_ex(json_object_array_get_idx(f, i), "text", &t);
		diag("job %lld: %s", (long long)id, json_object_get_string(t));
	}
	return f;
}

static const char *fstr(json_object *f, size_t i, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(json_object_array_get_idx(f, i), key, &v))
		return "";
	return json_object_get_string(v);
}

static double fnum(json_object *f, size_t i, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(json_object_array_get_idx(f, i), key, &v))
		return NAN;
	return json_object_get_double(v);
}

#define N 20

static double vwb[N], vwns[N], nwb[N], nwns[N], awb[N], awns[N], cwb[N], small[N], bwb[N], vmb[N],
    vmns[N], rwns[N], smns[N], swb[N], swns[N];

static void setup(void)
{
	for (int i = 0; i < N; i++) {
		/* the victim writes 100 MB a second at 500 MB/s, at 100 MB/s in
		 * slices 8 to 11 */
		vwb[i] = 100e6;
		vwns[i] = i >= 8 && i < 12 ? 1e9 : 0.2e9;
		/* a noisy one: 500 and 250 MB/s in turn, 140 MB/s once */
		nwb[i] = 100e6;
		nwns[i] = i == 9 ? 0.7e9 : i % 2 ? 0.4e9 : 0.2e9;
		/* the aggressor writes 1 GB a second in slices 8 to 11 */
		awb[i] = i >= 8 && i < 12 ? 1e9 : 0;
		awns[i] = awb[i] ? 0.9e9 : 0;
		/* a neighbour writing 1 GB every second */
		cwb[i] = 1e9;
		/* 10 MB in the slow slices */
		small[i] = i >= 8 && i < 12 ? 10e6 : 0;
		/* a second aggressor, 600 MB a second in slices 9 to 11 */
		bwb[i] = i >= 9 && i < 12 ? 600e6 : 0;
		/* MPI: 1 GB a second at 10 GB/s, 1 GB/s in slices 8 to 11 */
		vmb[i] = 1e9;
		vmns[i] = i >= 8 && i < 12 ? 1e9 : 0.1e9;
		/* a noisy baseline as on a shared machine (40 to 70 MB/s) with
		 * a real fall to 8 MB/s in slices 8 to 11 */
		rwns[i] = i >= 8 && i < 12 ? 12.5e9 : 1e9 / (0.4 + 0.3 * ((i * 7) % 10) / 9.0);
		/* 100 MB a second at 500 MB/s; nothing in slices 8 to 11 and
		 * 100 MB in 4.2 s ending in slice 12 (one stalled write) */
		swb[i] = i >= 8 && i < 12 ? 0 : 100e6;
		swns[i] = i >= 8 && i < 12 ? 0 : i == 12 ? 4.2e9 : 0.2e9;
		/* MPI time of one process: 10% of each slice, 60% in 8 to 11 */
		smns[i] = i >= 8 && i < 12 ? 0.6e9 : 0.1e9;
	}
}

/* alone: silent */
static void write_aggressors(void)
{
	struct lwm2_grid g = {0};
	json_object *f;

	add(&g, 100, &(struct series){"n1", 0, N, vwb, vwns, NULL, NULL});
	f = findings(&g, 100);
	is_int(json_object_array_length(f), 0, "a job alone: no finding, however slow its slices");
	json_object_put(f);

	/* with an aggressor on another node (the file system is shared) */
	add(&g, 200, &(struct series){"n3", 0, N, awb, awns, NULL, NULL});
	f = findings(&g, 100);
	is_int(json_object_array_length(f), 1, "with a heavy writer in its slow slices: a finding");
	is_str(fstr(f, 0, "rule"), "interference-write", "the write rule");
	ok(fabs(fnum(f, 0, "fall") - 5) < 0.01, "fell 5x (%g)", fnum(f, 0, "fall"));
	is_int((long long)fnum(f, 0, "from"), T0 + 8, "from slice 8");
	is_int((long long)fnum(f, 0, "to"), T0 + 12, "to the end of slice 11");
	is_int((long long)fnum(f, 0, "slices"), 4, "4 slow slices");
	ok(strstr(fstr(f, 0, "text"), "while job 200 wrote 4 GB on the shared file system") != NULL,
	   "the text names job 200 and its volume");
	ok(strstr(fstr(f, 0, "text"), "rerun may be faster") != NULL, "and gives the advice");
	json_object_put(f);
	f = findings(&g, 200);
	is_int(json_object_array_length(f), 0,
	       "the aggressor itself: too few active slices, silent");
	json_object_put(f);

	/* a second aggressor: both named, the larger first */
	add(&g, 300, &(struct series){"n4", 0, N, bwb, awns, NULL, NULL});
	f = findings(&g, 100);
	ok(json_object_array_length(f) == 1 &&
	       strstr(fstr(f, 0, "text"), "while jobs 200 and 300 wrote") != NULL,
	   "two aggressors: \"jobs 200 and 300\"");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* a write stalled behind the aggressor: no I/O of its own in slices 8
 * to 11, then one slice whose call took 4.2 s (counted where it
 * ended) */
static void stalled_write(void)
{
	struct lwm2_grid g = {0};
	json_object *f;

	memset(&g, 0, sizeof(g));
	add(&g, 120, &(struct series){"n1", 0, N, swb, swns, NULL, NULL});
	add(&g, 200, &(struct series){"n3", 0, N, awb, awns, NULL, NULL});
	f = findings(&g, 120);
	ok(json_object_array_length(f) == 1 &&
	       strstr(fstr(f, 0, "text"), "while job 200 wrote") != NULL,
	   "a write stalled for 4 slices: found, job 200 named");
	is_int((long long)fnum(f, 0, "from"), T0 + 8,
	       "stalled: from slice 8, where the call began");
	is_int((long long)fnum(f, 0, "slices"), 5, "stalled: 5 slow slices (4 quiet, 1 ended in)");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* a noisy baseline does not hide a real fall */
static void noisy_baseline(void)
{
	struct lwm2_grid g = {0};
	json_object *f;

	memset(&g, 0, sizeof(g));
	add(&g, 110, &(struct series){"n1", 0, N, vwb, rwns, NULL, NULL});
	add(&g, 200, &(struct series){"n3", 0, N, awb, awns, NULL, NULL});
	f = findings(&g, 110);
	ok(json_object_array_length(f) == 1 && fnum(f, 0, "slices") == 4,
	   "a baseline swinging 40-70 MB/s, a fall to 8 MB/s: found, 4 slices");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* a neighbour streaming all the time: no contrast, silent */
static void silent_cases(void)
{
	struct lwm2_grid g = {0};
	json_object *f;

	memset(&g, 0, sizeof(g));
	add(&g, 100, &(struct series){"n1", 0, N, vwb, vwns, NULL, NULL});
	add(&g, 400, &(struct series){"n2", 0, N, cwb, cwb, NULL, NULL});
	f = findings(&g, 100);
	is_int(json_object_array_length(f), 0,
	       "a neighbour writing as much in the normal slices: silent");
	json_object_put(f);
	lwm2_grid_free(&g);

	/* little volume in the slow slices: silent */
	memset(&g, 0, sizeof(g));
	add(&g, 100, &(struct series){"n1", 0, N, vwb, vwns, NULL, NULL});
	add(&g, 500, &(struct series){"n2", 0, N, small, awns, NULL, NULL});
	f = findings(&g, 100);
	is_int(json_object_array_length(f), 0, "40 MB of others' writes: silent");
	json_object_put(f);
	lwm2_grid_free(&g);

	/* a noisy job beside an aggressor: its dips are not 3x below its
	 * median, or not outside its spread: silent */
	memset(&g, 0, sizeof(g));
	add(&g, 600, &(struct series){"n1", 0, N, nwb, nwns, NULL, NULL});
	add(&g, 200, &(struct series){"n3", 0, N, awb, awns, NULL, NULL});
	f = findings(&g, 600);
	is_int(json_object_array_length(f), 0, "a noisy job (2x swings): silent");
	json_object_put(f);
	lwm2_grid_free(&g);

	/* too few slices for a baseline: silent */
	memset(&g, 0, sizeof(g));
	add(&g, 700, &(struct series){"n1", 7, 5, vwb + 7, vwns + 7, NULL, NULL});
	add(&g, 200, &(struct series){"n3", 0, N, awb, awns, NULL, NULL});
	f = findings(&g, 700);
	is_int(json_object_array_length(f), 0, "5 active slices: silent");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* MPI: traffic of another job on a shared node is named; on other
 * nodes it is not */
static void mpi_shared_node(void)
{
	struct lwm2_grid g = {0};
	json_object *f;
	char want[64];

	memset(&g, 0, sizeof(g));
	add(&g, 800, &(struct series){"n1,n2", 0, N, NULL, NULL, vmb, vmns});
	add(&g, 900, &(struct series){"n3,n4", 0, N, NULL, NULL, awb, awns});
	f = findings(&g, 800);
	is_int(json_object_array_length(f), 0, "MPI traffic on other nodes only: silent");
	json_object_put(f);
	add(&g, 901, &(struct series){"n2,n3", 0, N, NULL, NULL, awb, awns});
	f = findings(&g, 800);
	is_int(json_object_array_length(f), 1, "MPI traffic on a shared node: a finding");
	is_str(fstr(f, 0, "rule"), "interference-mpi", "the MPI rule");
	snprintf(want, sizeof(want), "while job 901 moved 4 GB over MPI");
	ok(strstr(fstr(f, 0, "text"), want) != NULL, "names job 901, not 900");
	ok(strstr(fstr(f, 0, "text"), "(n1,n2; lwm2 knows nodes, not switches)") != NULL,
	   "says which nodes and that switches are not known");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* the MPI share jumps (with the processes from the ranks table) */
static void mpi_share_jump(void)
{
	struct lwm2_grid g = {0};
	json_object *f;

	memset(&g, 0, sizeof(g));
	{
		json_object *d = mkjob(810, &(struct series){"n1,n2", 0, N, NULL, NULL, vmb, smns});
		json_object *ranks = json_tokener_parse(
		    "{\"nodes\":[\"n1\",\"n2\"],\"cols\":[\"step\",\"node\",\"rank\"],"
		    "\"rows\":[[0,0,0],[0,1,1]]}");
		json_object_object_add(d, "ranks", ranks);
		lwm2_grid_add(&g, d);
		json_object_put(d);
	}
	add(&g, 901, &(struct series){"n2,n3", 0, N, NULL, NULL, awb, awns});
	f = findings(&g, 810);
	{
		size_t k = json_object_array_length(f);
		while (k-- > 0 && strcmp(fstr(f, k, "rule"), "interference-mpi-share"))
			;
		ok(k != SIZE_MAX &&
		       strstr(fstr(f, k, "text"), "MPI share rose from 10% to 60%") != NULL,
		   "the MPI share rose from 10%% to 60%% while job 901 sent on n2: found");
	}
	json_object_put(f);
	f = lwm2_grid_interference(&g, 12345, NULL);
	ok(f == NULL, "a job not in the index: NULL");
	lwm2_grid_free(&g);
}

static void interference(void)
{
	write_aggressors();
	stalled_write();
	noisy_baseline();
	silent_cases();
	mpi_shared_node();
	mpi_share_jump();
}

static void bounds(void)
{
	struct lwm2_grid g = {.max_cells = 100, .keep_s = 3600};
	json_object *f;

	for (int j = 0; j < 30; j++)
		add(&g, 1000 + j, &(struct series){"n1,n2", j, N, vwb, vwns, NULL, NULL});
	ok(g.ncells <= 100, "the index keeps its bound (%zu cells)", g.ncells);
	ok(lwm2_grid_find(&g, 1029) >= 0 && lwm2_grid_find(&g, 1000) < 0,
	   "the newest job is kept, the oldest went");
	add(&g, 1029, &(struct series){"n1,n2", 29, N, vwb, vwns, NULL, NULL});
	{
		size_t n = 0;
		for (size_t i = 0; i < g.njobs; i++)
			n += g.jobs[i].id == 1029;
		is_int(n, 1, "a job added again replaces itself");
	}
	add(&g, 2000, &(struct series){"n1", 7200, N, vwb, vwns, NULL, NULL});
	is_int(g.njobs, 1, "jobs that ended more than keep_s earlier go");
	lwm2_grid_free(&g);

	/* a job larger than half the bound is summed over its nodes, and
	 * the file-system rule still sees it */
	g = (struct lwm2_grid){.max_cells = 40};
	add(&g, 100, &(struct series){"n1", 0, N, vwb, vwns, NULL, NULL});
	add(&g, 200, &(struct series){"n3,n4,n5,n6,n7,n8,n9,n10", 0, N, awb, awns, NULL, NULL});
	ok(g.njobs == 2 && g.jobs[1].n == 4 && g.cells[g.jobs[1].first].node == LWM2_GRID_ALLNODES,
	   "a large job is summed over its nodes (%zu jobs, %zu cells)", g.njobs, g.ncells);
	f = findings(&g, 100);
	is_int(json_object_array_length(f), 1, "and still named by the I/O rule");
	json_object_put(f);
	lwm2_grid_free(&g);
}

/* A job on 4 nodes, one rank each; rank r computes comp[r] of 10 s and
 * waits in MPI the rest. */
static json_object *mpijob(int64_t id, const double *comp)
{
	json_object *d = json_object_new_object(), *job = json_object_new_object();
	json_object *ranks = json_object_new_object(), *nodes = json_object_new_array();
	json_object *cols = json_object_new_array(), *rows = json_object_new_array();
	static const char *const cn[] = {"step", "node", "rank", "flags", "duration", "mpi_time"};

	json_object_object_add(job, "job_id", json_object_new_int64(id));
	json_object_object_add(d, "job", job);
	for (int i = 0; i < 6; i++)
		json_object_array_add(cols, json_object_new_string(cn[i]));
	for (int r = 0; r < 4; r++) {
		char n[8];
		json_object *row = json_object_new_array();
		snprintf(n, sizeof(n), "n%d", r + 1);
		json_object_array_add(nodes, json_object_new_string(n));
		json_object_array_add(row, json_object_new_int(0));
		json_object_array_add(row, json_object_new_int(r));
		json_object_array_add(row, json_object_new_int(r));
		json_object_array_add(row, json_object_new_int(0));
		json_object_array_add(row, json_object_new_double(10));
		json_object_array_add(row, json_object_new_double(100 * (10 - comp[r]) / 10));
		json_object_array_add(rows, row);
	}
	/* the batch step on one node does not make a job multi-node */
	{
		json_object *row = json_object_new_array();
		json_object_array_add(row, json_object_new_int64(4294967291LL));
		json_object_array_add(row, json_object_new_int(0));
		json_object_array_add(row, json_object_new_int(-1));
		json_object_array_add(row, json_object_new_int(0));
		json_object_array_add(row, json_object_new_double(11));
		json_object_array_add(row, NULL);
		json_object_array_add(rows, row);
	}
	json_object_object_add(ranks, "nodes", nodes);
	json_object_object_add(ranks, "cols", cols);
	json_object_object_add(ranks, "rows", rows);
	json_object_object_add(d, "ranks", ranks);
	return d;
}

static json_object *standouts(const double comp[][4], int njobs, bool all)
{
	struct lwm2_nodes *ns = lwm2_nodes_new(NULL);
	json_object *r, *arr;

	for (int j = 0; j < njobs; j++) {
		json_object *d = mpijob(100 + j, comp[j]);
		if (lwm2_nodes_add(ns, d) != 0)
			ok(0, "nodes_add");
		json_object_put(d);
	}
	r = lwm2_nodes_result(ns, all);
	lwm2_nodes_free(ns);
	json_object_object_get_ex(r, "nodes", &arr);
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *w;
		json_object_object_get_ex(json_object_array_get_idx(arr, i), "why", &w);
		diag("%s", json_object_get_string(w));
	}
	json_object_get(arr);
	json_object_put(r);
	return arr;
}

static void sick_nodes(void)
{
	/* n3 computes 3 s more in all 6 jobs, with noise on the others */
	const double slow[6][4] = {{5, 5.2, 8, 5.1}, {5.3, 5, 8.2, 5}, {5, 5.1, 7.9, 5.4},
	                           {5.2, 5, 8.1, 5}, {5, 5.4, 8, 5.1}, {5.1, 5, 8.3, 5.2}};
	/* the slowest rank wanders, each node twice at most */
	const double wander[6][4] = {{6, 5, 5, 5}, {5, 6, 5, 5}, {5, 5, 6, 5},
	                             {5, 5, 5, 6}, {6, 5, 5, 5}, {5, 6, 5, 5}};
	/* n2 is slower, but not a compute-time outlier among four; the
	 * others wait for it in MPI (shares 70, 40, 50, 65%) */
	const double waited[6][4] = {{3, 6, 5, 3.5}, {3, 6, 5, 3.5}, {3, 6, 5, 3.5},
	                             {3, 6, 5, 3.5}, {3, 6, 5, 3.5}, {3, 6, 5, 3.5}};
	/* every rank alike */
	const double even[6][4] = {{5, 5, 5, 5}, {5, 5, 5, 5}, {5, 5, 5, 5},
	                           {5, 5, 5, 5}, {5, 5, 5, 5}, {5, 5, 5, 5}};
	json_object *a = standouts(slow, 6, false), *e, *v;

	is_int(json_object_array_length(a), 1, "slow n3: one node stands out");
	e = json_object_array_get_idx(a, 0);
	ok(json_object_object_get_ex(e, "node", &v) && !strcmp(json_object_get_string(v), "n3"),
	   "and it is n3");
	ok(json_object_object_get_ex(e, "slowest", &v) && json_object_get_int(v) == 6,
	   "slowest in 6 of 6 jobs");
	json_object_object_get_ex(e, "p", &v);
	ok(fabs(json_object_get_double(v) - 1 / 4096.0) < 1e-6, "chance (1/4)^6 (%g)",
	   json_object_get_double(v));
	json_object_object_get_ex(e, "ratio", &v);
	ok(json_object_get_double(v) > 1.5, "compute time over 1.5x the median node's (%g)",
	   json_object_get_double(v));
	json_object_put(a);

	a = standouts(waited, 6, false);
	e = json_object_array_get_idx(a, 0);
	ok(json_object_array_length(a) == 1 && json_object_object_get_ex(e, "node", &v) &&
	       !strcmp(json_object_get_string(v), "n2") &&
	       strstr(json_object_to_json_string(e), "lowest MPI share") != NULL,
	   "the rank the others waited for (lowest MPI share): n2 stands out");
	json_object_put(a);
	a = standouts(wander, 6, false);
	is_int(json_object_array_length(a), 0, "the slowest rank wanders: no node named");
	json_object_put(a);
	a = standouts(even, 6, true);
	is_int(json_object_array_length(a), 4, "--all lists every node");
	ok(json_object_object_get_ex(json_object_array_get_idx(a, 0), "slowest", &v) &&
	       json_object_get_int(v) == 0,
	   "ranks alike: no slowest rank anywhere");
	json_object_put(a);
	a = standouts(slow, 2, false);
	is_int(json_object_array_length(a), 0, "two jobs are not enough evidence");
	json_object_put(a);
}

int main(void)
{
	setup();
	interference();
	bounds();
	sick_nodes();
	return done_testing();
}
