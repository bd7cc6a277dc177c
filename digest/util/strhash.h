/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * FNV-1a (64 bits) of a string: the hash tables of the library and the
 * command, and the history index's file names, which is why it must never
 * change.  Inline: `lwm2 stats` hashes a name of every log line.
 */
#ifndef LWM2_STRHASH_H
#define LWM2_STRHASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t lwm2_strhash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* The same of the n bytes at s (lwm2_strhash's where they hold no NUL). */
static inline uint64_t lwm2_strnhash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

#endif /* LWM2_STRHASH_H */
