/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A set of strings numbered in the order they were first added: open
 * addressing over lwm2_strhash, at most half full.  The strings are not
 * copied (they must outlive the set).  For the names a job digest counts
 * once per node record, where a list searched for each would be
 * quadratic (10,000 nodes: seconds).
 */
#ifndef LWM2_STRSET_H
#define LWM2_STRSET_H

#include <stddef.h>

struct lwm2_strset {
	const char **name; /* cap slots, NULL where free */
	size_t *index;     /* the number of the name in the same slot */
	size_t n, cap;
};

/* Adds s unless it is there; *index (if not NULL) gets its number.
 * 1: added, 0: there already, -1: out of memory (errno set). */
int lwm2_strset_add(struct lwm2_strset *set, const char *s, size_t *index);
/* Frees the slots (not the strings) and empties the set. */
void lwm2_strset_free(struct lwm2_strset *set);

#endif /* LWM2_STRSET_H */
