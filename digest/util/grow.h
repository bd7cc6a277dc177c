/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The growing arrays of the library and the command: room for one more
 * element, the capacity doubled when the array is full.
 */
#ifndef LWM2_GROW_H
#define LWM2_GROW_H

#include <stddef.h>
#include <stdlib.h>

/* p itself while n < *cap; else p moved to room for twice *cap elements
 * of size bytes (first when *cap is 0) and *cap set to that; NULL out of
 * memory, p and *cap as they were. */
static inline void *lwm2_grow(void *p, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t nc;

	if (n < *cap)
		return p;
	nc = *cap ? 2 * *cap : first;
	if (!(p = realloc(p, nc * size)))
		return NULL;
	*cap = nc;
	return p;
}

/* Room in the array a (an lvalue, read twice) of n elements for one more:
 * 0, or -1 out of memory (a and cap kept). */
#define LWM2_GROW(a, n, cap, first)                                                                \
	__extension__({                                                                            \
		void *grown_ = lwm2_grow((a), (n), &(cap), sizeof(*(a)), (first));                 \
		grown_ ? ((a) = grown_, 0) : -1;                                                   \
	})

#endif /* LWM2_GROW_H */
