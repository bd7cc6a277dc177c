/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line protocol writer: escaping of measurements, tags, field keys and
 * string values (a table), the points of a small digest line by line,
 * batches, and the credentials file checks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lineproto.h"
#include "tap.h"

static const struct {
	enum lwm2_lp_kind kind;
	const char *in, *out;
} esc[] = {
    {LWM2_LP_MEASUREMENT, "cpu", "cpu"},
    {LWM2_LP_MEASUREMENT, "a b,c=d", "a\\ b\\,c=d"},
    {LWM2_LP_MEASUREMENT, "a\"b", "a\"b"},
    {LWM2_LP_TAG, "node01", "node01"},
    {LWM2_LP_TAG, "a b", "a\\ b"},
    {LWM2_LP_TAG, "a,b", "a\\,b"},
    {LWM2_LP_TAG, "a=b", "a\\=b"},
    {LWM2_LP_TAG, "x,y z=w", "x\\,y\\ z\\=w"},
    {LWM2_LP_TAG, "a\\b", "a\\b"},     /* kept: not before an escaped character */
    {LWM2_LP_TAG, "a\\\\b", "a\\\\b"}, /* two backslashes stay two */
    {LWM2_LP_TAG, "end\\", "end/"},    /* would escape the separator after it */
    {LWM2_LP_TAG, "a\\,b", "a/\\,b"},  /* would make "\\," */
    {LWM2_LP_TAG, "a\\ b", "a/\\ b"},  /* would make "\\ " */
    {LWM2_LP_TAG, "a\\=b", "a/\\=b"},  /* would make "\\=" */
    {LWM2_LP_TAG, "line\nbreak", "line\\ break"},
    {LWM2_LP_TAG, "tab\there", "tab\\ here"},
    {LWM2_LP_TAG, "quote\"s", "quote\"s"},
    {LWM2_LP_TAG, "", ""},
    {LWM2_LP_TAG, "ünï", "ünï"},
    {LWM2_LP_STRING, "plain", "plain"},
    {LWM2_LP_STRING, "q\"uote", "q\\\"uote"},
    {LWM2_LP_STRING, "back\\slash", "back\\\\slash"},
    {LWM2_LP_STRING, "a, b=c", "a, b=c"},
    {LWM2_LP_STRING, "nl\nx", "nl x"},
};

/* s with control characters shown as \n, \t, ... (TAP lines are lines). */
static const char *visible(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '\n' || *s == '\t') {
			buf[o++] = '\\';
			buf[o++] = *s == '\n' ? 'n' : 't';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static const char *kind_name(enum lwm2_lp_kind k)
{
	return k == LWM2_LP_MEASUREMENT ? "measurement" : k == LWM2_LP_TAG ? "tag" : "string";
}

/* A log line of job 42: two nodes of step 0 with 2 slices of 10 s, one
 * of them with MPI time; 4 processes on 2 nodes. */
static const char *job_line =
    "{\"cluster\":\"c1\",\"job_id\":42,\"user\":\"alice\",\"account\":\"phys ics\","
    "\"partition\":\"batch\",\"name\":\"solver,v2\",\"node_count\":2,\"cpus\":8,"
    "\"start\":1000,\"end\":1030,\"state\":\"COMPLETED\",\"status\":\"ok\","
    "\"digest\":{\"scope\":{\"processes\":4,\"mpi_processes\":4,\"nodes\":2,"
    "\"incomplete\":0,\"totals\":{\"mpi_p2p_calls\":30},"
    "\"metrics\":{\"mpi_time\":{\"min\":1.5,\"avg\":2.5,\"max\":3.5,\"n\":4}}},"
    "\"steps\":[{\"step_id\":0,\"processes\":4,\"nodes\":2}],"
    "\"grid\":["
    "{\"step\":0,\"node\":\"n1\",\"first_slice\":100,\"slice_length_s\":10,\"n\":2,"
    "\"c\":{\"mpi_p2p_calls\":[10,20],\"mpi_p2p_ns\":[2000000000,0]}},"
    "{\"step\":0,\"node\":\"n2\",\"first_slice\":100,\"slice_length_s\":10,\"n\":2,"
    "\"c\":{}}]}}";

static const char *const want_lines[] = {
    "lwm2_slice,account=phys\\ ics,app=solver\\,v2,cluster=c1,job=42,node=n1,partition=batch,"
    "step=0,user=alice slice_s=10i,mpi_p2p_calls=10i,mpi_p2p_ns=2000000000i,mpi_share=10 1000",
    "lwm2_slice,account=phys\\ ics,app=solver\\,v2,cluster=c1,job=42,node=n1,partition=batch,"
    "step=0,user=alice slice_s=10i,mpi_p2p_calls=20i,mpi_p2p_ns=0i,mpi_share=0 1010",
    "lwm2_slice,account=phys\\ ics,app=solver\\,v2,cluster=c1,job=42,node=n2,partition=batch,"
    "step=0,user=alice slice_s=10i 1000",
    "lwm2_slice,account=phys\\ ics,app=solver\\,v2,cluster=c1,job=42,node=n2,partition=batch,"
    "step=0,user=alice slice_s=10i 1010",
    "lwm2_job,account=phys\\ ics,app=solver\\,v2,cluster=c1,job=42,partition=batch,user=alice "
    "state=\"COMPLETED\",status=\"ok\",duration_s=30i,node_count=2i,cpus=8i,processes=4i,"
    "mpi_processes=4i,nodes=2i,incomplete=0i,total_mpi_p2p_calls=30i,mpi_time_min=1.5,"
    "mpi_time_avg=2.5,mpi_time_max=3.5 1030",
};

struct collect {
	struct lwm2_lp_buf all;
	size_t calls, max_lines;
	int fail_at;
};

static int collect(void *arg, const char *text, size_t len, size_t lines)
{
	struct collect *c = arg;

	c->calls++;
	if (lines > c->max_lines)
		c->max_lines = lines;
	if (c->fail_at && (int)c->calls == c->fail_at) {
		errno = EIO;
		return -1;
	}
	return lwm2_lp_buf_put(&c->all, text, len);
}

static void test_format(void)
{
	json_object *o = json_tokener_parse(job_line);
	struct lwm2_lp_buf b = {0};
	struct lwm2_lp_stats st = {0};
	struct collect c = {0};
	char *p, *save = NULL;
	size_t i = 0;
	bool same = true;
	int rc;

	rc = lwm2_lp_format_job(o, NULL, &b, 0, NULL, NULL, &st);
	ok(rc == 0 && st.slice_points == 4 && st.job_points == 1 && b.lines == 5,
	   "a job of 2 nodes x 2 slices: 4 slice points and 1 job point (%zu, %zu)",
	   st.slice_points, st.job_points);
	for (p = strtok_r(b.p, "\n", &save); p; p = strtok_r(NULL, "\n", &save), i++) {
		if (i >= sizeof(want_lines) / sizeof(want_lines[0]) || strcmp(p, want_lines[i])) {
			diag("line %zu: %s", i, p);
			diag("want:    %s", i < 5 ? want_lines[i] : "(none)");
			same = false;
		}
	}
	ok(same && i == 5, "the points, line by line: tags sorted and escaped, fields, seconds");
	lwm2_lp_buf_free(&b);

	/* the text reader gives the same lines, without json-c for the grid */
	{
		struct lwm2_lp_buf t = {0};
		struct lwm2_lp_stats ts = {0};
		char *again = NULL;

		lwm2_lp_format_job(o, NULL, &b, 0, NULL, NULL, NULL);
		again = b.p ? strdup(b.p) : NULL;
		lwm2_lp_buf_free(&b);
		rc = lwm2_lp_format_line(job_line, strlen(job_line), &t, 0, NULL, NULL, &ts);
		ok(rc == 0 && again && t.p && !strcmp(again, t.p) && ts.slice_points == 4,
		   "lwm2_lp_format_line: the same lines from the text");
		if (t.p && again && strcmp(again, t.p))
			diag("text path:\n%s", t.p);
		lwm2_lp_buf_free(&t);
		free(again);
		errno = 0;
		rc = lwm2_lp_format_line("[1,2]", 5, &t, 0, NULL, NULL, NULL);
		ok(rc == -1 && errno == EINVAL, "lwm2_lp_format_line: not an object is EINVAL");
		{
			static const char odd[] =
			    "{\"job_id\":5,\"end\":9,\"digest\":{\"grid\":[{\"step\":0,"
			    "\"node\":\"n\\\"x\",\"first_slice\":1,\"slice_length_s\":2,\"n\":2,"
			    "\"c\":{\"a\":[1.5,7],\"b\":[null]}}, 3]}}";

			rc = lwm2_lp_format_line(odd, strlen(odd), &t, 0, NULL, NULL, NULL);
			if (!ok(rc == 0 && t.p &&
			            !strcmp(
			                t.p,
			                "lwm2_slice,job=5,node=n\"x,step=0 slice_s=2i,a=0i,b=0i 2\n"
			                "lwm2_slice,job=5,node=n\"x,step=0 slice_s=2i,a=7i,b=0i 4\n"
			                "lwm2_job,job=5 "
			                "state=\"UNKNOWN\",status=\"ok\",duration_s=0i 9\n"),
			        "text reader: escaped node name, non-integers and short columns as "
			        "0, a "
			        "row that is no object skipped") &&
			    t.p)
				diag("%s", t.p);
		}
		lwm2_lp_buf_free(&t);
	}

	/* batches of 2: flushes of 2, 2, and the last line left for the caller */
	rc = lwm2_lp_format_job(o, NULL, &b, 2, collect, &c, &st);
	ok(rc == 0 && c.calls == 2 && c.max_lines == 2 && b.lines == 1,
	   "batch 2: two flushes of 2 lines, one line left in the buffer (%zu calls, %zu left)",
	   c.calls, b.lines);
	lwm2_lp_buf_free(&b);
	lwm2_lp_buf_free(&c.all);

	memset(&c, 0, sizeof(c));
	c.fail_at = 1;
	errno = 0;
	rc = lwm2_lp_format_job(o, NULL, &b, 2, collect, &c, &st);
	ok(rc == -1 && errno == EIO, "a flush that fails stops the job with its errno");
	lwm2_lp_buf_free(&b);
	json_object_put(o);

	/* a job that never ended, and one without a digest */
	o = json_tokener_parse("{\"job_id\":7,\"end\":0}");
	rc = lwm2_lp_format_job(o, NULL, &b, 0, NULL, NULL, NULL);
	ok(rc == 0 && b.lines == 0, "a job without an end makes no point");
	json_object_put(o);
	o = json_tokener_parse("{\"job_id\":7,\"start\":0,\"end\":50,\"state\":\"CANCELLED\","
	                       "\"status\":\"not_started\",\"cluster\":\"c1\",\"user\":\"\"}");
	rc = lwm2_lp_format_job(o, NULL, &b, 0, NULL, NULL, NULL);
	if (!ok(rc == 0 && b.p &&
	            !strcmp(b.p,
	                    "lwm2_job,cluster=c1,job=7 state=\"CANCELLED\",status=\"not_started\","
	                    "duration_s=0i 50\n"),
	        "a job without a digest: one job point, empty tags left out") &&
	    b.p)
		diag("%s", b.p);
	lwm2_lp_buf_free(&b);
	json_object_put(o);

	/* rows that are not the writer's are skipped, not trusted */
	o = json_tokener_parse(
	    "{\"job_id\":8,\"end\":50,\"digest\":{\"grid\":["
	    "{\"step\":0,\"node\":\"n1\",\"first_slice\":1,\"slice_length_s\":0,\"n\":2,\"c\":{}},"
	    "{\"step\":0,\"node\":\"\",\"first_slice\":1,\"slice_length_s\":10,\"n\":2,\"c\":{}},"
	    "{\"step\":-1,\"node\":\"n1\",\"first_slice\":1,\"slice_length_s\":10,\"n\":2},"
	    "{\"step\":0,\"node\":\"n1\",\"first_slice\":1,\"slice_length_s\":10,\"n\":99999,"
	    "\"c\":{\"x\":[1]}},"
	    "\"not a row\"]}}");
	memset(&st, 0, sizeof(st));
	rc = lwm2_lp_format_job(o, NULL, &b, 0, NULL, NULL, &st);
	ok(rc == 0 && st.slice_points == 4096 && st.job_points == 1,
	   "bad grid rows skipped, an overlong one cut at 4096 slots (%zu points)",
	   st.slice_points);
	lwm2_lp_buf_free(&b);
	json_object_put(o);
}

static void test_credentials(void)
{
	char path[] = "/tmp/lwm2-lp-cred.XXXXXX", err[256];
	char *u, *p, *t;
	int fd = mkstemp(path);
	const char *text = "# engine\nuser = lwm2\npassword=s3cr=t\ntoken=tok\n";

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		ok(0, "credentials: temporary file");
		return;
	}
	close(fd);
	chmod(path, 0600);
	ok(lwm2_lp_read_credentials(path, true, &u, &p, &t, err, sizeof(err)) == 0 && u && p && t &&
	       !strcmp(u, "lwm2") && !strcmp(p, "s3cr=t") && !strcmp(t, "tok"),
	   "credentials: user, password (with '='), token");
	free(u);
	free(p);
	free(t);
	chmod(path, 0644);
	ok(lwm2_lp_read_credentials(path, true, &u, &p, &t, err, sizeof(err)) == -1 &&
	       errno == EPERM && strstr(err, "chmod 600"),
	   "credentials: a file others can read is refused (%s)", err);
	ok(lwm2_lp_read_credentials(path, false, &u, &p, &t, err, sizeof(err)) == 0,
	   "credentials: accepted where privacy is not required");
	free(u);
	free(p);
	free(t);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0) {
		if (write(fd, "secret\n", 7) != 7)
			diag("short write");
		close(fd);
	}
	chmod(path, 0600);
	ok(lwm2_lp_read_credentials(path, true, &u, &p, &t, err, sizeof(err)) == -1 && u == NULL &&
	       strstr(err, "no '='"),
	   "credentials: a line without '=' is an error (%s)", err);
	unlink(path);
}

int main(void)
{
	size_t n = sizeof(esc) / sizeof(esc[0]);

	tap_plan((int)n + 14);
	for (size_t i = 0; i < n; i++) {
		struct lwm2_lp_buf b = {0};
		int rc = lwm2_lp_escape(&b, esc[i].in, esc[i].kind);
		const char *got = b.p ? b.p : "";
		char in[64];

		ok(rc == 0 && !strcmp(got, esc[i].out), "escape %s \"%s\" -> \"%s\" (got \"%s\")",
		   kind_name(esc[i].kind), visible(esc[i].in, in, sizeof(in)), esc[i].out, got);
		lwm2_lp_buf_free(&b);
	}
	test_format();
	test_credentials();
	return tap_failed ? 1 : 0;
}
