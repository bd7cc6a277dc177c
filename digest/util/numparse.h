/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Bounded decimal integers from settings, options and file names: strtoull
 * and strtoll accept leading blanks, a sign on an unsigned number, an empty
 * string and anything after the digits; these do not.
 */
#ifndef LWM2_NUMPARSE_H
#define LWM2_NUMPARSE_H

#include <stdint.h>

/*
 * The decimal number at s, which must start with a digit (lwm2_parse_i64:
 * or a '-'), into *out when it lies in [min, max].  With end NULL nothing
 * may follow the digits; otherwise *end is where they stop, for the caller
 * to judge what follows ("123.4" for a job and a step).  0, or -1 with
 * errno EINVAL (no number, or text after it) or ERANGE (outside [min,
 * max] or beyond 64 bits); *out and *end are left as they were then.
 */
int lwm2_parse_u64(const char *s, const char **end, uint64_t min, uint64_t max, uint64_t *out);
int lwm2_parse_i64(const char *s, const char **end, int64_t min, int64_t max, int64_t *out);

/*
 * A duration in seconds: Slurm's time format (M, M:S, H:M:S, D-H, D-H:M,
 * D-H:M:S; a plain number is minutes, as --time takes it), or a whole
 * number with a unit: 90s, 10min, 2h, 1d.  0 with *out in [min, max], or
 * -1 with errno EINVAL (not a duration) or ERANGE (outside); *out is left
 * as it was then.
 */
int lwm2_parse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif /* LWM2_NUMPARSE_H */
