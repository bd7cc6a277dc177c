/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the portal (`lwm2 serve`) pays per page over a large database,
 * without HTTP and without Slurm (the viewer is given):
 *
 *   serve_pages DATABASE START END USER JOB NODE
 *
 * makes each kind of page 3 times, as an administrator (every job) and,
 * for the job list, as USER (their own), the period START to END (@EPOCH),
 * and prints one line per kind: "kind=K ms=M bytes=B status=S" (M the
 * median).
 *
 *   serve_pages load DATABASE START END USER JOB SECONDS CLIENTS
 *
 * is a load as t-serve.sh's: CLIENTS threads at once for SECONDS, each
 * asking as USER for the job list, its JSON, the job's page and its
 * series in turn; one line "kind=load requests=N errors=E p50_ms=A
 * p99_ms=B".
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "serve.h"

#define RUNS 3

struct args {
	const char *v[16];
};

static const char *lookup(void *ctx, const char *name)
{
	const struct args *a = ctx;
	size_t n = strlen(name);

	for (size_t i = 0; i < 16 && a->v[i]; i++)
		if (strncmp(a->v[i], name, n) == 0 && a->v[i][n] == '=')
			return a->v[i] + n + 1;
	return NULL;
}

static void page(const char *kind, const char *db, const struct serve_viewer *viewer,
                 const char *path, const struct args *a)
{
	struct serve_request rq = {
	    .path = path, .arg = lookup, .ctx = (void *)a, .viewer = viewer, .db_url = db};
	double ms[RUNS];
	size_t bytes = 0;
	unsigned status = 0;

	for (int r = 0; r < RUNS; r++) {
		struct serve_reply rp;
		double t0 = bench_now_ns();

		serve_handle(&rq, &rp);
		ms[r] = (bench_now_ns() - t0) / 1e6;
		bytes = rp.len;
		status = rp.status;
		free(rp.body);
	}
	printf("kind=%s ms=%.1f bytes=%zu status=%u\n", kind, bench_median(ms, RUNS), bytes,
	       status);
	fflush(stdout);
}

/* ------------------------------------------------------------ load */

struct load {
	const char *db;
	const struct serve_viewer *viewer;
	const char *start, *end, *job, *job_path, *series_job;
	double stop_ns;
	pthread_mutex_t lock;
	double *lat;
	size_t n, cap;
	unsigned long errors;
	unsigned next; /* the first page of the next client */
};

static void *client(void *arg)
{
	struct load *l = arg;
	unsigned k;

	pthread_mutex_lock(&l->lock);
	k = l->next++;
	pthread_mutex_unlock(&l->lock);
	while (bench_now_ns() < l->stop_ns) {
		struct args a = {{l->start, l->end}};
		const char *path = "/";
		struct serve_reply rp;
		double t0 = bench_now_ns(), ms;

		switch (k++ % 4) {
		case 1:
			path = "/api/jobs";
			break;
		case 2:
			path = l->job_path;
			a = (struct args){{NULL}};
			break;
		case 3:
			path = "/api/series";
			a = (struct args){{l->series_job, "metric=posix_write_bytes"}};
			break;
		}
		struct serve_request rq = {
		    .path = path, .arg = lookup, .ctx = &a, .viewer = l->viewer, .db_url = l->db};

		serve_handle(&rq, &rp);
		ms = (bench_now_ns() - t0) / 1e6;
		free(rp.body);
		pthread_mutex_lock(&l->lock);
		if (rp.status != 200)
			l->errors++;
		if (l->n == l->cap) {
			size_t cap = l->cap ? 2 * l->cap : 4096;
			double *p = realloc(l->lat, cap * sizeof(*p));

			if (p) {
				l->lat = p;
				l->cap = cap;
			}
		}
		if (l->n < l->cap)
			l->lat[l->n++] = ms;
		pthread_mutex_unlock(&l->lock);
	}
	return NULL;
}

static int load(char **argv)
{
	struct serve_viewer user = {.all = false};
	char start[32], end[32], job[64], path[96];
	int seconds = atoi(argv[6]), clients = atoi(argv[7]);
	pthread_t *t = calloc(clients > 0 ? (size_t)clients : 1, sizeof(*t));
	struct load l = {.db = argv[1], .viewer = &user, .start = start, .end = end};

	if (!t || seconds <= 0 || clients <= 0) {
		free(t);
		return 2;
	}
	snprintf(start, sizeof(start), "start=%s", argv[2]);
	snprintf(end, sizeof(end), "end=%s", argv[3]);
	snprintf(user.user, sizeof(user.user), "%s", argv[4]);
	snprintf(job, sizeof(job), "job=%s", argv[5]);
	snprintf(path, sizeof(path), "/job/%s", argv[5]);
	l.job_path = path;
	l.series_job = job;
	pthread_mutex_init(&l.lock, NULL);
	l.stop_ns = bench_now_ns() + seconds * 1e9;
	for (int i = 0; i < clients; i++)
		if (pthread_create(&t[i], NULL, client, &l) != 0)
			return 1;
	for (int i = 0; i < clients; i++)
		pthread_join(t[i], NULL);
	qsort(l.lat, l.n, sizeof(*l.lat), bench_cmp_double);
	printf("kind=load requests=%zu errors=%lu p50_ms=%.0f p99_ms=%.0f\n", l.n, l.errors,
	       l.n ? l.lat[l.n / 2] : 0.0, l.n ? l.lat[l.n * 99 / 100] : 0.0);
	free(l.lat);
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	struct serve_viewer admin = {.user = "root", .all = true}, user = {.all = false};
	char start[32], end[32], job[64], path[96];

	if (argc == 9 && strcmp(argv[1], "load") == 0)
		return load(argv + 1);
	if (argc != 7) {
		fprintf(stderr, "usage: serve_pages DATABASE START END USER JOB NODE\n"
		                "       serve_pages load DATABASE START END USER JOB SECONDS "
		                "CLIENTS\n");
		return 2;
	}
	snprintf(start, sizeof(start), "start=%s", argv[2]);
	snprintf(end, sizeof(end), "end=%s", argv[3]);
	snprintf(user.user, sizeof(user.user), "%s", argv[4]);
	snprintf(job, sizeof(job), "job=%s", argv[5]);
	page("jobs", argv[1], &admin, "/", &(struct args){{start, end}});
	page("jobs_user", argv[1], &user, "/", &(struct args){{start, end}});
	page("jobs_sorted_mpi", argv[1], &admin, "/",
	     &(struct args){{start, end, "sort=mpi_time"}});
	page("jobs_sorted_user_asc", argv[1], &admin, "/",
	     &(struct args){{start, end, "sort=user", "order=asc"}});
	page("jobs_page_100", argv[1], &admin, "/", &(struct args){{start, end, "page=100"}});
	page("jobs_app_io_range", argv[1], &admin, "/",
	     &(struct args){{start, end, "app=app7", "metric=posix_io_time", "min=1"}});
	page("jobs_csv_1000", argv[1], &admin, "/api/jobs",
	     &(struct args){{start, end, "format=csv", "per=1000"}});
	page("site_by_user", argv[1], &admin, "/site", &(struct args){{start, end, "by=user"}});
	page("site_by_account", argv[1], &admin, "/site",
	     &(struct args){{start, end, "by=account"}});
	page("site_by_app", argv[1], &admin, "/site", &(struct args){{start, end, "by=app"}});
	page("site_by_partition", argv[1], &admin, "/site",
	     &(struct args){{start, end, "by=partition"}});
	page("site_by_app_as_user", argv[1], &user, "/site",
	     &(struct args){{start, end, "by=app"}});
	snprintf(path, sizeof(path), "/job/%s", argv[5]);
	page("job", argv[1], &admin, path, &(struct args){{NULL}});
	page("series", argv[1], &admin, "/api/series",
	     &(struct args){{job, "metric=posix_write_bytes"}});
	snprintf(path, sizeof(path), "/node/%s", argv[6]);
	page("node", argv[1], &admin, path, &(struct args){{start, end}});
	return 0;
}
