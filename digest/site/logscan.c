/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Streaming reader of the JSON-lines log (see logscan.h). */
#define _GNU_SOURCE /* strptime */
#include "config.h"

#include "logscan.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <glob.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "errmsg.h"
#include "jsonutil.h"
#include "lwm2_digest.h"
#include "lwm2_keys.h"

/* Lines reported one by one before only their number is given. */
#define REPORT_MAX 10

/* The walker of lib/jsontext.h under the short names of this file's loops. */
static const char *skip_ws(const char *p, const char *end)
{
	return lwm2_json_skip_ws(p, end);
}

static const char *member_at(const char *obj, const char *end, const char *key, const char **key_at)
{
	return lwm2_json_member_at(obj, end, key, key_at, NULL);
}

static bool next_member(const char **p, const char *end, const char **key, size_t *klen,
                        const char **val)
{
	return lwm2_json_next_member(p, end, key, klen, val);
}

/* Whether the value at v is a JSON integer (no fraction, no exponent):
 * json-c reads only those as integers, and the counts must be. */
static bool is_integer(const char *v)
{
	const char *d = v + (*v == '-');

	if (*d < '0' || *d > '9')
		return false;
	while (*d >= '0' && *d <= '9')
		d++;
	return *d != '.' && *d != 'e' && *d != 'E';
}

/* An integer member as json-c reads it: clamped to int64_t; anything but
 * an integer is no value. */
static bool text_int(const char *v, int64_t *out)
{
	if (!is_integer(v))
		return false;
	*out = strtoll(v, NULL, 10);
	return true;
}

/* A count of the scope: what json-c reads as an int64_t, taken as the
 * unsigned count; 0 when not an integer. */
static uint64_t text_count(const char *v)
{
	int64_t x;

	return text_int(v, &x) ? (uint64_t)x : 0;
}

/* 10^0 to 10^22: the powers of ten a double holds exactly. */
static const double exact_pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * The JSON number at v (a fraction, an exponent) as strtod reads it,
 * where that needs no strtod: its digits as an integer below 2^53 and a
 * power of ten up to 10^22 are both exact doubles, so one multiplication
 * or division rounds to the nearest double, strtod's answer (Clinger's
 * fast path).  Most figures of a digest are such (a scope has dozens,
 * and strtod costs some hundred times more).  false: strtod's to read.
 */
static bool exact_decimal(const char *v, double *out)
{
#if FLT_EVAL_METHOD == 0
	const char *p = v + (*v == '-');
	uint64_t m = 0;
	int scale = 0, exp = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((m = m * 10 + (uint64_t)(*p - '0')) >= (1ull << 53))
			return false;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return false;
		for (p++; *p >= '0' && *p <= '9'; p++, scale--)
			if ((m = m * 10 + (uint64_t)(*p - '0')) >= (1ull << 53))
				return false;
	}
	if (*p == 'e' || *p == 'E') {
		bool neg = *++p == '-';

		p += *p == '-' || *p == '+';
		if (*p < '0' || *p > '9')
			return false;
		for (; *p >= '0' && *p <= '9'; p++)
			if ((exp = exp * 10 + (*p - '0')) > 100)
				return false;
		scale += neg ? -exp : exp;
	}
	if (*p == '.' || *p == 'e' || *p == 'E' || scale < -22 || scale > 22)
		return false;
	*out = scale < 0 ? (double)m / exact_pow10[-scale] : (double)m * exact_pow10[scale];
	if (*v == '-')
		*out = -*out;
	return true;
#else
	(void)v;
	(void)out;
	return false; /* arithmetic wider than a double's: strtod's to round */
#endif
}

/* A number member as json-c reads it: an integer literal clamped to the
 * 64-bit range json-c holds it in, any other number as strtod reads it. */
static bool text_num(const char *v, double *out)
{
	char *e;

	if (!v)
		return false;
	if (is_integer(v)) {
		*out = *v == '-' ? (double)strtoll(v, NULL, 10) : (double)strtoull(v, NULL, 10);
		return true;
	}
	if (exact_decimal(v, out))
		return true;
	*out = strtod(v, &e);
	return e != v && isfinite(*out);
}

/* The member's key (key, klen) is k, a string literal: its length is a
 * compile-time constant, so the test stays a length compare and memcmp. */
#define KEY_IS(k) (klen == sizeof(k) - 1 && !memcmp(key, k, sizeof(k) - 1))

/*
 * The scope is read in one walk over its members, into its metrics and
 * each metric, without spanning what is walked into first: each walk
 * ends where the span would (lwm2_json_walk_end).  Where a walk does not
 * (text no writer makes), that level is read again within the span's
 * end, as the members are read within the object's own text.
 */

/* The values of n, min, avg and max (the first of each, as a lookup
 * finds it) of the metric at p, from a walk over its members within
 * bound; where the walk stopped, *as_span as lwm2_json_walk_end wants. */
static const char *metric_members(const char *p, const char *bound, const char *v[4], bool *as_span)
{
	const char *t = p, *key, *val;
	size_t klen;

	v[0] = v[1] = v[2] = v[3] = NULL;
	*as_span = true;
	while (next_member(&t, bound, &key, &klen, &val)) {
		if (lwm2_json_value_misleads(val, t))
			*as_span = false;
		if (KEY_IS(LWM2_KEY_N) && !v[0])
			v[0] = val;
		else if (KEY_IS(LWM2_KEY_MIN) && !v[1])
			v[1] = val;
		else if (KEY_IS(LWM2_KEY_AVG) && !v[2])
			v[2] = val;
		else if (KEY_IS(LWM2_KEY_MAX) && !v[3])
			v[3] = val;
	}
	return t;
}

/* The metric at p (an object) into st; just past it, or NULL where it
 * does not end before bound (st untouched). */
static const char *metric_read(struct lwm2_metric_stat *st, const char *p, const char *bound)
{
	const char *v[4], *e = NULL;
	bool as_span;
	int64_t n;
	const char *stop = metric_members(p, bound, v, &as_span);

	if (!as_span || !(e = lwm2_json_walk_end(stop, bound))) {
		if (!(e = lwm2_json_span(p, bound)))
			return NULL;
		metric_members(p, e, v, &as_span);
	}
	/* n is an integer, as for json-c */
	if (v[0] && text_int(v[0], &n) && n > 0 && text_num(v[1], &st->min) &&
	    text_num(v[2], &st->avg) && text_num(v[3], &st->max)) {
		st->n = (uint64_t)n;
		st->reason = NULL;
	}
	return e;
}

static void stats_init(struct lwm2_scope *s)
{
	for (int k = 0; k < LWM2_NMETRICS; k++) {
		memset(&s->stat[k], 0, sizeof(s->stat[k]));
		s->stat[k].min_rank = s->stat[k].max_rank = -1;
		s->stat[k].reason = "not in this digest";
	}
}

/* The index of the metric named key (klen bytes), -1 for none; *next is
 * where the name after it would be: the digest lists its metrics in the
 * table's order, so the one after the last found is tried first. */
static int metric_of(const char *key, size_t klen, int *next)
{
	char id[32];
	int k;

	/* by length and bytes: a key may hold a NUL, where strncmp would
	 * stop and the name's end be looked for past it */
	if (*next < LWM2_NMETRICS && strlen(lwm2_metric_ids[*next]) == klen &&
	    !memcmp(lwm2_metric_ids[*next], key, klen)) {
		k = *next;
	} else {
		if (klen >= sizeof(id))
			return -1;
		memcpy(id, key, klen);
		id[klen] = '\0';
		if ((k = lwm2_metric_index(id)) < 0)
			return -1;
	}
	*next = k + 1;
	return k;
}

/* The metrics (the object at p) into s, walked within bound; where the
 * walk stopped, *as_span as lwm2_json_walk_end wants. */
static const char *metrics_members(struct lwm2_scope *s, const char *p, const char *bound,
                                   bool *as_span)
{
	const char *r = p, *key, *v, *e;
	size_t klen;
	int next = 0;

	*as_span = true;
	while (lwm2_json_next_key(&r, bound, &key, &klen, &v)) {
		int k = *v == '{' ? metric_of(key, klen, &next) : -1;

		if (k >= 0)
			e = metric_read(&s->stat[k], v, bound);
		else if ((e = lwm2_json_span(v, bound)) && lwm2_json_value_misleads(v, e))
			*as_span = false;
		if (!e) {
			*as_span = false;
			break;
		}
		r = e;
	}
	return r;
}

/* The metrics (the object at p) into s; just past them, or NULL where
 * they do not end before bound. */
static const char *metrics_read(struct lwm2_scope *s, const char *p, const char *bound)
{
	bool as_span;
	const char *stop = metrics_members(s, p, bound, &as_span), *e;

	if (as_span && (e = lwm2_json_walk_end(stop, bound)))
		return e;
	stats_init(s);
	if ((e = lwm2_json_span(p, bound)))
		metrics_members(s, p, e, &as_span);
	return e;
}

/* The scope's members (the object at p) into s, walked within bound,
 * and where the value of the member want (NULL: none wanted) starts into
 * *at; where the walk stopped, *as_span as lwm2_json_walk_end wants. */
static const char *scope_members(struct lwm2_scope *s, const char *p, const char *bound,
                                 const char *want, const char **at, bool *as_span)
{
	const char *q = p, *key, *val, *e;
	size_t klen, wlen = want ? strlen(want) : 0;

	*as_span = true;
	while (lwm2_json_next_key(&q, bound, &key, &klen, &val)) {
		if (want && klen == wlen && !memcmp(key, want, wlen))
			*at = val;
		if (KEY_IS(LWM2_KEY_METRICS) && *val == '{')
			e = metrics_read(s, val, bound);
		else if ((e = lwm2_json_span(val, bound)) && lwm2_json_value_misleads(val, e))
			*as_span = false;
		if (!e) {
			*as_span = false;
			break;
		}
		q = e;
		if (KEY_IS(LWM2_KEY_PROCESSES))
			s->processes = text_count(val);
		else if (KEY_IS(LWM2_KEY_MPI_PROCESSES))
			s->mpi_processes = text_count(val);
		else if (KEY_IS(LWM2_KEY_NODES))
			s->nodes = text_count(val);
		else if (KEY_IS(LWM2_KEY_INCOMPLETE))
			s->incomplete = text_count(val);
		else if (KEY_IS(LWM2_KEY_PARTIAL))
			s->partial = *val == 't';
	}
	return q;
}

static void scope_init(struct lwm2_scope *s, uint32_t cpus_per_task)
{
	memset(s, 0, sizeof(*s));
	s->cpus_per_task = cpus_per_task;
	stats_init(s);
}

int lwm2_scope_from_text_member(struct lwm2_scope *s, const char *p, const char *end,
                                uint32_t cpus_per_task, const char *key, const char **val)
{
	const char *stop, *e, *at = NULL;
	bool as_span;

	scope_init(s, cpus_per_task);
	if (val)
		*val = NULL;
	if (!p || p >= end || *p != '{')
		return -1;
	stop = scope_members(s, p, end, key, &at, &as_span);
	if (!(as_span && lwm2_json_walk_end(stop, end))) {
		scope_init(s, cpus_per_task);
		if (!(e = lwm2_json_span(p, end)))
			return -1;
		at = NULL;
		scope_members(s, p, e, key, &at, &as_span);
	}
	if (val)
		*val = at;
	return 0;
}

int lwm2_scope_from_text(struct lwm2_scope *s, const char *p, const char *end,
                         uint32_t cpus_per_task)
{
	return lwm2_scope_from_text_member(s, p, end, cpus_per_task, NULL, NULL);
}

int lwm2_split_list(const char *arg, char ***out, size_t *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char **nn = realloc(*out, (*n + 1) * sizeof(*nn));

		if (!nn)
			break;
		*out = nn;
		if (!(nn[*n] = strdup(tok)))
			break;
		(*n)++;
	}
	free(copy);
	return tok ? -1 : 0;
}

int lwm2_parse_time(const char *s, int64_t *out)
{
	time_t now = time(NULL);
	struct tm tm;
	char *end;

	if (!strcmp(s, "now")) {
		*out = now;
		return 0;
	}
	if (!strncmp(s, "now-", 4)) {
		long v;

		errno = 0;
		v = isdigit((unsigned char)s[4]) ? strtol(s + 4, &end, 10) : -1;
		long mult = 1;

		if (v < 0 || errno || (*end && end[1]))
			return -1;
		if (*end == 'm')
			mult = 60;
		else if (*end == 'h')
			mult = 3600;
		else if (*end == 'd')
			mult = 86400;
		else if (*end && *end != 's')
			return -1;
		/* Before year 1: not a time, and the product must not overflow. */
		if (v > LWM2_TIME_MAX / mult)
			return -1;
		*out = now - (int64_t)v * mult;
		return 0;
	}
	if (*s == '@') {
		long long v;

		if (!isdigit((unsigned char)s[1]))
			return -1;
		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (*end || errno || v > LWM2_TIME_MAX)
			return -1;
		*out = v;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && *end == 'T') {
		char *e2 = strptime(end + 1, "%H:%M:%S", &tm);

		end = e2 ? e2 : strptime(end + 1, "%H:%M", &tm);
	}
	if (!end || *end)
		return -1;
	tm.tm_isdst = -1;
	*out = mktime(&tm);
	return 0;
}

#define LINES_CHUNK 65536
/* Compressed bytes read from f at a time. */
#define IN_CHUNK 65536

/* What struct lwm2_lines' kind says f holds. */
enum { K_UNKNOWN, K_PLAIN, K_GZIP, K_ZSTD };

/* Top r->in up from f.  False at the end of f or on a read error, which
 * sets r->why. */
static bool in_fill(struct lwm2_lines *r)
{
	size_t got;

	if (!r->in && !(r->in = malloc(IN_CHUNK))) {
		snprintf(r->why, sizeof(r->why), "%s", strerror(ENOMEM));
		return false;
	}
	if (r->in_pos) {
		memmove(r->in, r->in + r->in_pos, r->in_len - r->in_pos);
		r->in_len -= r->in_pos;
		r->in_pos = 0;
	}
	got = fread(r->in + r->in_len, 1, IN_CHUNK - r->in_len, r->f);
	r->in_len += got;
	if (!got && ferror(r->f))
		snprintf(r->why, sizeof(r->why), "%s", strerror(errno ? errno : EIO));
	return got > 0;
}

/* The decoder for f's first bytes: magic numbers, not file names, since
 * a rotated log keeps its name whatever compresscmd did to it.  -1 with
 * r->why set for what is not read. */
static int sniff(struct lwm2_lines *r)
{
	static const unsigned char gz[] = {0x1f, 0x8b}, zst[] = {0x28, 0xb5, 0x2f, 0xfd},
	                           xz[] = {0xfd, '7', 'z', 'X', 'Z', 0}, bz[] = {'B', 'Z', 'h'};
	const unsigned char *m;
	size_t n;

	while (r->in_len < sizeof(xz) && in_fill(r))
		;
	if (r->why[0])
		return -1;
	m = r->in;
	n = r->in_len;
	r->kind = K_PLAIN;
	if (n >= sizeof(gz) && !memcmp(m, gz, sizeof(gz))) {
		z_stream *zs = calloc(1, sizeof(*zs));

		/* 16 + 15: a gzip header and trailer, the largest window */
		if (!zs || inflateInit2(zs, 16 + MAX_WBITS) != Z_OK) {
			free(zs);
			snprintf(r->why, sizeof(r->why), "gzip: %s", strerror(ENOMEM));
			return -1;
		}
		r->z = zs;
		r->kind = K_GZIP;
	} else if (n >= sizeof(zst) && !memcmp(m, zst, sizeof(zst))) {
		ZSTD_DStream *ds = ZSTD_createDStream();

		if (!ds || ZSTD_isError(ZSTD_initDStream(ds))) {
			ZSTD_freeDStream(ds);
			snprintf(r->why, sizeof(r->why), "zstd: %s", strerror(ENOMEM));
			return -1;
		}
		r->z = ds;
		r->kind = K_ZSTD;
	} else if ((n >= sizeof(xz) && !memcmp(m, xz, sizeof(xz))) ||
	           (n >= sizeof(bz) && !memcmp(m, bz, sizeof(bz)))) {
		/* said, rather than a screenful of "not a JSON object" */
		snprintf(r->why, sizeof(r->why), "%s-compressed: only gzip and zstd are read",
		         m[0] == 'B' ? "bzip2" : "xz");
		return -1;
	}
	return 0;
}

/* Up to want bytes of f's text (decoded) into dst; 0 at the end of f and
 * when reading stopped (r->why). */
static size_t decode(struct lwm2_lines *r, char *dst, size_t want)
{
	size_t out = 0;

	if (r->kind == K_UNKNOWN && sniff(r) < 0)
		return 0;
	if (r->kind == K_PLAIN) {
		if (r->in_pos < r->in_len) {
			out = r->in_len - r->in_pos < want ? r->in_len - r->in_pos : want;
			memcpy(dst, r->in + r->in_pos, out);
			r->in_pos += out;
			return out;
		}
		out = fread(dst, 1, want, r->f);
		if (!out && ferror(r->f))
			snprintf(r->why, sizeof(r->why), "%s", strerror(errno ? errno : EIO));
		return out;
	}
	while (!out) {
		if (r->in_pos == r->in_len && !in_fill(r)) {
			/* The end of f inside a member or frame: a file cut short
			 * (a copy still being written, a full disk). */
			if (!r->why[0] && !r->zdone)
				snprintf(r->why, sizeof(r->why),
				         "%s data cut short (a truncated file?)",
				         r->kind == K_GZIP ? "gzip" : "zstd");
			return 0;
		}
		if (r->kind == K_GZIP) {
			z_stream *zs = r->z;
			int ret;

			/* Bytes after a complete member: the next member
			 * (gzip files concatenated), read as gzip(1) reads it. */
			if (r->zdone && inflateReset(zs) == Z_OK)
				r->zdone = 0;
			zs->next_in = r->in + r->in_pos;
			zs->avail_in = (uInt)(r->in_len - r->in_pos);
			zs->next_out = (unsigned char *)dst;
			zs->avail_out = (uInt)want;
			ret = inflate(zs, Z_NO_FLUSH);
			r->in_pos = r->in_len - zs->avail_in;
			out = want - zs->avail_out;
			if (ret == Z_STREAM_END) {
				r->zdone = 1;
			} else if (ret != Z_OK && ret != Z_BUF_ERROR) {
				snprintf(r->why, sizeof(r->why), "corrupt gzip data (%s)",
				         zs->msg ? zs->msg : "inflate failed");
				return 0;
			}
		} else {
			ZSTD_inBuffer ib = {r->in, r->in_len, r->in_pos};
			ZSTD_outBuffer ob = {dst, want, 0};
			size_t ret = ZSTD_decompressStream(r->z, &ob, &ib);

			r->in_pos = ib.pos;
			out = ob.pos;
			if (ZSTD_isError(ret)) {
				snprintf(r->why, sizeof(r->why), "corrupt zstd data (%s)",
				         ZSTD_getErrorName(ret));
				return 0;
			}
			/* 0: a frame is complete; the next one starts by itself */
			r->zdone = ret == 0;
		}
	}
	return out;
}

long lwm2_lines_next(struct lwm2_lines *r, char **line)
{
	bool toolong = false;

	for (;;) {
		char *nl;
		size_t got;

		if (r->scan < r->pos)
			r->scan = r->pos;
		nl = r->len > r->scan ? memchr(r->buf + r->scan, '\n', r->len - r->scan) : NULL;
		r->scan = r->len;

		/* The end of the text without a newline is a last line, unless
		 * reading stopped (r->why): that line is cut off. */
		if (nl || (r->eof && !r->why[0] && r->len > r->pos)) {
			size_t n = nl ? (size_t)(nl - (r->buf + r->pos)) : r->len - r->pos;
			char *l = r->buf + r->pos;

			r->pos += n + (nl != NULL);
			r->scan = r->pos;
			if (toolong)
				return -2;
			/* the byte after the data is always in the buffer */
			l[n] = '\0';
			*line = l;
			return (long)n;
		}
		if (r->eof)
			return toolong ? -2 : -1;
		if (r->len - r->pos > LWM2_LINE_MAX) {
			/* Drop what is held of the line and read on to its end. */
			toolong = true;
			r->pos = r->len;
		}
		if (r->pos) {
			memmove(r->buf, r->buf + r->pos, r->len - r->pos);
			r->len -= r->pos;
			r->scan -= r->pos;
			r->pos = 0;
		}
		if (r->cap - r->len < LINES_CHUNK + 1) {
			size_t nc = r->cap ? r->cap * 2 : 4 * LINES_CHUNK;
			char *nb;

			if (nc > LWM2_LINE_MAX + 2 * LINES_CHUNK + 1)
				nc = LWM2_LINE_MAX + 2 * LINES_CHUNK + 1;
			if (nc < r->len + LINES_CHUNK + 1 || !(nb = realloc(r->buf, nc))) {
				errno = ENOMEM;
				snprintf(r->why, sizeof(r->why), "%s", strerror(ENOMEM));
				r->eof = 1;
				return -1;
			}
			r->buf = nb;
			r->cap = nc;
		}
		got = decode(r, r->buf + r->len, LINES_CHUNK);
		r->len += got;
		if (!got)
			r->eof = 1;
	}
}

void lwm2_lines_free(struct lwm2_lines *r)
{
	free(r->buf);
	r->buf = NULL;
	r->cap = r->pos = r->len = 0;
	if (r->kind == K_GZIP) {
		inflateEnd(r->z);
		free(r->z);
	} else if (r->kind == K_ZSTD) {
		ZSTD_freeDStream(r->z);
	}
	r->z = NULL;
	r->kind = K_UNKNOWN;
	free(r->in);
	r->in = NULL;
	r->in_pos = r->in_len = 0;
}

static void report(const char *cmd, const char *path, unsigned long lineno, const char *why,
                   unsigned long nbad, bool quiet)
{
	if (!quiet && nbad <= REPORT_MAX)
		fprintf(stderr, "lwm2: %s: couldn't read %s line %lu: %s; skipped\n", cmd, path,
		        lineno, why);
}

/* The object text from p to end with the bytes [cut, resume) left out,
 * parsed: json-c's tokener takes it in two pieces, so nothing is copied. */
static json_object *parse_without(const char *p, const char *cut, const char *resume,
                                  const char *end)
{
	json_tokener *tok = json_tokener_new();
	json_object *o = NULL;

	if (!tok || cut - p > (ptrdiff_t)INT32_MAX || end - resume > (ptrdiff_t)INT32_MAX) {
		if (tok)
			json_tokener_free(tok);
		return NULL;
	}
	o = json_tokener_parse_ex(tok, p, (int)(cut - p));
	if (!o && json_tokener_get_error(tok) == json_tokener_continue)
		o = json_tokener_parse_ex(tok, resume, (int)(end - resume));
	if (o && json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

/* One line: the job fields parsed, the digest located.  The digest may be
 * any member of the line's object (jobcomp/lwm2 writes it last; a log
 * rewritten by jq may have it anywhere), with any spacing. */
const char *lwm2_logline_member(const struct lwm2_logline *l, const char *key)
{
	if (!l->digest)
		return NULL;
	if (!l->members)
		return lwm2_json_member(l->digest, l->end, key);
	if (l->members->obj != l->digest)
		lwm2_json_members_index(l->members, l->digest, l->end);
	return lwm2_json_members_get(l->members, l->end, key);
}

static int scan_line(char *line, size_t len, struct lwm2_logline *l, char *err, size_t errlen)
{
	const char *end = line + len, *key_at = NULL, *d, *d_end;
	const char *p = skip_ws(line, end);

	l->fields = NULL;
	l->digest = NULL;
	l->text = line;
	l->end = end;
	if (l->members)
		l->members->obj = NULL; /* the buffer may hold the last line's */
	if (p >= end || *p != '{')
		return lwm2_errprintf(0, err, errlen, "not a JSON object");
	d = member_at(p, end, "digest", &key_at);
	if (d) {
		/* the fields alone: the line without the digest member */
		const char *c = key_at - 1, *after;

		/* the digest's members indexed on the way to its end: one walk
		 * for both (lwm2_logline_member's index, made here) */
		d_end = NULL;
		if (l->members) {
			lwm2_json_members_index(l->members, d, end);
			d_end = l->members->end;
		}
		if (!d_end && !(d_end = lwm2_json_span(d, end)))
			return lwm2_errprintf(0, err, errlen, "the digest is cut short");
		after = skip_ws(d_end, end);
		while (c > p && (*c == ' ' || *c == '\t' || *c == '\r' || *c == '\n'))
			c--;
		if (*c == ',')
			/* ...,"digest":{...}  the comma before it goes */
			l->fields = parse_without(p, c, d_end, end);
		else if (after < end && *after == ',')
			/* {"digest":{...},...  the comma after it goes */
			l->fields = parse_without(p, key_at, after + 1, end);
		else
			/* {"digest":{...}} */
			l->fields = parse_without(p, key_at, after, end);
		l->digest = d;
	} else {
		l->fields = json_tokener_parse(p);
	}
	if (!l->fields || !json_object_is_type(l->fields, json_type_object)) {
		lwm2_errprintf(0, err, errlen, "not a JSON object");
		json_object_put(l->fields);
		l->fields = NULL;
		return -1;
	}
	if (!ju_get(l->fields, "job_id", json_type_int)) {
		lwm2_errprintf(0, err, errlen, "no job_id");
		json_object_put(l->fields);
		l->fields = NULL;
		return -1;
	}
	return 0;
}

int lwm2_logline_parse(char *line, size_t len, struct lwm2_logline *l, char *err, size_t errlen)
{
	return scan_line(line, len, l, err, errlen);
}

FILE *lwm2_open_input(const char *cmd, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	struct stat sb;

	if (!f) {
		fprintf(stderr, "lwm2: %s: couldn't open %s: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	/* A directory opens, and reads as an error only later: say so now. */
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "lwm2: %s: couldn't read %s: it is a directory\n", cmd, path);
		if (f != stdin)
			fclose(f);
		return NULL;
	}
	return f;
}

/* A line as read (n: lwm2_lines_next's answer, not -1) made ready for
 * its parse: its newline cut, its length in *len.  0; 1 for an empty
 * line, which is no entry; -1 with why it is skipped. */
static int line_ready(long n, char *line, size_t *len, char *err, size_t errlen)
{
	if (n == -2) {
		snprintf(err, errlen, "longer than %u bytes", LWM2_LINE_MAX);
		return -1;
	}
	*len = (size_t)n;
	while (*len && (line[*len - 1] == '\n' || line[*len - 1] == '\r'))
		line[--*len] = '\0';
	if (!*len)
		return 1;
	if (strlen(line) != *len) {
		snprintf(err, errlen, "a NUL byte in the line");
		return -1;
	}
	return 0;
}

/* A file read to its end or its stop (rc): a read error and the count
 * of skipped lines said, the counts added.  rc, or -1 for a read error. */
static int file_done(const char *cmd, const char *path, struct lwm2_lines *lr, unsigned long lineno,
                     unsigned long bad, bool quiet, struct lwm2_logscan_count *count, int rc)
{
	if (rc != 1 && lr->why[0]) {
		if (lineno)
			fprintf(stderr, "lwm2: %s: couldn't read %s after line %lu: %s\n", cmd,
			        path, lineno, lr->why);
		else
			fprintf(stderr, "lwm2: %s: couldn't read %s: %s\n", cmd, path, lr->why);
		rc = -1;
	}
	lwm2_lines_free(lr);
	if (lr->f != stdin)
		fclose(lr->f);
	if (bad > REPORT_MAX && !quiet)
		fprintf(stderr, "lwm2: %s: skipped %lu unreadable lines of %s in all\n", cmd, bad,
		        path);
	if (count) {
		count->lines += lineno;
		count->bad += bad;
	}
	return rc;
}

/* One file, as lwm2_logscan documents it. */
static int scan_file(const char *cmd, const char *path, lwm2_logline_fn fn, void *arg,
                     struct lwm2_logscan_count *count)
{
	FILE *f = lwm2_open_input(cmd, path);
	struct lwm2_lines lr = {.f = f};
	char *line = NULL, err[256];
	long n;
	unsigned long lineno = 0, bad = 0;
	int rc = 0;
	struct lwm2_json_members members;
	bool quiet = count && count->quiet;

	if (!f)
		return -1;
	while ((n = lwm2_lines_next(&lr, &line)) != -1) {
		struct lwm2_logline l = {.path = path, .lineno = ++lineno, .members = &members};
		size_t len = 0;
		int r;

		err[0] = '\0';
		if ((r = line_ready(n, line, &len, err, sizeof(err))) > 0)
			continue;
		if (r < 0 || scan_line(line, len, &l, err, sizeof(err)) < 0) {
			report(cmd, path, lineno, err, ++bad, quiet);
			continue;
		}
		r = fn(arg, &l, err, sizeof(err));
		json_object_put(l.fields);
		if (r < 0)
			report(cmd, path, lineno, err[0] ? err : "unreadable", ++bad, quiet);
		else if (r > 0) {
			rc = 1;
			break;
		}
	}
	return file_done(cmd, path, &lr, lineno, bad, quiet, count, rc);
}

/* ------------------------------------------------------------ pipeline */

/* A line on its way through lwm2_logscan_pipe's threads. */
struct pipe_slot {
	enum { SLOT_WORKED_ON, SLOT_DONE } state;
	long n; /* lwm2_lines_next's answer */
	char *text;
	size_t cap;
	unsigned long lineno;
	int r; /* line_ready's, else scan_line's and work's: 0, -1 with err */
	struct lwm2_logline l;
	struct lwm2_json_members members;
	char err[256];
	void *user; /* the caller's slot_size bytes */
};

/* The lines of the file being read go into the slots in turn, read by
 * whichever thread is free (one at a time: reading), and are taken in the
 * same turn by the calling thread.  Reading on the threads, and not on
 * the calling one, leaves that thread the writes alone, the part no other
 * thread can do; it reads and works a line too only while its oldest is
 * not done. */
struct pipe {
	const struct lwm2_logscan_pipe *p;
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	struct pipe_slot *slots;
	size_t nslots;
	/* lines read into a slot, taken: counts, slot i % nslots */
	size_t fill, take;
	struct lwm2_lines *lr; /* the file being read, while !ended */
	bool reading;          /* a thread is reading lr, mu let go */
	bool ended;            /* no more lines to read from lr */
	bool quit;
	unsigned long lineno; /* lines read from lr */
	const char *path;
	unsigned long stopped_at; /* the line whose take asked to stop */
};

/* Slots per thread that reads: enough lines ahead that a thread finds
 * one to read while the calling thread writes the older ones. */
#define PIPE_SLOTS_PER_THREAD 8

/* Whether a thread may read the next line (mu held). */
static bool pipe_can_read(const struct pipe *pp)
{
	return !pp->reading && !pp->ended && pp->fill - pp->take < pp->nslots;
}

/* The file's next line into the next free slot, by a thread that holds
 * mu and pipe_can_read; mu is let go while it reads.  The slot, now the
 * caller's to work; NULL at the file's end (or where reading stopped:
 * lr's why). */
static struct pipe_slot *pipe_read(struct pipe *pp)
{
	struct pipe_slot *s = &pp->slots[pp->fill % pp->nslots];
	char *line = NULL;
	long n;

	pp->reading = true;
	pthread_mutex_unlock(&pp->mu);
	/* what work made of the line the slot held last */
	json_object_put(s->l.fields);
	s->l.fields = NULL;
	n = lwm2_lines_next(pp->lr, &line);
	if (n >= 0 && (size_t)n + 1 > s->cap) {
		char *t = realloc(s->text, (size_t)n + 1);

		if (t) {
			s->text = t;
			s->cap = (size_t)n + 1;
		} else {
			snprintf(pp->lr->why, sizeof(pp->lr->why), "%s", strerror(ENOMEM));
			n = -1;
		}
	}
	if (n >= 0)
		memcpy(s->text, line, (size_t)n + 1);
	pthread_mutex_lock(&pp->mu);
	pp->reading = false;
	if (n == -1) {
		pp->ended = true;
		pthread_cond_signal(&pp->done_cv); /* the calling thread may wait for it */
		return NULL;
	}
	s->n = n;
	s->lineno = ++pp->lineno;
	s->state = SLOT_WORKED_ON;
	pp->fill++;
	if (pipe_can_read(pp))
		pthread_cond_signal(&pp->work_cv);
	return s;
}

/* A worker's part of a line: the checks, the parse and work. */
static void slot_work(struct pipe *pp, unsigned worker, struct pipe_slot *s)
{
	size_t len = 0;

	s->err[0] = '\0';
	s->l = (struct lwm2_logline){.path = pp->path, .lineno = s->lineno, .members = &s->members};
	s->r = line_ready(s->n, s->text, &len, s->err, sizeof(s->err));
	if (s->r == 0 && scan_line(s->text, len, &s->l, s->err, sizeof(s->err)) < 0)
		s->r = -1;
	if (s->r == 0 &&
	    pp->p->work(pp->p->arg, worker, &s->l, s->user, s->err, sizeof(s->err)) < 0)
		s->r = -2;
}

/* The next line read and worked (mu held, let go meanwhile), unless
 * there was none to read. */
static void pipe_read_work(struct pipe *pp, unsigned worker)
{
	struct pipe_slot *s = pipe_read(pp);

	if (!s)
		return;
	pthread_mutex_unlock(&pp->mu);
	slot_work(pp, worker, s);
	pthread_mutex_lock(&pp->mu);
	s->state = SLOT_DONE;
	pthread_cond_signal(&pp->done_cv);
}

struct pipe_worker {
	struct pipe *pp;
	unsigned id;
	pthread_t t;
};

static void *pipe_worker(void *arg)
{
	struct pipe_worker *w = arg;
	struct pipe *pp = w->pp;

	pthread_mutex_lock(&pp->mu);
	for (;;) {
		while (!pp->quit && !pipe_can_read(pp))
			pthread_cond_wait(&pp->work_cv, &pp->mu);
		if (pp->quit)
			break;
		pipe_read_work(pp, w->id);
	}
	pthread_mutex_unlock(&pp->mu);
	return NULL;
}

/* The oldest line read, once worked: to take (unless the scan stopped),
 * reported where it is skipped.  0; 1 when take asked to stop; 2 when
 * the file has no more lines. */
static int pipe_take(struct pipe *pp, const char *cmd, unsigned long *bad, bool quiet, bool stopped)
{
	struct pipe_slot *s = &pp->slots[pp->take % pp->nslots];
	int r = 0;

	pthread_mutex_lock(&pp->mu);
	while (pp->take == pp->fill || s->state != SLOT_DONE) {
		if (pp->take == pp->fill && pp->ended && !pp->reading) {
			pthread_mutex_unlock(&pp->mu);
			return 2;
		}
		/* a line no thread has read yet: read and worked here rather
		 * than wait, so that the calling thread's CPU reads lines too
		 * where the writes leave it idle */
		if (pipe_can_read(pp)) {
			pipe_read_work(pp, pp->p->threads);
			continue;
		}
		pthread_cond_wait(&pp->done_cv, &pp->mu);
	}
	pthread_mutex_unlock(&pp->mu);
	if (stopped || s->r > 0) {
		/* dropped, or an empty line */
	} else if (s->r < 0) {
		report(cmd, pp->path, s->lineno, s->r == -2 && !s->err[0] ? "unreadable" : s->err,
		       ++*bad, quiet);
	} else {
		s->err[0] = '\0';
		r = pp->p->take(pp->p->arg, &s->l, s->user, s->err, sizeof(s->err));
		if (r < 0)
			report(cmd, pp->path, s->lineno, s->err[0] ? s->err : "unreadable", ++*bad,
			       quiet);
		else if (r > 0)
			pp->stopped_at = s->lineno;
	}
	pthread_mutex_lock(&pp->mu);
	pp->take++;
	if (pipe_can_read(pp))
		pthread_cond_signal(&pp->work_cv);
	pthread_mutex_unlock(&pp->mu);
	return r > 0;
}

/* One file as scan_file reads it, its lines read and worked on the
 * threads, taken here. */
static int pipe_file(struct pipe *pp, const char *cmd, const char *path,
                     struct lwm2_logscan_count *count)
{
	FILE *f = lwm2_open_input(cmd, path);
	struct lwm2_lines lr = {.f = f};
	unsigned long bad = 0, lineno;
	int rc = 0, r;
	bool quiet = count && count->quiet;

	if (!f)
		return -1;
	pthread_mutex_lock(&pp->mu);
	pp->path = path;
	pp->lr = &lr;
	pp->lineno = 0;
	pp->ended = false;
	pthread_cond_broadcast(&pp->work_cv);
	pthread_mutex_unlock(&pp->mu);
	while ((r = pipe_take(pp, cmd, &bad, quiet, rc == 1)) != 2) {
		if (r == 1 && rc != 1) {
			/* the lines after it are not read (those read are
			 * dropped) */
			rc = 1;
			pthread_mutex_lock(&pp->mu);
			pp->ended = true;
			pthread_mutex_unlock(&pp->mu);
		}
	}
	/* no thread reads lr now: it ended, and none is reading */
	pp->lr = NULL;
	lineno = rc == 1 ? pp->stopped_at : pp->lineno; /* as scan_file */
	return file_done(cmd, path, &lr, lineno, bad, quiet, count, rc);
}

/* Lines looked at for a file's first end time before it counts as having
 * none: enough for a few unreadable lines at its start. */
#define PEEK_LINES 100

struct input {
	char *path;
	size_t given;      /* position in the order given */
	int64_t first;     /* end time of the first entry */
	bool has_first;    /* false: none found, or unreadable (reported later) */
	bool nomatch;      /* a pattern that matched nothing */
	unsigned long rot; /* logrotate's number: 2 for x.2 and x.2.gz; 0 */
};

/* The N of a name ending in .N, before a compressor's suffix: logrotate's
 * count of rotations, the higher the older.  0 for any other name. */
static unsigned long rotation_of(const char *path)
{
	static const char *const zext[] = {".gz", ".zst", ".xz", ".bz2"};
	size_t len = strlen(path), k;
	unsigned long n = 0, mult = 1;

	for (size_t i = 0; i < sizeof(zext) / sizeof(zext[0]); i++) {
		size_t el = strlen(zext[i]);

		if (len > el && !strcmp(path + len - el, zext[i])) {
			len -= el;
			break;
		}
	}
	for (k = len; k > 0 && path[k - 1] >= '0' && path[k - 1] <= '9' && len - k < 9; k--) {
		n += (unsigned long)(path[k - 1] - '0') * mult;
		mult *= 10;
	}
	return k < len && k > 0 && path[k - 1] == '.' ? n : 0;
}

/* The "end" of the file's first entry, read quietly: a file that cannot
 * be read is reported when it is read in order. */
static bool first_end(const char *path, int64_t *t)
{
	FILE *f = NULL;
	struct lwm2_lines lr = {0};
	struct stat sb;
	char *line, err[64];
	long n;
	bool found = false;

	/* Only a regular file can be read twice: a pipe's first lines would
	 * be gone. */
	if (stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) || !(f = fopen(path, "re")))
		return false;
	lr.f = f;
	for (int i = 0; !found && i < PEEK_LINES && (n = lwm2_lines_next(&lr, &line)) != -1; i++) {
		struct lwm2_logline l = {.members = NULL};
		json_object *e;

		if (n <= 0 || strlen(line) != (size_t)n ||
		    scan_line(line, (size_t)n, &l, err, sizeof(err)) < 0)
			continue;
		if ((e = ju_get(l.fields, "end", json_type_int))) {
			*t = json_object_get_int64(e);
			found = true;
		}
		json_object_put(l.fields);
	}
	lwm2_lines_free(&lr);
	fclose(f);
	return found;
}

/* Oldest first; stdin, "-", has no first time and is given last. */
static int cmp_input(const void *a, const void *b)
{
	const struct input *x = a, *y = b;

	if (x->has_first != y->has_first)
		return x->has_first ? -1 : 1;
	if (x->has_first && x->first != y->first)
		return x->first < y->first ? -1 : 1;
	/* the same second (rotations in quick succession): the rotation
	 * number decides, x.2.gz before x.1 before x */
	if (x->rot != y->rot)
		return x->rot > y->rot ? -1 : 1;
	if (!strcmp(x->path, "-") != !strcmp(y->path, "-"))
		return !strcmp(x->path, "-") ? 1 : -1;
	return x->given < y->given ? -1 : x->given > y->given;
}

static int push_input(struct input **v, size_t *n, const char *path, bool nomatch)
{
	struct input *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = (struct input){
	    .path = strdup(path), .given = *n, .nomatch = nomatch, .rot = rotation_of(path)};
	if (!nv[*n].path)
		return -1;
	(*n)++;
	return 0;
}

/* Whether inputs [0, n) already hold the file at path (same inode). */
static bool seen_file(const struct input *v, size_t n, const char *path)
{
	struct stat a, b;

	if (stat(path, &a) < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!v[i].nomatch && strcmp(v[i].path, "-") && stat(v[i].path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

static int scan_list(const char *cmd, const char *const *paths, size_t n, lwm2_logline_fn fn,
                     void *arg, struct pipe *pp, struct lwm2_logscan_count *count)
{
	struct input *in = NULL;
	size_t nin = 0, failed = 0, nread = 0;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *p = paths[i];
		glob_t g;
		int gr;

		if (!strcmp(p, "-") || !strpbrk(p, "*?[")) {
			if (!seen_file(in, nin, p))
				rc = push_input(&in, &nin, p, false);
			continue;
		}
		gr = glob(p, 0, NULL, &g);
		if (gr == GLOB_NOSPACE) {
			rc = -1;
		} else if (gr != 0) {
			/* a file named so, or else an error, reported in order
			 * (a directory glob could not read: opening the pattern
			 * itself then says why) */
			rc = push_input(&in, &nin, p, gr == GLOB_NOMATCH && access(p, F_OK) != 0);
		} else {
			for (size_t k = 0; k < g.gl_pathc && rc == 0; k++)
				if (!seen_file(in, nin, g.gl_pathv[k]))
					rc = push_input(&in, &nin, g.gl_pathv[k], false);
		}
		globfree(&g);
	}
	if (rc < 0) {
		fprintf(stderr, "lwm2: %s: couldn't list the files to read: %s\n", cmd,
		        strerror(ENOMEM));
		goto out;
	}
	for (size_t i = 0; nin > 1 && i < nin; i++)
		if (!in[i].nomatch && strcmp(in[i].path, "-"))
			in[i].has_first = first_end(in[i].path, &in[i].first);
	if (nin > 1) /* no array at all without paths */
		qsort(in, nin, sizeof(*in), cmp_input);
	for (size_t i = 0; i < nin; i++) {
		int r;

		if (in[i].nomatch) {
			fprintf(stderr, "lwm2: %s: couldn't read %s: no file matches it\n", cmd,
			        in[i].path);
			failed++;
			continue;
		}
		r = pp ? pipe_file(pp, cmd, in[i].path, count)
		       : scan_file(cmd, in[i].path, fn, arg, count);
		if (r < 0) {
			failed++;
			continue;
		}
		nread++;
		if (r > 0) {
			rc = 1;
			break;
		}
	}
	if (failed) {
		/* A table from some of the files is still a table: say which
		 * part it is, and fail. */
		if (nin > 1 && nread)
			fprintf(stderr,
			        "lwm2: %s: %zu of %zu files couldn't be read (see above); read the "
			        "other %zu\n",
			        cmd, failed, nin, nread);
		else if (nin > 1)
			fprintf(stderr, "lwm2: %s: none of the %zu files could be read\n", cmd,
			        nin);
		rc = -1;
	}
out:
	for (size_t i = 0; i < nin; i++)
		free(in[i].path);
	free(in);
	return rc;
}

int lwm2_logscan(const char *cmd, const char *path, lwm2_logline_fn fn, void *arg,
                 struct lwm2_logscan_count *count)
{
	return scan_list(cmd, &path, 1, fn, arg, NULL, count);
}

int lwm2_logscan_files(const char *cmd, char *const *paths, size_t n, lwm2_logline_fn fn, void *arg,
                       struct lwm2_logscan_count *count)
{
	return scan_list(cmd, (const char *const *)paths, n, fn, arg, NULL, count);
}

static void pipe_free(struct pipe *pp, struct pipe_worker *w, unsigned started)
{
	pthread_mutex_lock(&pp->mu);
	pp->quit = true;
	pthread_cond_broadcast(&pp->work_cv);
	pthread_mutex_unlock(&pp->mu);
	for (unsigned i = 0; i < started; i++)
		pthread_join(w[i].t, NULL);
	for (size_t i = 0; pp->slots && i < pp->nslots; i++) {
		if (pp->slots[i].user && pp->p->release)
			pp->p->release(pp->p->arg, pp->slots[i].user);
		json_object_put(pp->slots[i].l.fields);
		free(pp->slots[i].text);
		free(pp->slots[i].user);
	}
	free(pp->slots);
	free(w);
	pthread_mutex_destroy(&pp->mu);
	pthread_cond_destroy(&pp->work_cv);
	pthread_cond_destroy(&pp->done_cv);
}

int lwm2_logscan_pipe(const char *cmd, char *const *paths, size_t n,
                      const struct lwm2_logscan_pipe *p, struct lwm2_logscan_count *count)
{
	struct pipe pp = {
	    .p = p, .nslots = (size_t)p->threads * PIPE_SLOTS_PER_THREAD, .ended = true};
	struct pipe_worker *w = calloc(p->threads, sizeof(*w));
	unsigned started = 0;
	int rc = -1;

	pthread_mutex_init(&pp.mu, NULL);
	pthread_cond_init(&pp.work_cv, NULL);
	pthread_cond_init(&pp.done_cv, NULL);
	if (!w || !(pp.slots = calloc(pp.nslots, sizeof(*pp.slots))))
		goto out;
	for (size_t i = 0; i < pp.nslots; i++)
		if (!(pp.slots[i].user = calloc(1, p->slot_size ? p->slot_size : 1)))
			goto out;
	for (; started < p->threads; started++) {
		w[started] = (struct pipe_worker){.pp = &pp, .id = started};
		if (pthread_create(&w[started].t, NULL, pipe_worker, &w[started]) != 0)
			break;
	}
	if (!started)
		goto out;
	rc = scan_list(cmd, (const char *const *)paths, n, NULL, NULL, &pp, count);
out:
	if (rc == -1 && !started)
		fprintf(stderr, "lwm2: %s: couldn't start the threads that read: %s\n", cmd,
		        strerror(errno ? errno : ENOMEM));
	pipe_free(&pp, w, started);
	return rc;
}

json_object *lwm2_logline_digest(const struct lwm2_logline *l, char *why, size_t len)
{
	json_object *d = lwm2_json_parse_at(l->digest, l->end);

	if (!d) {
		snprintf(why, len, "the digest is not JSON");
		return NULL;
	}
	if (lwm2_digest_validate(d, why, len) != 0) {
		json_object_put(d);
		return NULL;
	}
	return d;
}
