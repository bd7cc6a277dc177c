/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the backends (db_sqlite.c, db_mariadb.c) say and keep alike, apart
 * from their SQL: the schema's version and the refusal of a newer one, a day's place in a list, the
 * report of a check.  The job table's values are db_columns.c's.
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "db_internal.h"
#include "errmsg.h"
#include "numparse.h"

int lwm2_db_schema_of(const char *v)
{
	uint64_t n;

	return lwm2_parse_u64(v, NULL, 1, INT_MAX, &n) < 0 ? 0 : (int)n;
}

int lwm2_db_schema_newer(const char *where, int schema, char *err, size_t errlen)
{
	return lwm2_errprintf(
	    0, err, errlen,
	    "%s has schema version %d, newer than this lwm2's %d: not writing to it "
	    "(upgrade lwm2 where it writes)",
	    where, schema, LWM2_DB_SCHEMA);
}

int lwm2_db_day_add(struct lwm2_db_day **out, size_t *n, size_t *cap, int64_t day, bool summarized)
{
	if (*n == *cap) {
		size_t more = *cap ? 2 * *cap : 64;
		struct lwm2_db_day *nd = realloc(*out, more * sizeof(*nd));

		if (!nd)
			return -1;
		*out = nd;
		*cap = more;
	}
	(*out)[*n].day = day;
	(*out)[(*n)++].summarized = summarized;
	return 0;
}

void lwm2_db_check_head(FILE *out, bool bad, int schema)
{
	if (!bad)
		fprintf(out, "integrity: ok\n");
	fprintf(out, "schema: %d (this lwm2: %d)\n", schema, LWM2_DB_SCHEMA);
}

void lwm2_db_check_jobs(FILE *out, int64_t jobs, int64_t digests, int64_t first, int64_t last)
{
	fprintf(out,
	        "jobs: %" PRId64 " (%" PRId64 " with a digest), ended from %" PRId64 " to %" PRId64
	        "\n",
	        jobs, digests, first, last);
}
