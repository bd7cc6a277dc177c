/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the portal's pages share:
 *
 *   serve_reply.c  a reply's body, error pages, URL and CSV text
 *   serve_rows.c   the jobs a query selects that the viewer may see, sorted
 *   serve_jobs.c   the job list: HTML with the query builder, CSV, JSON;
 *                  a node's jobs
 *   serve_site.c   the site's groups (by user, account, ...): Num%, Time%
 *   serve_job.c    one job: its report, its digest, its series
 *   serve_pages.c  the routes
 */
#ifndef LWM2_SERVE_PAGES_H
#define LWM2_SERVE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "db.h"
#include "jobrow.h"
#include "serve.h"
#include "serve_query.h"

/* ------------------------------------------------------------ replies */

/* A reply's body written through a FILE. */
struct serve_body {
	FILE *f;
	char *buf;
	size_t len;
};

FILE *serve_body_open(struct serve_body *b);
/* The body into rp: 0, or -1 (out of memory: rp is then an error). */
int serve_body_close(struct serve_body *b, struct serve_reply *rp, unsigned status,
                     const char *type);

/* o (put here) as the body of a JSON reply, closed into rp. */
void serve_body_json(struct serve_body *b, struct serve_reply *rp, json_object *o);

/* "Signed in as USER (which jobs they see)", escaped, for a page's head. */
void serve_signed_in(FILE *f, const struct serve_viewer *v);

/* v as a URL's argument value: unreserved bytes as they are, the rest
 * %XX. */
void serve_url_value(FILE *f, const char *v);

/* A CSV field: quoted where it holds a comma, a quote or a line break;
 * one that a spreadsheet would take for a formula gets a quote first. */
void serve_csv_field(FILE *f, const char *v);

/* t as YYYY-MM-DDTHH:MM:SS local time, "" for none. */
void serve_iso_time(int64_t t, char *buf, size_t len);

/* ------------------------------------------------------------ rows */

struct serve_row {
	int64_t job_id, end, elapsed;
	char id[48];
	char *text[SQ_NFILTERS]; /* by enum serve_filter */
	double core_h;
	bool has[LWM2_JR_N];
	double v[LWM2_JR_N];
};

/* The page of the jobs a query selects that the viewer may see. */
struct serve_rows {
	struct serve_row *r; /* the page's, sorted by the query */
	size_t n, cap;
	size_t total; /* the selected jobs' number and core-hours */
	double core_h;
};

/* ask(db, dq, arg, ...) on rq's database, dq q's selection as the
 * database takes it, narrowed to what rq's viewer may see (and to the
 * jobs that ran on node, NULL: any).  0, or -1 with err (ask's -1
 * without a message: out of memory). */
int serve_db_ask(const struct serve_request *rq, const struct serve_query *q, const char *node,
                 int (*ask)(struct lwm2_db *db, const struct lwm2_db_query *dq, void *arg,
                            char *err, size_t errlen),
                 void *arg, char *err, size_t errlen);

/* q's page of the jobs it selects that rq's viewer may see (node: those
 * that ran on it, NULL: any), and their number.  0, or -1 with err. */
int serve_rows_read(const struct serve_request *rq, const struct serve_query *q, const char *node,
                    struct serve_rows *rs, char *err, size_t errlen);
void serve_rows_free(struct serve_rows *rs);

/* The text filter a column shows, -1 for a figure. */
int serve_text_col(enum serve_col c);

/* A cell's text of row r, column c (buf for figures). */
const char *serve_cell(const struct serve_row *r, enum serve_col c, char *buf, size_t len);

/* ------------------------------------------------------------ pages */

void serve_jobs(const struct serve_request *rq, struct serve_reply *rp, bool api);
void serve_site(const struct serve_request *rq, struct serve_reply *rp);
void serve_job_page(const struct serve_request *rq, const char *id, struct serve_reply *rp);
/* The jobs that ran on node in the query's period, as the list shows
 * them (sortable, paged, narrowed by the query builder). */
void serve_node(const struct serve_request *rq, const char *node, struct serve_reply *rp);
void serve_job_json(const struct serve_request *rq, const char *id, struct serve_reply *rp);
void serve_series(const struct serve_request *rq, struct serve_reply *rp);

#endif /* LWM2_SERVE_PAGES_H */
