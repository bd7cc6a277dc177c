/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 stats` over the central database (site_stats.h, db.h): whole
 * days from their summaries, the rest of the period from the jobs' rows.
 * A day's summary is the packed sums of each group of each grouping, made
 * from the day's rows by the same code that reads the log, and added up
 * exactly (site_stats.h: the sums are integers), so the figures are the
 * log's to the last bit.  Questions a summary cannot answer (a selection
 * of users, accounts, partitions or states, the top list, groups by node,
 * month, language, MPI library, cluster, mode or QOS, or by several keys,
 * a histogram of a metric) read the rows.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "grow.h"
#include "errmsg.h"
#include "log.h"
#include "lwm2_render.h"
#include "site_stats.h"

/* ------------------------------------------------------------ blobs */

#define BLOB_MAGIC 0x4c
/* 2 adds the jobs that passed no MPI message; a blob of version 1 reads
 * as none of its jobs saying (mpi_known 0) */
#define BLOB_VERSION 2

struct buf {
	unsigned char *p;
	size_t len, cap;
	bool failed;
};

static void put(struct buf *b, const void *v, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? 2 * b->cap : 256;
		unsigned char *np;

		while (nc < b->len + n)
			nc *= 2;
		if (!(np = realloc(b->p, nc))) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = nc;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

#define PUT(b, v) put(b, &(v), sizeof(v))

unsigned char *lwm2_stats_group_pack(const struct lwm2_stats_group *g, size_t *len)
{
	struct buf b = {0};
	uint8_t head[2] = {BLOB_MAGIC, BLOB_VERSION};
	uint16_t nrules = 0;
	uint32_t nusers = (uint32_t)g->nusers;

	put(&b, head, sizeof(head));
	PUT(&b, g->jobs);
	PUT(&b, g->no_digest);
	PUT(&b, g->u.jobs);
	PUT(&b, g->u.measured);
	PUT(&b, g->u.mem_jobs);
	PUT(&b, g->xcore_h);
	PUT(&b, g->xreq);
	PUT(&b, g->xmeas_req);
	PUT(&b, g->xused);
	PUT(&b, g->xmem_req);
	PUT(&b, g->xmem_peak);
	for (int k = 0; k < LWM2_SM_N; k++) {
		const struct lwm2_stats_dist *d = &g->d[k];
		uint16_t nb = 0;

		PUT(&b, d->n);
		PUT(&b, d->min);
		PUT(&b, d->max);
		PUT(&b, d->xw);
		PUT(&b, d->xwx);
		for (uint16_t i = 0; d->bins && i <= LWM2_STATS_NBINS; i++)
			nb += d->bins[i] != 0;
		PUT(&b, nb);
		for (uint16_t i = 0; d->bins && i <= LWM2_STATS_NBINS; i++)
			if (d->bins[i]) {
				PUT(&b, i);
				PUT(&b, d->bins[i]);
			}
	}
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++)
		nrules += g->rule_jobs[r] != 0;
	PUT(&b, nrules);
	for (size_t r = 0; r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX; r++)
		if (g->rule_jobs[r]) {
			/* by the rule's id: a later lwm2 may number them otherwise */
			uint8_t idlen = (uint8_t)strlen(lwm2_guidance_rules[r].id);

			PUT(&b, idlen);
			put(&b, lwm2_guidance_rules[r].id, idlen);
			PUT(&b, g->rule_jobs[r]);
			PUT(&b, g->xrule_ch[r]);
		}
	PUT(&b, nusers);
	for (size_t i = 0; i < g->nusers; i++) {
		uint16_t n = (uint16_t)strnlen(g->users[i], UINT16_MAX);

		PUT(&b, n);
		put(&b, g->users[i], n);
	}
	PUT(&b, g->mpi_known);
	PUT(&b, g->no_mpi_msgs);
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

struct cur {
	const unsigned char *p, *end;
	bool bad;
};

static void get(struct cur *c, void *v, size_t n)
{
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, c->p, n);
	c->p += n;
}

#define GET(c, v) get(c, &(v), sizeof(v))

/* The blob read through once to see it is whole, then added. */
static int merge_pass(struct lwm2_stats_group *g, const void *blob, size_t len, bool apply)
{
	struct cur c = {blob, (const unsigned char *)blob + len, false};
	uint8_t head[2];
	uint64_t jobs, no_digest, ujobs, measured, mem_jobs;
	lwm2_stats_xsum x[6];
	uint16_t nrules;
	uint32_t nusers;

	get(&c, head, sizeof(head));
	if (c.bad || head[0] != BLOB_MAGIC || head[1] < 1 || head[1] > BLOB_VERSION)
		return -1;
	GET(&c, jobs);
	GET(&c, no_digest);
	GET(&c, ujobs);
	GET(&c, measured);
	GET(&c, mem_jobs);
	get(&c, x, sizeof(x));
	if (apply) {
		g->jobs += jobs;
		g->no_digest += no_digest;
		g->u.jobs += ujobs;
		g->u.measured += measured;
		g->u.mem_jobs += mem_jobs;
		lwm2_stats_xadd(&g->xcore_h, x[0]);
		lwm2_stats_xadd(&g->xreq, x[1]);
		lwm2_stats_xadd(&g->xmeas_req, x[2]);
		lwm2_stats_xadd(&g->xused, x[3]);
		lwm2_stats_xadd(&g->xmem_req, x[4]);
		lwm2_stats_xadd(&g->xmem_peak, x[5]);
	}
	for (int k = 0; k < LWM2_SM_N; k++) {
		struct lwm2_stats_dist *d = &g->d[k];
		uint64_t n;
		double mn, mx;
		lwm2_stats_xsum xw, xwx;
		uint16_t nb;

		GET(&c, n);
		GET(&c, mn);
		GET(&c, mx);
		GET(&c, xw);
		GET(&c, xwx);
		GET(&c, nb);
		if (apply && n) {
			if (!d->bins && !(d->bins = calloc(LWM2_STATS_NBINS + 1, sizeof(*d->bins))))
				return -1;
			if (!d->n || mn < d->min)
				d->min = mn;
			if (!d->n || mx > d->max)
				d->max = mx;
			d->n += n;
			lwm2_stats_xadd(&d->xw, xw);
			lwm2_stats_xadd(&d->xwx, xwx);
		}
		for (uint16_t i = 0; i < nb && !c.bad; i++) {
			uint16_t at;
			int64_t w;

			GET(&c, at);
			GET(&c, w);
			if (at > LWM2_STATS_NBINS)
				c.bad = true;
			else if (apply && d->bins)
				lwm2_stats_badd(&d->bins[at], w);
		}
	}
	GET(&c, nrules);
	for (uint16_t i = 0; i < nrules && !c.bad; i++) {
		uint8_t idlen;
		char id[256];
		uint64_t rj;
		lwm2_stats_xsum rch;

		GET(&c, idlen);
		get(&c, id, idlen);
		id[idlen] = '\0';
		GET(&c, rj);
		GET(&c, rch);
		for (size_t r = 0; apply && r < lwm2_nguidance_rules && r < LWM2_STATS_RULES_MAX;
		     r++)
			if (!strcmp(lwm2_guidance_rules[r].id, id)) {
				g->rule_jobs[r] += rj;
				lwm2_stats_xadd(&g->xrule_ch[r], rch);
			}
	}
	GET(&c, nusers);
	for (uint32_t i = 0; i < nusers && !c.bad; i++) {
		uint16_t n;

		GET(&c, n);
		if ((size_t)(c.end - c.p) < n) {
			c.bad = true;
			break;
		}
		if (apply)
			lwm2_stats_group_add_user(g, (const char *)c.p, n);
		c.p += n;
	}
	if (head[1] >= 2) {
		uint64_t mpi_known, no_mpi_msgs;

		GET(&c, mpi_known);
		GET(&c, no_mpi_msgs);
		if (apply) {
			g->mpi_known += mpi_known;
			g->no_mpi_msgs += no_mpi_msgs;
		}
	}
	return c.bad || c.p != c.end ? -1 : 0;
}

int lwm2_stats_group_merge(struct lwm2_stats_group *g, const void *blob, size_t len)
{
	if (merge_pass(g, blob, len, false) < 0)
		return -1;
	return merge_pass(g, blob, len, true);
}

/* ------------------------------------------------------------ reading */

/* The groupings a summary keeps, by enum lwm2_stats_by (NULL: none). */
static const char *const dims[] = {
    [LWM2_BY_NONE] = "all",        [LWM2_BY_USER] = "user",
    [LWM2_BY_ACCOUNT] = "account", [LWM2_BY_PARTITION] = "partition",
    [LWM2_BY_EXE] = "executable",  [LWM2_BY_APP] = "app",
    [LWM2_BY_IMAGE] = "image",     [LWM2_BY_MONTH] = NULL,
    [LWM2_BY_NODE] = NULL,         [LWM2_BY_LANGUAGE] = NULL,
    [LWM2_BY_MPI] = NULL,          [LWM2_BY_CLUSTER] = NULL,
    [LWM2_BY_MODE] = NULL,         [LWM2_BY_QOS] = NULL,
    [LWM2_BY_CPU] = NULL,
};
#define NDIMS ((int)(sizeof(dims) / sizeof(dims[0])))

/* A whole month of the question: its days [first, next), and whether
 * its summaries answer for them (made from the days it has now). */
struct month_span {
	int64_t first, next;
	bool summarized;
};

struct reader {
	struct lwm2_stats *s;
	const struct lwm2_db_day *days;
	size_t ndays;
	bool monthly; /* reading the summaries of months that hold */
	bool bad;     /* a blob that could not be read */
};

static int on_row(void *arg, const struct lwm2_jobrow *j)
{
	struct lwm2_stats *st = arg;

	st->count.lines++;
	return lwm2_stats_add(st, j) < 0 ? -1 : 0;
}

/* The rows of [start, end] (0: open) into s. */
static int rows(struct lwm2_db *db, struct lwm2_stats *s, int64_t start, int64_t end, char *err,
                size_t errlen)
{
	struct lwm2_db_select sel = {
	    .start = start,
	    .end = end,
	    .users = s->users,
	    .nusers = s->nusers,
	    .accounts = s->accounts,
	    .naccounts = s->naccounts,
	    .metric = s->hist                                 ? s->hist_metric
	              : s->top && s->sort == LWM2_SORT_METRIC ? s->sort_metric
	                                                      : -1,
	};

	return lwm2_db_jobs(db, &sel, on_row, s, err, errlen) < 0 ? -1 : 0;
}

/* The first of days[0, n) at or after day. */
static size_t day_index(const struct lwm2_db_day *days, size_t n, int64_t day)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (days[mid].day < day)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct lwm2_db_day *day_of(const struct reader *r, int64_t day)
{
	size_t i = day_index(r->days, r->ndays, day);

	return i < r->ndays && r->days[i].day == day ? &r->days[i] : NULL;
}

/* A summary's blob into s: into its group of the grouping s asks for, or
 * (total) into the total. */
static int merge_into(struct lwm2_stats *s, bool total, const char *name, const void *data,
                      size_t len)
{
	struct lwm2_stats_group *g = total ? &s->total : lwm2_stats_group_of(s, name);

	return g && lwm2_stats_group_merge(g, data, len) == 0 ? 0 : -1;
}

/* A blob of a summarized day, or of a month whose summaries hold (the
 * months read are those): into its group (the total for "all"). */
static int on_blob(void *arg, int64_t day, const char *name, const void *data, size_t len,
                   bool total)
{
	struct reader *r = arg;
	const struct lwm2_db_day *d = r->monthly ? NULL : day_of(r, day);

	if (!r->monthly && (!d || !d->summarized))
		return 0; /* stale: the day is summed up again from its rows */
	if (merge_into(r->s, total, name, data, len) < 0) {
		r->bad = true;
		return -1;
	}
	return 0;
}

static int on_group_blob(void *arg, int64_t day, const char *name, const void *data, size_t len)
{
	return on_blob(arg, day, name, data, len, false);
}

static int on_total_blob(void *arg, int64_t day, const char *name, const void *data, size_t len)
{
	return on_blob(arg, day, name, data, len, true);
}

static int on_day_row(void *arg, const struct lwm2_jobrow *j)
{
	struct lwm2_stats *tmp = arg;

	for (int d = 0; d < NDIMS; d++)
		if (dims[d] && lwm2_stats_add(&tmp[d], j) < 0)
			return -1;
	return 0;
}

static void free_summaries(struct lwm2_db_summary *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((void *)(uintptr_t)v[i].data);
	free(v);
}

/* The groups of every grouping of tmp packed into *v (*n of them,
 * ordered by grouping).  0, or -1 out of memory (what was packed stays
 * in *v, for free_summaries). */
static int pack_dims(struct lwm2_stats tmp[NDIMS], struct lwm2_db_summary **v, size_t *n)
{
	size_t cap = 0;

	*v = NULL;
	*n = 0;
	for (int d = 0; d < NDIMS; d++) {
		size_t ng = 0;
		struct lwm2_stats_group **gs;

		if (!dims[d])
			continue;
		if (d == LWM2_BY_NONE) {
			gs = calloc(1, sizeof(*gs));
			if (gs)
				gs[ng++] = &tmp[d].total;
		} else {
			gs = lwm2_stats_groups(&tmp[d], &ng);
		}
		if (!gs)
			return -1;
		for (size_t i = 0; i < ng; i++) {
			size_t len;
			unsigned char *blob;

			if (LWM2_GROW(*v, *n, cap, 64) < 0 ||
			    !(blob = lwm2_stats_group_pack(gs[i], &len))) {
				free(gs);
				return -1;
			}
			(*v)[(*n)++] = (struct lwm2_db_summary){
			    dims[d], gs[i]->name ? gs[i]->name : "", blob, len};
		}
		free(gs);
	}
	return 0;
}

static void stats_init(struct lwm2_stats tmp[NDIMS])
{
	memset(tmp, 0, NDIMS * sizeof(*tmp));
	for (int d = 0; d < NDIMS; d++)
		tmp[d].by = (enum lwm2_stats_by)d;
}

static void stats_free(struct lwm2_stats tmp[NDIMS])
{
	for (int d = 0; d < NDIMS; d++)
		lwm2_stats_free(&tmp[d]);
}

/* One day summed up from its rows for every grouping: kept where the
 * database may be written, else (s given) added to s. */
static int sum_day(struct lwm2_db *db, struct lwm2_stats *s, int64_t day, char *err, size_t errlen)
{
	struct lwm2_stats tmp[NDIMS];
	struct lwm2_db_select sel = {.start = day * LWM2_DB_DAY_S,
	                             .end = day * LWM2_DB_DAY_S + LWM2_DB_DAY_S - 1,
	                             .metric = -1};
	struct lwm2_db_summary *v = NULL;
	size_t n = 0;
	int rc = -1;

	stats_init(tmp);
	if (lwm2_db_jobs(db, &sel, on_day_row, tmp, err, errlen) < 0)
		goto out;
	if (pack_dims(tmp, &v, &n) < 0)
		goto nomem;
	for (size_t i = 0; s && i < n; i++) {
		bool all = !strcmp(v[i].dim, "all");

		if ((!strcmp(v[i].dim, dims[s->by]) || (all && s->by != LWM2_BY_NONE)) &&
		    merge_into(s, all, v[i].name, v[i].data, v[i].len) < 0)
			goto nomem;
	}
	/* a reader that may not write still answers: from the rows */
	if (lwm2_db_writable(db) && lwm2_db_summary_store(db, day, v, n, err, errlen) < 0)
		goto out;
	rc = 0;
	goto out;
nomem:
	lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
out:
	free_summaries(v, n);
	stats_free(tmp);
	return rc;
}

/* A day's blob of one grouping into the month's (tmp: that grouping's). */
static int on_month_day_blob(void *arg, int64_t day, const char *name, const void *data, size_t len)
{
	struct lwm2_stats *tmp = arg;

	(void)day;
	return merge_into(tmp, tmp->by == LWM2_BY_NONE, name, data, len);
}

/* The month's summaries made from its days' (all summarized) and kept
 * with m's days and jobs. */
static int sum_month(struct lwm2_db *db, const struct month_span *span,
                     const struct lwm2_db_month *m, char *err, size_t errlen)
{
	struct lwm2_stats tmp[NDIMS];
	struct lwm2_db_summary *v = NULL;
	size_t n = 0;
	int rc = -1;

	stats_init(tmp);
	for (int d = 0; d < NDIMS; d++)
		if (dims[d] && lwm2_db_summary_read(db, dims[d], span->first, span->next - 1,
		                                    on_month_day_blob, &tmp[d], err, errlen) < 0)
			goto out;
	if (pack_dims(tmp, &v, &n) < 0) {
		lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = lwm2_db_month_store(db, m, v, n, err, errlen);
out:
	free_summaries(v, n);
	stats_free(tmp);
	return rc;
}

/* The whole days of s's period that have ended (UTC), [*lo, *hi]. */
static void whole_days(const struct lwm2_stats *s, int64_t *lo, int64_t *hi)
{
	int64_t today = (int64_t)time(NULL) / LWM2_DB_DAY_S;

	*lo = s->start > 0 ? (s->start + LWM2_DB_DAY_S - 1) / LWM2_DB_DAY_S : 1;
	*hi = s->end > 0 ? (s->end + 1) / LWM2_DB_DAY_S - 1 : today - 1;
	if (*hi > today - 1)
		*hi = today - 1;
}

/*
 * The whole months of the days [lo, hi] (their days all summarized, as
 * days[0, nd) says) into *out: each summarized where its summaries were
 * made from the days it has, and, where the database may be written,
 * made now where they were not.  0, or -1 with err.
 */
static int ready_months(struct lwm2_db *db, const struct lwm2_db_day *days, size_t nd, int64_t lo,
                        int64_t hi, struct month_span **out, size_t *nout, char *err, size_t errlen)
{
	int64_t m0 = lwm2_db_month_of(lo), m1 = lwm2_db_month_of(hi + 1);
	struct lwm2_db_month *kept = NULL;
	size_t nkept = 0, k = 0, cap = 0;
	int rc;

	*out = NULL;
	*nout = 0;
	if (m0 < lo)
		m0 = lwm2_db_month_next(m0);
	if (m0 >= m1)
		return 0;
	if ((rc = lwm2_db_months(db, m0, m1 - 1, &kept, &nkept, err, errlen)) != 0)
		return rc < 0 ? -1 : 0;
	for (int64_t m = m0; m < m1; m = lwm2_db_month_next(m)) {
		struct month_span span = {m, lwm2_db_month_next(m), false};
		struct lwm2_db_month now = {.month = m};
		bool whole = true;

		for (size_t i = day_index(days, nd, m); i < nd && days[i].day < span.next; i++) {
			now.days++;
			now.jobs += days[i].jobs;
			whole = whole && days[i].summarized;
		}
		while (k < nkept && kept[k].month < m)
			k++;
		if (!now.days || !whole)
			continue; /* nothing to read, or a day to read from its rows */
		span.summarized = k < nkept && kept[k].month == m && kept[k].days == now.days &&
		                  kept[k].jobs == now.jobs;
		/* another writer holding the database: the days answer */
		if (!span.summarized && lwm2_db_writable(db)) {
			if (sum_month(db, &span, &now, err, errlen) == 0)
				span.summarized = true;
			else if (!lwm2_db_busy(db))
				goto fail;
		}
		if (span.summarized && LWM2_GROW(*out, *nout, cap, 16) < 0) {
			lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
			goto fail;
		}
		if (span.summarized)
			(*out)[(*nout)++] = span;
	}
	free(kept);
	return 0;
fail:
	free(kept);
	free(*out);
	*out = NULL;
	*nout = 0;
	return -1;
}

static bool summarizable(const struct lwm2_stats *s)
{
	return !s->top && !s->hist && !s->nusers && !s->naccounts && !s->npartitions &&
	       !s->nstates && !s->nby_more && (size_t)s->by < sizeof(dims) / sizeof(dims[0]) &&
	       dims[s->by];
}

/* The summaries of s's grouping and the total's of the days [d0, d1]
 * (monthly: of the months) into s. */
static int read_blobs(struct lwm2_db *db, struct reader *r, bool monthly, int64_t d0, int64_t d1,
                      char *err, size_t errlen)
{
	int (*read)(struct lwm2_db *, const char *, int64_t, int64_t,
	            int (*)(void *, int64_t, const char *, const void *, size_t), void *, char *,
	            size_t) = monthly ? lwm2_db_month_read : lwm2_db_summary_read;
	const struct lwm2_stats *s = r->s;

	r->monthly = monthly;
	return (s->by != LWM2_BY_NONE &&
	        read(db, dims[s->by], d0, d1, on_group_blob, r, err, errlen) < 0) ||
	               read(db, "all", d0, d1, on_total_blob, r, err, errlen) < 0
	           ? -1
	           : 0;
}

static int read_summarized(struct lwm2_db *db, struct lwm2_stats *s, char *err, size_t errlen)
{
	struct reader r = {.s = s};
	struct lwm2_db_day *days = NULL;
	struct month_span *months = NULL;
	size_t nd = 0, nm = 0;
	bool writable = lwm2_db_writable(db);
	int64_t lo, hi, from;
	int rc;

	whole_days(s, &lo, &hi);
	if (lo > hi || (rc = lwm2_db_days(db, lo, hi, &days, &nd, err, errlen)) == 1)
		return rows(db, s, s->start, s->end, err, errlen);
	if (rc < 0)
		return -1;
	r.days = days;
	r.ndays = nd;
	/* the jobs outside the whole days: from their rows */
	if (rows(db, s, s->start, lo * LWM2_DB_DAY_S - 1, err, errlen) < 0 ||
	    rows(db, s, (hi + 1) * LWM2_DB_DAY_S, s->end, err, errlen) < 0)
		goto fail;
	/* the days without summaries summed up now: kept where the database
	 * may be written (and read back below), else added to s */
	for (size_t i = 0; i < nd; i++)
		if (!days[i].summarized) {
			if (sum_day(db, writable ? NULL : s, days[i].day, err, errlen) < 0)
				goto fail;
			days[i].summarized = writable;
		}
	/* the whole months from their summaries, the other days from theirs */
	if (ready_months(db, days, nd, lo, hi, &months, &nm, err, errlen) < 0)
		goto fail;
	from = lo;
	for (size_t i = 0; i <= nm; i++) {
		int64_t to = i < nm ? months[i].first - 1 : hi;

		if (from <= to && read_blobs(db, &r, false, from, to, err, errlen) < 0)
			goto fail;
		if (i < nm) {
			if (read_blobs(db, &r, true, months[i].first, months[i].first, err,
			               errlen) < 0)
				goto fail;
			from = months[i].next;
		}
	}
	free(days);
	free(months);
	s->selected = s->total.jobs + s->total.no_digest;
	s->count.lines = s->selected;
	return 0;
fail:
	free(days);
	free(months);
	return -1;
}

int lwm2_stats_read_db(struct lwm2_stats *s, const char *cmd, const char *url)
{
	char err[1024], err2[1024];
	/* a reader that may write keeps the summaries it makes */
	struct lwm2_db *db = lwm2_db_open(url, LWM2_DB_UPDATE, err2, sizeof(err2));
	int rc;

	if (!db && !(db = lwm2_db_open(url, LWM2_DB_READ, err, sizeof(err)))) {
		lwm2_log_error("%s: %s", cmd, err);
		return -2;
	}
	rc = summarizable(s) ? read_summarized(db, s, err, sizeof(err))
	                     : rows(db, s, s->start, s->end, err, sizeof(err));
	if (rc < 0)
		lwm2_log_error("%s: %s", cmd, err);
	lwm2_db_close(db);
	lwm2_stats_finish(s);
	return rc;
}

int lwm2_stats_summarize_db(struct lwm2_db *db, unsigned long *days_done, char *err, size_t errlen)
{
	struct lwm2_db_day *days = NULL;
	struct month_span *months = NULL;
	size_t nd = 0, nm = 0;
	int64_t today = (int64_t)time(NULL) / LWM2_DB_DAY_S;
	int rc = lwm2_db_days(db, 1, today - 1, &days, &nd, err, errlen);

	*days_done = 0;
	if (rc)
		return rc < 0 ? -1 : 0;
	for (size_t i = 0; i < nd; i++)
		if (!days[i].summarized) {
			if (sum_day(db, NULL, days[i].day, err, errlen) < 0) {
				free(days);
				return -1;
			}
			days[i].summarized = true;
			(*days_done)++;
		}
	/* and the whole months of them */
	rc = ready_months(db, days, nd, 1, today - 1, &months, &nm, err, errlen);
	free(days);
	free(months);
	return rc;
}
