/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The counter roles' events gathered over processes and node records:
 * distinct events per role, "A|B" where they differ, bounded. */
#include "hwc_events.h"
#include "tap.h"

#include <string.h>

int main(void)
{
	struct lwm2_hwc_events acc = {0}, back = {0};
	char text[256], small[24];
	json_object *o, *again;

	lwm2_hwc_events_add_text(&acc, "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS");
	lwm2_hwc_events_add_text(&acc, "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS");
	lwm2_hwc_events_add_text(&acc, NULL);
	lwm2_hwc_events_add_text(&acc, "");
	lwm2_hwc_events_text(&acc, text, sizeof(text));
	is_str(text, "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS", "the same events twice: once");
	lwm2_hwc_events_add_text(&acc, "fp_ops=PAPI_FP_OPS llc_misses=perf::LLC-LOAD-MISSES");
	lwm2_hwc_events_text(&acc, text, sizeof(text));
	is_str(text,
	       "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS|PAPI_FP_OPS "
	       "llc_misses=perf::LLC-LOAD-MISSES",
	       "another node's event for a role: both, in the order seen");
	o = lwm2_hwc_events_json(&acc);
	is_str(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	       "{\"cycles\":\"PAPI_TOT_CYC\",\"fp_ops\":\"PAPI_FP_INS|PAPI_FP_OPS\","
	       "\"llc_misses\":\"perf::LLC-LOAD-MISSES\"}",
	       "as the node record's and the digest's object");
	lwm2_hwc_events_add_json(&back, o);
	lwm2_hwc_events_add_text(&back, "fp_ops=PAPI_FP_OPS");
	again = lwm2_hwc_events_json(&back);
	ok(json_object_equal(o, again),
	   "read back from the object, an event seen again adds nothing");
	json_object_put(again);
	lwm2_hwc_events_json_text(o, text, sizeof(text));
	ok(strstr(text, "fp_ops=PAPI_FP_INS|PAPI_FP_OPS") != NULL, "the object as a scope's text");
	lwm2_hwc_events_json_text(NULL, text, sizeof(text));
	is_str(text, "", "no object: no text");
	lwm2_hwc_events_text(&acc, small, sizeof(small));
	is_str(small, "cycles=PAPI_TOT_CYC", "a text cut before an item that does not fit");
	json_object_put(o);

	memset(&acc, 0, sizeof(acc));
	lwm2_hwc_events_add_text(&acc, "=x broken fp_ops= cycles=A|B|A x=y");
	lwm2_hwc_events_text(&acc, text, sizeof(text));
	is_str(text, "cycles=A|B x=y", "items without a role or an event are left out");
	o = json_tokener_parse("{\"fp_ops\":5,\"cycles\":\"C1\",\"a b\":\"x\"}");
	memset(&acc, 0, sizeof(acc));
	lwm2_hwc_events_add_json(&acc, o);
	lwm2_hwc_events_text(&acc, text, sizeof(text));
	ok(strstr(text, "cycles=C1") && !strstr(text, "fp_ops"),
	   "a value that is no string: left out (%s)", text);
	json_object_put(o);
	memset(&acc, 0, sizeof(acc));
	for (int i = 0; i < 40; i++) {
		char item[64];

		snprintf(item, sizeof(item), "role%d=EVENT_NUMBER_%d fp_ops=E%d", i, i, i);
		lwm2_hwc_events_add_text(&acc, item);
	}
	ok(acc.n == LWM2_HWC_EVENTS_ROLES, "at most %d roles kept (%zu)", LWM2_HWC_EVENTS_ROLES,
	   acc.n);
	ok(strlen(acc.r[1].events) < LWM2_HWC_EVENTS_EACH && strstr(acc.r[1].events, "E0|E1|"),
	   "a role's events bounded: %zu bytes", strlen(acc.r[1].events));
	return done_testing();
}
