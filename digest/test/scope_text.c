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
	return done_testing();
}
