/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The page of jobs a query selects that the viewer may see, as the
 * database selects, sorts and counts them: what the job list and the
 * node pages show.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "errmsg.h"
#include "grow.h"
#include "serve_pages.h"

void serve_rows_free(struct serve_rows *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		for (int f = 0; f < SQ_NFILTERS; f++)
			free(rs->r[i].text[f]);
	free(rs->r);
}

static int on_job(void *arg, const struct lwm2_jobrow *j)
{
	struct serve_rows *rs = arg;
	const char *text[SQ_NFILTERS];
	struct serve_row *r;

	serve_job_texts(j, text);
	if (LWM2_GROW(rs->r, rs->n, rs->cap, 64) < 0)
		return -1;
	r = &rs->r[rs->n];
	memset(r, 0, sizeof(*r));
	r->job_id = j->job_id;
	snprintf(r->id, sizeof(r->id), "%s", j->id);
	r->end = j->end;
	r->elapsed = j->end > j->start && j->start > 0 ? j->end - j->start : 0;
	r->core_h = j->use.req_core_h;
	memcpy(r->has, j->has, sizeof(r->has));
	memcpy(r->v, j->v, sizeof(r->v));
	for (int f = 0; f < SQ_NFILTERS; f++)
		if (!(r->text[f] = strdup(text[f] ? text[f] : ""))) {
			for (int g = 0; g < f; g++)
				free(r->text[g]);
			return -1;
		}
	rs->n++;
	return 0;
}

int serve_text_col(enum serve_col c)
{
	switch (c) {
	case SC_CLUSTER:
		return SQ_CLUSTER;
	case SC_USER:
		return SQ_USER;
	case SC_ACCOUNT:
		return SQ_ACCOUNT;
	case SC_PARTITION:
		return SQ_PARTITION;
	case SC_APP:
		return SQ_APP;
	case SC_STATE:
		return SQ_STATE;
	default:
		return -1;
	}
}

/* The portal's text filters are the database's texts, in its order. */
_Static_assert((int)SQ_CLUSTER == LWM2_DBF_CLUSTER && (int)SQ_USER == LWM2_DBF_USER &&
                   (int)SQ_ACCOUNT == LWM2_DBF_ACCOUNT && (int)SQ_PARTITION == LWM2_DBF_PARTITION &&
                   (int)SQ_APP == LWM2_DBF_APP && (int)SQ_STATE == LWM2_DBF_STATE &&
                   (int)SQ_LANGUAGE == LWM2_DBF_LANGUAGE && (int)SQ_MPI == LWM2_DBF_MPI_LIBRARY &&
                   (int)SQ_MODE == LWM2_DBF_MODE && (int)SQ_NFILTERS == LWM2_DBF_NTEXTS,
               "serve_filter and lwm2_db_field's texts differ");

/* The database's order of column c: by the column, then by job id. */
static int db_order(enum serve_col c)
{
	int t = serve_text_col(c), k = serve_cols[c].value;

	if (t >= 0)
		return t;
	if (k >= 0)
		return LWM2_DBF_FIGURE + k;
	switch (c) {
	case SC_END:
		return LWM2_DBF_END;
	case SC_ELAPSED:
		return LWM2_DBF_ELAPSED;
	case SC_CORE_H:
		return LWM2_DBF_CORE_H;
	default:
		return LWM2_DBF_JOB_ID;
	}
}

/* The database's form of q and rq's viewer (dq's texts point into q,
 * its accounts into *accounts, malloc'd).  0, or -1 out of memory. */
static int serve_db_query(const struct serve_request *rq, const struct serve_query *q,
                          struct lwm2_db_query *dq, const char ***accounts)
{
	const struct serve_viewer *v = rq->viewer;

	*dq = (struct lwm2_db_query){
	    .start = q->start,
	    .end = q->end,
	    .figure = q->metric >= 0 ? serve_cols[q->metric].value : -1,
	    .has_min = q->has_min,
	    .has_max = q->has_max,
	    .min = q->min,
	    .max = q->max,
	    /* serve_viewer_sees as the database's selection */
	    .all = v->all,
	    .user = v->user,
	    .order = db_order(q->sort),
	    .desc = q->desc,
	    .offset = (int64_t)(q->page - 1) * q->per,
	    .limit = q->per,
	};
	*accounts = NULL;
	for (int f = 0; f < SQ_NFILTERS; f++)
		dq->text[f] = q->filter[f];
	if (!v->all && v->naccounts) {
		if (!(*accounts = calloc(v->naccounts, sizeof(**accounts))))
			return -1;
		for (size_t i = 0; i < v->naccounts; i++)
			(*accounts)[i] = v->accounts[i];
		dq->accounts = *accounts;
		dq->naccounts = v->naccounts;
	}
	return 0;
}

int serve_db_ask(const struct serve_request *rq, const struct serve_query *q, const char *node,
                 int (*ask)(struct lwm2_db *db, const struct lwm2_db_query *dq, void *arg,
                            char *err, size_t errlen),
                 void *arg, char *err, size_t errlen)
{
	struct lwm2_db_query dq;
	const char **accounts;
	struct lwm2_db *db;
	int rc;

	if (serve_db_query(rq, q, &dq, &accounts) < 0)
		return lwm2_errprintf(ENOMEM, err, errlen, "%s", strerror(ENOMEM));
	dq.node = node;
	if (!(db = lwm2_db_open(rq->db_url, LWM2_DB_READ, err, errlen))) {
		free(accounts);
		return -1;
	}
	err[0] = '\0';
	rc = ask(db, &dq, arg, err, errlen);
	lwm2_db_close(db);
	free(accounts);
	if (rc == 0)
		return 0;
	if (!err[0]) /* the callback's: out of memory */
		lwm2_errprintf(ENOMEM, err, errlen, "%s", strerror(ENOMEM));
	return -1;
}

static int ask_page(struct lwm2_db *db, const struct lwm2_db_query *dq, void *arg, char *err,
                    size_t errlen)
{
	struct serve_rows *rs = arg;
	int64_t total;

	if (lwm2_db_page(db, dq, &total, &rs->core_h, on_job, rs, err, errlen) != 0)
		return -1;
	rs->total = (size_t)total;
	return 0;
}

int serve_rows_read(const struct serve_request *rq, const struct serve_query *q, const char *node,
                    struct serve_rows *rs, char *err, size_t errlen)
{
	memset(rs, 0, sizeof(*rs));
	if (serve_db_ask(rq, q, node, ask_page, rs, err, errlen) < 0) {
		serve_rows_free(rs);
		return -1;
	}
	return 0;
}

const char *serve_cell(const struct serve_row *r, enum serve_col c, char *buf, size_t len)
{
	int t = serve_text_col(c), k = serve_cols[c].value;

	if (t >= 0)
		return r->text[t];
	if (k >= 0) {
		if (!r->has[k])
			return "";
		snprintf(buf, len, k == LWM2_JR_MPI || k == LWM2_JR_IO ? "%.1f" : "%.2f", r->v[k]);
		return buf;
	}
	switch (c) {
	case SC_JOB:
		return r->id;
	case SC_END:
		serve_iso_time(r->end, buf, len);
		return buf;
	case SC_ELAPSED:
		snprintf(buf, len, "%" PRId64, r->elapsed);
		return buf;
	case SC_CORE_H:
		snprintf(buf, len, "%.2f", r->core_h);
		return buf;
	default:
		return "";
	}
}
