/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded decimal integers (see numparse.h). */
#include "numparse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* errno for what strtoull/strtoll left: text after the number first, then
 * the range; 0 when the number stands. */
static int judge(const char *stop, const char **end, bool overflow, bool in_range)
{
	if (!end && *stop)
		return EINVAL;
	if (overflow || !in_range)
		return ERANGE;
	if (end)
		*end = stop;
	return 0;
}

int lwm2_parse_u64(const char *s, const char **end, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *e;
	int rc;

	if (!s || *s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoull(s, &e, 10);
	if ((rc = judge(e, end, errno == ERANGE, v >= min && v <= max))) {
		errno = rc;
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

int lwm2_parse_i64(const char *s, const char **end, int64_t min, int64_t max, int64_t *out)
{
	const char *d = s && *s == '-' ? s + 1 : s;
	long long v;
	char *e;
	int rc;

	if (!d || *d < '0' || *d > '9') {
		errno = EINVAL;
		return -1;
	}
	errno = 0;
	v = strtoll(s, &e, 10);
	if ((rc = judge(e, end, errno == ERANGE, v >= min && v <= max))) {
		errno = rc;
		return -1;
	}
	*out = (int64_t)v;
	return 0;
}
