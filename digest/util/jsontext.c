/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Walking JSON text without building objects (see jsontext.h). */
#include "jsontext.h"

#include "numparse.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *lwm2_json_skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

/*
 * Every line of a log is walked through lwm2_json_span (a digest is tens
 * of kilobytes, most of it numbers in short arrays, a quote or a bracket
 * every few bytes): the text is taken 16 bytes at a time, its quotes and
 * brackets found as two bit masks at once (SSE2 where the compiler has
 * it: a few instructions a block, not a test a byte), then only those
 * bytes visited, in order.  A block's bytes beyond end are never read:
 * the last bytes are walked one at a time.
 */
#define SPAN_BLOCK 16

#if defined(__SSE2__)
#include <emmintrin.h>

static inline unsigned block_bytes_eq(__m128i b, char c)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8(c)));
}

/* The quotes and the brackets of the SPAN_BLOCK bytes at p, bit i for
 * byte i. */
static inline void block_masks(const char *p, unsigned *quotes, unsigned *brackets)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);

	*quotes = block_bytes_eq(b, '"');
	*brackets = block_bytes_eq(b, '{') | block_bytes_eq(b, '[') | block_bytes_eq(b, '}') |
	            block_bytes_eq(b, ']');
}
#else
static inline void block_masks(const char *p, unsigned *quotes, unsigned *brackets)
{
	*quotes = *brackets = 0;
	for (unsigned i = 0; i < SPAN_BLOCK; i++) {
		char c = p[i];

		if (c == '"')
			*quotes |= 1u << i;
		else if (c == '{' || c == '[' || c == '}' || c == ']')
			*brackets |= 1u << i;
	}
}
#endif

/* A span under way: brackets open, inside a string or not (str: its
 * first byte, to count the backslashes before a quote back to it). */
struct span_state {
	int depth;
	bool in_string;
	const char *str;
};

/* The quote, bracket or brace at q met: the span's end (just past q)
 * when it ends there, else NULL. */
static inline const char *span_byte(struct span_state *s, const char *q)
{
	char c = *q;

	if (c == '"') {
		const char *b;

		if (!s->in_string) {
			s->in_string = true;
			s->str = q + 1;
			return NULL;
		}
		/* escaped where an odd run of backslashes is before it */
		for (b = q; b > s->str && b[-1] == '\\'; b--)
			;
		if ((q - b) & 1)
			return NULL;
		s->in_string = false;
		return s->depth == 0 ? q + 1 : NULL;
	}
	if (s->in_string)
		return NULL;
	if (c == '{' || c == '[')
		s->depth++;
	else if ((c == '}' || c == ']') && --s->depth <= 0)
		return q + 1;
	return NULL;
}

const char *lwm2_json_span(const char *p, const char *end)
{
	struct span_state s = {0, false, NULL};
	const char *e;

	if (p >= end)
		return NULL;
	if (*p != '{' && *p != '[' && *p != '"') {
		/* a number, true, false or null */
		while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n')
			p++;
		return p;
	}
	for (; end - p >= SPAN_BLOCK; p += SPAN_BLOCK) {
		unsigned quotes, brackets, m;

		block_masks(p, &quotes, &brackets);
		/* in a string only its closing quote counts: the brackets
		 * before it are cleared with it */
		while ((m = s.in_string ? quotes : quotes | brackets)) {
			unsigned i = (unsigned)__builtin_ctz(m);
			unsigned upto = (2u << i) - 1;

			quotes &= ~upto;
			brackets &= ~upto;
			/* a string that closes in the block with no backslash
			 * before its quote (a key, mostly): passed at once */
			if (!s.in_string && p[i] == '"' && quotes) {
				unsigned j = (unsigned)__builtin_ctz(quotes);

				if (p[j - 1] != '\\') {
					upto = (2u << j) - 1;
					quotes &= ~upto;
					brackets &= ~upto;
					if (s.depth == 0)
						return p + j + 1;
					continue;
				}
			}
			if ((e = span_byte(&s, p + i)))
				return e;
		}
	}
	for (; p < end; p++)
		if ((*p == '"' || *p == '{' || *p == '[' || *p == '}' || *p == ']') &&
		    (e = span_byte(&s, p)))
			return e;
	return NULL;
}

/* The key of the member at *p (after a ',', or also a '{' with open_ok)
 * and where its value starts, not yet walked over: the member a caller
 * looks for need not be spanned. */
static bool member_key(const char **p, const char *end, bool open_ok, const char **key,
                       size_t *klen, const char **val)
{
	const char *q = lwm2_json_skip_ws(*p, end);

	if (q < end && (*q == ',' || (open_ok && *q == '{')))
		q = lwm2_json_skip_ws(q + 1, end);
	if (q >= end || *q != '"')
		return false;
	*key = q + 1;
	for (q = q + 1; q < end && *q != '"'; q += *q == '\\' ? 2 : 1)
		;
	if (q >= end)
		return false;
	*klen = (size_t)(q - *key);
	q = lwm2_json_skip_ws(q + 1, end);
	if (q >= end || *q != ':')
		return false;
	*val = lwm2_json_skip_ws(q + 1, end);
	return true;
}

bool lwm2_json_next_member(const char **p, const char *end, const char **key, size_t *klen,
                           const char **val)
{
	const char *e;

	if (!member_key(p, end, true, key, klen, val) || !(e = lwm2_json_span(*val, end)))
		return false;
	*p = e;
	return true;
}

const char *lwm2_json_member_at(const char *obj, const char *end, const char *key,
                                const char **key_at, const char **val_end)
{
	const char *p, *k, *v;
	size_t n = strlen(key), kl;

	if (!obj || obj >= end || *obj != '{')
		return NULL;
	for (p = obj + 1; member_key(&p, end, false, &k, &kl, &v);) {
		if (kl == n && !memcmp(k, key, n)) {
			if (v >= end || (val_end && !(*val_end = lwm2_json_span(v, end))))
				return NULL;
			if (key_at)
				*key_at = k - 1;
			return v;
		}
		if (!(p = lwm2_json_span(v, end)))
			return NULL;
	}
	return NULL;
}

const char *lwm2_json_member(const char *obj, const char *end, const char *key)
{
	return lwm2_json_member_at(obj, end, key, NULL, NULL);
}

bool lwm2_json_next_key(const char **p, const char *end, const char **key, size_t *klen,
                        const char **val)
{
	if (!member_key(p, end, true, key, klen, val))
		return false;
	*p = *val;
	return true;
}

bool lwm2_json_value_misleads(const char *v, const char *e)
{
	/* an object, an array or a string: spanned as the span of the
	 * object around it spans it */
	if (v >= e || *v == '{' || *v == '[' || *v == '"')
		return false;
	/* a scalar (a number, true, false, null: what the span of one
	 * passes over) */
	for (; v < e; v++)
		if (*v == '"' || *v == '{' || *v == '[')
			return true;
	return false;
}

const char *lwm2_json_walk_end(const char *p, const char *end)
{
	/* keys, blanks, colons and commas are nothing to the span: at the
	 * brace after the last member it closes the object too */
	p = lwm2_json_skip_ws(p, end);
	return p < end && *p == '}' ? p + 1 : NULL;
}

void lwm2_json_members_index(struct lwm2_json_members *ix, const char *obj, const char *end)
{
	const char *p, *k, *v;
	size_t kl;
	bool as_span = true;

	ix->obj = obj;
	ix->n = 0;
	ix->partial = false;
	ix->end = NULL;
	if (!obj || obj >= end || *obj != '{')
		return;
	for (p = obj + 1; member_key(&p, end, false, &k, &kl, &v);) {
		if (ix->n == LWM2_JSON_MEMBERS_MAX || v >= end) {
			ix->partial = true;
			return;
		}
		ix->m[ix->n].key = k;
		ix->m[ix->n].klen = kl;
		ix->m[ix->n].val = v;
		ix->n++;
		if (!(p = lwm2_json_span(v, end))) {
			ix->partial = true; /* the value is cut short: as the walk would */
			return;
		}
		if (lwm2_json_value_misleads(v, p))
			as_span = false;
	}
	if (as_span)
		ix->end = lwm2_json_walk_end(p, end);
}

const char *lwm2_json_members_get(const struct lwm2_json_members *ix, const char *end,
                                  const char *key)
{
	size_t n = strlen(key);

	for (unsigned i = 0; i < ix->n; i++)
		if (ix->m[i].klen == n && memcmp(ix->m[i].key, key, n) == 0)
			return ix->m[i].val;
	return ix->partial ? lwm2_json_member(ix->obj, end, key) : NULL;
}

const char *lwm2_json_span_indexed(struct lwm2_json_members *ix, const char *p, const char *end)
{
	lwm2_json_members_index(ix, p, end);
	return ix->end ? ix->end : lwm2_json_span(p, end);
}

const char *lwm2_json_indexed_member(const struct lwm2_json_members *ix, const char *p,
                                     const char *e, const char *key)
{
	return ix->end ? lwm2_json_members_get(ix, e, key) : lwm2_json_member(p, e, key);
}

json_object *lwm2_json_parse_n(const char *p, size_t len)
{
	struct json_tokener *tok;
	json_object *o;

	if (len > (size_t)INT32_MAX || !(tok = json_tokener_new()))
		return NULL;
	o = json_tokener_parse_ex(tok, p, (int)len);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		/* a bare number is only complete at the end of its input */
		if (json_tokener_get_error(tok) == json_tokener_continue && !o)
			o = json_tokener_parse_ex(tok, "", 1);
		if (json_tokener_get_error(tok) != json_tokener_success) {
			json_object_put(o);
			o = NULL;
		}
	}
	json_tokener_free(tok);
	return o;
}

json_object *lwm2_json_parse_at(const char *p, const char *end)
{
	const char *e = p ? lwm2_json_span(p, end) : NULL;

	return e ? lwm2_json_parse_n(p, (size_t)(e - p)) : NULL;
}

static const char *digits_from(const char *q, const char *e, size_t *n)
{
	const char *s = q;

	while (q < e && *q >= '0' && *q <= '9')
		q++;
	*n = (size_t)(q - s);
	return q;
}

json_object *lwm2_json_number(const char *p, const char *e)
{
	const char *q = p;
	char text[64];
	size_t n, nint;
	bool fraction = false;

	if (q < e && *q == '-')
		q++;
	q = digits_from(q, e, &nint);
	if (!nint)
		return lwm2_json_parse_n(p, (size_t)(e - p));
	/* up to 18 digits cannot overflow an int64: json-c's value exactly */
	if (q == e && nint <= 18) {
		const char *stop;
		int64_t v;

		if (lwm2_parse_i64(p, &stop, INT64_MIN, INT64_MAX, &v) == 0 && stop == e)
			return json_object_new_int64(v);
		return lwm2_json_parse_n(p, (size_t)(e - p));
	}
	if (q < e && *q == '.') {
		q = digits_from(q + 1, e, &n);
		if (!n)
			return lwm2_json_parse_n(p, (size_t)(e - p));
		fraction = true;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		q = digits_from(q, e, &n);
		if (!n)
			return lwm2_json_parse_n(p, (size_t)(e - p));
		fraction = true;
	}
	if (q != e || !fraction || (size_t)(e - p) >= sizeof(text))
		return lwm2_json_parse_n(p, (size_t)(e - p));
	memcpy(text, p, (size_t)(e - p));
	text[e - p] = '\0';
	/* the C locale: lwm2 never sets another */
	return json_object_new_double_s(strtod(text, NULL), text);
}

/* Length of the number literal at p (a JSON number's characters), and
 * whether it is written as a non-integer (a fraction or an exponent). */
static size_t number_literal(const char *p, const char *end, bool *fractional)
{
	const char *q = p;

	*fractional = false;
	while (q < end && (strchr("0123456789+-", *q) || *q == '.' || *q == 'e' || *q == 'E')) {
		if (*q == '.' || *q == 'e' || *q == 'E')
			*fractional = true;
		q++;
	}
	return (size_t)(q - p);
}

char *lwm2_json_shorten_numbers(const char *p, const char *end, int digits, size_t *len)
{
	size_t cap = (size_t)(end - p) + 1, n = 0;
	char *out = malloc(cap);

	if (!out)
		return NULL;
	while (p < end) {
		const char *s = p;
		bool fractional;
		size_t l;

		if (*p == '"') {
			/* a string, escapes and all, as it is */
			const char *q = lwm2_json_span(p, end);

			if (!q)
				q = end;
			memcpy(out + n, p, (size_t)(q - p));
			n += (size_t)(q - p);
			p = q;
			continue;
		}
		if ((*p == '-' || (*p >= '0' && *p <= '9')) &&
		    (l = number_literal(p, end, &fractional)) > 0 && fractional && l < 64) {
			char lit[64], shorter[40];
			double v;
			int m;

			memcpy(lit, s, l);
			lit[l] = '\0';
			v = strtod(lit, NULL);
			m = snprintf(shorter, sizeof(shorter), "%.*g", digits, v);
			/* a literal past a double's range stays as written: "%g"
			 * would write inf, which JSON has not */
			if (isfinite(v) && m > 0 && (size_t)m < l) {
				memcpy(out + n, shorter, (size_t)m);
				n += (size_t)m;
			} else {
				memcpy(out + n, lit, l);
				n += l;
			}
			p += l;
			continue;
		}
		out[n++] = *p++;
	}
	out[n] = '\0';
	*len = n;
	return out;
}
