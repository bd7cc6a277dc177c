/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A figure's statistics over the processes of a scope: n, min, avg, max,
 * and where the min and the max are (rank, node, pid, executable), as the
 * digest writes them (doc/digest-schema.md, a metric's statistics): the
 * metrics of each scope (job.c) and the named regions (regions.c).
 */
#ifndef LWM2_STAT_H
#define LWM2_STAT_H

#include <stdint.h>

#include "jsonutil.h"
#include "lwm2_render.h"

#define LWM2_STAT_REASON_MAX 160

/* Where a process is: host, pid and executable (rank where it has one). */
struct lwm2_where {
	int32_t rank, pid;
	const char *node, *exe; /* point into the node records */
};

struct lwm2_stat {
	uint64_t n;
	double sum, min, max;
	struct lwm2_where min_at, max_at;
	char reason[LWM2_STAT_REASON_MAX]; /* the first invalid value's, while n is 0 */
};

/* v of the process at w into a: a valid value counts, an invalid one's
 * reason is kept while none has counted. */
void lwm2_stat_add(struct lwm2_stat *a, const struct lwm2_metric_value *v,
                   const struct lwm2_where *w);

/* A valid value x of the process at w into a. */
static inline void lwm2_stat_add_value(struct lwm2_stat *a, double x, const struct lwm2_where *w)
{
	struct lwm2_metric_value v = {.value = x, .valid = true};

	lwm2_stat_add(a, &v, w);
}

/* {"min", "avg", "max", "n", "min_at", "max_at"} of a (n > 0). */
json_object *lwm2_stat_json(const struct lwm2_stat *a);

#endif /* LWM2_STAT_H */
