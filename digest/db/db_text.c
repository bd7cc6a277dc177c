/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A job's log line in its row (db.h's lwm2_db_lines): kept so that every
 * site command can read the jobs it asks for from the database, on any
 * host, instead of reading the whole log.
 *
 * The digest's "grid" member (the slices of every node and step) is most
 * of a long job's line and is read only by the commands that draw it; it
 * is cut out and kept apart, and the line is put back byte for byte from
 * the two pieces.  Each is compressed with zstd at level 1:
 * digests are JSON of repeated keys and numbers, and the writer inside
 * jobcomp/lwm2 must stay quick.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "db_internal.h"
#include "jsontext.h"

#define LEVEL 1

static int squeeze(struct lwm2_db_packer *p, const char *src, size_t n, void **buf, size_t *cap,
                   size_t *out, char *err, size_t errlen)
{
	size_t need = ZSTD_compressBound(n), r;

	if (!p->cctx && !(p->cctx = ZSTD_createCCtx())) {
		snprintf(err, errlen, "couldn't keep the line: %s", strerror(ENOMEM));
		return -1;
	}
	if (need > *cap) {
		void *b = realloc(*buf, need);

		if (!b) {
			snprintf(err, errlen, "couldn't keep the line: %s", strerror(ENOMEM));
			return -1;
		}
		*buf = b;
		*cap = need;
	}
	r = ZSTD_compressCCtx(p->cctx, *buf, *cap, src, n, LEVEL);
	if (ZSTD_isError(r)) {
		snprintf(err, errlen, "couldn't compress the line: %s", ZSTD_getErrorName(r));
		return -1;
	}
	*out = r;
	return 0;
}

/* Where the digest's grid member is in the line, with the comma that
 * joins it to its neighbours: [*from, *to).  false when there is none. */
static bool grid_span(const struct lwm2_logline *l, const char **from, const char **to)
{
	const char *key_at = NULL, *val_end = NULL, *c;

	if (!l->digest || !lwm2_json_member_at(l->digest, l->end, "grid", &key_at, &val_end) ||
	    !key_at || !val_end)
		return false;
	for (c = key_at - 1; c > l->digest && strchr(" \t\r\n", *c); c--)
		;
	if (*c == ',') {
		/* {...,"grid":[...]...}: the comma before it goes */
		*from = c;
		*to = val_end;
		return true;
	}
	/* {"grid":[...],...}: the comma after it goes */
	*from = key_at;
	c = lwm2_json_skip_ws(val_end, l->end);
	*to = c < l->end && *c == ',' ? c + 1 : val_end;
	return true;
}

int lwm2_db_text_pack(struct lwm2_db_packer *p, const struct lwm2_logline *l, char *err,
                      size_t errlen)
{
	const char *from, *to, *text = l->text;
	size_t len = (size_t)(l->end - l->text);
	struct lwm2_db_text *t = &p->text;

	memset(t, 0, sizeof(*t));
	if (!text)
		return 0;
	if (!grid_span(l, &from, &to)) {
		t->cut = 0;
		if (squeeze(p, text, len, &p->line, &p->line_cap, &t->line_len, err, errlen) < 0)
			return -1;
		t->line = p->line;
		return 0;
	}
	/* the line without the member: the two sides, put together */
	size_t head = (size_t)(from - text), tail = (size_t)(l->end - to);
	char *joined = malloc(head + tail + 1);

	if (!joined) {
		snprintf(err, errlen, "couldn't keep the line: %s", strerror(ENOMEM));
		return -1;
	}
	memcpy(joined, text, head);
	memcpy(joined + head, to, tail);
	int rc = squeeze(p, joined, head + tail, &p->line, &p->line_cap, &t->line_len, err, errlen);

	free(joined);
	if (rc < 0 || squeeze(p, from, (size_t)(to - from), &p->grid, &p->grid_cap, &t->grid_len,
	                      err, errlen) < 0)
		return -1;
	t->cut = (int64_t)head;
	t->line = p->line;
	t->grid = p->grid;
	return 0;
}

void lwm2_db_packer_free(struct lwm2_db_packer *p)
{
	free(p->line);
	free(p->grid);
	ZSTD_freeCCtx(p->cctx);
	memset(p, 0, sizeof(*p));
}

/* The size a frame says it holds, or -1 for one that is no frame, says no
 * size or is larger than a line may be. */
static long long frame_size(const void *z, size_t n)
{
	unsigned long long s = ZSTD_getFrameContentSize(z, n);

	if (s == ZSTD_CONTENTSIZE_UNKNOWN || s == ZSTD_CONTENTSIZE_ERROR || s > LWM2_LINE_MAX)
		return -1;
	return (long long)s;
}

struct lines {
	struct lwm2_db *db;
	const char *cmd, *where;
	bool want_grid;
	lwm2_logline_fn fn;
	void *arg;
	struct lwm2_db_lines_count *count;
	char *buf;
	size_t cap;
	ZSTD_DCtx *dctx;
	char err[512];
	int stopped;
};

/* The line put back into x->buf: 0, or -1 with why. */
static int unpack(struct lines *x, const struct lwm2_db_text *t, size_t *len, char *why,
                  size_t whylen)
{
	long long nl = frame_size(t->line, t->line_len), ng = 0;
	size_t r;

	if (t->grid && x->want_grid && (ng = frame_size(t->grid, t->grid_len)) < 0)
		nl = -1;
	if (nl < 0 || t->cut < 0 || t->cut > nl) {
		snprintf(why, whylen, "its line in the database is damaged");
		return -1;
	}
	if ((size_t)(nl + ng) + 1 > x->cap) {
		char *b = realloc(x->buf, (size_t)(nl + ng) + 1);

		if (!b) {
			snprintf(why, whylen, "%s", strerror(ENOMEM));
			return -1;
		}
		x->buf = b;
		x->cap = (size_t)(nl + ng) + 1;
	}
	r = ZSTD_decompressDCtx(x->dctx, x->buf, (size_t)nl, t->line, t->line_len);
	if (ZSTD_isError(r) || r != (size_t)nl) {
		snprintf(why, whylen, "its line in the database is damaged");
		return -1;
	}
	if (ng) {
		/* the member back where it was cut out */
		memmove(x->buf + t->cut + ng, x->buf + t->cut, (size_t)(nl - t->cut));
		r = ZSTD_decompressDCtx(x->dctx, x->buf + t->cut, (size_t)ng, t->grid, t->grid_len);
		if (ZSTD_isError(r) || r != (size_t)ng) {
			snprintf(why, whylen, "its grid in the database is damaged");
			return -1;
		}
	}
	*len = (size_t)(nl + ng);
	x->buf[*len] = '\0';
	return 0;
}

static int on_text(void *arg, const struct lwm2_db_text *t)
{
	struct lines *x = arg;
	struct lwm2_json_members members;
	struct lwm2_logline l = {
	    .path = x->where, .lineno = (unsigned long)t->job, .members = &members};
	char why[512] = "";
	size_t len;
	int r;

	if (!t->line) {
		x->count->missing++;
		return 0;
	}
	if (unpack(x, t, &len, why, sizeof(why)) < 0 || strlen(x->buf) != len ||
	    lwm2_logline_parse(x->buf, len, &l, why, sizeof(why)) < 0) {
		fprintf(stderr, "lwm2: %s: %s: job row %lld: %s\n", x->cmd, x->where,
		        (long long)t->job, why[0] ? why : "its line cannot be read");
		x->count->bad++;
		return 0;
	}
	x->count->jobs++;
	r = x->fn(x->arg, &l, why, sizeof(why));
	json_object_put(l.fields);
	if (r < 0) {
		fprintf(stderr, "lwm2: %s: %s: job row %lld: %s\n", x->cmd, x->where,
		        (long long)t->job, why[0] ? why : "its line cannot be read");
		x->count->bad++;
		return 0;
	}
	if (r > 0)
		x->stopped = 1;
	return r;
}

int lwm2_db_lines(struct lwm2_db *db, const char *cmd, const struct lwm2_db_select *sel,
                  bool want_grid, lwm2_logline_fn fn, void *arg, struct lwm2_db_lines_count *count,
                  char *err, size_t errlen)
{
	struct lines x = {.db = db,
	                  .cmd = cmd,
	                  .where = db->shown,
	                  .want_grid = want_grid,
	                  .fn = fn,
	                  .arg = arg,
	                  .count = count};
	int rc;

	if (!(x.dctx = ZSTD_createDCtx())) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	rc = db->be->texts(db, sel, want_grid, on_text, &x, err, errlen);
	ZSTD_freeDCtx(x.dctx);
	free(x.buf);
	if (rc < 0)
		return -1;
	return x.stopped;
}
