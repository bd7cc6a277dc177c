/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2's own cost in a job (owncost.c; not installed). */
#ifndef LWM2_OWNCOST_H
#define LWM2_OWNCOST_H

#include <stdio.h>

#include <json-c/json.h>

/* The job digest's "lwm2_cost" from its node records (NULL: no process
 * was measured). */
json_object *lwm2_own_cost_json(json_object *const *nodes, size_t n);

/* Its one line of the text digest; nothing where the digest has none. */
void lwm2_own_cost_render(json_object *digest, FILE *out);

#endif
