/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Print the parts of a rank record the counter and CUDA tests check, one
 * "key value" per line: every counter, the missing groups with their
 * reasons, the runtime flags.  Reads through the real reader (record.c).
 */
#include "lwm2_record.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	struct lwm2_rank_record *r;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: papi_dump RECORD\n");
		return 2;
	}
	if (lwm2_record_read_file(AT_FDCWD, argv[1], &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "papi_dump: %s: %s\n", argv[1], err);
		return 1;
	}
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		printf("%s %llu\n", lwm2_counter_names[c], (unsigned long long)r->counters[c]);
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (r->missing & (1u << g))
			printf("missing_%s %s\n", lwm2_group_names[g], r->missing_reason[g]);
	printf("runtimes %u\n", r->runtimes);
	printf("flags %u\n", r->flags);
	printf("cpu_ns %llu\n", (unsigned long long)(r->utime_us + r->stime_us) * 1000ull);
	printf("threads_total %u\n", r->threads_total);
	printf("nslices %u\n", r->nslices);
	printf("hwc_events %s\n", r->hwc_events);
	free(r);
	return 0;
}
