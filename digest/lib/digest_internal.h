/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Declarations shared by the digest library's files (not installed). */
#ifndef LWM2_DIGEST_INTERNAL_H
#define LWM2_DIGEST_INTERNAL_H

#include "jsonutil.h"
#include "lwm2_digest.h"

/* Counter arrays of a node record name their order in "counters"; map[i]
 * is this build's index of the i-th name, -1 when unknown here. */
#define LWM2_MAP_MAX 256
int lwm2_counter_map(json_object *node, int map[], size_t maxn, size_t *n);

/* The metric inputs of one process entry of a node record. */
int lwm2_proc_from_json(json_object *proc, const int *map, size_t nmap,
                        struct lwm2_proc_values *pv);

/* The per-process table of the full digest ("ranks", job_ranks.c). */
json_object *lwm2_job_digest_ranks(json_object *const *nodes, size_t n);

#endif /* LWM2_DIGEST_INTERNAL_H */
