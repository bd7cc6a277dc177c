/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The LWM2 part of AdminComment: replaced, never anything else touched. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_jobcomp.h"
#include "tap.h"

static const struct {
	const char *old, *part, *want, *what;
} cases[] = {
    {NULL, "LWM2:{\"a\":1}", "LWM2:{\"a\":1}", "empty field gets the part"},
    {"", "LWM2:{\"a\":1}", "LWM2:{\"a\":1}", "empty string gets the part"},
    {"JS1:H4sIAAAA", "LWM2:{\"a\":1}", "JS1:H4sIAAAA LWM2:{\"a\":1}",
     "jobstats' part kept, ours after it"},
    {"JS1:H4sIAAAA LWM2:{\"a\":0}", "LWM2:{\"a\":1}", "JS1:H4sIAAAA LWM2:{\"a\":1}",
     "our old part replaced"},
    {"LWM2:{\"a\":0,\"s\":\"x } y\"} site note", "LWM2:{\"a\":1}", "site note LWM2:{\"a\":1}",
     "text behind our part kept, braces in strings honoured"},
    {"LWM2:{\"a\":0", "LWM2:{\"a\":1}", "LWM2:{\"a\":1}",
     "a part cut by the database is replaced whole"},
    {"keep LWM2:notjson", "LWM2:{\"a\":1}", "keep LWM2:notjson LWM2:{\"a\":1}",
     "\"LWM2:\" not followed by an object is not ours"},
    {"xLWM2:{\"a\":0}", "LWM2:{\"a\":1}", "xLWM2:{\"a\":0} LWM2:{\"a\":1}",
     "a marker inside a word is not ours"},
    {"JS1:abc LWM2:{\"a\":0}", NULL, "JS1:abc", "NULL part removes ours only"},
    {"quote ' and back\\slash", "LWM2:{\"p\":\"a\\\\b\"}",
     "quote ' and back\\slash LWM2:{\"p\":\"a\\\\b\"}", "quotes and backslashes kept exactly"},
};

int main(void)
{
	size_t i, off, len;
	char *s, big[70000];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = lwm2_jc_comment_merge(cases[i].old, cases[i].part, 65535);
		is_str(s, cases[i].want, "%s", cases[i].what);
		free(s);
	}

	ok(lwm2_jc_comment_find("a LWM2:{\"x\":[1,2]} b", &off, &len) == 0 && off == 2 &&
	       len == strlen("LWM2:{\"x\":[1,2]}"),
	   "find gives offset and length of the part");
	ok(lwm2_jc_comment_find("JS1:abc", &off, &len) < 0, "find: no part");

	memset(big, 'x', 60000);
	big[60000] = '\0';
	errno = 0;
	s = lwm2_jc_comment_merge(big, "LWM2:{\"pad\":\"................\"}", 60010);
	ok(!s && errno == E2BIG, "no room: E2BIG, nothing cut");
	free(s);
	s = lwm2_jc_comment_merge(big, "LWM2:{}", 65535);
	ok(s && strlen(s) == 60000 + 1 + 7, "room: kept whole");
	free(s);
	return done_testing();
}
