/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The JSON text walker: spans through strings and escapes, members found
 * at the top level only, text cut short refused. */
#include "jsontext.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *text;
	int len; /* of the value's span; -1: NULL */
} spans[] = {
    {"123,", 3},
    {"-1.5e3}", 6},
    {"true ", 4},
    {"\"a,b\",", 5},
    {"\"q\\\"}\"x", 6}, /* an escaped quote inside */
    {"\"bs\\\\\"x", 6}, /* an escaped backslash before the end */
    {"{\"a\":[1,{\"b\":\"}\"}]}x", 19},
    {"[[],[[]]]", 9},
    {"{\"a\":1", -1}, /* cut short */
    {"\"open", -1},
    {"", -1},
};

static void spans_end(void)
{
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		const char *t = spans[i].text, *e = lwm2_json_span(t, t + strlen(t));

		if (spans[i].len < 0)
			ok(e == NULL, "span %zu: [%s] does not end", i, t);
		else
			ok(e && e - t == spans[i].len, "span %zu: [%s] is %d bytes", i, t,
			   spans[i].len);
	}
}

/* The span of an object, an array or a string (p at its first byte) as
 * a walk one byte at a time finds it, each value inside spanned in turn,
 * escapes skipped in pairs: the reference the walk by blocks of 16
 * bytes must agree with. */
static const char *span_bytewise(const char *p, const char *end)
{
	if (*p == '"') {
		for (p++; p < end && *p != '"'; p += *p == '\\' ? 2 : 1)
			;
		return p < end ? p + 1 : NULL;
	}
	for (p++; p && p < end;) {
		if (*p == '}' || *p == ']')
			return p + 1;
		p = *p == '"' || *p == '{' || *p == '[' ? span_bytewise(p, end) : p + 1;
	}
	return NULL;
}

/* Texts of every length up to 64 from an alphabet heavy in what a span
 * turns on (quotes, backslashes, brackets), each from every offset: the
 * walk meets them at every place of its blocks (strings that close in
 * their block and ones that go on into the next), and in the tail after
 * the last block. */
static void spans_as_bytewise(void)
{
	static const char alphabet[] = "\"\\{}[]\"\\{[0 ,:x}]";
	char text[80];
	unsigned seed = 1, bad = 0, tried = 0;

	for (int round = 0; round < 4000; round++) {
		size_t n = 1 + (size_t)(round % 64);

		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			text[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		/* most texts open a value: an object or a string */
		if (round % 3 == 0)
			text[0] = '{';
		else if (round % 3 == 1)
			text[0] = '"';
		for (size_t from = 0; from < n; from++) {
			if (!strchr("{[\"", text[from]))
				continue; /* a scalar: not walked this way */
			tried++;
			if (lwm2_json_span(text + from, text + n) !=
			    span_bytewise(text + from, text + n))
				bad++;
		}
	}
	ok(bad == 0, "span: as a byte-at-a-time walk finds it, %u of %u texts differ", bad, tried);
}

static void members(void)
{
	static const char arr[] = "[1]";
	const char *obj = "{ \"x\" : {\"y\":1}, \"y\":\"two\",\"z\": [3] }";
	const char *end = obj + strlen(obj);
	const char *v;
	const char *key_at = NULL;
	const char *vend = NULL;
	const char *p;
	const char *k;
	size_t kl;
	int n = 0;
	json_object *o;

	v = lwm2_json_member_at(obj, end, "y", &key_at, &vend);
	ok(v && !strncmp(v, "\"two\"", 5) && vend == v + 5 && key_at && *key_at == '"' &&
	       !strncmp(key_at, "\"y\"", 3),
	   "member: the top-level y, not the nested one, with its key and end");
	v = lwm2_json_member(obj, end, "z");
	ok(v && *v == '[', "member: a value after blanks around the colon");
	ok(!lwm2_json_member(obj, end, "w"), "member: a missing key is NULL");
	ok(!lwm2_json_member(obj, obj + 20, "z"), "member: text cut before the key is NULL");
	ok(!lwm2_json_member(arr, arr + 3, "a"), "member: not an object is NULL");

	for (p = obj; lwm2_json_next_member(&p, end, &k, &kl, &v);)
		n++;
	is_int(n, 3, "next_member: three members, the nested one not among them");
	p = obj;
	ok(lwm2_json_next_member(&p, end, &k, &kl, &v) && kl == 1 && *k == 'x' && *v == '{' &&
	       p == v + 7,
	   "next_member: the key, the value, and *p past the value");

	o = lwm2_json_parse_at(obj + 21, end);
	ok(o && json_object_is_type(o, json_type_string) &&
	       !strcmp(json_object_get_string(o), "two"),
	   "parse_at: a string value");
	json_object_put(o);
	o = lwm2_json_parse_n("42", 2);
	ok(o && json_object_get_int(o) == 42, "parse_n: a bare number at the end of its input");
	json_object_put(o);
	ok(!lwm2_json_parse_n("{\"a\":", 5), "parse_n: cut short is NULL");
}

/* The member index answers as lwm2_json_member does: the first of a key,
 * top level only, the members past its capacity and text cut short after
 * the indexed ones found by walking. */
static void member_index(void)
{
	static struct lwm2_json_members ix;
	const char *obj = "{\"a\":{\"b\":1},\"b\":2,\"a\":3,\"c\":\"x\"}";
	const char *end = obj + strlen(obj), *v;
	char big[4096];
	size_t at = 0;

	lwm2_json_members_index(&ix, obj, end);
	is_int((int)ix.n, 4, "index: four members, the nested one not among them");
	v = lwm2_json_members_get(&ix, end, "a");
	ok(v && v == lwm2_json_member(obj, end, "a") && *v == '{', "index: the first a, as member");
	v = lwm2_json_members_get(&ix, end, "b");
	ok(v && *v == '2', "index: the top-level b");
	ok(!lwm2_json_members_get(&ix, end, "z"), "index: a missing key is NULL");
	lwm2_json_members_index(&ix, "[1]", obj + 3);
	ok(!lwm2_json_members_get(&ix, obj + 3, "a"), "index: not an object has no members");

	/* 70 members: the last ones beyond the index's 64 */
	big[at++] = '{';
	for (int i = 0; i < 70; i++)
		at += (size_t)snprintf(big + at, sizeof(big) - at, "%s\"k%d\":%d", i ? "," : "", i,
		                       i);
	big[at++] = '}';
	lwm2_json_members_index(&ix, big, big + at);
	ok(ix.partial && ix.n == LWM2_JSON_MEMBERS_MAX, "index: 64 of 70 members, marked partial");
	v = lwm2_json_members_get(&ix, big + at, "k69");
	ok(v && !strncmp(v, "69}", 3), "index: a member past the 64 found by walking");
	v = lwm2_json_members_get(&ix, big + at, "k3");
	ok(v && !strncmp(v, "3,", 2), "index: an indexed one");

	/* cut short inside the second value */
	lwm2_json_members_index(&ix, obj, obj + 20);
	ok(lwm2_json_members_get(&ix, obj + 20, "a") != NULL &&
	       !lwm2_json_members_get(&ix, obj + 20, "c"),
	   "index: text cut short: the members before the cut, not after");
}

/* The index's end of an object is the span's, or none: over objects
 * whose walk and span agree, and over ones where a member's text would
 * lead the walk astray (a quote or a brace inside a scalar, a closing
 * bracket, no key after a comma), where the index leaves the end to the span. */
static void index_end(void)
{
	static struct lwm2_json_members ix;
	static const struct {
		const char *text;
		bool has_end; /* the index finds the end itself */
	} objs[] = {
	    {"{}x", true},
	    {"{ \"a\" : 1 , \"b\":[1,{\"c\":\"}\"}],\"d\":\"e\\\"\" }x", true},
	    {"{\"a\":1\t}x", true},
	    {"{\"a\":1\"}\"}x", false}, /* the scalar's quote opens a string for the span */
	    {"{\"a\":tr{ue}x", false},
	    {"{\"a\":1]x", false},        /* a bracket closes the object for the span */
	    {"{\"a\":1 \"b\":2}x", true}, /* no comma: b a member all the same */
	    {"{\"a\":1 x}x", false},      /* no key: the walk stops at x */
	    {"{\"a\":1,}x", false},
	    {"{\"a\":{\"b\":1}", false}, /* cut short */
	};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		const char *t = objs[i].text, *end = t + strlen(t);

		lwm2_json_members_index(&ix, t, end);
		if (objs[i].has_end)
			ok(ix.end && ix.end == lwm2_json_span(t, end),
			   "index end %zu: [%s] the span's", i, t);
		else
			ok(!ix.end, "index end %zu: [%s] left to the span", i, t);
	}
}

/* A number literal built directly is what json-c's tokener makes of
 * it: the same type, value and text. */
static void number_literals(void)
{
	static const char *const lit[] = {
	    "0",
	    "-0",
	    "7",
	    "007",
	    "-123",
	    "123456789012345678",
	    "-123456789012345678",
	    "1234567890123456789",
	    "99999999999999999999",
	    "-99999999999999999999",
	    "1.5",
	    "-1.50",
	    "0.1",
	    "1e3",
	    "1E-3",
	    "2.5e+10",
	    "1e400",
	    "-1e-400",
	    "1.",
	    "1e",
	    "1e+",
	    "-",
	    "-.5",
	    "12.5.3",
	    "1.5x",
	};

	for (size_t i = 0; i < sizeof(lit) / sizeof(lit[0]); i++) {
		size_t len = strlen(lit[i]);
		json_object *a = lwm2_json_number(lit[i], lit[i] + len),
		            *b = lwm2_json_parse_n(lit[i], len);
		const char *ta = a ? json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN)
		                   : "(null)",
		           *tb = b ? json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN)
		                   : "(null)";

		ok(!strcmp(ta, tb) && (!a || json_object_get_type(a) == json_object_get_type(b)) &&
		       (!a || json_object_get_double(a) == json_object_get_double(b) ||
		        isnan(json_object_get_double(a))),
		   "number %s: %s as the tokener makes it (%s)", lit[i], ta, tb);
		json_object_put(a);
		json_object_put(b);
	}
}

/* shortened numbers: non-integers to 6 significant digits where that
 * is shorter; integers, strings and short forms as they are */
static void shortened_numbers(void)
{
	static const char text[] =
	    "{\"a\":0.26634503750000005,\"b\":33554432,\"c\":\"0.12345678901\","
	    "\"d\":[-1.2345678901234e-05,1e-05,0.5,-7],\"e\":true,\"f\":\"x\\\"1."
	    "23456789\"}";
	static const char past[] = "[1e999,-2.5e400]";
	static const char want[] =
	    "{\"a\":0.266345,\"b\":33554432,\"c\":\"0.12345678901\","
	    "\"d\":[-1.23457e-05,1e-05,0.5,-7],\"e\":true,\"f\":\"x\\\"1.23456789\"}";
	size_t len = 0;
	char *out = lwm2_json_shorten_numbers(text, text + strlen(text), 6, &len);
	json_object *parsed = out ? json_tokener_parse(out) : NULL;

	is_str(out ? out : "(null)", want, "shortened numbers: derived values at 6 digits");
	is_int((long long)len, (long long)strlen(want), "shortened numbers: the length");
	ok(parsed && json_object_get_int64(json_object_object_get(parsed, "b")) == 33554432,
	   "shortened numbers: still JSON, the integer exact");
	json_object_put(parsed);
	free(out);

	/* past a double's range: as written, never "inf" */
	out = lwm2_json_shorten_numbers(past, past + strlen(past), 6, &len);
	is_str(out ? out : "(null)", past, "shortened numbers: past range as written");
	free(out);
}

int main(void)
{
	spans_end();
	spans_as_bytewise();
	members();
	member_index();
	index_end();
	number_literals();
	shortened_numbers();
	return done_testing();
}
