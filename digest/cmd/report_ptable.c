/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A digest's per-process table ("ranks": one row per process, the
 * metrics by name) read into rows of metric values, for the report's
 * per-rank view and lwm2 ranks.
 */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hwc_events.h"
#include "jsonutil.h"
#include "lwm2_keys.h"
#include "lwm2_render.h"

bool rp_pvalid(const struct rp_prow *r, int m)
{
	return r->valid[m / 32] >> (m % 32) & 1;
}

void rp_ptable_load(struct rp_ptable *t, json_object *digest)
{
	json_object *ranks = ju_get(digest, LWM2_KEY_RANKS, json_type_object);
	json_object *cols = ju_get(ranks, LWM2_KEY_COLS, json_type_array);
	json_object *rows = ju_get(ranks, LWM2_KEY_ROWS, json_type_array);
	json_object *nodes = ju_get(ranks, LWM2_KEY_NODES, json_type_array);
	int map[64];
	size_t ncols, nr;

	memset(t, 0, sizeof(*t));
	lwm2_hwc_events_json_text(ju_get(digest, LWM2_KEY_COUNTER_EVENTS, json_type_object),
	                          t->hwc_events, sizeof(t->hwc_events));
	if (!cols || !rows || !nodes)
		return;
	ncols = json_object_array_length(cols);
	if (ncols > 64)
		ncols = 64;
	for (size_t i = 0; i < ncols; i++) {
		const char *c = json_object_get_string(json_object_array_get_idx(cols, i));
		map[i] = c ? lwm2_metric_index(c) : -1;
		if (c && !strcmp(c, "step"))
			map[i] = -2;
		else if (c && !strcmp(c, "node"))
			map[i] = -3;
		else if (c && !strcmp(c, "rank"))
			map[i] = -4;
		else if (c && !strcmp(c, "flags"))
			map[i] = -5;
	}
	t->nnodes = json_object_array_length(nodes);
	t->nodes = calloc(t->nnodes + 1, sizeof(*t->nodes));
	nr = json_object_array_length(rows);
	t->rows = calloc(nr + 1, sizeof(*t->rows));
	if (!t->nodes || !t->rows) {
		free(t->nodes);
		free(t->rows);
		memset(t, 0, sizeof(*t));
		return;
	}
	t->present = true;
	for (size_t i = 0; i < t->nnodes; i++)
		t->nodes[i] = json_object_get_string(json_object_array_get_idx(nodes, i));
	for (size_t i = 0; i < nr; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		struct rp_prow *p = &t->rows[t->n];

		if (!json_object_is_type(row, json_type_array))
			continue;
		memset(p, 0, sizeof(*p));
		p->node = -1;
		p->row = i;
		for (size_t c = 0; c < ncols && c < json_object_array_length(row); c++) {
			json_object *x = json_object_array_get_idx(row, c);
			if (!x)
				continue;
			if (map[c] >= 0) {
				p->v[map[c]] = json_object_get_double(x);
				if (isfinite(p->v[map[c]]))
					p->valid[map[c] / 32] |= 1u << (map[c] % 32);
			} else if (map[c] == -2) {
				p->step = json_object_get_int64(x);
			} else if (map[c] == -3) {
				p->node = json_object_get_int(x);
			} else if (map[c] == -4) {
				p->rank = json_object_get_int(x);
			} else if (map[c] == -5) {
				p->flags = json_object_get_int64(x);
			}
		}
		if (p->node < 0 || (size_t)p->node >= t->nnodes)
			continue;
		if (t->n && p->step != t->rows[0].step)
			t->multi_step = true;
		t->n++;
	}
}

void rp_ptable_free(struct rp_ptable *t)
{
	free(t->rows);
	free(t->nodes);
}

const char *rp_pnode(const struct rp_ptable *t, const struct rp_prow *r)
{
	return t->nodes[r->node] ? t->nodes[r->node] : "";
}
