/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The slices of recent jobs, for the interference rule (digest/site/grid.h):
 * bounded in cells and age, so slurmctld's memory does not grow with the
 * log.  It starts empty: after a restart, jobs that ended before it are not
 * seen (`lwm2 grid --interference` over the log sees them).
 */
#include <inttypes.h>
#include <pthread.h>
#include <time.h>

#include "grid.h"
#include "worker_int.h"

static pthread_mutex_t grid_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lwm2_grid recent = {.max_cells = LWM2_GRID_WORKER_CELLS,
                                  .keep_s = LWM2_GRID_WORKER_KEEP_S};

/* The findings are kept in the compact form too. */
void lwm2_jc_interference(const struct lwm2_jc_ops *ops, const struct lwm2_jc_job *job,
                          json_object *digest)
{
	struct timespec a, b;
	json_object *f = NULL;
	size_t nf = 0, jobs, cells;

	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_mutex_lock(&grid_mu);
	if (lwm2_grid_add(&recent, digest) == 0)
		f = lwm2_grid_interference(&recent, job->job_id, NULL);
	jobs = recent.njobs;
	cells = recent.ncells;
	pthread_mutex_unlock(&grid_mu);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (f && (nf = json_object_array_length(f)))
		json_object_object_add(digest, "interference", f);
	else
		json_object_put(f);
	lwm2_log_verbose(
	    "grid: job %" PRIu32 ": %zu interference findings in %.1f ms (%zu jobs, %zu "
	    "cells in the index)",
	    job->job_id, nf,
	    (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6, jobs,
	    cells);
}

void lwm2_jc_interference_free(void)
{
	pthread_mutex_lock(&grid_mu);
	lwm2_grid_free(&recent);
	pthread_mutex_unlock(&grid_mu);
}
