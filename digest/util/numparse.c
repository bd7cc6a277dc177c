/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded decimal integers (see numparse.h). */
#include "numparse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

/* "N" with a unit: s, min, h, d. */
static int duration_suffixed(const char *s, uint64_t *secs)
{
	static const struct {
		const char *unit;
		uint64_t s;
	} units[] = {{"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}};
	const char *end;
	uint64_t n;

	if (lwm2_parse_u64(s, &end, 0, UINT32_MAX, &n) < 0 || end == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*secs = n * units[i].s;
			return 0;
		}
	return -1;
}

/* Slurm's forms: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. */
static int duration_slurm(const char *s, uint64_t *secs)
{
	uint64_t f[3], days = 0;
	size_t n = 0;
	const char *p = s, *end;
	bool has_days = false;

	if (lwm2_parse_u64(p, &end, 0, UINT32_MAX, &f[0]) < 0)
		return -1;
	if (*end == '-') {
		has_days = true;
		days = f[0];
		p = end + 1;
	}
	for (;;) {
		if (n == 3 || lwm2_parse_u64(p, &end, 0, UINT32_MAX, &f[n]) < 0)
			return -1;
		n++;
		if (!*end)
			break;
		if (*end != ':')
			return -1;
		p = end + 1;
	}
	if (has_days) /* D-H, D-H:M, D-H:M:S */
		*secs = days * 86400 + f[0] * 3600 + (n > 1 ? f[1] * 60 : 0) + (n > 2 ? f[2] : 0);
	else if (n == 1) /* M */
		*secs = f[0] * 60;
	else if (n == 2) /* M:S */
		*secs = f[0] * 60 + f[1];
	else /* H:M:S */
		*secs = f[0] * 3600 + f[1] * 60 + f[2];
	return 0;
}

int lwm2_parse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t secs;

	if (!s || (duration_suffixed(s, &secs) < 0 && duration_slurm(s, &secs) < 0)) {
		errno = EINVAL;
		return -1;
	}
	if (secs < min || secs > max) {
		errno = ERANGE;
		return -1;
	}
	*out = secs;
	return 0;
}
