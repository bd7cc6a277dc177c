/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded decimal integers (see numparse.h). */
#include "numparse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/*
 * The digits at s (after an optional '-' where negative is allowed) as a
 * magnitude; 0, or an errno: EINVAL for no digits or text after them
 * (where end is NULL: judged before the range), ERANGE beyond 64 bits.
 */
static int digits(const char *s, bool negative_ok, const char **end, bool *neg, uint64_t *mag)
{
	const char *d = s;
	char *e;

	*neg = negative_ok && s && *s == '-';
	if (*neg)
		d++;
	if (!d || *d < '0' || *d > '9')
		return EINVAL;
	errno = 0;
	*mag = strtoull(d, &e, 10);
	if (!end && *e)
		return EINVAL;
	if (errno == ERANGE)
		return ERANGE;
	if (end)
		*end = e;
	return 0;
}

/* The caller's side of the contract: errno and -1 on failure; *end set
 * only on success. */
static int finish(int e, const char **end, const char *stop)
{
	if (e) {
		errno = e;
		return -1;
	}
	if (end)
		*end = stop;
	return 0;
}

int lwm2_parse_u64(const char *s, const char **end, uint64_t min, uint64_t max, uint64_t *out)
{
	const char *stop = NULL;
	uint64_t v = 0;
	bool neg;
	int e = digits(s, false, end ? &stop : NULL, &neg, &v);

	if (finish(e ? e : v < min || v > max ? ERANGE : 0, end, stop) < 0)
		return -1;
	*out = v;
	return 0;
}

int lwm2_parse_i64(const char *s, const char **end, int64_t min, int64_t max, int64_t *out)
{
	const char *stop = NULL;
	uint64_t mag = 0;
	int64_t v = 0;
	bool neg;
	int e = digits(s, true, end ? &stop : NULL, &neg, &mag);

	/* INT64_MIN's magnitude is one more than INT64_MAX */
	if (!e && mag > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
		e = ERANGE;
	v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	if (finish(e ? e : v < min || v > max ? ERANGE : 0, end, stop) < 0)
		return -1;
	*out = v;
	return 0;
}
