/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small json-c helpers shared inside the digest library (not installed). */
#ifndef LWM2_JSONUTIL_H
#define LWM2_JSONUTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

/* A double as text that reads back as the same double: an integral value
 * (bytes, counts) as an integer, exactly, else the shortest of 15, 16 or
 * 17 significant digits that round-trips.  Never NaN or Inf, which JSON
 * cannot carry. */
static inline const char *ju_double_text(double v, char *b, size_t len)
{
	if (!isfinite(v))
		v = 0;
	/* 2^53: up to it every integer is a double; a cast, not floor(),
	 * keeps libm out of the programs that link this */
	if (fabs(v) <= 9007199254740992.0 && v == (double)(int64_t)v) {
		snprintf(b, len, "%.0f", v == 0 ? 0.0 : v);
		return b;
	}
	for (int p = 15; p <= 17; p++) {
		snprintf(b, len, "%.*g", p, v);
		if (strtod(b, NULL) == v)
			break;
	}
	return b;
}

static inline json_object *ju_double(double v)
{
	char b[32];

	ju_double_text(v, b, sizeof(b));
	return json_object_new_double_s(isfinite(v) ? v : 0, b);
}

static inline json_object *ju_u64(uint64_t v)
{
	return json_object_new_int64(v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v);
}

/* An array of n unsigned numbers (counters, sample counts). */
static inline json_object *ju_u64_array(const uint64_t *v, size_t n)
{
	json_object *a = json_object_new_array_ext((int)n);

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, ju_u64(v[i]));
	return a;
}

static inline void ju_add(json_object *o, const char *key, json_object *v)
{
	json_object_object_add(o, key, v);
}

/* Member of the given type, or NULL. */
static inline json_object *ju_get(json_object *o, const char *key, json_type t)
{
	json_object *v;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	if (json_object_is_type(v, t))
		return v;
	/* an integer is a number where a double is expected */
	if (t == json_type_double && json_object_is_type(v, json_type_int))
		return v;
	return NULL;
}

static inline bool ju_int(json_object *o, const char *key, int64_t *out)
{
	json_object *v = ju_get(o, key, json_type_int);

	if (!v)
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static inline bool ju_num(json_object *o, const char *key, double *out)
{
	json_object *v = ju_get(o, key, json_type_double);

	if (!v)
		return false;
	*out = json_object_get_double(v);
	return isfinite(*out);
}

static inline const char *ju_str(json_object *o, const char *key)
{
	json_object *v = ju_get(o, key, json_type_string);

	return v ? json_object_get_string(v) : NULL;
}

static inline int64_t ju_int_or(json_object *o, const char *key, int64_t dflt)
{
	int64_t v;

	return ju_int(o, key, &v) ? v : dflt;
}

#endif /* LWM2_JSONUTIL_H */
