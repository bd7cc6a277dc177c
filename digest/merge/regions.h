/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The program's named regions over the processes of a job (the digest's
 * "regions", lwm2_view(3)): each name's calls, and its time and share of
 * the process's wall time over the processes that entered it, with where
 * the least and the most are.
 */
#ifndef LWM2_REGIONS_H
#define LWM2_REGIONS_H

#include <stddef.h>
#include <stdint.h>

#include "jsonutil.h"
#include "stat.h"

struct lwm2_region_acc;

struct lwm2_region_set {
	struct lwm2_region_acc *v; /* by first appearance */
	size_t n, cap;
	uint32_t *slot; /* open addressing over v, index + 1; 0: free */
	size_t nslot;
	uint64_t folded; /* names folded: the most of a process, and those beyond the set */
	uint64_t other_calls;
	double other_seconds;
};

/* A process entry of a node record ("regions", "regions_folded",
 * "regions_other") at w into s; wall_s its wall time (0: unknown, no
 * share).  -1 out of memory. */
int lwm2_regions_add_proc(struct lwm2_region_set *s, json_object *proc, const struct lwm2_where *w,
                          double wall_s);

/* The digest's "regions", or NULL where no process named any. */
json_object *lwm2_regions_json(const struct lwm2_region_set *s);

void lwm2_regions_free(struct lwm2_region_set *s);

#endif /* LWM2_REGIONS_H */
