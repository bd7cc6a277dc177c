/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What jobcomp/lwm2's worker adds to each job for the central database:
 * after it appends the job's line to the log, lwm2_db_follow reads the
 * new line, makes the job's row and commits it with the log's offset
 * (one transaction per job, as a quiet site has them).
 *
 *   db_follow LOG N DB [LOGPATH]   the first N lines of LOG, appended one
 *                                  at a time to LOGPATH (default DB.log)
 *                                  and followed into DB, a SQLite file or
 *                                  an address (mysql://...); prints
 *                                  "follow_us MEDIAN p99_us P99 jobs N"
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
	size_t cap = 0, n, done = 0;
	ssize_t len;
	double *t = NULL;
	struct lwm2_db *db = NULL;
	int rc = 1;

	if ((argc != 4 && argc != 5) || !(n = strtoul(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: db_follow LOG N DB [LOGPATH]\n");
		return 2;
	}
	if (argc == 5)
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
		double t0;

		if (fwrite(line, 1, (size_t)len, out) != (size_t)len || fflush(out) != 0) {
			perror("db_follow");
			goto out;
		}
		t0 = bench_now_ns();
		if (lwm2_db_follow(db, logp, &c, err, sizeof(err)) < 0 || c.added != 1) {
			fprintf(stderr, "db_follow: line %zu: %s\n", done + 1,
			        c.added ? err : "not added");
			goto out;
		}
		t[done++] = (bench_now_ns() - t0) / 1000.0;
	}
	{
		double med = bench_median(t, done);

		printf("follow_us %.1f p99_us %.1f jobs %zu\n", med,
		       done ? t[(done * 99) / 100] : 0.0, done);
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
