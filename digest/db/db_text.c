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

/* ZSTD_c_forceAttachDict: a parameter of zstd 1.4 and later that a
 * library without it refuses, and the line is then compressed as before */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "db_internal.h"
#include "jsontext.h"
#include "errmsg.h"

#define LEVEL 1

static int squeeze(void **cctx, const char *src, size_t n, const void *cdict, void **buf,
                   size_t *cap, size_t *out, char *err, size_t errlen)
{
	size_t need = ZSTD_compressBound(n), r;

	if (!*cctx) {
		if (!(*cctx = ZSTD_createCCtx()))
			return lwm2_errprintf(0, err, errlen, "couldn't keep the line: %s",
			                      strerror(ENOMEM));
		/* a dictionary's tables read where they are, not copied into
		 * the compressor for each line: the copy costs several times
		 * the compression of a line of the dictionary's kind */
		ZSTD_CCtx_setParameter(*cctx, ZSTD_c_forceAttachDict, ZSTD_dictForceAttach);
	}
	if (need > *cap) {
		void *b = realloc(*buf, need);

		if (!b)
			return lwm2_errprintf(0, err, errlen, "couldn't keep the line: %s",
			                      strerror(ENOMEM));
		*buf = b;
		*cap = need;
	}
	if (!cdict)
		r = ZSTD_compressCCtx(*cctx, *buf, *cap, src, n, LEVEL);
	else if (!ZSTD_isError(r = ZSTD_CCtx_refCDict(*cctx, cdict)))
		r = ZSTD_compress2(*cctx, *buf, *cap, src, n); /* at the dictionary's level */
	if (ZSTD_isError(r))
		return lwm2_errprintf(0, err, errlen, "couldn't compress the line: %s",
		                      ZSTD_getErrorName(r));
	*out = r;
	return 0;
}

void lwm2_db_dict_free(struct lwm2_db_dict *d)
{
	free(d->line);
	free(d->grid);
	memset(d, 0, sizeof(*d));
}

/* A dictionary's piece: as much of a line's text as a compressor looks
 * back over at level 1 (more would cost its making and gain nothing). */
#define DICT_MAX (128 * 1024)

static void *dict_piece(const char *a, size_t na, const char *b, size_t nb, size_t *len)
{
	size_t n = na + nb > DICT_MAX ? DICT_MAX : na + nb;
	char *d = malloc(n ? n : 1);

	if (!d)
		return NULL;
	memcpy(d, a, na < n ? na : n);
	if (n > na)
		memcpy(d + na, b, n - na);
	*len = n;
	return d;
}

/* The compressor's dictionaries of d into p, d freed: 0, or -1 with err. */
static int use_dict(struct lwm2_db_packer *p, struct lwm2_db_dict *d, char *err, size_t errlen)
{
	p->cdict_line = ZSTD_createCDict(d->line, d->line_len, LEVEL);
	p->cdict_grid = d->grid ? ZSTD_createCDict(d->grid, d->grid_len, LEVEL) : NULL;
	p->dict_id = d->id;
	if (!p->cdict_line || (d->grid && !p->cdict_grid)) {
		lwm2_db_dict_free(d);
		return lwm2_errprintf(0, err, errlen, "couldn't keep the line: %s",
		                      strerror(ENOMEM));
	}
	lwm2_db_dict_free(d);
	p->dict_ready = true;
	return 0;
}

int lwm2_db_packer_load(struct lwm2_db_packer *p, struct lwm2_db *db, char *err, size_t errlen)
{
	struct lwm2_db_dict d = {0};
	int r;

	if (p->dict_ready || !db->be->dict_load)
		return 0;
	if ((r = db->be->dict_load(db, &d, err, errlen)) < 0)
		return -1;
	return r > 0 ? 0 : use_dict(p, &d, err, errlen);
}

void lwm2_db_packer_share(struct lwm2_db_packer *p, const struct lwm2_db_packer *from)
{
	p->dict_ready = true;
	p->dict_id = from->dict_id;
	p->cdict_line = from->cdict_line;
	p->cdict_grid = from->cdict_grid;
	p->borrowed = true;
}

/* p's dictionary: the database's first, or (none yet) one made of this
 * line, its text without the grid [head, tail) and its grid [from, to). */
static int ready_dict(struct lwm2_db_packer *p, struct lwm2_db *db, const char *text, size_t head,
                      const char *tail, size_t ntail, const char *from, const char *to, char *err,
                      size_t errlen)
{
	struct lwm2_db_dict d = {0};
	int r;

	if (p->dict_ready)
		return 0;
	if (!db->be->dict_load) {
		p->dict_ready = true;
		return 0;
	}
	if ((r = db->be->dict_load(db, &d, err, errlen)) < 0)
		return -2;
	if (r > 0) {
		if (!(d.line = dict_piece(text, head, tail, ntail, &d.line_len)) ||
		    (from &&
		     !(d.grid = dict_piece(from, (size_t)(to - from), NULL, 0, &d.grid_len)))) {
			lwm2_db_dict_free(&d);
			return lwm2_errprintf(0, err, errlen, "couldn't keep the line: %s",
			                      strerror(ENOMEM));
		}
		if (db->be->dict_store(db, &d, err, errlen) < 0) {
			lwm2_db_dict_free(&d);
			return -2;
		}
	}
	return use_dict(p, &d, err, errlen);
}

/* Where the digest's grid member is in the line, with the comma that
 * joins it to its neighbours: [*from, *to).  false when there is none. */
static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The digest's grid member: where its key starts and its value ends.  The
 * digest's index (lwm2_logline_member's) has both where a member follows
 * the grid, which is then not walked again: it is most of the line. */
static bool grid_at(const struct lwm2_logline *l, const char **key_at, const char **val_end)
{
	const struct lwm2_json_members *ix = l->members;
	const char *v = lwm2_logline_member(l, "grid");

	if (!v)
		return false;
	for (unsigned i = 0; ix && ix->obj == l->digest && i < ix->n; i++) {
		const char *c;

		if (ix->m[i].val != v)
			continue;
		*key_at = ix->m[i].key - 1;
		if (i + 1 < ix->n) {
			/* value, blanks, a comma, blanks, the next key's quote */
			for (c = ix->m[i + 1].key - 2; c > v && is_ws(*c); c--)
				;
			if (c > v && *c == ',') {
				for (c--; c > v && is_ws(*c); c--)
					;
				*val_end = c + 1;
				return true;
			}
		}
		return (*val_end = lwm2_json_span(v, l->end)) != NULL;
	}
	return lwm2_json_member_at(l->digest, l->end, "grid", key_at, val_end) != NULL;
}

static bool grid_span(const struct lwm2_logline *l, const char **from, const char **to)
{
	const char *key_at = NULL, *val_end = NULL, *c;

	if (!l->digest || !grid_at(l, &key_at, &val_end) || !key_at || !val_end)
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

int lwm2_db_text_pack(struct lwm2_db_packer *p, struct lwm2_db *db, const struct lwm2_logline *l,
                      char *err, size_t errlen)
{
	const char *from = NULL, *to = NULL, *text = l->text;
	size_t len = (size_t)(l->end - l->text), head = len, tail = 0;
	struct lwm2_db_text *t = &p->text;
	char *joined = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!text)
		return 0;
	if (grid_span(l, &from, &to)) {
		head = (size_t)(from - text);
		tail = (size_t)(l->end - to);
	} else {
		from = to = NULL;
	}
	if ((rc = ready_dict(p, db, text, head, to, tail, from, to, err, errlen)) < 0)
		return rc;
	t->dict = p->dict_id;
	if (!from) {
		if (squeeze(&p->cctx_line, text, len, p->cdict_line, &p->line, &p->line_cap,
		            &t->line_len, err, errlen) < 0)
			return -1;
		t->line = p->line;
		return 0;
	}
	/* the line without the member: the two sides, put together */
	if (!(joined = malloc(head + tail + 1)))
		return lwm2_errprintf(0, err, errlen, "couldn't keep the line: %s",
		                      strerror(ENOMEM));
	memcpy(joined, text, head);
	memcpy(joined + head, to, tail);
	rc = squeeze(&p->cctx_line, joined, head + tail, p->cdict_line, &p->line, &p->line_cap,
	             &t->line_len, err, errlen);
	free(joined);
	if (rc < 0 || squeeze(&p->cctx_grid, from, (size_t)(to - from), p->cdict_grid, &p->grid,
	                      &p->grid_cap, &t->grid_len, err, errlen) < 0)
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
	ZSTD_freeCCtx(p->cctx_line);
	ZSTD_freeCCtx(p->cctx_grid);
	if (!p->borrowed) {
		ZSTD_freeCDict(p->cdict_line);
		ZSTD_freeCDict(p->cdict_grid);
	}
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
	/* the dictionaries met so far (a database has one or few) */
	struct ddict {
		int64_t id;
		ZSTD_DDict *line, *grid;
	} * dicts;
	size_t ndicts;
	char err[512];
	int stopped;
};

/* d (freed here) into x's dictionaries: 0, or -1 with why. */
static int ddict_add(struct lines *x, struct lwm2_db_dict *d, char *why, size_t whylen)
{
	struct ddict *grown, *n;
	bool lost;

	if (!(grown = realloc(x->dicts, (x->ndicts + 1) * sizeof(*grown)))) {
		lwm2_db_dict_free(d);
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -1;
	}
	x->dicts = grown;
	n = &x->dicts[x->ndicts];
	n->id = d->id;
	n->line = ZSTD_createDDict(d->line, d->line_len);
	n->grid = d->grid ? ZSTD_createDDict(d->grid, d->grid_len) : NULL;
	lost = !n->line || (d->grid && !n->grid);
	lwm2_db_dict_free(d);
	if (lost) {
		ZSTD_freeDDict(n->line);
		ZSTD_freeDDict(n->grid);
		snprintf(why, whylen, "%s", strerror(ENOMEM));
		return -1;
	}
	x->ndicts++;
	return 0;
}

/* Every dictionary of the database, before its lines are read (a
 * MariaDB connection reads one result at a time).  0, or -1 with err. */
static int ddicts_load(struct lines *x, char *err, size_t errlen)
{
	struct lwm2_db_dict d = {0};
	int r;

	if (!x->db->be->dict_load)
		return 0;
	while ((r = x->db->be->dict_load(x->db, &d, err, errlen)) == 0)
		if (ddict_add(x, &d, err, errlen) < 0)
			return -1;
		else
			d.id = x->dicts[x->ndicts - 1].id;
	return r < 0 ? -1 : 0;
}

/* The dictionary id as *out: one loaded before, or (a writer added it
 * since: SQLite reads it now) loaded.  0, or -1 with why. */
static int ddict_of(struct lines *x, int64_t id, const struct ddict **out, char *why, size_t whylen)
{
	struct lwm2_db_dict d = {.id = id - 1};

	for (size_t i = 0; i < x->ndicts; i++)
		if (x->dicts[i].id == id) {
			*out = &x->dicts[i];
			return 0;
		}
	if (!x->db->be->dict_load || x->db->be->dict_load(x->db, &d, why, whylen) != 0 ||
	    d.id != id) {
		lwm2_db_dict_free(&d);
		snprintf(why, whylen, "its line in the database is damaged");
		return -1;
	}
	if (ddict_add(x, &d, why, whylen) < 0)
		return -1;
	*out = &x->dicts[x->ndicts - 1];
	return 0;
}

/* n bytes of z into dst (want bytes), with dict where given. */
static bool unsqueeze(struct lines *x, void *dst, size_t want, const void *z, size_t n,
                      const ZSTD_DDict *dict)
{
	size_t r = dict ? ZSTD_decompress_usingDDict(x->dctx, dst, want, z, n, dict)
	                : ZSTD_decompressDCtx(x->dctx, dst, want, z, n);

	return !ZSTD_isError(r) && r == want;
}

/* The line put back into x->buf: 0, or -1 with why. */
static int unpack(struct lines *x, const struct lwm2_db_text *t, size_t *len, char *why,
                  size_t whylen)
{
	long long nl = frame_size(t->line, t->line_len), ng = 0;
	const struct ddict *dict = NULL;

	if (t->dict && ddict_of(x, t->dict, &dict, why, whylen) < 0)
		return -1;
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
	if (!unsqueeze(x, x->buf, (size_t)nl, t->line, t->line_len, dict ? dict->line : NULL)) {
		snprintf(why, whylen, "its line in the database is damaged");
		return -1;
	}
	if (ng) {
		/* the member back where it was cut out */
		memmove(x->buf + t->cut + ng, x->buf + t->cut, (size_t)(nl - t->cut));
		if (!unsqueeze(x, x->buf + t->cut, (size_t)ng, t->grid, t->grid_len,
		               dict ? dict->grid : NULL)) {
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

	if (!(x.dctx = ZSTD_createDCtx()))
		return lwm2_errprintf(0, err, errlen, "%s", strerror(ENOMEM));
	rc = ddicts_load(&x, err, errlen);
	if (rc == 0)
		rc = db->be->texts(db, sel, want_grid, on_text, &x, err, errlen);
	ZSTD_freeDCtx(x.dctx);
	for (size_t i = 0; i < x.ndicts; i++) {
		ZSTD_freeDDict(x.dicts[i].line);
		ZSTD_freeDDict(x.dicts[i].grid);
	}
	free(x.dicts);
	free(x.buf);
	if (rc < 0)
		return -1;
	return x.stopped;
}
