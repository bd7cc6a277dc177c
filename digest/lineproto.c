/* SPDX-License-Identifier: GPL-2.0-or-later */
/* InfluxDB line protocol of a job digest (see lineproto.h). */
#include "config.h"

#include "lineproto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"

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
	if (field_key(b, f, NULL, key, suffix) < 0)
		return -1;
	return put_fmt(b, "%.10g", v);
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

static int tags_make(struct tags *t, json_object *fields, int64_t job_id)
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
	if (!cluster &&
	    (dj = ju_get(ju_get(fields, "digest", json_type_object), "job", json_type_object)))
		cluster = ju_str(dj, "cluster");
	if (put_tag(&t->pre, "cluster", cluster) < 0 || put_tag(&t->pre, "job", id) < 0 ||
	    put_tag(&t->mid, "partition", ju_str(fields, "partition")) < 0 ||
	    put_tag(&t->post, "user", ju_str(fields, "user")) < 0)
		return -1;
	/* empty buffers still need a text to copy */
	if (put_str(&t->pre, "") < 0 || put_str(&t->mid, "") < 0 || put_str(&t->post, "") < 0)
		return -1;
	return 0;
}

/* Counters that are time in MPI (the numerator of mpi_time). */
static bool is_mpi_ns(const char *name)
{
	static const char *const names[] = {"mpi_p2p_ns",     "mpi_coll_ns",   "mpiio_read_ns",
	                                    "mpiio_write_ns", "mpiio_meta_ns", "mpi_other_ns"};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* Processes per node of a step, from the digest's steps (0: unknown). */
static double step_ppn(json_object *digest, int64_t step)
{
	json_object *steps = ju_get(digest, "steps", json_type_array);
	size_t n = steps ? json_object_array_length(steps) : 0;

	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		int64_t id, procs, nodes;

		if (ju_int(s, "step_id", &id) && id == step && ju_int(s, "processes", &procs) &&
		    ju_int(s, "nodes", &nodes) && procs > 0 && nodes > 0)
			return (double)procs / (double)nodes;
	}
	return 0;
}

struct column {
	const char *name;
	json_object *values;
	size_t n;
	bool mpi;
};

static int64_t value_at(const struct column *c, size_t k)
{
	json_object *v;

	if (k >= c->n || !(v = json_object_array_get_idx(c->values, k)) ||
	    !json_object_is_type(v, json_type_int))
		return 0;
	return json_object_get_int64(v);
}

static int grid_row(json_object *row, json_object *digest, const struct tags *t,
                    struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                    struct lwm2_lp_stats *stats)
{
	int64_t step, first, L, n;
	const char *node = ju_str(row, "node");
	json_object *c = ju_get(row, "c", json_type_object);
	struct column *cols = NULL;
	size_t ncols = 0, nmpi = 0;
	struct lwm2_lp_buf head = {0};
	char stepbuf[32];
	double ppn;
	int rc = -1;

	if (!ju_int(row, "step", &step) || !ju_int(row, "first_slice", &first) ||
	    !ju_int(row, "slice_length_s", &L) || !ju_int(row, "n", &n) || !node || !*node ||
	    step < 0 || first < 0 || L <= 0 || n <= 0 || first > INT64_MAX / 2 / L)
		return 0; /* not a row this writer makes: nothing to say */
	if (n > ROW_MAX_SLOTS)
		n = ROW_MAX_SLOTS;
	if (c) {
		size_t cap = (size_t)json_object_object_length(c);

		if (cap && !(cols = calloc(cap, sizeof(*cols))))
			return -1;
		json_object_object_foreach(c, key, val)
		{
			if (!*key || !json_object_is_type(val, json_type_array) || ncols >= cap)
				continue;
			cols[ncols].name = key;
			cols[ncols].values = val;
			cols[ncols].n = json_object_array_length(val);
			cols[ncols].mpi = is_mpi_ns(key);
			nmpi += cols[ncols].mpi;
			ncols++;
		}
	}
	ppn = nmpi ? step_ppn(digest, step) : 0;

	/* measurement and tags: the same for every slot of the row */
	snprintf(stepbuf, sizeof(stepbuf), "%" PRId64, step);
	if (put_str(&head, LWM2_LP_SLICE_MEASUREMENT) < 0 ||
	    lwm2_lp_buf_put(&head, t->pre.p, t->pre.len) < 0 || put_tag(&head, "node", node) < 0 ||
	    lwm2_lp_buf_put(&head, t->mid.p, t->mid.len) < 0 ||
	    put_tag(&head, "step", stepbuf) < 0 ||
	    lwm2_lp_buf_put(&head, t->post.p, t->post.len) < 0)
		goto out;

	for (int64_t k = 0; k < n; k++) {
		struct fieldsep f = {.first = true};
		int64_t mpi_ns = 0;

		if (lwm2_lp_buf_put(b, head.p, head.len) < 0 ||
		    field_int(b, &f, NULL, "slice_s", L) < 0)
			goto out;
		for (size_t i = 0; i < ncols; i++) {
			int64_t v = value_at(&cols[i], (size_t)k);

			if (cols[i].mpi)
				mpi_ns += v;
			if (field_int(b, &f, NULL, cols[i].name, v) < 0)
				goto out;
		}
		if (ppn > 0 && field_num(b, &f, "mpi_share", NULL,
		                         100.0 * (double)mpi_ns / ((double)L * 1e9 * ppn)) < 0)
			goto out;
		if (end_point(b, (first + k) * L, batch, flush, arg) < 0)
			goto out;
		if (stats)
			stats->slice_points++;
	}
	rc = 0;
out:
	lwm2_lp_buf_free(&head);
	free(cols);
	return rc;
}

static int job_point(json_object *fields, json_object *digest, const struct tags *t, int64_t end,
                     struct lwm2_lp_buf *b, size_t batch, lwm2_lp_flush_fn flush, void *arg,
                     struct lwm2_lp_stats *stats)
{
	struct fieldsep f = {.first = true};
	json_object *scope = ju_get(digest, "scope", json_type_object);
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
		static const char *const counts[] = {"processes", "mpi_processes", "nodes",
		                                     "incomplete"};

		for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
			if (ju_int(scope, counts[i], &v) &&
			    field_int(b, &f, NULL, counts[i], v) < 0)
				return -1;
		if ((o = ju_get(scope, "totals", json_type_object))) {
			json_object_object_foreach(o, key, val)
			{
				if (!*key || !json_object_is_type(val, json_type_int))
					continue;
				if (field_int(b, &f, "total_", key, json_object_get_int64(val)) < 0)
					return -1;
			}
		}
		if ((o = ju_get(scope, "metrics", json_type_object))) {
			json_object_object_foreach(o, key, m)
			{
				double x;

				if (!*key)
					continue;
				if ((ju_num(m, "min", &x) &&
				     field_num(b, &f, key, "_min", x) < 0) ||
				    (ju_num(m, "avg", &x) &&
				     field_num(b, &f, key, "_avg", x) < 0) ||
				    (ju_num(m, "max", &x) && field_num(b, &f, key, "_max", x) < 0))
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

int lwm2_lp_format_job(json_object *fields, json_object *digest, struct lwm2_lp_buf *b,
                       size_t batch, lwm2_lp_flush_fn flush, void *arg, struct lwm2_lp_stats *stats)
{
	struct tags t;
	json_object *grid;
	int64_t job_id, end;
	size_t n;
	int rc = -1;

	if (!digest)
		digest = ju_get(fields, "digest", json_type_object);
	if (!ju_int(fields, "job_id", &job_id) || job_id <= 0 || !ju_int(fields, "end", &end) ||
	    end <= 0)
		return 0;
	if (tags_make(&t, fields, job_id) < 0)
		goto out;
	grid = ju_get(digest, "grid", json_type_array);
	n = grid ? json_object_array_length(grid) : 0;
	for (size_t i = 0; i < n; i++)
		if (grid_row(json_object_array_get_idx(grid, i), digest, &t, b, batch, flush, arg,
		             stats) < 0)
			goto out;
	if (job_point(fields, digest, &t, end, b, batch, flush, arg, stats) < 0)
		goto out;
	rc = 0;
out:
	if (rc < 0 && !errno)
		errno = ENOMEM;
	tags_free(&t);
	return rc;
}
