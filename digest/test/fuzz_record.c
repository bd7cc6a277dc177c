/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target for what reads rank records: the slot picker and
 * validator, then everything a valid-looking record flows into (the
 * one-process renderer, the JSON dump, the node merge).  Rank records are
 * written by users' processes, so any byte sequence must be handled.
 */
#include "digest_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int devnull = -1;
	char err[256];
	const struct lwm2_rank_record *r;
	struct lwm2_rank_record *copy;
	struct lwm2_node_ident id = {.cluster = "c", .node = "n"};
	json_object *o;

	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY);
	/* A single slot as well as a whole file. */
	lwm2_record_validate(data, size, err, sizeof(err));
	r = lwm2_record_pick(data, size, err, sizeof(err));
	if (!r)
		return 0;
	/* The reader hands out an aligned copy; so do we. */
	copy = lwm2_record_upconvert(r);
	lwm2_render_rank(copy, devnull);
	o = lwm2_record_to_json(copy);
	json_object_to_json_string(o);
	json_object_put(o);
	o = lwm2_node_merge_records(&id, &copy, NULL, 1, NULL, NULL);
	if (lwm2_node_validate(o, err, sizeof(err)) != 0)
		abort(); /* our own output must always validate */
	json_object_put(o);
	free(copy);
	return 0;
}
