/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What jobcomp/lwm2's worker pays per job to compare it with its
 * application's history, with a large history behind it:
 *
 *   history STATEDIR [JOBS [APPS]]
 *
 * fills STATEDIR's index with JOBS jobs (default 1,000,000) of APPS
 * applications (default 1000; one of them gets a tenth of all jobs, so its
 * index file is cut again and again), through lwm2_history_update itself,
 * then times 1000 more jobs, each one call as the worker makes it.  Prints
 * one line: fill time, the median, 99th percentile and largest time per
 * job in ms, and the bytes the index holds.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "jsonutil.h"
#include "lwm2_history.h"

static json_object *digest(uint32_t job, const char *exe, int ranks, double dur, double mpi)
{
	json_object *d = json_object_new_object(), *j = json_object_new_object(),
	            *a = json_object_new_object(), *m = json_object_new_object();

	ju_add(j, "job_id", ju_u64(job));
	ju_add(j, "user", json_object_new_string("alice"));
	ju_add(j, "start", json_object_new_int64(1700000000 + (int64_t)job));
	ju_add(j, "end", json_object_new_int64(1700000000 + (int64_t)job + 60));
	ju_add(a, "exe", json_object_new_string(exe));
	ju_add(a, "build_id", json_object_new_string("0123456789abcdef0123456789abcdef01234567"));
	ju_add(a, "ranks", json_object_new_int(ranks));
	ju_add(a, "nodes", json_object_new_int(1));
	ju_add(a, "cpu_s", ju_double(dur * ranks));
	ju_add(m, "duration", ju_double(dur));
	ju_add(m, "mpi_time", ju_double(mpi));
	ju_add(m, "posix_io_time", ju_double(1.0));
	ju_add(m, "avg_threads", ju_double(1.0));
	ju_add(a, "metrics", m);
	ju_add(d, "job", j);
	ju_add(d, "application", a);
	return d;
}

static const char *app_of(uint32_t i, uint32_t apps, char *buf, size_t len)
{
	/* a tenth of the jobs to one hot application, the rest spread */
	snprintf(buf, len, "app%u", i % 10 == 0 ? 0 : 1 + (i * 2654435761u) % (apps - 1));
	return buf;
}

static long long index_bytes(const char *state)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	long long sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/history", state);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/history/%s", state, de->d_name);
		if (de->d_name[0] != '.' && stat(path, &st) == 0)
			sum += st.st_size;
	}
	closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	uint32_t jobs = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000000;
	uint32_t apps = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 1000;
	static double t[1000];
	char err[256], name[32];
	double t0, fill;

	if (argc < 2 || apps < 2) {
		fprintf(stderr, "usage: history STATEDIR [JOBS [APPS>=2]]\n");
		return 2;
	}
	t0 = bench_now_ns();
	for (uint32_t i = 1; i <= jobs; i++) {
		json_object *d =
		    digest(i, app_of(i, apps, name, sizeof(name)), 64, 100 + (i % 7), 20 + (i % 5));
		if (lwm2_history_update(argv[1], d, err, sizeof(err)) < 0) {
			fprintf(stderr, "history: job %u: %s\n", i, err);
			return 1;
		}
		json_object_put(d);
	}
	fill = (bench_now_ns() - t0) / 1e9;
	for (uint32_t k = 0; k < 1000; k++) {
		uint32_t i = jobs + 1 + k;
		json_object *d =
		    digest(i, app_of(i, apps, name, sizeof(name)), 64, k % 50 ? 100 : 200, 20);
		double a = bench_now_ns();
		int rc = lwm2_history_update(argv[1], d, err, sizeof(err));
		t[k] = (bench_now_ns() - a) / 1e6;
		json_object_put(d);
		if (rc < 0) {
			fprintf(stderr, "history: job %u: %s\n", i, err);
			return 1;
		}
	}
	bench_median(t, 1000);
	printf("history_fill_s=%.1f jobs=%u apps=%u history_job_ms_median=%.3f "
	       "history_job_ms_p99=%.3f history_job_ms_max=%.3f index_bytes=%lld\n",
	       fill, jobs, apps, t[500], t[989], t[999], index_bytes(argv[1]));
	return 0;
}
