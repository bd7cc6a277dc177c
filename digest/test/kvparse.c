/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "Key = value" lines: trimming, comments both ways, lines without '=',
 * and yes/no values. */
#include "kvparse.h"
#include "tap.h"

#include <errno.h>

static const struct {
	const char *line;
	bool hash_anywhere;
	int rc;
	const char *key, *val;
} lines[] = {
    {"  Key = value  \n", true, 1, "Key", "value"},
    {"Key=", true, 1, "Key", ""},
    {"Key = a = b", true, 1, "Key", "a = b"},
    {"Key = v # note", true, 1, "Key", "v"},
    {"password = pa#ss", false, 1, "password", "pa#ss"},
    {"# all comment", false, 0, NULL, NULL},
    {"   # indented comment", false, 0, NULL, NULL},
    {"\t \n", true, 0, NULL, NULL},
    {"no equals sign  ", true, -1, "no equals sign", NULL},
    {"x # = hidden", true, -1, "x", NULL},
};

int main(void)
{
	char buf[128], *t, *key, *val;
	bool b;

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int rc;

		snprintf(buf, sizeof(buf), "%s", lines[i].line);
		key = val = NULL;
		rc = lwm2_kv_split(buf, lines[i].hash_anywhere, &key, &val);
		ok(rc == lines[i].rc && (!lines[i].key || (key && !strcmp(key, lines[i].key))) &&
		       (!lines[i].val || (val && !strcmp(val, lines[i].val))),
		   "line %zu: %d [%s] [%s]", i, lines[i].rc, lines[i].key ? lines[i].key : "",
		   lines[i].val ? lines[i].val : "");
	}
	snprintf(buf, sizeof(buf), " \t");
	t = lwm2_trim(buf);
	ok(*t == '\0', "trim: blanks only is empty");

	ok(lwm2_parse_bool("YES", &b) == 0 && b, "bool: YES");
	ok(lwm2_parse_bool("true", &b) == 0 && b, "bool: true");
	ok(lwm2_parse_bool("1", &b) == 0 && b, "bool: 1");
	ok(lwm2_parse_bool("No", &b) == 0 && !b, "bool: No");
	ok(lwm2_parse_bool("FALSE", &b) == 0 && !b, "bool: FALSE");
	ok(lwm2_parse_bool("0", &b) == 0 && !b, "bool: 0");
	b = true;
	errno = 0;
	ok(lwm2_parse_bool("on", &b) == -1 && errno == EINVAL && b,
	   "bool: on is refused, *out kept");
	ok(lwm2_parse_bool("", &b) == -1, "bool: empty is refused");
	return done_testing();
}
