/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The work jobcomp_p_log_record does with slurmctld's job write lock held,
 * without Slurm: copy the job's fields into a struct lwm2_jc_job (the same
 * fields, the same strdup calls as jobcomp_lwm2.c) and push it onto the
 * worker's queue (what lwm2_jc_enqueue does).  A second thread pops and
 * frees, as the worker would, so the queue stays short.
 *
 *   jc_enqueue N ROUNDS     median and 99th percentile ns per call
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "lwm2_jobcomp.h"

static struct lwm2_jc_queue *q;
static volatile int done;

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void *drain(void *arg)
{
	(void)arg;
	while (!done || lwm2_jc_queue_len(q)) {
		struct timespec dl;

		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_nsec += 10000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		struct lwm2_jc_job *j = lwm2_jc_queue_pop(q, &dl);

		if (j)
			lwm2_jc_job_free(j);
	}
	return NULL;
}

static int log_record(uint32_t id)
{
	struct lwm2_jc_job *job = calloc(1, sizeof(*job));

	if (!job)
		return -1;
	job->job_id = id;
	job->array_task_id = LWM2_JC_NONE;
	job->het_job_offset = LWM2_JC_NONE;
	job->uid = 5000;
	job->gid = 5000;
	job->node_count = 64;
	job->total_cpus = 4096;
	job->submit = 1700000000;
	job->start = 1700000100;
	job->end = 1700003700;
	job->queued = time(NULL);
	job->cluster = dup_or_null("cluster");
	job->user = dup_or_null("alice");
	job->account = dup_or_null("physics");
	job->partition = dup_or_null("batch");
	job->nodes = dup_or_null("node[0001-0032,0100-0131]");
	job->name = dup_or_null("solver-production-run");
	job->state = dup_or_null("COMPLETED");
	job->admin_comment = dup_or_null(NULL);
	return lwm2_jc_queue_push(q, job);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	double *t = calloc((size_t)(n * rounds), sizeof(double));
	pthread_t th;

	if (!t || !(q = lwm2_jc_queue_new(1000000)) || pthread_create(&th, NULL, drain, NULL))
		return 1;
	for (long i = 0; i < n * rounds; i++) {
		double t0 = bench_now_ns();

		if (log_record((uint32_t)i) < 0)
			return 1;
		t[i] = bench_now_ns() - t0;
		if (i % 64 == 63) {
			/* jobs end apart from each other; let the drain thread run */
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
		}
	}
	done = 1;
	lwm2_jc_queue_wake(q);
	pthread_join(th, NULL);
	size_t m = (size_t)(n * rounds);
	double med = bench_median(t, m);

	printf("log_record_ns %.0f p99_ns %.0f max_ns %.0f\n", med, t[(m * 99) / 100], t[m - 1]);
	lwm2_jc_queue_free(q);
	return 0;
}
