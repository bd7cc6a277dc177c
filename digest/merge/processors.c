/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The job's processors: its nodes grouped by the processor each node
 * record names ("cpu", written by slurmstepd), one entry per kind with
 * the number of distinct nodes and the clock measured on them, most
 * nodes first.  A job on one partition has one entry; a job across
 * partitions of different hardware has one per kind, at most
 * PROCESSORS_MAX (the rest's nodes are not listed).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "digest_internal.h"
#include "lwm2_keys.h"
#include "processors.h"

#define PROCESSORS_MAX 8
#define NODES_MAX      65536 /* distinct node names looked at */

struct kind {
	const char *model;
	int64_t sockets, cores, threads;
	double nominal, measured_sum;
	uint64_t measured_n, nodes;
};

struct seen {
	const char *node;
	size_t kind;
};

static int cmp_seen(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

static int cmp_kind(const void *a, const void *b)
{
	const struct kind *x = a, *y = b;

	if (x->nodes != y->nodes)
		return x->nodes < y->nodes ? 1 : -1;
	return strcmp(x->model, y->model);
}

static bool same(const struct kind *k, const char *model, int64_t s, int64_t c, int64_t t,
                 double nominal)
{
	return !strcmp(k->model, model) && k->sockets == s && k->cores == c && k->threads == t &&
	       fabs(k->nominal - nominal) < 0.5;
}

json_object *lwm2_processors_json(json_object *const *nodes, size_t n)
{
	struct kind kinds[PROCESSORS_MAX];
	struct seen *seen = NULL;
	size_t nkinds = 0, nseen = 0;
	json_object *a;

	for (size_t i = 0; i < n; i++) {
		json_object *cpu =
		    nodes[i] ? ju_get(nodes[i], LWM2_KEY_CPU, json_type_object) : NULL;
		const char *model = cpu ? ju_str(cpu, LWM2_KEY_MODEL) : NULL;
		const char *node = nodes[i] ? ju_str(nodes[i], LWM2_KEY_NODE) : NULL;
		int64_t s = cpu ? ju_int_or(cpu, LWM2_KEY_SOCKETS, 0) : 0,
		        c = cpu ? ju_int_or(cpu, LWM2_KEY_CORES_PER_SOCKET, 0) : 0,
		        t = cpu ? ju_int_or(cpu, LWM2_KEY_THREADS_PER_CORE, 0) : 0;
		double nominal = 0, measured = 0;
		size_t k;

		if (!model || !*model || !node || s <= 0 || c <= 0 || t <= 0)
			continue;
		if (!ju_num(cpu, LWM2_KEY_MHZ_NOMINAL, &nominal) || !(nominal > 0))
			nominal = 0;
		for (k = 0; k < nkinds && !same(&kinds[k], model, s, c, t, nominal); k++)
			;
		if (k == nkinds) {
			if (nkinds == PROCESSORS_MAX)
				continue;
			kinds[nkinds++] = (struct kind){model, s, c, t, nominal, 0, 0, 0};
		}
		if (ju_num(cpu, LWM2_KEY_MHZ_MEASURED, &measured) && measured > 0) {
			kinds[k].measured_sum += measured;
			kinds[k].measured_n++;
		}
		/* a node counts once per kind, whatever its steps */
		if (nseen < NODES_MAX) {
			if (!(nseen % 64)) {
				struct seen *g = realloc(seen, (nseen + 64) * sizeof(*seen));
				if (!g) {
					free(seen);
					return NULL;
				}
				seen = g;
			}
			seen[nseen++] = (struct seen){node, k};
		}
	}
	if (!nkinds) {
		free(seen);
		return NULL;
	}
	if (nseen)
		qsort(seen, nseen, sizeof(*seen), cmp_seen);
	for (size_t i = 0; i < nseen; i++)
		if (!i || cmp_seen(&seen[i], &seen[i - 1]))
			kinds[seen[i].kind].nodes++;
	free(seen);
	qsort(kinds, nkinds, sizeof(*kinds), cmp_kind);
	a = json_object_new_array();
	for (size_t k = 0; k < nkinds; k++) {
		json_object *e = json_object_new_object();

		ju_add(e, LWM2_KEY_MODEL, json_object_new_string(kinds[k].model));
		ju_add(e, LWM2_KEY_SOCKETS, json_object_new_int64(kinds[k].sockets));
		ju_add(e, LWM2_KEY_CORES_PER_SOCKET, json_object_new_int64(kinds[k].cores));
		ju_add(e, LWM2_KEY_THREADS_PER_CORE, json_object_new_int64(kinds[k].threads));
		if (kinds[k].nominal > 0)
			ju_add(e, LWM2_KEY_MHZ_NOMINAL, ju_double(kinds[k].nominal));
		if (kinds[k].measured_n)
			ju_add(e, LWM2_KEY_MHZ_MEASURED,
			       ju_double(kinds[k].measured_sum / (double)kinds[k].measured_n));
		ju_add(e, LWM2_KEY_NODE_COUNT_CPU, ju_u64(kinds[k].nodes));
		json_object_array_add(a, e);
	}
	return a;
}

const char *lwm2_processors_main(json_object *d)
{
	json_object *a = ju_get(d, LWM2_KEY_PROCESSORS, json_type_array);
	const char *m = a && json_object_array_length(a)
	                    ? ju_str(json_object_array_get_idx(a, 0), LWM2_KEY_MODEL)
	                    : NULL;

	return m ? m : "";
}

void lwm2_processors_render(json_object *d, FILE *out)
{
	json_object *a = ju_get(d, LWM2_KEY_PROCESSORS, json_type_array);

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		json_object *e = json_object_array_get_idx(a, i);
		const char *model = ju_str(e, LWM2_KEY_MODEL);
		int64_t s = ju_int_or(e, LWM2_KEY_SOCKETS, 0),
		        c = ju_int_or(e, LWM2_KEY_CORES_PER_SOCKET, 0),
		        t = ju_int_or(e, LWM2_KEY_THREADS_PER_CORE, 0),
		        nodes = ju_int_or(e, LWM2_KEY_NODE_COUNT_CPU, 0);
		double nominal = 0, measured = 0;

		if (!model)
			continue;
		fprintf(out,
		        "Processor %s: %" PRId64 " socket(s) x %" PRId64 " core(s) x %" PRId64
		        " thread(s)",
		        model, s, c, t);
		if (ju_num(e, LWM2_KEY_MHZ_NOMINAL, &nominal) && nominal > 0)
			fprintf(out, ", nominal %.2f GHz", nominal / 1000.0);
		if (ju_num(e, LWM2_KEY_MHZ_MEASURED, &measured) && measured > 0)
			fprintf(out, ", %.2f GHz measured at step end", measured / 1000.0);
		fprintf(out, "; %" PRId64 " node(s)\n", nodes);
	}
}
