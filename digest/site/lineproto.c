/* SPDX-License-Identifier: GPL-2.0-or-later */
/* InfluxDB line protocol of a job digest (see lineproto.h). */
#include "config.h"
#include "grow.h"
#include "lwm2_keys.h"

#include "lineproto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsontext.h"
#include "jsonutil.h"
#include "lwm2_digest.h"
#include "lwm2_sums.h"

/* A grid row never has more slots than the node merge makes (4096); a
 * longer one in a log is not ours, and is cut there. */
#define ROW_MAX_SLOTS 4096

void lwm2_lp_buf_free(struct lwm2_lp_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static int grow(struct lwm2_lp_buf *b, size_t more)
{
	size_t ncap;
	char *np;

	/* len + more + 1 and the doubling below must not wrap (a wrapped sum
	 * would pass the test below with no buffer at all) */
	if (more > SIZE_MAX / 4 - b->len) {
		errno = ENOMEM;
		return -1;
	}
	if (b->len + more + 1 <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 4096;
	while (ncap < b->len + more + 1)
		ncap *= 2;
	if (!(np = realloc(b->p, ncap)))
		return -1;
	b->p = np;
	b->cap = ncap;
	return 0;
}

int lwm2_lp_buf_put(struct lwm2_lp_buf *b, const char *s, size_t n)
{
	if (grow(b, n) < 0)
		return -1;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int put_str(struct lwm2_lp_buf *b, const char *s)
{
	return lwm2_lp_buf_put(b, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static int put_fmt(struct lwm2_lp_buf *b, const char *fmt,
                                                         ...)
{
	va_list ap;
	int n;

	if (grow(b, 64) < 0)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n >= b->cap - b->len) {
		if (grow(b, (size_t)n) < 0)
			return -1;
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
	return 0;
}

/* ------------------------------------------------------------ escaping */

static char clean(unsigned char c)
{
	return c < 0x20 || c == 0x7f ? ' ' : (char)c;
}

static bool special(char c, enum lwm2_lp_kind kind)
{
	if (kind == LWM2_LP_MEASUREMENT)
		return c == ',' || c == ' ';
	return c == ',' || c == '=' || c == ' ';
}

int lwm2_lp_escape(struct lwm2_lp_buf *b, const char *s, enum lwm2_lp_kind kind)
{
	size_t n = strlen(s);

	/* at most two bytes out for each byte in */
	if (grow(b, 2 * n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = clean((unsigned char)s[i]);

		if (kind == LWM2_LP_STRING) {
			if (c == '"' || c == '\\')
				b->p[b->len++] = '\\';
			b->p[b->len++] = c;
		} else if (c == '\\') {
			char next = i + 1 < n ? clean((unsigned char)s[i + 1]) : '\0';

			/* the engine would read "\," as an escaped comma and a
			 * final backslash as escaping the separator after it */
			b->p[b->len++] = !next || special(next, kind) ? '/' : '\\';
		} else {
			if (special(c, kind))
				b->p[b->len++] = '\\';
			b->p[b->len++] = c;
		}
	}
	b->p[b->len] = '\0';
	return 0;
}

/* ",key=value" with value escaped; nothing for an empty value (line
 * protocol has no empty tag values). */
static int put_tag(struct lwm2_lp_buf *b, const char *key, const char *value)
{
	if (!value || !*value)
		return 0;
	if (put_str(b, ",") < 0 || put_str(b, key) < 0 || put_str(b, "=") < 0)
		return -1;
	return lwm2_lp_escape(b, value, LWM2_LP_TAG);
}

/* ------------------------------------------------------------ points */

struct fieldsep {
	bool first;
};

static int field_key(struct lwm2_lp_buf *b, struct fieldsep *f, const char *prefix, const char *key,
                     const char *suffix)
{
	if (lwm2_lp_buf_put(b, f->first ? " " : ",", 1) < 0)
		return -1;
	f->first = false;
	if (prefix && put_str(b, prefix) < 0)
		return -1;
	if (lwm2_lp_escape(b, key, LWM2_LP_TAG) < 0)
		return -1;
	if (suffix && put_str(b, suffix) < 0)
		return -1;
	return lwm2_lp_buf_put(b, "=", 1);
}

static int field_int(struct lwm2_lp_buf *b, struct fieldsep *f, const char *prefix, const char *key,
                     int64_t v)
{
	if (field_key(b, f, prefix, key, NULL) < 0)
		return -1;
	return put_fmt(b, "%" PRId64 "i", v);
}

static int field_num(struct lwm2_lp_buf *b, struct fieldsep *f, const char *key, const char *suffix,
                     double v)
{
	if (!isfinite(v))
		return 0;
	char t[32];

	if (field_key(b, f, NULL, key, suffix) < 0)
		return -1;
	/* as the JSON: a byte count exact, other values read back the same */
	return put_fmt(b, "%s", ju_double_text(v, t, sizeof(t)));
}

static int field_str(struct lwm2_lp_buf *b, struct fieldsep *f, const char *key, const char *v)
{
	if (!v)
		return 0;
	if (field_key(b, f, NULL, key, NULL) < 0 || put_str(b, "\"") < 0 ||
	    lwm2_lp_escape(b, v, LWM2_LP_STRING) < 0)
		return -1;
	return put_str(b, "\"");
}

/* Ends a point: timestamp, newline, and a flush when the batch is full. */
static int end_point(struct lwm2_lp_buf *b, int64_t ts, size_t batch, lwm2_lp_flush_fn flush,
                     void *arg)
{
	if (put_fmt(b, " %" PRId64 "\n", ts) < 0)
		return -1;
	b->lines++;
	if (batch && b->lines >= batch && flush) {
		if (flush(arg, b->p, b->len, b->lines) < 0)
			return -1;
		b->len = 0;
		b->lines = 0;
		b->p[0] = '\0';
	}
	return 0;
}

/* The job's tags, escaped: before node (account, app, cluster, job),
 * between node and step (partition), after step (user). */
struct tags {
	struct lwm2_lp_buf pre, mid, post;
};

static void tags_free(struct tags *t)
{
	lwm2_lp_buf_free(&t->pre);
	lwm2_lp_buf_free(&t->mid);
	lwm2_lp_buf_free(&t->post);
}

static int tags_make(struct tags *t, json_object *fields, json_object *digest, int64_t job_id)
{
	char id[32];
	const char *cluster = ju_str(fields, "cluster");
	json_object *dj;

	snprintf(id, sizeof(id), "%" PRId64, job_id);
	memset(t, 0, sizeof(*t));
	if (put_tag(&t->pre, "account", ju_str(fields, "account")) < 0 ||
	    put_tag(&t->pre, "app", ju_str(fields, "name")) < 0)
		return -1;
	/* a log line from before the cluster was in the job fields: the
	 * digest's job object has it */
	if (!cluster && (dj = ju_get(digest, LWM2_KEY_JOB, json_type_object)))
		cluster = ju_str(dj, LWM2_KEY_CLUSTER);
	if (put_tag(&t->pre, "cluster", cluster) < 0 || put_tag(&t->pre, "job", id) < 0 ||
	    put_tag(&t->mid, "partition", ju_str(fields, "partition")) < 0 ||
	    put_tag(&t->post, "user", ju_str(fields, "user")) < 0)
		return -1;
	/* empty buffers still need a text to copy */
	if (put_str(&t->pre, "") < 0 || put_str(&t->mid, "") < 0 || put_str(&t->post, "") < 0)
		return -1;
	return 0;
}

/* Counters that are time in MPI (the numerator of mpi_time: lwm2_sums.h). */
static bool is_mpi_ns(const char *name)
{
	for (size_t i = 0; i < LWM2_NSUM(lwm2_mpi_time_names); i++)
		if (!strcmp(name, lwm2_mpi_time_names[i]))
			return true;
	return false;
}

/* Processes per node of a step, from the digest's steps (0: unknown). */
static double step_ppn(json_object *digest, int64_t step)
{
	json_object *steps = ju_get(digest, LWM2_KEY_STEPS, json_type_array);
	size_t n = steps ? json_object_array_length(steps) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		int64_t id, procs, nodes;

		if (ju_int(s, LWM2_KEY_STEP_ID, &id) && id == step &&
		    ju_int(s, LWM2_KEY_PROCESSES, &procs) && ju_int(s, LWM2_KEY_NODES, &nodes) &&
		    procs > 0 && nodes > 0)
			return (double)procs / (double)nodes;
	}
	return 0;
}

/* One row of the grid, from JSON objects or from text. */
struct column {
	const char *name;
	size_t nlen;
	int64_t *v;
	size_t n;
	bool mpi;
};

struct row {
	int64_t step, first, L, n;
	const char *node;
	struct column *cols;
	size_t ncols, cap;
};

static void row_free(struct row *r)
{
	for (size_t i = 0; i < r->ncols; i++)
		free(r->cols[i].v);
	free(r->cols);
	memset(r, 0, sizeof(*r));
}

static struct column *row_add_col(struct row *r, const char *name, size_t nlen, size_t n)
{
	struct column *c;

	if (LWM2_GROW(r->cols, r->ncols, r->cap, 16) < 0)
		return NULL;
	c = &r->cols[r->ncols];
	memset(c, 0, sizeof(*c));
	if (n && !(c->v = calloc(n, sizeof(*c->v))))
		return NULL;
	c->name = name;
	c->nlen = nlen;
	c->n = n;
	r->ncols++;
	return c;
}

/* Whether the row's identity is one this writer makes; n is cut to what
 * a node merge makes at most. */
static bool row_sane(struct row *r)
{
	if (!r->node || !*r->node || r->step < 0 || r->first < 0 || r->L <= 0 || r->n <= 0 ||
	    r->first > INT64_MAX / 2 / r->L)
		return false;
	if (r->n > ROW_MAX_SLOTS)
		r->n = ROW_MAX_SLOTS;
	return true;
}

static char *put_i64(char *p, int64_t v)
{
	char tmp[24];
	int n = 0;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*p++ = '-';
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* The points of one row: a line per slot, written without printf (a
 * 1,000-node job of 60 slices is 60,000 lines). */
static int emit_row(struct row *r, json_object *digest, const struct tags *t, struct lwm2_lp_buf *b,
                    size_t batch, lwm2_lp_flush_fn flush, void *arg, struct lwm2_lp_stats *stats)
{
	struct lwm2_lp_buf head = {0}, keys = {0};
	size_t *koff = NULL, nmpi = 0, maxline;
	char stepbuf[32];
	double ppn;
	int rc = -1;

	if (!row_sane(r))
		return 0;
	for (size_t i = 0; i < r->ncols; i++) {
		r->cols[i].mpi = is_mpi_ns(r->cols[i].name);
		nmpi += r->cols[i].mpi;
	}
	ppn = nmpi ? step_ppn(digest, r->step) : 0;
	snprintf(stepbuf, sizeof(stepbuf), "%" PRId64, r->step);
	if (put_str(&head, LWM2_LP_SLICE_MEASUREMENT) < 0 ||
	    lwm2_lp_buf_put(&head, t->pre.p, t->pre.len) < 0 ||
	    put_tag(&head, "node", r->node) < 0 ||
	    lwm2_lp_buf_put(&head, t->mid.p, t->mid.len) < 0 ||
	    put_tag(&head, "step", stepbuf) < 0 ||
	    lwm2_lp_buf_put(&head, t->post.p, t->post.len) < 0 || put_str(&head, " slice_s=") < 0)
		goto out;
	head.len += (size_t)(put_i64(head.p + head.len, r->L) - (head.p + head.len));
	if (put_str(&head, "i") < 0)
		goto out;
	/* ",key=" of every column, escaped once for the whole row */
	if (r->ncols && !(koff = calloc(r->ncols + 1, sizeof(*koff))))
		goto out;
	for (size_t i = 0; i < r->ncols; i++) {
		koff[i] = keys.len;
		if (put_str(&keys, ",") < 0 ||
		    lwm2_lp_escape(&keys, r->cols[i].name, LWM2_LP_TAG) < 0 ||
		    put_str(&keys, "=") < 0)
			goto out;
	}
	if (koff)
		koff[r->ncols] = keys.len;
	maxline = head.len + keys.len + 24 * r->ncols + 64;

	for (int64_t k = 0; k < r->n; k++) {
		int64_t mpi_ns = 0;
		char *p;

		if (grow(b, maxline) < 0)
			goto out;
		p = b->p + b->len;
		memcpy(p, head.p, head.len);
		p += head.len;
		for (size_t i = 0; i < r->ncols; i++) {
			const struct column *c = &r->cols[i];
			int64_t v = (size_t)k < c->n ? c->v[k] : 0;

			if (c->mpi)
				mpi_ns += v;
			memcpy(p, keys.p + koff[i], koff[i + 1] - koff[i]);
			p += koff[i + 1] - koff[i];
			p = put_i64(p, v);
			*p++ = 'i';
		}
		b->len = (size_t)(p - b->p);
		if (ppn > 0) {
			double share = lwm2_slice_mpi_share((double)mpi_ns, (double)r->L, ppn);

			b->len +=
			    (size_t)snprintf(b->p + b->len, b->cap - b->len, ",mpi_share=%.6g",
			                     isfinite(share) ? share : 0.0);
		}
		p = b->p + b->len;
		*p++ = ' ';
		p = put_i64(p, (r->first + k) * r->L);
		*p++ = '\n';
		*p = '\0';
		b->len = (size_t)(p - b->p);
		b->lines++;
		if (batch && b->lines >= batch && flush) {
			if (flush(arg, b->p, b->len, b->lines) < 0)
				goto out;
			b->len = 0;
			b->lines = 0;
			b->p[0] = '\0';
		}
		if (stats)
			stats->slice_points++;
	}
	rc = 0;
out:
	lwm2_lp_buf_free(&head);
	lwm2_lp_buf_free(&keys);
	free(koff);
	return rc;
}

/* A grid row as json-c objects. */
static int grid_row(json_object *o, json_object *digest, const struct tags *t,
                    struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                    struct lwm2_lp_stats *stats)
{
	struct row r = {0};
	json_object *c = ju_get(o, LWM2_KEY_C, json_type_object);
	int rc = -1;

	r.node = ju_str(o, LWM2_KEY_NODE);
	if (!ju_int(o, LWM2_KEY_STEP, &r.step) || !ju_int(o, LWM2_KEY_FIRST_SLICE, &r.first) ||
	    !ju_int(o, LWM2_KEY_SLICE_LENGTH_S, &r.L) || !ju_int(o, LWM2_KEY_N, &r.n) ||
	    !row_sane(&r))
		return 0; /* not a row this writer makes: nothing to say */
	if (c) {
		json_object_object_foreach(c, key, val)
		{
			struct column *col;
			size_t n;

			if (!*key || !json_object_is_type(val, json_type_array))
				continue;
			n = json_object_array_length(val);
			if (n > (size_t)r.n)
				n = (size_t)r.n;
			if (!(col = row_add_col(&r, key, strlen(key), n)))
				goto out;
			for (size_t k = 0; k < n; k++) {
				json_object *v = json_object_array_get_idx(val, k);

				col->v[k] = v && json_object_is_type(v, json_type_int)
				                ? json_object_get_int64(v)
				                : 0;
			}
		}
	}
	rc = emit_row(&r, digest, t, b, batch, flush, arg, stats);
out:
	row_free(&r);
	return rc;
}

static int job_point(json_object *fields, json_object *digest, const struct tags *t, int64_t end,
                     struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                     struct lwm2_lp_stats *stats)
{
	struct fieldsep f = {.first = true};
	json_object *scope = ju_get(digest, LWM2_KEY_SCOPE, json_type_object);
	json_object *o;
	int64_t v, start = ju_int_or(fields, "start", 0);
	const char *status = ju_str(fields, "status");

	if (put_str(b, LWM2_LP_JOB_MEASUREMENT) < 0 ||
	    lwm2_lp_buf_put(b, t->pre.p, t->pre.len) < 0 ||
	    lwm2_lp_buf_put(b, t->mid.p, t->mid.len) < 0 ||
	    lwm2_lp_buf_put(b, t->post.p, t->post.len) < 0)
		return -1;
	if (field_str(b, &f, "state", ju_str(fields, "state") ?: "UNKNOWN") < 0 ||
	    field_str(b, &f, "status", status ?: (digest ? "ok" : "no_digest")) < 0 ||
	    field_int(b, &f, NULL, "duration_s", start > 0 && end > start ? end - start : 0) < 0)
		return -1;
	if (ju_int(fields, "node_count", &v) && field_int(b, &f, NULL, "node_count", v) < 0)
		return -1;
	if (ju_int(fields, "cpus", &v) && field_int(b, &f, NULL, "cpus", v) < 0)
		return -1;
	if (scope) {
		static const char *const counts[] = {LWM2_KEY_PROCESSES, LWM2_KEY_MPI_PROCESSES,
		                                     LWM2_KEY_NODES, LWM2_KEY_INCOMPLETE};

		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			if (ju_int(scope, counts[i], &v) &&
			    field_int(b, &f, NULL, counts[i], v) < 0)
				return -1;
		if ((o = ju_get(scope, LWM2_KEY_TOTALS, json_type_object))) {
			json_object_object_foreach(o, key, val)
			{
				if (!*key || !json_object_is_type(val, json_type_int))
					continue;
				if (field_int(b, &f, "total_", key, json_object_get_int64(val)) < 0)
					return -1;
			}
		}
		if ((o = ju_get(scope, LWM2_KEY_METRICS, json_type_object))) {
			json_object_object_foreach(o, key, m)
			{
				double x;

				if (!*key)
					continue;
				if ((ju_num(m, LWM2_KEY_MIN, &x) &&
				     field_num(b, &f, key, "_min", x) < 0) ||
				    (ju_num(m, LWM2_KEY_AVG, &x) &&
				     field_num(b, &f, key, "_avg", x) < 0) ||
				    (ju_num(m, LWM2_KEY_MAX, &x) &&
				     field_num(b, &f, key, "_max", x) < 0))
					return -1;
			}
		}
	}
	if (end_point(b, end, batch, flush, arg) < 0)
		return -1;
	if (stats)
		stats->job_points++;
	return 0;
}

/* ------------------------------------------------------------ text */

/*
 * The grid of a large job is most of its log line (a 1,000-node job of 60
 * slices: 7 MB, a million numbers), and json-c would make an object of
 * every number: the grid is read from the text instead, everything else
 * with json-c.
 */

/* The walker of jsontext.h under the short names of this file's loops. */
static const char *skip_ws(const char *p, const char *end)
{
	return lwm2_json_skip_ws(p, end);
}

static const char *span(const char *p, const char *end)
{
	return lwm2_json_span(p, end);
}

static bool next_member(const char **p, const char *end, const char **key, size_t *klen,
                        const char **val, const char **val_end)
{
	if (!lwm2_json_next_member(p, end, key, klen, val))
		return false;
	*val_end = *p;
	return true;
}

static const char *member(const char *obj, const char *end, const char *key, const char **key_at,
                          const char **val_end)
{
	return lwm2_json_member_at(obj, end, key, key_at, val_end);
}

static json_object *parse_span(const char *p, size_t len)
{
	return lwm2_json_parse_n(p, len);
}

/* The JSON object of the text from p to end, the part from cut to resume
 * replaced by ins where cut is not NULL, into *out (NULL when that is not
 * a JSON object); -1 (ENOMEM) out of memory. */
static int parse_object(const char *p, const char *end, const char *cut, const char *ins,
                        const char *resume, json_object **out)
{
	struct lwm2_lp_buf b = {0};

	*out = NULL;
	if (!cut) {
		*out = parse_span(p, (size_t)(end - p));
	} else if (lwm2_lp_buf_put(&b, p, (size_t)(cut - p)) < 0 || put_str(&b, ins) < 0 ||
	           lwm2_lp_buf_put(&b, resume, (size_t)(end - resume)) < 0) {
		lwm2_lp_buf_free(&b);
		errno = ENOMEM;
		return -1;
	} else {
		*out = parse_span(b.p, b.len);
	}
	lwm2_lp_buf_free(&b);
	if (*out && !json_object_is_type(*out, json_type_object)) {
		json_object_put(*out);
		*out = NULL;
	}
	return 0;
}

static bool text_int(const char *obj, const char *end, const char *key, int64_t *out)
{
	const char *v = member(obj, end, key, NULL, NULL);
	char *e;

	if (!v || (*v != '-' && (*v < '0' || *v > '9')))
		return false;
	errno = 0;
	*out = strtoll(v, &e, 10);
	return !errno && e > v && (e == end || *e == ',' || *e == '}' || *e == ' ');
}

/* A string member, unescaped (json-c for the rare escapes); malloc'd. */
static char *text_str(const char *obj, const char *end, const char *key)
{
	const char *ve, *v = member(obj, end, key, NULL, &ve);
	json_object *o;
	char *s;

	if (!v || *v != '"' || ve - v < 2)
		return NULL;
	if (!memchr(v, '\\', (size_t)(ve - v)))
		return strndup(v + 1, (size_t)(ve - v - 2));
	if (!(o = parse_span(v, (size_t)(ve - v))))
		return NULL;
	s = json_object_is_type(o, json_type_string) ? strdup(json_object_get_string(o)) : NULL;
	json_object_put(o);
	return s;
}

static int text_row(const char *p, const char *end, json_object *digest, const struct tags *t,
                    struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                    struct lwm2_lp_stats *stats)
{
	struct row r = {0};
	const char *c, *c_end, *k, *v, *ve;
	char *node = NULL;
	size_t kl;
	int rc = -1;

	if (!text_int(p, end, "step", &r.step) || !text_int(p, end, "first_slice", &r.first) ||
	    !text_int(p, end, "slice_length_s", &r.L) || !text_int(p, end, "n", &r.n))
		return 0;
	r.node = node = text_str(p, end, "node");
	if (!row_sane(&r)) {
		free(node);
		return 0;
	}
	if ((c = member(p, end, "c", NULL, &c_end)) && *c == '{') {
		for (const char *q = c; next_member(&q, c_end, &k, &kl, &v, &ve);) {
			struct column *col;
			char *name;
			size_t i = 0;

			/* counter names have no escapes; a key with one is not ours */
			if (!kl || *v != '[' || memchr(k, '\\', kl))
				continue;
			if (!(name = strndup(k, kl)) ||
			    !(col = row_add_col(&r, name, kl, (size_t)r.n))) {
				free(name);
				goto out;
			}
			for (const char *x = v + 1; x < ve && i < (size_t)r.n;) {
				char *e;

				x = skip_ws(x, ve);
				if (x < ve && *x == ',')
					x = skip_ws(x + 1, ve);
				if (x >= ve || *x == ']')
					break;
				col->v[i] = strtoll(x, &e, 10);
				if (e == x || *e == '.' || *e == 'e' || *e == 'E') {
					/* not an integer: 0, as the object path reads it */
					col->v[i] = 0;
					if (!(e = (char *)span(x, ve)))
						break;
				}
				x = e;
				i++;
			}
			col->n = i;
		}
	}
	rc = emit_row(&r, digest, t, b, batch, flush, arg, stats);
out:
	for (size_t i = 0; i < r.ncols; i++)
		free((char *)r.cols[i].name);
	row_free(&r);
	free(node);
	return rc;
}

/* ------------------------------------------------------------ a job */

static int format(json_object *fields, json_object *digest, const char *grid, const char *grid_end,
                  struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                  struct lwm2_lp_stats *stats)
{
	struct tags t;
	int64_t job_id, end;
	int rc = -1;

	if (!ju_int(fields, "job_id", &job_id) || job_id <= 0 || !ju_int(fields, "end", &end) ||
	    end <= 0)
		return 0;
	errno = 0;
	if (tags_make(&t, fields, digest, job_id) < 0)
		goto out;
	if (grid && *grid == '[') {
		for (const char *p = grid + 1;;) {
			const char *e;

			p = skip_ws(p, grid_end);
			if (p < grid_end && *p == ',')
				p = skip_ws(p + 1, grid_end);
			if (p >= grid_end || *p == ']' || !(e = span(p, grid_end)))
				break;
			if (*p == '{' &&
			    text_row(p, e, digest, &t, b, batch, flush, arg, stats) < 0)
				goto out;
			p = e;
		}
	} else if (!grid) {
		json_object *g = ju_get(digest, LWM2_KEY_GRID, json_type_array);
		size_t n = g ? json_object_array_length(g) : 0;

		for (size_t i = 0; i < n; i++)
			if (grid_row(json_object_array_get_idx(g, i), digest, &t, b, batch, flush,
			             arg, stats) < 0)
				goto out;
	}
	if (job_point(fields, digest, &t, end, b, batch, flush, arg, stats) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !errno)
		errno = ENOMEM;
	tags_free(&t);
	return rc;
}

int lwm2_lp_format_job(json_object *fields, json_object *digest, struct lwm2_lp_buf *b,
                       size_t batch, lwm2_lp_flush_fn flush, void *arg, struct lwm2_lp_stats *stats)
{
	if (!digest)
		digest = ju_get(fields, "digest", json_type_object);
	return format(fields, digest, NULL, NULL, b, batch, flush, arg, stats);
}

int lwm2_lp_format_text(json_object *fields, const char *digest, const char *end,
                        struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                        struct lwm2_lp_stats *stats)
{
	const char *dend = digest ? span(digest, end) : NULL, *grid = NULL, *gend = NULL;
	json_object *d = NULL;
	int rc;

	if (dend && *digest == '{') {
		/* the digest without its grid, for json-c: "grid":[] */
		grid = member(digest, dend, "grid", NULL, &gend);
		if (parse_object(digest, dend, grid, "[]", gend, &d) < 0)
			return -1;
		if (!d)
			grid = NULL;
	}
	/* no digest, or one that is not JSON: the job point alone; a grid
	 * that is not an array gives no row (never the object path) */
	rc = format(fields, d, grid ? grid : (d ? "" : NULL), grid ? gend : NULL, b, batch, flush,
	            arg, stats);
	json_object_put(d);
	return rc;
}

int lwm2_lp_format_line(const char *line, size_t len, struct lwm2_lp_buf *b, size_t batch,
                        lwm2_lp_flush_fn flush, void *arg, struct lwm2_lp_stats *stats)
{
	const char *end = line + len, *p = skip_ws(line, end), *key_at = NULL, *dend = NULL, *d;
	const char *c = NULL;
	json_object *fields;
	int rc;

	if (p >= end || *p != '{') {
		errno = EINVAL;
		return -1;
	}
	d = member(p, end, "digest", &key_at, &dend);
	if (d) {
		/* the job fields: the line without ,"digest":{...} */
		c = key_at;
		while (c > p && (c[-1] == ' ' || c[-1] == '\t'))
			c--;
		if (c > p && c[-1] == ',')
			c--;
	}
	if (parse_object(p, end, c, "", dend, &fields) < 0)
		return -1;
	if (!fields) {
		errno = EINVAL;
		return -1;
	}
	rc = lwm2_lp_format_text(fields, d, end, b, batch, flush, arg, stats);
	json_object_put(fields);
	return rc;
}
