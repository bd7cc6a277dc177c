/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CSV fields as RFC 4180 writes them, and a stream that fails. */
#include "csv.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>

static const struct {
	const char *in, *out;
} cases[] = {
    {"plain", "plain"},   {"", ""},
    {"a,b", "\"a,b\""},   {"say \"hi\"", "\"say \"\"hi\"\"\""},
    {"\"", "\"\"\"\""},   {"two\nlines", "\"two\nlines\""},
    {"cr\r", "\"cr\r\""}, {"semi;colon|pipe", "semi;colon|pipe"},
};

int main(void)
{
	FILE *f;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		int rc;

		if (!(f = open_memstream(&buf, &len)))
			return 2;
		rc = lwm2_csv_field(f, cases[i].in);
		fclose(f);
		ok(rc == 0 && buf && !strcmp(buf, cases[i].out), "field %zu: [%s] as [%s]", i,
		   cases[i].in, cases[i].out);
		if (rc || !buf || strcmp(buf, cases[i].out))
			diag("  got [%s]", buf ? buf : "(null)");
		free(buf);
	}
	/* an unbuffered stream on /dev/full fails at the first byte */
	if ((f = fopen("/dev/full", "w"))) {
		setvbuf(f, NULL, _IONBF, 0);
		ok(lwm2_csv_field(f, "plain") == -1, "a failing stream: -1 for a plain field");
		ok(lwm2_csv_field(f, "a,b") == -1, "a failing stream: -1 for a quoted field");
		fclose(f);
	} else {
		skip("no /dev/full");
		skip("no /dev/full");
	}
	return done_testing();
}
