/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What jobcomp/lwm2's worker adds to each job for the central database:
 * after it appends the job's line to the log, lwm2_db_follow reads the
 * new lines, makes the jobs' rows and commits them with the log's offset
 * (one transaction per job, as a quiet site has them; in a burst, the
 * worker's group of the lines of a quarter of a second).
 *
 *   db_follow LOG N DB [LOGPATH [GROUP]]
 *       the first N lines of LOG, appended GROUP at a time (default 1) to
 *       LOGPATH (default DB.log; "" for it) and followed into DB, a SQLite
 *       file or an address (mysql://...) after each GROUP; prints
 *       "follow_us MEDIAN p99_us P99 mean_us MEAN jobs N": a job's share
 *       of a follow, the median and 99th percentile over the follows,
 *       and the mean over all jobs (the checkpoints included)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "db.h"

int main(int argc, char **argv)
{
	FILE *in = NULL, *out = NULL;
	char *line = NULL, logbuf[4096], err[1024];
	const char *logp = logbuf;
	size_t cap = 0, n, done = 0, group = 1, follows = 0, in_group = 0;
	ssize_t len;
	double *t = NULL, total = 0;
	struct lwm2_db *db = NULL;
	int rc = 1;

	if (argc < 4 || argc > 6 || !(n = strtoul(argv[2], NULL, 10)) ||
	    (argc == 6 && !(group = strtoul(argv[5], NULL, 10)))) {
		fprintf(stderr, "usage: db_follow LOG N DB [LOGPATH [GROUP]]\n");
		return 2;
	}
	if (argc >= 5 && argv[4][0])
		logp = argv[4];
	else
		snprintf(logbuf, sizeof(logbuf), "%s.log", argv[3]);
	if (!(in = fopen(argv[1], "re")) || !(out = fopen(logp, "we")) ||
	    !(t = calloc(n, sizeof(*t)))) {
		perror("db_follow");
		goto out;
	}
	if (!(db = lwm2_db_open(argv[3], LWM2_DB_WRITE, err, sizeof(err)))) {
		fprintf(stderr, "db_follow: %s\n", err);
		goto out;
	}
	while (done < n && (len = getline(&line, &cap, in)) > 0) {
		struct lwm2_db_count c = {0};
		double t0, took;

		if (fwrite(line, 1, (size_t)len, out) != (size_t)len) {
			perror("db_follow");
			goto out;
		}
		done++;
		if (++in_group < group && done < n)
			continue;
		if (fflush(out) != 0) {
			perror("db_follow");
			goto out;
		}
		t0 = bench_now_ns();
		if (lwm2_db_follow(db, logp, &c, err, sizeof(err)) < 0 || c.added != in_group) {
			fprintf(stderr, "db_follow: line %zu: %s\n", done,
			        c.added != in_group ? "not all added" : err);
			goto out;
		}
		took = (bench_now_ns() - t0) / 1000.0;
		total += took;
		t[follows++] = took / (double)in_group;
		in_group = 0;
	}
	{
		double med = bench_median(t, follows);

		printf("follow_us %.1f p99_us %.1f mean_us %.1f jobs %zu\n", med,
		       follows ? t[(follows * 99) / 100] : 0.0, done ? total / (double)done : 0.0,
		       done);
	}
	rc = 0;
out:
	lwm2_db_close(db);
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	free(line);
	free(t);
	return rc;
}
