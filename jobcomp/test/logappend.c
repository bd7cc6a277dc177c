/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * logappend LOG STATEDIR FIRST COUNT [PAUSE_US]: jobs FIRST .. FIRST+COUNT-1 through
 * the worker's own step (lwm2_jc_process), so each is appended to LOG by
 * the writer slurmctld runs, one line per job.  The jobs never ran: no
 * node records, munge or spool are needed for the line.  For
 * test/logrotate.sh, which rotates LOG between and during the appends;
 * PAUSE_US between two jobs makes the appends last long enough for the
 * rotations to fall among them however fast the file system syncs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "lwm2_jobcomp.h"

static void say(enum lwm2_log_level level, const char *msg)
{
	if (level == LWM2_LOG_ERROR)
		fprintf(stderr, "logappend: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct lwm2_jc_conf conf = {0};
	struct lwm2_jc_ops ops = {0};
	uint32_t first, count;
	long pause_us = 0;
	int rc = 0;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: logappend LOG STATEDIR FIRST COUNT [PAUSE_US]\n");
		return 2;
	}
	if (argc == 6)
		pause_us = strtol(argv[5], NULL, 10);
	lwm2_log_open("lwm2");
	lwm2_log_set_sink(say);
	conf.log_path = argv[1];
	conf.state_dir = argv[2];
	conf.spool_dir = argv[2];
	conf.keep_records = true; /* no spool to clean */
	conf.retry_max = 3600;
	first = (uint32_t)strtoul(argv[3], NULL, 10);
	count = (uint32_t)strtoul(argv[4], NULL, 10);
	for (uint32_t id = first; id < first + count; id++) {
		struct lwm2_jc_job *job = calloc(1, sizeof(*job));

		if (!job)
			return 1;
		job->job_id = id;
		job->array_task_id = job->het_job_offset = LWM2_JC_NONE;
		job->uid = 0;
		job->user = strdup("root");
		job->end = job->queued = time(NULL);
		job->state = strdup("CANCELLED");
		/* 0: done, the line is in LOG */
		if (lwm2_jc_process(&conf, &ops, job, NULL) != 0) {
			fprintf(stderr, "logappend: job %" PRIu32 " was not logged\n", id);
			rc = 1;
		}
		lwm2_jc_job_free(job);
		if (pause_us > 0) {
			struct timespec ts = {pause_us / 1000000, (pause_us % 1000000) * 1000};

			nanosleep(&ts, NULL);
		}
	}
	return rc;
}
