/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A figure's statistics over the processes of a scope (stat.h). */
#include "stat.h"

#include <stdio.h>

#include "lwm2_keys.h"

void lwm2_stat_add(struct lwm2_stat *a, const struct lwm2_metric_value *v,
                   const struct lwm2_where *w)
{
	if (!v->valid) {
		if (!a->n && !a->reason[0])
			snprintf(a->reason, sizeof(a->reason), "%s", v->reason);
		return;
	}
	if (!a->n || v->value < a->min) {
		a->min = v->value;
		a->min_at = *w;
	}
	if (!a->n || v->value > a->max) {
		a->max = v->value;
		a->max_at = *w;
	}
	a->sum += v->value;
	a->n++;
}

/* [rank, node, pid, executable]: version 1 had the first two only. */
static json_object *where_json(const struct lwm2_where *w)
{
	json_object *a = json_object_new_array_ext(4);

	json_object_array_add(a, json_object_new_int(w->rank));
	json_object_array_add(a, json_object_new_string(w->node ? w->node : ""));
	json_object_array_add(a, json_object_new_int(w->pid));
	json_object_array_add(a, json_object_new_string(w->exe ? w->exe : ""));
	return a;
}

json_object *lwm2_stat_json(const struct lwm2_stat *a)
{
	json_object *e = json_object_new_object();

	ju_add(e, LWM2_KEY_MIN, ju_double(a->min));
	ju_add(e, LWM2_KEY_AVG, ju_double(a->sum / (double)a->n));
	ju_add(e, LWM2_KEY_MAX, ju_double(a->max));
	ju_add(e, LWM2_KEY_N, ju_u64(a->n));
	ju_add(e, LWM2_KEY_MIN_AT, where_json(&a->min_at));
	ju_add(e, LWM2_KEY_MAX_AT, where_json(&a->max_at));
	return e;
}
