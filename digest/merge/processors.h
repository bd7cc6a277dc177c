/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job's processors (processors.c; not installed). */
#ifndef LWM2_PROCESSORS_H
#define LWM2_PROCESSORS_H

#include <stdio.h>

#include <json-c/json.h>

/* The digest's "processors" from the node records' "cpu" (NULL: no record
 * names its processor, as those of nodes older than this). */
json_object *lwm2_processors_json(json_object *const *nodes, size_t n);

/* Its lines of the text digest; nothing where the digest has none. */
void lwm2_processors_render(json_object *digest, FILE *out);

/* The processor of most of the job's nodes ("" where none is known): what
 * lwm2 stats --by cpu groups by. */
const char *lwm2_processors_main(json_object *digest);

#endif
