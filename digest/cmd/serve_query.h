/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The portal's query builder: a request's arguments as a selection of
 * jobs, each read and checked once here (serve_query.c).  Nothing of a
 * request reaches SQL but through this: names are compared, numbers
 * parsed, and the rest refused with the argument's name.
 */
#ifndef LWM2_SERVE_QUERY_H
#define LWM2_SERVE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jobrow.h"
#include "serve.h"

/* The columns of the job list, the order of its table and CSV. */
enum serve_col {
	SC_JOB,
	SC_CLUSTER,
	SC_USER,
	SC_ACCOUNT,
	SC_PARTITION,
	SC_APP,
	SC_STATE,
	SC_END,
	SC_ELAPSED,
	SC_CORE_H,
	SC_MPI,
	SC_IO,
	SC_TPC,
	SC_CPI,
	SC_N,
};

extern const struct serve_col_def {
	const char *id;   /* argument value, CSV and JSON name */
	const char *head; /* table heading */
	int value;        /* its LWM2_JR_* figure, -1 for none */
} serve_cols[SC_N];

enum serve_format { SF_HTML, SF_CSV, SF_JSON };

/* The text filters, by argument name. */
enum serve_filter {
	SQ_CLUSTER,
	SQ_USER,
	SQ_ACCOUNT,
	SQ_PARTITION,
	SQ_APP,
	SQ_STATE,
	SQ_LANGUAGE,
	SQ_MPI,
	SQ_MODE,
	SQ_NFILTERS,
};

extern const char *const serve_filter_names[SQ_NFILTERS];

struct serve_query {
	char filter[SQ_NFILTERS][LWM2_JOBROW_NAME_LEN]; /* "" for any */
	int64_t start, end;                             /* ended within [start, end] */
	char start_arg[64], end_arg[64];                /* as given, for the form */
	int metric;                                     /* enum serve_col of the range, -1 */
	bool has_min, has_max;
	double min, max;
	enum serve_col sort;
	bool desc;
	long page, per; /* page from 1; rows per page */
	enum serve_format format;
};

#define SERVE_PER_DEFAULT 50
#define SERVE_PER_MAX     1000
#define SERVE_DAYS        30 /* the range without -S/-E: the last 30 days */

/* rq's arguments into q.  0, or -1 with err naming the argument. */
int serve_query_read(const struct serve_request *rq, int64_t now, struct serve_query *q, char *err,
                     size_t errlen);

/* Job j's texts, by enum serve_filter (NULL where it has none). */
void serve_job_texts(const struct lwm2_jobrow *j, const char *out[SQ_NFILTERS]);

/* Whether job j passes q's filters (the time range and the metric's). */
bool serve_query_takes(const struct serve_query *q, const struct lwm2_jobrow *j);

/* q's arguments as a URL's query ("?a=1&amp;b=2", escaped for HTML),
 * with argument name (NULL: none) set to value. */
void serve_query_args(FILE *f, const struct serve_query *q, const char *name, const char *value);

#endif /* LWM2_SERVE_QUERY_H */
