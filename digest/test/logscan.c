/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The log reader on what log rotation leaves: plain, gzip and zstd files
 * told apart by their bytes (not their names), a rotated set read oldest
 * first whatever the order given, shell patterns, a file named twice, and
 * the files it cannot read (cut short, corrupt, missing, a directory, a
 * pattern matching nothing, xz): each an error naming the file, with the
 * others still read.
 */
#include "digest_internal.h"
#include "logscan.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

/* Stops the test when its own fixtures cannot be made. */
#define BAIL_OUT_FN(what)                                                                          \
	do {                                                                                       \
		printf("Bail out! %s\n", what);                                                    \
		exit(1);                                                                           \
	} while (0)

static char dir[] = "/tmp/lwm2-logscan.XXXXXX";
static char errpath[600];

/* The job ids read, in the order read. */
struct seen {
	long ids[4096];
	size_t n;
	long stop_at; /* ask to stop at this job id; 0: never */
};

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct seen *s = arg;
	json_object *id;

	(void)err;
	(void)errlen;
	if ((id = json_object_object_get(l->fields, "job_id")) &&
	    s->n < sizeof(s->ids) / sizeof(s->ids[0]))
		s->ids[s->n++] = (long)json_object_get_int64(id);
	return s->stop_at && s->ids[s->n - 1] == s->stop_at ? 1 : 0;
}

/* Jobs first..last, one line each, ending at 1000 + 10 * id (the order
 * rule reads the first entry's end). */
static char *lines(long first, long last)
{
	size_t cap = (size_t)(last - first + 1) * 128 + 1, len = 0;
	char *s = malloc(cap);

	s[0] = '\0';
	for (long id = first; id <= last; id++)
		len += (size_t)snprintf(s + len, cap - len,
		                        "{\"job_id\":%ld,\"end\":%ld,\"user\":\"u\",\"digest\":"
		                        "{\"scope\":{\"processes\":1}}}\n",
		                        id, 1000 + 10 * id);
	return s;
}

static void put(const char *name, const void *data, size_t len)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "w")) || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		BAIL_OUT_FN(p);
}

/* The gzip file as gzip(1) writes it, through zlib's gz* API. */
static void put_gz(const char *name, const char *text)
{
	char p[600];
	gzFile g;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(g = gzopen(p, "wb")) || gzwrite(g, text, (unsigned)strlen(text)) <= 0 ||
	    gzclose(g) != Z_OK)
		BAIL_OUT_FN(p);
}

/* len bytes of text as one zstd frame; *out malloc'd. */
static size_t zst(const char *text, size_t len, void **out)
{
	size_t cap = ZSTD_compressBound(len), n;

	*out = malloc(cap);
	n = ZSTD_compress(*out, cap, text, len, 3);
	if (ZSTD_isError(n))
		BAIL_OUT_FN("ZSTD_compress");
	return n;
}

static void put_zst(const char *name, const char *text)
{
	void *z;
	size_t n = zst(text, strlen(text), &z);

	put(name, z, n);
	free(z);
}

static void *slurp(const char *name, size_t *len)
{
	char p[600];
	FILE *f;
	void *b = malloc(1 << 20);

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	if (!(f = fopen(p, "r")))
		BAIL_OUT_FN(p);
	*len = fread(b, 1, 1 << 20, f);
	fclose(f);
	return b;
}

/* stderr into errpath while fn runs; its text in msg. */
static int scan_quiet(char *const *paths, size_t n, struct seen *s, char *msg, size_t msglen)
{
	int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc;
	FILE *f;
	size_t got;

	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	rc = lwm2_logscan_files("test", paths, n, on_line, s, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fopen(errpath, "r");
	got = f ? fread(msg, 1, msglen - 1, f) : 0;
	msg[got] = '\0';
	if (f)
		fclose(f);
	return rc;
}

static char *path(const char *name)
{
	static char p[8][600];
	static int k;

	k = (k + 1) % 8;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* ids[0..n) are first, first+1, ..., last */
static bool run_of(const struct seen *s, long first, long last)
{
	if (s->n != (size_t)(last - first + 1))
		return false;
	for (size_t i = 0; i < s->n; i++)
		if (s->ids[i] != first + (long)i)
			return false;
	return true;
}

/* the same content three ways; names that lie about it */
static void three_ways(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	int rc;

	char *text = lines(1, 50);
	put("plain.gz", text, strlen(text));
	put_gz("gzip.txt", text);
	put_zst("zstd", text);
	const char *kinds[] = {"plain.gz", "gzip.txt", "zstd"};
	for (int k = 0; k < 3; k++) {
		memset(&s, 0, sizeof(s));
		one[0] = path(kinds[k]);
		rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
		ok(rc == 0 && run_of(&s, 1, 50) && !msg[0], "%s: read by its bytes, 50 entries",
		   kinds[k]);
		if (msg[0])
			diag("stderr: %s", msg);
	}
	free(text);
}

/* Jobs 1 to 45 as logrotate leaves them with delaycompress under base:
 * base.4.zst (1-10, compresscmd zstd), base.3.gz, base.2.gz, base.1 and
 * base (41-45). */
static void put_rotated(const char *base)
{
	static const long first[] = {1, 11, 21, 31, 41}, last[] = {10, 20, 30, 40, 45};
	static const char *const suffix[] = {".4.zst", ".3.gz", ".2.gz", ".1", ""};
	char name[300];

	for (int i = 0; i < 5; i++) {
		char *text = lines(first[i], last[i]);

		snprintf(name, sizeof(name), "%s%s", base, suffix[i]);
		if (i == 0)
			put_zst(name, text);
		else if (i < 3)
			put_gz(name, text);
		else
			put(name, text, strlen(text));
		free(text);
	}
}

/* a rotated set as logrotate leaves it with delaycompress, given
 * newest first; and the zstd of compresscmd among them */
static void rotated_set(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	int rc;

	put_rotated("lwm2.jsonl");
	{
		char *set[] = {path("lwm2.jsonl"), path("lwm2.jsonl.1"), path("lwm2.jsonl.2.gz"),
		               path("lwm2.jsonl.3.gz"), path("lwm2.jsonl.4.zst")};
		memset(&s, 0, sizeof(s));
		rc = scan_quiet(set, 5, &s, msg, sizeof(msg));
		ok(rc == 0 && run_of(&s, 1, 45),
		   "rotated set given newest first: read oldest first");
	}
	/* a pattern: name order would put .1 before .2.gz and the current
	 * file first */
	one[0] = path("lwm2.jsonl*");
	memset(&s, 0, sizeof(s));
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == 0 && run_of(&s, 1, 45), "pattern lwm2.jsonl*: the set in time order");
	/* the same file by a pattern and by name: read once */
	{
		char *twice[] = {path("lwm2.jsonl.1"), path("lwm2.jsonl*")};
		memset(&s, 0, sizeof(s));
		rc = scan_quiet(twice, 2, &s, msg, sizeof(msg));
		ok(rc == 0 && run_of(&s, 1, 45), "a file named twice is read once");
	}
	/* fn asks to stop: nothing after it, from this file or the next */
	memset(&s, 0, sizeof(s));
	s.stop_at = 15;
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == 1 && run_of(&s, 1, 15), "a stop ends the whole set");

	/* an empty current log (logrotate's create) comes last and is fine */
	put("lwm2.jsonl", "", 0);
	memset(&s, 0, sizeof(s));
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == 0 && run_of(&s, 1, 40), "an empty current log: no error");
}

/* several gzip members, several zstd frames (cat a.gz b.gz) */
static void members_frames(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	void *b;
	int rc;

	char *t1 = lines(1, 3), *t2 = lines(4, 6);
	void *z1, *z2, *zz;
	size_t n1 = zst(t1, strlen(t1), &z1), n2 = zst(t2, strlen(t2), &z2);
	size_t l1, l2;
	char *g;

	zz = malloc(n1 + n2);
	memcpy(zz, z1, n1);
	memcpy((char *)zz + n1, z2, n2);
	put("frames", zz, n1 + n2);
	put_gz("m1", t1);
	put_gz("m2", t2);
	b = slurp("m1", &l1);
	g = slurp("m2", &l2);
	memcpy((char *)b + l1, g, l2);
	put("members", b, l1 + l2);
	free(b);
	free(g);
	free(zz);
	free(z1);
	free(z2);
	free(t1);
	free(t2);
	memset(&s, 0, sizeof(s));
	one[0] = path("frames");
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == 0 && run_of(&s, 1, 6), "two zstd frames: both read");
	memset(&s, 0, sizeof(s));
	one[0] = path("members");
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == 0 && run_of(&s, 1, 6), "two gzip members: both read");
}

/* cut short: an error naming the file and why, the other files read */
static void truncated_gz(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	void *b;
	size_t len;
	int rc;

	b = slurp("lwm2.jsonl.3.gz", &len);
	put("lwm2.jsonl.3.gz", b, len / 2);
	free(b);
	memset(&s, 0, sizeof(s));
	one[0] = path("lwm2.jsonl*");
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == -1, "a truncated .gz: -1");
	ok(strstr(msg, "lwm2.jsonl.3.gz") && strstr(msg, "gzip data cut short"),
	   "the message names the file and the reason");
	ok(strstr(msg, "1 of 5 files couldn't be read (see above); read the other 4") != NULL,
	   "and says the other files were read");
	ok(!strstr(msg, "skipped"), "the cut-off last line is not read as a line");
	if (!strstr(msg, "cut short") || !strstr(msg, "other 4") || strstr(msg, "skipped"))
		diag("stderr: %s", msg);
	{
		bool others = s.n >= 30, firsts = true, lasts = true;
		for (size_t i = 0; i < 10 && i < s.n; i++)
			firsts = firsts && s.ids[i] == (long)i + 1;
		for (size_t i = 0; i < 20 && s.n >= 20; i++)
			lasts = lasts && s.ids[s.n - 20 + i] == 21 + (long)i;
		ok(others && firsts && lasts, "the files before and after it are read whole");
	}
}

/* a truncated .zst alone */
static void truncated_zst_corrupt_gz(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	void *b;
	size_t len;
	int rc;

	b = slurp("lwm2.jsonl.4.zst", &len);
	put("cut.zst", b, len - 5);
	free(b);
	memset(&s, 0, sizeof(s));
	one[0] = path("cut.zst");
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == -1 && strstr(msg, "cut.zst") && strstr(msg, "zstd data cut short"),
	   "a truncated .zst: -1, named, with the reason");

	/* corrupt deflate data inside a whole-looking gzip file */
	b = slurp("gzip.txt", &len);
	for (size_t i = 20; i < len - 12; i++)
		((unsigned char *)b)[i] ^= 0x5a;
	put("corrupt.gz", b, len);
	free(b);
	memset(&s, 0, sizeof(s));
	one[0] = path("corrupt.gz");
	rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
	ok(rc == -1 && strstr(msg, "corrupt.gz") && strstr(msg, "corrupt gzip data"),
	   "corrupt gzip data: -1, named, with the reason");
	if (rc != -1)
		diag("rc %d, stderr: %s", rc, msg);
}

/* what is not read at all */
static void not_read(void)
{
	char msg[8192];
	struct seen s;
	int rc;

	static const unsigned char xz[] = {0xfd, '7', 'z', 'X', 'Z', 0, 0, 4};
	char *bad[] = {path("missing"), dir, path("nomatch*"), path("x.xz"), path("lwm2.jsonl.1")};

	put("x.xz", xz, sizeof(xz));
	memset(&s, 0, sizeof(s));
	rc = scan_quiet(bad, 5, &s, msg, sizeof(msg));
	ok(rc == -1 && run_of(&s, 31, 40), "missing, directory, no match, xz: -1, the "
	                                   "readable file read");
	ok(strstr(msg, "missing: No such file") != NULL, "a missing file: named, why");
	ok(strstr(msg, "it is a directory") != NULL, "a directory: named, why");
	ok(strstr(msg, "nomatch*: no file matches it") != NULL, "a pattern matching none");
	ok(strstr(msg, "x.xz: xz-compressed") != NULL, "xz: said, not read as lines");
	ok(strstr(msg, "4 of 5 files couldn't be read") != NULL, "the summary");
}

/* permission denied: root reads any file */
static void permission_denied(void)
{
	char msg[8192];
	char *one[1];
	struct seen s;
	int rc;

	if (geteuid() != 0) {
		char *p = path("lwm2.jsonl.1");
		chmod(p, 0);
		memset(&s, 0, sizeof(s));
		one[0] = p;
		rc = scan_quiet(one, 1, &s, msg, sizeof(msg));
		ok(rc == -1 && strstr(msg, "Permission denied"), "an unreadable file: -1, why");
		chmod(p, 0600);
	} else {
		skip("permission denied: running as root, which reads any file");
	}
}

/* lwm2_lines on a stream: a gzip file through fmemopen (stdin is
 * read the same way) */
static void stream(void)
{
	void *b;
	size_t len;

	struct lwm2_lines lr = {0};
	char *line;
	long n, count = 0;

	b = slurp("gzip.txt", &len);
	lr.f = fmemopen(b, len, "r");
	while ((n = lwm2_lines_next(&lr, &line)) != -1)
		count += n > 0;
	ok(count == 50 && !lr.why[0], "lwm2_lines decompresses a stream: 50 lines");
	fclose(lr.f);
	lwm2_lines_free(&lr);
	free(b);
}

/* lwm2_logscan_pipe: each line worked on some thread, into its own slot,
 * and taken in the log's order; the same lines, counts and stop as
 * lwm2_logscan_files. */
struct pipe_seen {
	struct seen s;
	bool mismatch; /* a slot taken with another line's work */
};

static int pipe_work(void *arg, unsigned worker, const struct lwm2_logline *l, void *slot,
                     char *err, size_t errlen)
{
	json_object *id = json_object_object_get(l->fields, "job_id");

	(void)arg;
	(void)worker;
	(void)err;
	(void)errlen;
	*(long *)slot = id ? (long)json_object_get_int64(id) : -1;
	return 0;
}

static int pipe_take(void *arg, const struct lwm2_logline *l, void *slot, char *err, size_t errlen)
{
	struct pipe_seen *ps = arg;
	json_object *id = json_object_object_get(l->fields, "job_id");

	if (!id || (long)json_object_get_int64(id) != *(long *)slot)
		ps->mismatch = true;
	return on_line(&ps->s, l, err, errlen);
}

static void pipelined(void)
{
	char *set[] = {path("p.jsonl"), path("p.jsonl.1"), path("p.jsonl.2.gz"),
	               path("p.jsonl.3.gz"), path("p.jsonl.4.zst")};
	char *text, *bad;

	/* a rotated set of its own (the cases above cut some files short) */
	put_rotated("p.jsonl");
	text = lines(46, 60);
	bad = malloc(strlen(text) + 32);
	int first = (int)(strchr(text, '\n') - text) + 1;

	/* a line that is no JSON after the first, and an empty one */
	snprintf(bad, strlen(text) + 32, "%.*snot json\n\n%s", first, text, text + first);
	put("mixed.jsonl", bad, strlen(bad));
	free(text);
	free(bad);
	for (unsigned threads = 1; threads <= 3; threads += 2) {
		struct pipe_seen ps;
		struct lwm2_logscan_pipe p = {.threads = threads,
		                              .slot_size = sizeof(long),
		                              .work = pipe_work,
		                              .take = pipe_take,
		                              .arg = &ps};
		struct lwm2_logscan_count c = {.quiet = true}, c1 = {.quiet = true};
		struct seen s1;
		char *mixed[] = {path("mixed.jsonl")};
		int rc;

		memset(&ps, 0, sizeof(ps));
		rc = lwm2_logscan_pipe("test", set, 5, &p, &c);
		ok(rc == 0 && run_of(&ps.s, 1, 45) && !ps.mismatch && c.lines == 45 && !c.bad,
		   "pipe, %u threads: a rotated set in order, each slot its line's", threads);
		memset(&ps, 0, sizeof(ps));
		ps.s.stop_at = 23;
		c = (struct lwm2_logscan_count){.quiet = true};
		rc = lwm2_logscan_pipe("test", set, 5, &p, &c);
		memset(&s1, 0, sizeof(s1));
		s1.stop_at = 23;
		lwm2_logscan_files("test", set, 5, on_line, &s1, &c1);
		ok(rc == 1 && run_of(&ps.s, 1, 23) && c.lines == c1.lines && c.lines == 23,
		   "  stopped at job 23: the lines after it not taken, lines counted as without "
		   "threads (%lu)",
		   c.lines);
		memset(&ps, 0, sizeof(ps));
		c = (struct lwm2_logscan_count){.quiet = true};
		rc = lwm2_logscan_pipe("test", mixed, 1, &p, &c);
		ok(rc == 0 && run_of(&ps.s, 46, 60) && c.lines == 17 && c.bad == 1,
		   "  a line that is no JSON skipped and counted, an empty one passed over");
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		BAIL_OUT_FN("mkdtemp");
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);

	three_ways();
	rotated_set();
	members_frames();
	truncated_gz();
	truncated_zst_corrupt_gz();
	not_read();
	permission_denied();
	stream();
	pipelined();

	{
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("couldn't remove %s", dir);
	}
	return done_testing();
}
