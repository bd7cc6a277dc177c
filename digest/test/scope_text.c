/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fast text reader of a scope (lwm2_scope_from_text) reads what the
 * json-c reader (lwm2_scope_from_json) reads, numbers at the edges of
 * json-c's included: a count that is not an integer is no count, an
 * integer past 64 bits is clamped as json-c clamps it.  test/fuzz_agree.c
 * checks the same on any input; these are the cases it found.
 */
#include "digest_internal.h"
#include "logscan.h"
#include "lwm2_keys.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *what, *text;
	uint64_t processes, n; /* n of duration */
	double max;            /* of duration, when n */
} cases[] = {
    {"plain",
     "{\"processes\":3,\"metrics\":{\"duration\":{\"n\":3,\"min\":1,\"avg\":2,\"max\":4}}}", 3, 3,
     4},
    {"a count with a fraction is no count",
     "{\"processes\":1.5,\"metrics\":{\"duration\":{\"n\":3,\"min\":1,\"avg\":2,\"max\":4}}}", 0, 3,
     4},
    {"a count with an exponent is no count", "{\"processes\":1e2}", 0, 0, 0},
    {"a count past int64_t is clamped", "{\"processes\":18446744073709551616}", INT64_MAX, 0, 0},
    {"n with a fraction: the metric is not read",
     "{\"metrics\":{\"duration\":{\"n\":3.0,\"min\":1,\"avg\":2,\"max\":4}}}", 0, 0, 0},
    {"a maximum past 64 bits is clamped",
     "{\"metrics\":{\"duration\":{\"n\":1,\"min\":1,\"avg\":2,\"max\":"
     "188888888888888888888888888888888888888888}}}",
     0, 1, 18446744073709551615.0},
    {"a maximum in exponent form is read whole",
     "{\"metrics\":{\"duration\":{\"n\":1,\"min\":1,\"avg\":2,\"max\":1.5e30}}}", 0, 1, 1.5e30},
};

/* A figure's literal read as strtod reads it, bit for bit, over literals
 * around the edges of a decimal read without strtod (digits past 2^53,
 * powers of ten past 10^22, signs, zeros, exponents) and random ones. */
static void figures_as_strtod(int k)
{
	static const char *const edges[] = {
	    "0.5",
	    "-0.0",
	    "0.000165",
	    "2300.203125",
	    "9007199254740991.5",
	    "900719925474099.1",
	    "9007199254740992.5",
	    "0.0014208333333333332",
	    "1e22",
	    "1e23",
	    "1.5e-22",
	    "1.5e-23",
	    "4.9e-324",
	    "1.7976931348623157e308",
	    "123.456E+2",
	    "7E-0",
	    "0.10000000000000000555",
	    "000.25",
	};
	char text[160], lit[64];
	unsigned seed = 7, differ = 0, n = 0;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]) + 20000; i++) {
		struct lwm2_scope s;
		double want;
		const char *l = lit;

		if (i < sizeof(edges) / sizeof(edges[0])) {
			l = edges[i];
		} else {
			/* up to 18 digits, a point somewhere, an exponent at times */
			size_t len = 0, digits;

			seed = seed * 1103515245u + 12345u;
			digits = 1 + (seed >> 16) % 18;
			if (seed & 1)
				lit[len++] = '-';
			for (size_t d = 0; d < digits; d++) {
				seed = seed * 1103515245u + 12345u;
				lit[len++] = (char)('0' + (seed >> 16) % 10);
				if (d == (seed >> 8) % digits && d + 1 < digits)
					lit[len++] = '.';
			}
			if ((seed >> 4) % 4 == 0)
				len += (size_t)snprintf(lit + len, sizeof(lit) - len, "e%d",
				                        (int)((seed >> 20) % 61) - 30);
			lit[len] = '\0';
		}
		if (!strpbrk(l, ".eE"))
			continue; /* an integer: json-c's int64_t, as the cases above */
		n++;
		{
			/* put together by hand: a sanitized build's format
			 * check takes l for possibly null */
			static const char head[] =
			    "{\"metrics\":{\"duration\":{\"n\":1,\"min\":1,\"avg\":1,\"max\":";
			size_t hl = sizeof(head) - 1, ll = strlen(l);

			if (hl + ll + sizeof("}}}") > sizeof(text))
				continue;
			memcpy(text, head, hl);
			memcpy(text + hl, l, ll);
			memcpy(text + hl + ll, "}}}", sizeof("}}}"));
		}
		want = strtod(l, NULL);
		if (lwm2_scope_from_text(&s, text, text + strlen(text), 0) < 0 || !s.stat[k].n ||
		    memcmp(&s.stat[k].max, &want, sizeof(want)) != 0) {
			if (differ++ < 5)
				diag("%s read as %.17g, strtod reads %.17g", l, s.stat[k].max,
				     want);
		}
	}
	ok(differ == 0, "figures read as strtod reads them, bit for bit: %u of %u differ", differ,
	   n);
}

/* lwm2_scope_from_text_member: the member's value found on the walk,
 * after the metrics, past a string that holds a brace, and none where
 * the scope has no such member. */
static void member_on_the_walk(int k)
{
	static const char after[] =
	    "{\"processes\":2,\"metrics\":{\"duration\":{\"n\":2,"
	    "\"min\":1,\"avg\":2,\"max\":3}},\"executables\":{\"distinct\":1}}";
	/* a string that holds what would end the object */
	static const char misleading[] = "{\"title\":\"}\",\"metrics\":{\"duration\":{\"n\":1,"
	                                 "\"min\":1,\"avg\":1,\"max\":1}},\"executables\":[7]}";
	static const char none[] = "{\"processes\":1}";
	struct lwm2_scope s;
	const char *v = NULL;

	ok(lwm2_scope_from_text_member(&s, after, after + strlen(after), 0, LWM2_KEY_EXECUTABLES,
	                               &v) == 0 &&
	       v && !strncmp(v, "{\"distinct\":1}", 14) && s.processes == 2 && s.stat[k].n == 2,
	   "a member after the metrics found on the same walk, the scope read as without it");
	v = NULL;
	ok(lwm2_scope_from_text_member(&s, misleading, misleading + strlen(misleading), 0,
	                               LWM2_KEY_EXECUTABLES, &v) == 0 &&
	       v && *v == '[' && s.stat[k].n == 1,
	   "  and past a string that holds a brace");
	v = after;
	ok(lwm2_scope_from_text_member(&s, none, none + strlen(none), 0, LWM2_KEY_EXECUTABLES,
	                               &v) == 0 &&
	       !v,
	   "  none where the scope has no such member");
}

/* A metric's key with a NUL in it, after a metric's whole name: taken as
 * that name, as a name looked up as a C string always was, and nothing
 * read past the table's name (the sanitizers' build checks that). */
static void key_with_nul(int k)
{
	static const char text[] = "{\"metrics\":{\"duration\0x\":{\"n\":1,\"min\":1,\"avg\":"
	                           "1,\"max\":1}}}";
	struct lwm2_scope s;

	ok(lwm2_scope_from_text(&s, text, text + sizeof(text) - 1, 0) == 0 && s.stat[k].n == 1,
	   "a key with a NUL after a metric's name: read as the name before it");
}

int main(void)
{
	int k = lwm2_metric_index("duration");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *t = cases[i].text;
		json_object *o = json_tokener_parse(t);
		struct lwm2_scope j, s;
		int rc = lwm2_scope_from_text(&s, t, t + strlen(t), 0);

		lwm2_scope_from_json(&j, o, NULL, 0);
		ok(rc == 0 && s.processes == cases[i].processes && s.stat[k].n == cases[i].n &&
		       (!cases[i].n || s.stat[k].max == cases[i].max),
		   "text reader, %s", cases[i].what);
		ok(j.processes == s.processes && j.stat[k].n == s.stat[k].n &&
		       (!j.stat[k].n ||
		        (j.stat[k].min == s.stat[k].min && j.stat[k].avg == s.stat[k].avg &&
		         j.stat[k].max == s.stat[k].max)),
		   "json-c reader alike, %s", cases[i].what);
		json_object_put(o);
	}
	figures_as_strtod(k);
	member_on_the_walk(k);
	key_with_nul(k);
	return done_testing();
}
