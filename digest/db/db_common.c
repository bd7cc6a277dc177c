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
#include "grow.h"
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

int lwm2_db_day_add(struct lwm2_db_day **out, size_t *n, size_t *cap, const struct lwm2_db_day *day)
{
	if (LWM2_GROW(*out, *n, *cap, 64) < 0)
		return -1;
	(*out)[(*n)++] = *day;
	return 0;
}

int lwm2_db_month_add(struct lwm2_db_month **out, size_t *n, size_t *cap,
                      const struct lwm2_db_month *month)
{
	if (LWM2_GROW(*out, *n, *cap, 16) < 0)
		return -1;
	(*out)[(*n)++] = *month;
	return 0;
}

/* Days since 1970-01-01 of the first of month m (1-12) of year y, and
 * back (the proleptic Gregorian calendar's civil dates). */
static int64_t days_of_civil(int64_t y, int64_t m)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static void civil_of_days(int64_t z, int64_t *y, int64_t *m)
{
	int64_t era, doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yoe + era * 400 + (*m <= 2);
}

int64_t lwm2_db_month_of(int64_t day)
{
	int64_t y, m;

	civil_of_days(day, &y, &m);
	return days_of_civil(y, m);
}

int64_t lwm2_db_month_next(int64_t month)
{
	int64_t y, m;

	civil_of_days(month, &y, &m);
	return m == 12 ? days_of_civil(y + 1, 1) : days_of_civil(y, m + 1);
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
