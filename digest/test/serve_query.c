/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The portal's query builder without a socket: every argument read or
 * refused with its name, the selection applied to job rows, the URL of a
 * selection written back (so the links of a page keep it), and the text of
 * URLs and CSV fields (a field a spreadsheet would run as a formula
 * quoted).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_pages.h"
#include "serve_query.h"
#include "tap.h"

/* A request's arguments: "name=value" strings, NULL-ended. */
static const char *lookup(void *ctx, const char *name)
{
	size_t n = strlen(name);

	for (const char *const *a = ctx; *a; a++)
		if (strncmp(*a, name, n) == 0 && (*a)[n] == '=')
			return *a + n + 1;
	return NULL;
}

static int read_args(const char *const *args, struct serve_query *q, char *err, size_t len)
{
	struct serve_request rq = {.path = "/", .arg = lookup, .ctx = (void *)args};

	err[0] = 0;
	return serve_query_read(&rq, 1800000000, q, err, len);
}

struct refusal {
	const char *args[3];
	const char *names; /* the error names this */
};

static const struct refusal refusals[] = {
    {{"sort=job;DROP TABLE job", NULL}, "sort"},
    {{"order=sideways", NULL}, "order"},
    {{"page=0", NULL}, "page"},
    {{"page=1e3", NULL}, "page"},
    {{"per=1001", NULL}, "per"},
    {{"format=xml", NULL}, "format"},
    {{"start=yesterday-ish", NULL}, "start"},
    {{"start=now", "end=now-1d", NULL}, "end"},
    {{"metric=elapsed_s", NULL}, "metric"},
    {{"metric=cpi", "min=1,5", NULL}, "min"},
    {{"max=3", NULL}, "min, max"},
    {{"min=nan", "metric=cpi", NULL}, "min"},
};

static void check_refusals(void)
{
	struct serve_query q;
	char err[256];

	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		int rc = read_args(refusals[i].args, &q, err, sizeof(err));

		ok(rc < 0 && strncmp(err, refusals[i].names, strlen(refusals[i].names)) == 0,
		   "%s: refused, naming %s (%s)", refusals[i].args[0], refusals[i].names, err);
	}
	static const char *long_user[] = {NULL, NULL};
	char *big = malloc(LWM2_JOBROW_NAME_LEN + 8);

	if (!big)
		return;
	strcpy(big, "user=");
	memset(big + 5, 'a', LWM2_JOBROW_NAME_LEN);
	big[5 + LWM2_JOBROW_NAME_LEN] = 0;
	long_user[0] = big;
	ok(read_args(long_user, &q, err, sizeof(err)) < 0 && strncmp(err, "user", 4) == 0,
	   "a user name of %d bytes: refused (%s)", LWM2_JOBROW_NAME_LEN, err);
	free(big);
}

static void check_defaults(void)
{
	static const char *none[] = {NULL};
	struct serve_query q;
	char err[256];

	ok(read_args(none, &q, err, sizeof(err)) == 0, "no argument: read");
	ok(q.end == 1800000000 && q.start == 1800000000 - SERVE_DAYS * 86400,
	   "no period: the last %d days", SERVE_DAYS);
	ok(q.sort == SC_END && q.desc && q.page == 1 && q.per == SERVE_PER_DEFAULT &&
	       q.format == SF_HTML && q.metric < 0,
	   "the newest first, page 1 of %d rows, HTML", SERVE_PER_DEFAULT);
}

static struct lwm2_jobrow row(const char *user, const char *app, int64_t end, double io)
{
	struct lwm2_jobrow j;

	memset(&j, 0, sizeof(j));
	j.user = user;
	j.account = "physics";
	j.cluster = "c1";
	j.partition = "batch";
	j.state = "COMPLETED";
	snprintf(j.app, sizeof(j.app), "%s", app);
	j.end = end;
	if (io >= 0) {
		j.has[LWM2_JR_IO] = true;
		j.v[LWM2_JR_IO] = io;
	}
	return j;
}

static void check_takes(void)
{
	static const char *args[] = {"user=alice", "metric=posix_io_time", "min=10",
	                             "max=50",     "start=@1700000000",    "end=@1700086400",
	                             NULL};
	struct serve_query q;
	char err[256];
	struct lwm2_jobrow j;

	ok(read_args(args, &q, err, sizeof(err)) == 0, "a selection of user, period and I/O range");
	j = row("alice", "lmp", 1700000100, 20);
	ok(serve_query_takes(&q, &j), "takes alice's job with 20 %% I/O in the period");
	j = row("bob", "lmp", 1700000100, 20);
	ok(!serve_query_takes(&q, &j), "not bob's");
	j = row("alice", "lmp", 1700000100, 60);
	ok(!serve_query_takes(&q, &j), "not one above the range");
	j = row("alice", "lmp", 1700000100, -1);
	ok(!serve_query_takes(&q, &j), "not one without the figure, where a range is asked");
	j = row("alice", "lmp", 1700086401, 20);
	ok(!serve_query_takes(&q, &j), "not one that ended after the period");
}

static void check_args_written(void)
{
	static const char *args[] = {"user=al ice&x", "app=a\"b<c>", "sort=user", "order=asc",
	                             NULL};
	struct serve_query q;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (read_args(args, &q, err, sizeof(err)) < 0 || !(f = open_memstream(&buf, &len))) {
		ok(0, "a selection written back as a URL's arguments");
		return;
	}
	serve_query_args(f, &q, "page", "2");
	fclose(f);
	is_str(buf,
	       "?user=al%20ice%26x&amp;app=a%22b%3Cc%3E&amp;sort=user&amp;order=asc&amp;page=2",
	       "a selection written back: escaped for a URL and for HTML, one argument set");
	free(buf);
}

static char *written(void (*fn)(FILE *, const char *), const char *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, v);
	fclose(f);
	return buf;
}

static void check_text(void)
{
	static const struct {
		const char *name, *in, *csv;
	} csv[] = {
	    {"plain", "plain", "plain"},
	    {"a comma", "a,b", "\"a,b\""},
	    {"quotes", "say \"hi\"", "\"say \"\"hi\"\"\""},
	    {"a formula", "=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""},
	    {"a leading minus", "-1+2", "\"'-1+2\""},
	    {"a line break", "two\nlines", "\"two\nlines\""},
	};

	for (size_t i = 0; i < sizeof(csv) / sizeof(csv[0]); i++) {
		char *got = written(serve_csv_field, csv[i].in);

		is_str(got, csv[i].csv, "CSV field with %s", csv[i].name);
		free(got);
	}
	char *url = written(serve_url_value, "a/b c?d=e&f~g");

	is_str(url, "a%2Fb%20c%3Fd%3De%26f~g", "URL value escaped");
	free(url);
}

int main(void)
{
	check_refusals();
	check_defaults();
	check_takes();
	check_args_written();
	check_text();
	return done_testing();
}
