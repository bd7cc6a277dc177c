/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A set of strings by open addressing (see strset.h). */
#include "strset.h"

#include "strhash.h"

#include <stdlib.h>
#include <string.h>

/* The slot of s in name[cap]: where it is, or the free one it goes to. */
static size_t slot_of(const char *const *name, size_t cap, const char *s)
{
	size_t i = (size_t)lwm2_strhash(s) & (cap - 1);

	while (name[i] && strcmp(name[i], s))
		i = (i + 1) & (cap - 1);
	return i;
}

static int grow(struct lwm2_strset *set)
{
	size_t cap = set->cap ? 2 * set->cap : 16;
	const char **name = calloc(cap, sizeof(*name));
	size_t *index = calloc(cap, sizeof(*index));

	if (!name || !index) {
		free(name);
		free(index);
		return -1;
	}
	for (size_t k = 0; k < set->cap; k++)
		if (set->name[k]) {
			size_t i = slot_of(name, cap, set->name[k]);

			name[i] = set->name[k];
			index[i] = set->index[k];
		}
	free(set->name);
	free(set->index);
	set->name = name;
	set->index = index;
	set->cap = cap;
	return 0;
}

int lwm2_strset_add(struct lwm2_strset *set, const char *s, size_t *index)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap && grow(set) != 0)
		return -1;
	i = slot_of(set->name, set->cap, s);
	if (set->name[i]) {
		if (index)
			*index = set->index[i];
		return 0;
	}
	set->name[i] = s;
	set->index[i] = set->n++;
	if (index)
		*index = set->index[i];
	return 1;
}

void lwm2_strset_free(struct lwm2_strset *set)
{
	free(set->name);
	free(set->index);
	memset(set, 0, sizeof(*set));
}
