/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Walking JSON text without building objects: a digest is some kilobytes
 * and a large job's grid megabytes, and json-c would make an object of
 * every number.  `lwm2 stats`, `lwm2 digest --file` (lib/logscan.c) and
 * the line protocol of a logged job (lib/lineproto.c) read the members
 * they need this way and hand only those to json-c.
 *
 * Every function takes the text up to end (not NUL-terminated) and returns
 * NULL or false, never reading past end, when the text is not what it
 * expects.
 */
#ifndef LWM2_JSONTEXT_H
#define LWM2_JSONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* p past blanks (space, tab, CR, LF). */
const char *lwm2_json_skip_ws(const char *p, const char *end);

/* End of the JSON value starting at p (just past it), or NULL when it does
 * not end before end.  Strings and escapes are honoured. */
const char *lwm2_json_span(const char *p, const char *end);

/*
 * The next member of an object whose text continues at *p (at its '{' or
 * after a member): the key (without its quotes, escapes as they are) and
 * where the value starts; *p is then just past the value.  false at the
 * object's end or on bad text.
 */
bool lwm2_json_next_member(const char **p, const char *end, const char **key, size_t *klen,
                           const char **val);

/* lwm2_json_next_member without the walk over the value: *p is left at
 * the value, for a caller that walks into it (and then sets *p just past
 * it). */
bool lwm2_json_next_key(const char **p, const char *end, const char **key, size_t *klen,
                        const char **val);

/*
 * A walk over an object's members (keys, and each value passed over by
 * its span or walked into) that is the object's span too, so that the
 * object need not be spanned first: it reaches the brace the span ends
 * at, unless a scalar value holds a quote or an opening bracket, which
 * the span takes as a string's or a value's start.
 * lwm2_json_value_misleads: whether the value [v, e), as its span passed
 * over it, is such a scalar.  lwm2_json_walk_end: for a walk that no
 * value misled and that stopped at p (no member after), just past the
 * object's closing brace, lwm2_json_span(obj, end)'s answer; NULL where
 * the walk stopped short of it (the span is then to be taken).
 */
bool lwm2_json_value_misleads(const char *v, const char *e);
const char *lwm2_json_walk_end(const char *p, const char *end);

/* The value of key directly inside the object at obj (nested objects are
 * skipped, not searched), or NULL. */
const char *lwm2_json_member(const char *obj, const char *end, const char *key);

/* The same, and where the key's opening quote is (key_at) and where the
 * value ends (val_end), each where not NULL. */
const char *lwm2_json_member_at(const char *obj, const char *end, const char *key,
                                const char **key_at, const char **val_end);

/*
 * The members directly inside one object, found in one walk, for a caller
 * that looks up several: each lwm2_json_member walks the object from its
 * start, spanning every value before the key (lwm2 stats over a log: 15
 * lookups a line, most of its time).  The first LWM2_JSON_MEMBERS_MAX are
 * kept; a key not among them is looked up by walking where there were more
 * (or the object's text is bad past them).
 */
#define LWM2_JSON_MEMBERS_MAX 64
struct lwm2_json_members {
	const char *obj; /* the object indexed; NULL: none yet */
	unsigned n;
	bool partial;
	/* just past the object's closing brace (lwm2_json_walk_end), where
	 * the walk over the members reached it: the object is not walked
	 * twice; NULL where it stopped short (partial, text it did not take
	 * as a member) */
	const char *end;
	struct {
		const char *key; /* without its quotes */
		size_t klen;
		const char *val;
	} m[LWM2_JSON_MEMBERS_MAX];
};

/* Index the object at obj (ending before end). */
void lwm2_json_members_index(struct lwm2_json_members *ix, const char *obj, const char *end);

/* lwm2_json_member's answer for the indexed object. */
const char *lwm2_json_members_get(const struct lwm2_json_members *ix, const char *end,
                                  const char *key);

/* The value at p spanned (its end, or NULL as lwm2_json_span), an
 * object's members indexed into ix on the way: one walk for both (each
 * object of an array looked into). */
const char *lwm2_json_span_indexed(struct lwm2_json_members *ix, const char *p, const char *end);

/* A member of the object at p that lwm2_json_span_indexed spanned to e:
 * by the index where its walk reached the end, else by a walk. */
const char *lwm2_json_indexed_member(const struct lwm2_json_members *ix, const char *p,
                                     const char *e, const char *key);

/* Parse the value at p (ending before end) with json-c, or NULL. */
json_object *lwm2_json_parse_at(const char *p, const char *end);

/* Parse exactly the len bytes at p, one value, with json-c, or NULL. */
json_object *lwm2_json_parse_n(const char *p, size_t len);
/* The number literal [p, e) as json-c's tokener makes it (an int64 for an
 * integer, a double kept with its text otherwise), built directly for the
 * common forms: the tokener's setup (an allocation, a locale duplicated
 * per call) costs more than the rest of reading a field.  Anything else
 * goes to the tokener.  NULL if it is no JSON value. */
json_object *lwm2_json_number(const char *p, const char *e);

/*
 * The JSON text [p, end) with every number that is not an integer written
 * with at most `digits` significant digits where that is shorter (strings
 * and integers as they are), malloc'd and NUL-terminated, its length in
 * *len; NULL when out of memory.  For a copy whose size is bounded (the
 * compact digest in AdminComment), where 17 digits of a derived rate or
 * time say nothing a reader can use and crowd out whole figures.
 */
char *lwm2_json_shorten_numbers(const char *p, const char *end, int digits, size_t *len);

#endif /* LWM2_JSONTEXT_H */
