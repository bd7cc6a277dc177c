/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The program's named regions over the processes of a job (regions.h).
 *
 * A process's record keeps its busiest regions (preload/region.c); the
 * node record has them as "regions": [[name, calls, ns], ...] with the
 * folded rest as "regions_folded" (names) and "regions_other" ([calls,
 * ns]).  Here each name's figures are summed over the processes, its time
 * and share taken as statistics over the processes that entered it (a
 * rank that never entered a region is not its minimum: the region is not
 * its work), and the digest keeps the busiest DIGEST_REGIONS_MAX names by
 * their time over the job, the rest folded as the records fold theirs.
 */
#include "regions.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "lwm2_keys.h"
#include "strhash.h"

/* Names told apart over a job; a name beyond them is folded. */
#define REGION_NAMES_MAX 1024
/* Names a digest keeps. */
#define DIGEST_REGIONS_MAX 64

struct lwm2_region_acc {
	const char *name; /* points into the node record */
	uint64_t calls;
	double seconds; /* over the job */
	struct lwm2_stat time, share;
};

static struct lwm2_region_acc *region_of(struct lwm2_region_set *s, const char *name)
{
	size_t mask, i;

	if (!s->slot) {
		s->nslot = 2 * REGION_NAMES_MAX;
		if (!(s->slot = calloc(s->nslot, sizeof(*s->slot))))
			return NULL;
	}
	mask = s->nslot - 1;
	for (i = (size_t)lwm2_strhash(name) & mask; s->slot[i]; i = (i + 1) & mask)
		if (strcmp(s->v[s->slot[i] - 1].name, name) == 0)
			return &s->v[s->slot[i] - 1];
	if (s->n >= REGION_NAMES_MAX || LWM2_GROW(s->v, s->n, s->cap, 16) < 0)
		return NULL;
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].name = name;
	s->slot[i] = (uint32_t)++s->n;
	return &s->v[s->n - 1];
}

int lwm2_regions_add_proc(struct lwm2_region_set *s, json_object *proc, const struct lwm2_where *w,
                          double wall_s)
{
	json_object *regions = ju_get(proc, "regions", json_type_array);
	json_object *other = ju_get(proc, "regions_other", json_type_array);
	int64_t folded = ju_int_or(proc, "regions_folded", 0);

	for (size_t i = 0; regions && i < json_object_array_length(regions); i++) {
		json_object *e = json_object_array_get_idx(regions, i);
		const char *name;
		int64_t calls, ns;
		struct lwm2_region_acc *r;
		double sec;

		if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 3 ||
		    !(name = json_object_get_string(json_object_array_get_idx(e, 0))) || !name[0])
			continue;
		calls = json_object_get_int64(json_object_array_get_idx(e, 1));
		ns = json_object_get_int64(json_object_array_get_idx(e, 2));
		if (calls < 0 || ns < 0)
			continue;
		sec = (double)ns / 1e9;
		if (!(r = region_of(s, name))) {
			if (s->n < REGION_NAMES_MAX)
				return -1;
			s->folded++;
			s->other_calls += (uint64_t)calls;
			s->other_seconds += sec;
			continue;
		}
		r->calls += (uint64_t)calls;
		r->seconds += sec;
		lwm2_stat_add_value(&r->time, sec, w);
		if (wall_s > 0)
			lwm2_stat_add_value(&r->share, 100.0 * sec / wall_s, w);
	}
	if (folded > 0 && (uint64_t)folded > s->folded)
		s->folded = (uint64_t)folded;
	if (other && json_object_array_length(other) == 2) {
		int64_t calls = json_object_get_int64(json_object_array_get_idx(other, 0));
		int64_t ns = json_object_get_int64(json_object_array_get_idx(other, 1));

		if (calls > 0)
			s->other_calls += (uint64_t)calls;
		if (ns > 0)
			s->other_seconds += (double)ns / 1e9;
	}
	return 0;
}

/* Busiest first, then by name: the same digest from the same records. */
static int cmp_busiest(const void *a, const void *b)
{
	const struct lwm2_region_acc *x = *(const struct lwm2_region_acc *const *)a;
	const struct lwm2_region_acc *y = *(const struct lwm2_region_acc *const *)b;

	if (x->seconds != y->seconds)
		return x->seconds > y->seconds ? -1 : 1;
	return strcmp(x->name, y->name);
}

json_object *lwm2_regions_json(const struct lwm2_region_set *s)
{
	const struct lwm2_region_acc **v;
	json_object *o, *names;
	uint64_t folded = s->folded, other_calls = s->other_calls;
	double other_seconds = s->other_seconds;

	if (!s->n && !s->folded)
		return NULL;
	if (!(v = malloc((s->n ? s->n : 1) * sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->v[i];
	qsort(v, s->n, sizeof(*v), cmp_busiest);
	names = json_object_new_array();
	for (size_t i = 0; i < s->n; i++) {
		json_object *e;

		if (i >= DIGEST_REGIONS_MAX) {
			folded++;
			other_calls += v[i]->calls;
			other_seconds += v[i]->seconds;
			continue;
		}
		e = json_object_new_object();
		ju_add(e, LWM2_KEY_NAME, json_object_new_string(v[i]->name));
		ju_add(e, LWM2_KEY_CALLS, ju_u64(v[i]->calls));
		ju_add(e, LWM2_KEY_RANKS, ju_u64(v[i]->time.n));
		ju_add(e, LWM2_KEY_SECONDS, lwm2_stat_json(&v[i]->time));
		if (v[i]->share.n)
			ju_add(e, LWM2_KEY_SHARE, lwm2_stat_json(&v[i]->share));
		json_object_array_add(names, e);
	}
	free(v);
	o = json_object_new_object();
	ju_add(o, LWM2_KEY_NAMES, names);
	if (folded) {
		json_object *other = json_object_new_object();

		ju_add(o, LWM2_KEY_FOLDED, ju_u64(folded));
		ju_add(other, LWM2_KEY_CALLS, ju_u64(other_calls));
		ju_add(other, LWM2_KEY_SECONDS, ju_double(other_seconds));
		ju_add(o, LWM2_KEY_OTHER, other);
	}
	return o;
}

void lwm2_regions_free(struct lwm2_region_set *s)
{
	free(s->v);
	free(s->slot);
	memset(s, 0, sizeof(*s));
}
