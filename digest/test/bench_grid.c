/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Time of what jobcomp/lwm2's worker does per job with the grid: add the
 * new digest's slices to a full index (its default bound) and run the
 * interference rule.  The budget is 50 ms per job.
 *
 *   ./bench_grid [NODES [SLICES]]   the new job's size (default 64 x 360)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "grid.h"

static double ms_of(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Wall time, and CPU time of this thread: on a machine shared with other
 * work the wall time counts the others' turns on the cores too, the CPU
 * time only what the worker itself spends. */
static double now_ms(void)
{
	return ms_of(CLOCK_MONOTONIC);
}

static double cpu_ms(void)
{
	return ms_of(CLOCK_THREAD_CPUTIME_ID);
}

static json_object *mkjob(int64_t id, int64_t first, int nodes, int n)
{
	json_object *d = json_object_new_object(), *job = json_object_new_object();
	json_object *grid = json_object_new_array();

	json_object_object_add(job, "job_id", json_object_new_int64(id));
	json_object_object_add(job, "start", json_object_new_int64(first * 10));
	json_object_object_add(job, "end", json_object_new_int64((first + n) * 10));
	json_object_object_add(d, "job", job);
	for (int k = 0; k < nodes; k++) {
		json_object *e = json_object_new_object(), *c = json_object_new_object();
		json_object *wb = json_object_new_array(), *wn = json_object_new_array();
		json_object *mb = json_object_new_array(), *mn = json_object_new_array();
		char name[16];
		snprintf(name, sizeof(name), "n%04d", (int)((id * 7 + k) % 2048));
		for (int i = 0; i < n; i++) {
			json_object_array_add(wb,
			                      json_object_new_int64(100000000 + (i % 7) * 1000));
			json_object_array_add(wn,
			                      json_object_new_int64(200000000 + (i % 5) * 1000));
			json_object_array_add(mb, json_object_new_int64(1000000000));
			json_object_array_add(mn,
			                      json_object_new_int64(100000000 + (i % 3) * 1000));
		}
		json_object_object_add(c, "posix_write_bytes", wb);
		json_object_object_add(c, "posix_write_ns", wn);
		json_object_object_add(c, "mpi_p2p_bytes_sent", mb);
		json_object_object_add(c, "mpi_p2p_ns", mn);
		json_object_object_add(e, "step", json_object_new_int(0));
		json_object_object_add(e, "node", json_object_new_string(name));
		json_object_object_add(e, "first_slice", json_object_new_int64(first));
		json_object_object_add(e, "n", json_object_new_int(n));
		json_object_object_add(e, "slice_length_s", json_object_new_int(10));
		json_object_object_add(e, "c", c);
		json_object_array_add(grid, e);
	}
	json_object_object_add(d, "grid", grid);
	return d;
}

int main(int argc, char **argv)
{
	int nodes = argc > 1 ? atoi(argv[1]) : 64, n = argc > 2 ? atoi(argv[2]) : 360;
	struct lwm2_grid g = {.max_cells = LWM2_GRID_WORKER_CELLS,
	                      .keep_s = LWM2_GRID_WORKER_KEEP_S};
	double t0, t1, t2, c0, c2, worst = 0, worst_cpu = 0;
	json_object *d;

	/* fill the index to its bound with overlapping jobs */
	for (int64_t j = 1; g.ncells < g.max_cells * 9 / 10; j++) {
		d = mkjob(j, 170000000 + j * 10, 8, 360);
		lwm2_grid_add(&g, d);
		json_object_put(d);
	}
	printf("index: %zu jobs, %zu cells, %zu nodes, %zu KiB\n", g.njobs, g.ncells, g.nnodes,
	       g.capcells * sizeof(*g.cells) / 1024);
	for (int r = 0; r < 5; r++) {
		json_object *f;
		d = mkjob(100000 + r, 170000000 + (int64_t)g.njobs * 10 - 2000, nodes, n);
		c0 = cpu_ms();
		t0 = now_ms();
		lwm2_grid_add(&g, d);
		t1 = now_ms();
		f = lwm2_grid_interference(&g, 100000 + r, NULL);
		t2 = now_ms();
		c2 = cpu_ms();
		printf("job of %d nodes x %d slices: add %.2f ms, interference %.2f ms, total %.2f "
		       "ms (CPU %.2f ms)\n",
		       nodes, n, t1 - t0, t2 - t1, t2 - t0, c2 - c0);
		if (t2 - t0 > worst)
			worst = t2 - t0;
		if (c2 - c0 > worst_cpu)
			worst_cpu = c2 - c0;
		json_object_put(f);
		json_object_put(d);
	}
	printf("worst %.2f ms, CPU %.2f ms (budget 50 ms)\n", worst, worst_cpu);
	lwm2_grid_free(&g);
	return worst_cpu <= 50 ? 0 : 1;
}
