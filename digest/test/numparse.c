/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bounded integers, table-driven: ranges, overflow, text after the number. */
#include "numparse.h"
#include "tap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

static const struct {
	const char *s;
	uint64_t min, max;
	int err; /* 0: accepted */
	uint64_t want;
} u[] = {
    {"0", 0, 10, 0, 0},
    {"10", 0, 10, 0, 10},
    {"11", 0, 10, ERANGE, 0},
    {"0", 1, 10, ERANGE, 0},
    {"18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX},
    {"18446744073709551616", 0, UINT64_MAX, ERANGE, 0},
    {"99999999999999999999999", 0, UINT64_MAX, ERANGE, 0},
    {"", 0, 10, EINVAL, 0},
    {"-1", 0, UINT64_MAX, EINVAL, 0},
    {"+1", 0, 10, EINVAL, 0},
    {" 1", 0, 10, EINVAL, 0},
    {"1 ", 0, 10, EINVAL, 0},
    {"12x", 0, 100, EINVAL, 0},
    {"0x10", 0, 100, EINVAL, 0},
    {"5x", 10, 100, EINVAL, 0}, /* the text is judged before the range */
};

static const struct {
	const char *s;
	int64_t min, max;
	int err;
	int64_t want;
} i[] = {
    {"-5", -10, 10, 0, -5},
    {"-11", -10, 10, ERANGE, 0},
    {"9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX},
    {"-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN},
    {"9223372036854775808", INT64_MIN, INT64_MAX, ERANGE, 0},
    {"-9223372036854775809", INT64_MIN, INT64_MAX, ERANGE, 0},
    {"-", -10, 10, EINVAL, 0},
    {"--1", -10, 10, EINVAL, 0},
    {"1-", -10, 10, EINVAL, 0},
    {"0", 1, 10, ERANGE, 0},
};

/* One case: refused with want_err and *out untouched, or taken and right
 * (errno as the parser left it). */
static void judge(const char *kind, size_t k, const char *s, int rc, int want_err, bool untouched,
                  bool right)
{
	int e = errno;

	if (want_err)
		ok(rc == -1 && e == want_err && untouched,
		   "%s %zu \"%s\": refused, errno %d, *out untouched", kind, k, s, want_err);
	else
		ok(rc == 0 && right, "%s %zu \"%s\": taken, the right value", kind, k, s);
}

/* Durations: Slurm's forms and whole numbers with a unit. */
static const struct {
	const char *s;
	int err;
	uint64_t want;
} dur[] = {
    {"10", 0, 600},      {"1:30", 0, 90},        {"1:00:00", 0, 3600}, {"2-0", 0, 172800},
    {"1-2:3", 0, 93780}, {"1-2:3:4", 0, 93784},  {"60s", 0, 60},       {"10min", 0, 600},
    {"2h", 0, 7200},     {"1d", 0, 86400},       {"0", 0, 0},          {"", EINVAL, 0},
    {"10m", EINVAL, 0},  {"1:2:3:4", EINVAL, 0}, {"-5", EINVAL, 0},    {"5 s", EINVAL, 0},
    {"1.5h", EINVAL, 0}, {"400d", ERANGE, 0},
};

int main(void)
{
	const char *end;
	uint64_t uv;

	for (size_t k = 0; k < sizeof(dur) / sizeof(dur[0]); k++) {
		uint64_t got = 12345;
		int rc;

		errno = 0;
		rc = lwm2_parse_duration(dur[k].s, 0, 365 * 86400, &got);
		ok(dur[k].err ? rc < 0 && errno == dur[k].err && got == 12345
		              : rc == 0 && got == dur[k].want,
		   "duration \"%s\": %s", dur[k].s, dur[k].err ? "refused" : "accepted");
	}
	int64_t iv;

	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++) {
		int rc;

		uv = 4242;
		errno = 0;
		rc = lwm2_parse_u64(u[k].s, NULL, u[k].min, u[k].max, &uv);
		judge("u64", k, u[k].s, rc, u[k].err, uv == 4242, uv == u[k].want);
	}
	for (size_t k = 0; k < sizeof(i) / sizeof(i[0]); k++) {
		int rc;

		iv = 4242;
		errno = 0;
		rc = lwm2_parse_i64(i[k].s, NULL, i[k].min, i[k].max, &iv);
		judge("i64", k, i[k].s, rc, i[k].err, iv == 4242, iv == i[k].want);
	}

	/* with end, what follows is the caller's: a job and its step */
	end = NULL;
	ok(lwm2_parse_u64("123.4", &end, 1, UINT64_MAX, &uv) == 0 && uv == 123 && end &&
	       *end == '.',
	   "u64 with end: \"123.4\" is 123, stopping at the dot");
	end = NULL;
	ok(lwm2_parse_i64("77_3", &end, 1, INT64_MAX, &iv) == 0 && iv == 77 && end && *end == '_',
	   "i64 with end: \"77_3\" is 77, stopping at the underscore");
	end = "untouched";
	errno = 0;
	ok(lwm2_parse_u64("0.1", &end, 1, 10, &uv) == -1 && errno == ERANGE &&
	       !strcmp(end, "untouched"),
	   "u64 with end: out of range leaves *end as it was");
	errno = 0;
	ok(lwm2_parse_u64(NULL, NULL, 0, 1, &uv) == -1 && errno == EINVAL, "u64: NULL is EINVAL");
	return done_testing();
}
