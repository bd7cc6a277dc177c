/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A request's arguments as a selection of jobs: every argument read and
 * checked here, an unknown value refused with the argument's name.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "logscan.h"
#include "numparse.h"
#include "serve_pages.h"
#include "serve_query.h"

const struct serve_col_def serve_cols[SC_N] = {
    [SC_JOB] = {"job", "Job", -1},
    [SC_CLUSTER] = {"cluster", "Cluster", -1},
    [SC_USER] = {"user", "User", -1},
    [SC_ACCOUNT] = {"account", "Account", -1},
    [SC_PARTITION] = {"partition", "Partition", -1},
    [SC_APP] = {"app", "Application", -1},
    [SC_STATE] = {"state", "State", -1},
    [SC_END] = {"end", "Ended", -1},
    [SC_ELAPSED] = {"elapsed_s", "Elapsed s", -1},
    [SC_CORE_H] = {"core_h", "Core-h", -1},
    [SC_MPI] = {"mpi_time", "MPI %", LWM2_JR_MPI},
    [SC_IO] = {"posix_io_time", "I/O %", LWM2_JR_IO},
    [SC_TPC] = {"threads_per_core", "Threads/core", LWM2_JR_TPC},
    [SC_CPI] = {"cpi", "CPI", LWM2_JR_CPI},
};

const char *const serve_filter_names[SQ_NFILTERS] = {
    [SQ_CLUSTER] = "cluster",     [SQ_USER] = "user", [SQ_ACCOUNT] = "account",
    [SQ_PARTITION] = "partition", [SQ_APP] = "app",   [SQ_STATE] = "state",
    [SQ_LANGUAGE] = "language",   [SQ_MPI] = "mpi",   [SQ_MODE] = "mode",
};

/* The argument, "" when absent or empty. */
static const char *arg(const struct serve_request *rq, const char *name)
{
	const char *v = rq->arg(rq->ctx, name);

	return v ? v : "";
}

static int read_col(const char *v, const char *name, bool metric_only, int *out, char *err,
                    size_t errlen)
{
	for (int c = 0; c < SC_N; c++)
		if (strcmp(v, serve_cols[c].id) == 0 &&
		    (!metric_only || serve_cols[c].value >= 0)) {
			*out = c;
			return 0;
		}
	return lwm2_errprintf(EINVAL, err, errlen, "%s: no column '%.64s'", name, v);
}

static int read_number(const char *v, const char *name, double *out, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(*out))
		return lwm2_errprintf(EINVAL, err, errlen, "%s: want a number, not '%.64s'", name,
		                      v);
	return 0;
}

static int read_time(const char *v, const char *name, int64_t *out, char *save, size_t savelen,
                     char *err, size_t errlen)
{
	if (lwm2_parse_time(v, out) < 0)
		return lwm2_errprintf(EINVAL, err, errlen,
		                      "%s: want now, now-N[s|m|h|d], YYYY-MM-DD[THH:MM[:SS]] or "
		                      "@EPOCH, not '%.64s'",
		                      name, v);
	snprintf(save, savelen, "%s", v);
	return 0;
}

int serve_query_read(const struct serve_request *rq, int64_t now, struct serve_query *q, char *err,
                     size_t errlen)
{
	const char *v;
	int col;
	int64_t n;

	memset(q, 0, sizeof(*q));
	q->metric = -1;
	q->sort = SC_END;
	q->desc = true;
	q->page = 1;
	q->per = SERVE_PER_DEFAULT;
	for (int f = 0; f < SQ_NFILTERS; f++) {
		v = arg(rq, serve_filter_names[f]);
		if (strlen(v) >= sizeof(q->filter[f]))
			return lwm2_errprintf(EINVAL, err, errlen, "%s: longer than %zu bytes",
			                      serve_filter_names[f], sizeof(q->filter[f]) - 1);
		snprintf(q->filter[f], sizeof(q->filter[f]), "%s", v);
	}
	q->end = now;
	q->start = now - SERVE_DAYS * 86400;
	if (*(v = arg(rq, "start")) &&
	    read_time(v, "start", &q->start, q->start_arg, sizeof(q->start_arg), err, errlen) < 0)
		return -1;
	if (*(v = arg(rq, "end")) &&
	    read_time(v, "end", &q->end, q->end_arg, sizeof(q->end_arg), err, errlen) < 0)
		return -1;
	if (q->end < q->start)
		return lwm2_errprintf(EINVAL, err, errlen, "end: before start");
	if (*(v = arg(rq, "metric")) && read_col(v, "metric", true, &q->metric, err, errlen) < 0)
		return -1;
	if (*(v = arg(rq, "min"))) {
		if (read_number(v, "min", &q->min, err, errlen) < 0)
			return -1;
		q->has_min = true;
	}
	if (*(v = arg(rq, "max"))) {
		if (read_number(v, "max", &q->max, err, errlen) < 0)
			return -1;
		q->has_max = true;
	}
	if ((q->has_min || q->has_max) && q->metric < 0)
		return lwm2_errprintf(EINVAL, err, errlen, "min, max: want a metric to range over");
	if (*(v = arg(rq, "sort"))) {
		if (read_col(v, "sort", false, &col, err, errlen) < 0)
			return -1;
		q->sort = (enum serve_col)col;
	}
	if (*(v = arg(rq, "order"))) {
		if (strcmp(v, "asc") != 0 && strcmp(v, "desc") != 0)
			return lwm2_errprintf(EINVAL, err, errlen, "order: want asc or desc");
		q->desc = strcmp(v, "desc") == 0;
	}
	if (*(v = arg(rq, "page"))) {
		if (lwm2_parse_i64(v, NULL, 1, 1000000, &n) < 0)
			return lwm2_errprintf(EINVAL, err, errlen, "page: want 1 to 1000000");
		q->page = (long)n;
	}
	if (*(v = arg(rq, "per"))) {
		if (lwm2_parse_i64(v, NULL, 1, SERVE_PER_MAX, &n) < 0)
			return lwm2_errprintf(EINVAL, err, errlen, "per: want 1 to %d",
			                      SERVE_PER_MAX);
		q->per = (long)n;
	}
	v = arg(rq, "format");
	if (!*v || strcmp(v, "html") == 0)
		q->format = SF_HTML;
	else if (strcmp(v, "csv") == 0)
		q->format = SF_CSV;
	else if (strcmp(v, "json") == 0)
		q->format = SF_JSON;
	else
		return lwm2_errprintf(EINVAL, err, errlen, "format: want html, csv or json");
	return 0;
}

static bool same(const char *want, const char *have)
{
	return !*want || (have && strcmp(want, have) == 0);
}

void serve_job_texts(const struct lwm2_jobrow *j, const char *out[SQ_NFILTERS])
{
	out[SQ_CLUSTER] = j->cluster;
	out[SQ_USER] = j->user;
	out[SQ_ACCOUNT] = j->account;
	out[SQ_PARTITION] = j->partition;
	out[SQ_APP] = j->app;
	out[SQ_STATE] = j->state;
	out[SQ_LANGUAGE] = j->language;
	out[SQ_MPI] = j->mpi_library;
	out[SQ_MODE] = j->mode;
}

bool serve_query_takes(const struct serve_query *q, const struct lwm2_jobrow *j)
{
	const char *have[SQ_NFILTERS];

	serve_job_texts(j, have);

	for (int f = 0; f < SQ_NFILTERS; f++)
		if (!same(q->filter[f], have[f]))
			return false;
	if (j->end < q->start || j->end > q->end)
		return false;
	if (q->metric >= 0) {
		int k = serve_cols[q->metric].value;

		if ((q->has_min || q->has_max) && !j->has[k])
			return false;
		if (q->has_min && j->v[k] < q->min)
			return false;
		if (q->has_max && j->v[k] > q->max)
			return false;
	}
	return true;
}

void serve_query_args(FILE *f, const struct serve_query *q, const char *name, const char *value)
{
	bool first = true;
	char num[32];

#define ARG(n, v)                                                                                  \
	do {                                                                                       \
		if (name && strcmp(name, (n)) == 0)                                                \
			break;                                                                     \
		if (*(v)) {                                                                        \
			fprintf(f, "%s%s=", first ? "?" : "&amp;", (n));                           \
			serve_url_value(f, (v));                                                   \
			first = false;                                                             \
		}                                                                                  \
	} while (0)
	for (int i = 0; i < SQ_NFILTERS; i++)
		ARG(serve_filter_names[i], q->filter[i]);
	ARG("start", q->start_arg);
	ARG("end", q->end_arg);
	ARG("metric", q->metric >= 0 ? serve_cols[q->metric].id : "");
	snprintf(num, sizeof(num), "%.17g", q->min);
	ARG("min", q->has_min ? num : "");
	snprintf(num, sizeof(num), "%.17g", q->max);
	ARG("max", q->has_max ? num : "");
	ARG("sort", serve_cols[q->sort].id);
	ARG("order", q->desc ? "desc" : "asc");
	snprintf(num, sizeof(num), "%ld", q->per);
	ARG("per", q->per != SERVE_PER_DEFAULT ? num : "");
#undef ARG
	if (name) {
		fprintf(f, "%s%s=", first ? "?" : "&amp;", name);
		serve_url_value(f, value);
	}
}
