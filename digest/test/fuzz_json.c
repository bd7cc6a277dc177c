/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for the JSON readers: digests (AdminComment, log lines)
 * through lwm2_digest_parse and the renderer, and node records through
 * validation and the job digest builder.  The first byte picks the path.
 */
#include "digest_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	char err[256];
	json_object *o;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (size < 1)
		return 0;
	if (data[0] & 1) {
		struct lwm2_render_opts ro = {.steps = 1};
		o = lwm2_digest_parse((const char *)data + 1, size - 1, err, sizeof(err));
		if (o) {
			char *c;
			lwm2_digest_render(o, devnull, &ro);
			c = lwm2_job_digest_compact(o, 0);
			if (c) {
				json_object *back =
				    lwm2_digest_parse(c, strlen(c), err, sizeof(err));
				if (!back)
					abort(); /* a compact form we made must parse */
				json_object_put(back);
			}
			free(c);
			json_object_put(o);
		}
	} else {
		json_tokener *tok = json_tokener_new_ex(64);
		o = json_tokener_parse_ex(tok, (const char *)data + 1, (int)(size - 1));
		json_tokener_free(tok);
		if (o && lwm2_node_validate(o, err, sizeof(err)) == 0) {
			struct lwm2_job_meta meta = {.job_id = 1, .node_count = 1};
			json_object *d = lwm2_job_digest_build(&meta, &o, 1);
			if (!d || lwm2_digest_validate(d, err, sizeof(err)) != 0)
				abort(); /* a digest we built must validate */
			lwm2_digest_render(d, devnull, NULL);
			json_object_put(d);
		}
		json_object_put(o);
	}
	return 0;
}
