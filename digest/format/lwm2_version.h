/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The version check of every reader of a versioned format (rank records,
 * step summaries, node records, digests, jobcomp/lwm2's state files).
 *
 * Digests stay in AdminComment and in logs for years, so a reader takes
 * every version from the oldest it knows to its own: an older one is
 * brought to the current layout by the format's up-conversion (one step
 * per version, as darshan-util converts its logs: lwm2_record_upconvert,
 * lwm2_digest_upgrade; the node record and the state file have only their
 * first version, and their readers name where the step goes).  A version
 * newer than the reader's was written by a newer lwm2 and is refused by
 * name rather than read wrongly; so is one older than the reader still
 * converts, and one that never existed (versions count from 1).  Rank
 * records are the exception: a newer version only appends fields and
 * counters, and is read (lwm2_record.h says how the format grows).
 */
#ifndef LWM2_VERSION_H
#define LWM2_VERSION_H

#include <stddef.h>
#include <stdio.h>

/* 0 when oldest <= v <= current; otherwise -1 with the reason, naming
 * what and v, in err. */
static inline int lwm2_version_check(const char *what, long long v, long long oldest,
                                     long long current, char *err, size_t errlen)
{
	if (v >= oldest && v <= current)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "%s version %lld: %s, this lwm2 reads versions %lld to %lld",
		         what, v,
		         v > current ? "written by a newer lwm2"
		         : v >= 1    ? "older than this lwm2 converts"
		                     : "no such version",
		         oldest, current);
	return -1;
}

#endif /* LWM2_VERSION_H */
