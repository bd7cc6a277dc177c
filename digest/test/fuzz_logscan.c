/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the log reader of `lwm2 digest --file`, `lwm2 stats`
 * and `lwm2 diff`: the bounded line reader, the text walkers that pick
 * members out of a line without parsing it, the scope read from text, and
 * the time parser of -S/-E.  Log files are anyone's input to the command.
 */
#include "digest_internal.h"
#include "logscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lwm2_lines lr = {0};
	char *copy = malloc(size + 1), *line;
	int64_t t;
	long n;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	/* The time parser takes a NUL-terminated argument. */
	if (size < 64)
		lwm2_parse_time(copy, &t);
	lr.f = fmemopen(copy, size ? size : 1, "r");
	while (lr.f && (n = lwm2_lines_next(&lr, &line)) != -1) {
		const char *end, *d, *sc;
		struct lwm2_scope s;

		if (n < 0)
			continue;
		end = line + n;
		lwm2_json_span(line, end);
		if ((d = lwm2_json_member(line, end, "digest"))) {
			const char *dend = lwm2_json_span(d, end);

			if (dend && (sc = lwm2_json_member(d, dend, "scope")))
				lwm2_scope_from_text(&s, sc, dend, 4);
		}
		lwm2_scope_from_text(&s, line, end, 0);
	}
	if (lr.f)
		fclose(lr.f);
	lwm2_lines_free(&lr);
	free(copy);
	return 0;
}
