/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The part of AdminComment that lwm2 owns: "LWM2:" followed by one JSON
 * object, at the start of the field or after white space.  Other tools keep
 * their own text there (jobstats: "JS1:<base64>"); it stays byte for byte.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lwm2_digest.h"
#include "lwm2_jobcomp.h"

#define MARK_LEN (sizeof(LWM2_DIGEST_PREFIX) - 1)

/* Length of the JSON object at s, or of everything left when it does not
 * end (a value cut by the database still belongs to lwm2). */
static size_t object_len(const char *s, size_t left)
{
	struct json_tokener *tok = json_tokener_new();
	json_object *o;
	size_t n = left;

	if (!tok)
		return left;
	o = json_tokener_parse_ex(tok, s, (int)(left > 0x7fffffff ? 0x7fffffff : left));
	if (o) {
		/* the tokener also eats the white space after the object */
		n = json_tokener_get_parse_end(tok);
		while (n > 0 && isspace((unsigned char)s[n - 1]))
			n--;
		json_object_put(o);
	}
	json_tokener_free(tok);
	return n;
}

int lwm2_jc_comment_find(const char *text, size_t *off, size_t *len)
{
	const char *p = text ? lwm2_digest_mark(text, strlen(text)) : NULL;

	if (!p)
		return -1;
	*off = (size_t)(p - text);
	*len = MARK_LEN + object_len(p + MARK_LEN, strlen(p + MARK_LEN));
	return 0;
}

char *lwm2_jc_comment_merge(const char *old, const char *part, size_t max)
{
	size_t off, len, keep_a, keep_b, plen = part ? strlen(part) : 0, n;
	const char *rest;
	char *out;

	if (!old)
		old = "";
	if (lwm2_jc_comment_find(old, &off, &len) < 0) {
		off = strlen(old);
		len = 0;
	}
	/* Text before the part, without the white space that separated it. */
	keep_a = off;
	if (len)
		while (keep_a > 0 && isspace((unsigned char)old[keep_a - 1]))
			keep_a--;
	/* Text after the part (someone appended behind it), without the
	 * separating white space: it moves before the new part. */
	rest = old + off + len;
	while (len && isspace((unsigned char)*rest))
		rest++;
	keep_b = strlen(rest);

	n = keep_a + (keep_a && keep_b ? 1 : 0) + keep_b;
	if (plen)
		n += (n ? 1 : 0) + plen;
	if (n + 1 > max) {
		errno = E2BIG;
		return NULL;
	}
	if (!(out = malloc(n + 1)))
		return NULL;
	memcpy(out, old, keep_a);
	n = keep_a;
	if (keep_b) {
		if (n)
			out[n++] = ' ';
		memcpy(out + n, rest, keep_b);
		n += keep_b;
	}
	if (plen) {
		if (n)
			out[n++] = ' ';
		memcpy(out + n, part, plen);
		n += plen;
	}
	out[n] = '\0';
	return out;
}
