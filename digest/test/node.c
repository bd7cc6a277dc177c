/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Merging rank records from a directory into a node record. */
#include "digest_internal.h"
#include "mkrecord.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

struct logbuf {
	char text[4096];
	int lines;
};

static void logger(void *arg, const char *msg)
{
	struct logbuf *l = arg;
	size_t n = strlen(l->text);

	snprintf(l->text + n, sizeof(l->text) - n, "%s\n", msg);
	l->lines++;
}

static int64_t series_at(json_object *node, const char *counter, size_t k)
{
	json_object *s = ju_get(node, "series", json_type_object);
	json_object *c = ju_get(ju_get(s, "c", json_type_object), counter, json_type_array);

	return c && k < json_object_array_length(c)
	           ? json_object_get_int64(json_object_array_get_idx(c, k))
	           : -1;
}

static bool has_flag(json_object *node, const char *f)
{
	json_object *a = ju_get(node, "flags", json_type_array);

	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(a, i)), f))
			return true;
	return false;
}

/* Slice alignment cases: (first_slice, length, values) of two processes
 * and the node series expected on the longer length. */
static const struct scase {
	const char *name;
	uint64_t f0;
	uint32_t l0;
	uint32_t n0;
	uint64_t f1;
	uint32_t l1;
	uint32_t n1;
	uint64_t want_first;
	uint64_t want_len;
	int64_t want[4];
} scases[] = {
    /* same length, offset by one slice */
    {"equal lengths", 100, 10, 3, 101, 10, 2, 100, 10, {1, 12, 23, -1}},
    /* one coarsened to 20 s: slices 100,101 | 102 fall in 50 | 51 */
    {"coarsened series", 100, 10, 3, 50, 20, 2, 50, 20, {13, 23, -1, -1}},
    /* gap between the processes */
    {"disjoint spans", 100, 10, 1, 103, 10, 1, 100, 10, {1, 0, 0, 10}},
};

/* What must be skipped, each with a log line: garbage, a symlink to a
 * valid record (planted by a user), a truncated file, another job. */
static void bad_records(int dfd)
{
	int fd = openat(dfd, "garbage.lwm2", O_WRONLY | O_CREAT, 0600);
	ok(fd >= 0 && write(fd, "not a record at all", 19) == 19, "garbage file");
	close(fd);
	ok(symlinkat("rank0.lwm2", dfd, "planted.lwm2") == 0, "symlink planted");
	struct lwm2_rank_record *o = mk_rec(0, 9, "n1");
	o->job_id = 43;
	ok(write_rec(dfd, "other-job.lwm2", o) == 0, "record of another job");
	free(o);
	fd = openat(dfd, "ignored.txt", O_WRONLY | O_CREAT, 0600);
	close(fd);
	/* A header whose slot capacity would misalign the second slot
	 * (found by the fuzzer). */
	o = mk_rec(0, 8, "n1");
	o->job_id = 42;
	ok(write_rec(dfd, "misaligned.lwm2", o) == 0, "record to misalign");
	free(o);
	fd = openat(dfd, "misaligned.lwm2", O_RDWR);
	{
		struct lwm2_file_header h;
		ok(pread(fd, &h, sizeof(h), 0) == sizeof(h), "header read");
		h.slot_capacity += 4;
		ok(pwrite(fd, &h, sizeof(h), 0) == sizeof(h), "slot capacity misaligned");
	}
	close(fd);
}

static void merged(int dfd, struct lwm2_node_ident *id, struct logbuf *lb,
                   struct lwm2_rank_record **r, uint64_t want_write)
{
	json_object *node;
	json_object *procs;
	char err[256];

	node = lwm2_node_merge(dfd, id, logger, lb);
	ok(node != NULL, "merged");
	diag("log:\n%s", lb->text);
	ok(strstr(lb->text, "garbage.lwm2") && strstr(lb->text, "planted.lwm2") &&
	       strstr(lb->text, "other-job.lwm2") && !strstr(lb->text, "ignored.txt"),
	   "each bad record logged by name");
	ok(strstr(lb->text, "belongs to job 43") != NULL, "foreign job named in the log");
	ok(strstr(lb->text, "misaligned.lwm2: bad slot capacity") != NULL,
	   "misaligned slot capacity rejected");
	is_int(lb->lines, 4, "four log lines");
	procs = ju_get(node, "procs", json_type_array);
	is_int(procs ? (int)json_object_array_length(procs) : -1, 4, "the four good records kept");
	{
		json_object *tot =
		    ju_get(ju_get(node, "totals", json_type_object), "c", json_type_array);
		is_int(
		    json_object_get_int64(json_object_array_get_idx(tot, LWM2_C_posix_write_bytes)),
		    (int64_t)want_write, "total bytes written is the sum");
	}
	{
		json_object *inc = ju_get(node, "incomplete", json_type_array);
		ok(inc && json_object_array_length(inc) == 1 &&
		       json_object_get_int(json_object_array_get_idx(inc, 0)) == r[2]->pid,
		   "incomplete process listed by pid");
	}
	ok(has_flag(node, "incomplete") && has_flag(node, "skipped_records"), "flags set");
	ok(!has_flag(node, "missing_tasks"), "4 of 4 expected tasks");
	is_int(series_at(node, "posix_write_bytes", 0), 160, "slice 0 sums 4 x 40");
	is_int(series_at(node, "posix_write_bytes", 1), (int64_t)want_write - 160,
	       "slice 1 sums the rest");
	is_int(series_at(node, "mpi_p2p_ns", 0), -1, "untouched counters have no column");
	ok(lwm2_node_validate(node, err, sizeof(err)) == 0, "merge output validates: %s", err);

	/* The record as JSON text round-trips through validation; damaged
	 * copies do not. */
	{
		const char *txt = json_object_to_json_string(node);
		json_object *copy = json_tokener_parse(txt), *p0;
		ok(lwm2_node_validate(copy, err, sizeof(err)) == 0, "parsed copy validates");
		p0 = json_object_array_get_idx(ju_get(copy, "procs", json_type_array), 0);
		json_object_array_del_idx(ju_get(p0, "c", json_type_array), 0, 1);
		ok(lwm2_node_validate(copy, err, sizeof(err)) != 0 && strstr(err, "process 0"),
		   "short counter array rejected: %s", err);
		json_object_put(copy);
		copy = json_tokener_parse(txt);
		json_object_object_add(copy, "lwm2_node_version", json_object_new_int(99));
		ok(lwm2_node_validate(copy, err, sizeof(err)) != 0, "other version rejected");
		json_object_put(copy);
		ok(lwm2_node_validate(NULL, err, sizeof(err)) != 0, "NULL rejected");
	}
	json_object_put(node);
}

/* Fewer tasks than expected; a forked child of task 0 does not make
 * up for a missing task. */
static void fewer_tasks(int dfd, struct lwm2_node_ident *id, struct logbuf *lb)
{
	json_object *node;
	{
		struct lwm2_rank_record *f = mk_rec(0, 0, "n1");
		f->job_id = 42;
		f->pid = 2000;
		f->flags |= LWM2_F_FORK_CHILD;
		ok(write_rec(dfd, "fork.lwm2", f) == 0, "forked child's record");
		free(f);
	}
	id->expected_tasks = 5;
	node = lwm2_node_merge(dfd, id, logger, lb);
	ok(has_flag(node, "missing_tasks"), "4 tasks + a forked child: 4 of 5 tasks");
	json_object_put(node);
	unlinkat(dfd, "fork.lwm2", 0);
}

/* The step's summary of short processes: tasks 4..7 had only short
 * processes; 3 of sed, and an image of sh replaced by exec.  The sed
 * processes read in the node series' first slice (first, len). */
static unsigned char *summary_of(uint32_t step_id, int64_t first, int64_t len)
{
	unsigned char *buf = calloc(1, LWM2_SUMMARY_SIZE);
	struct lwm2_summary_header *h = (void *)buf;
	struct lwm2_summary_exe *e = (void *)(h + 1);

	memcpy(h->magic, LWM2_SUMMARY_MAGIC, 8);
	h->version = LWM2_SUMMARY_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(*e);
	h->nslots = LWM2_SUMMARY_SLOTS;
	h->ncounters = LWM2_NCOUNTERS;
	h->nearmarks = LWM2_NEARMARKS;
	h->job_id = 42;
	h->step_id = step_id;
	h->task_bits[0] = 0xf0;
	e[3].key = lwm2_summary_key("sed");
	memcpy(e[3].name, "sed", 3);
	e[3].processes = e[3].images = 3;
	e[3].exit_ok = 2;
	e[3].exit_failed = 1;
	e[3].utime_us = 30;
	e[3].counters[LWM2_C_posix_read_bytes] = 300;
	h->nslices = LWM2_SUMMARY_SLICES;
	h->slice_size = sizeof(struct lwm2_summary_slice);
	/* the sed processes read in the node series' first slice */
	lwm2_summary_slices(h)[7].key = lwm2_summary_slice_key((uint64_t)first, (uint32_t)len);
	lwm2_summary_slices(h)[7].s.counters[LWM2_C_posix_read_bytes] = 300;
	e[9].key = lwm2_summary_key("sh");
	memset(e[9].name, 's', sizeof(e[9].name)); /* unterminated: cut by the reader */
	e[9].images = 1;
	return buf;
}

/* The node record merged with the summary: its short processes counted,
 * sed one entry, the exec'd sh flagged, the summary's slices in the
 * series. */
static void summary_merged(json_object *node, int64_t before)
{
	json_object *plist, *exes;
	int64_t n_sed = -1, sh_flags = -1, sed_exe = -1;
	char err[256] = ""; /* validate writes it only on failure */

	ok(node && !has_flag(node, "missing_tasks"),
	   "tasks with only short processes count as seen (8 of 8)");
	ok(ju_int_or(ju_get(node, "totals", json_type_object), "processes", -1) == before + 3,
	   "3 short processes added to the node's processes");
	plist = ju_get(node, "procs", json_type_array);
	for (size_t i = 0; plist && i < json_object_array_length(plist); i++) {
		json_object *p = json_object_array_get_idx(plist, i);
		const char *x = ju_str(p, "exe");
		if (x && !strcmp(x, "sed"))
			n_sed = ju_int_or(p, "n", -1);
		if (x && x[0] == 's' && strlen(x) == LWM2_SUMMARY_NAME - 1)
			sh_flags = ju_int_or(p, "flags", -1);
	}
	ok(n_sed == 3, "sed: one entry standing for its 3 processes (%lld)", (long long)n_sed);
	{
		json_object *col =
		    ju_get(ju_get(ju_get(node, "series", json_type_object), "c", json_type_object),
		           "posix_read_bytes", json_type_array);
		int64_t sum = 0, tot = -1;
		json_object *tc =
		    ju_get(ju_get(node, "totals", json_type_object), "c", json_type_array);

		for (size_t i = 0; col && i < json_object_array_length(col); i++)
			sum += json_object_get_int64(json_object_array_get_idx(col, i));
		if (tc)
			tot = json_object_get_int64(
			    json_object_array_get_idx(tc, LWM2_C_posix_read_bytes));
		ok(col && sum == tot && sum >= 300,
		   "the summary's slices are in the node series: bytes read %lld of %lld",
		   (long long)sum, (long long)tot);
	}
	ok(sh_flags >= 0 && (sh_flags & LWM2_F_EXEC) && (sh_flags & LWM2_F_SUMMARY),
	   "an executable only replaced by exec: its entry is flagged exec");
	exes = ju_get(node, "exes", json_type_array);
	for (size_t i = 0; exes && i < json_object_array_length(exes); i++) {
		json_object *x = json_object_array_get_idx(exes, i);
		if (!strcmp(ju_str(x, "exe") ?: "", "sed"))
			sed_exe = ju_int_or(x, "processes", -1);
	}
	ok(sed_exe == 3, "sed listed among the executables with 3 processes");
	ok(lwm2_node_validate(node, err, sizeof(err)) == 0, "merge with a summary validates: %s",
	   err);
}

/* The job digest of that node record: sed among the executables, the
 * short processes counted. */
static void summary_in_digest(json_object *node, int64_t before)
{
	struct lwm2_job_meta meta = {.job_id = 42};
	json_object *d = lwm2_job_digest_build(&meta, &node, 1);
	json_object *ex =
	    ju_get(ju_get(d, "scope", json_type_object), "executables", json_type_object);
	json_object *bc = ju_get(ex, "by_count", json_type_array);
	int64_t n = -1;
	for (size_t i = 0; bc && i < json_object_array_length(bc); i++) {
		json_object *x = json_object_array_get_idx(bc, i);
		if (!strcmp(ju_str(x, "exe") ?: "", "sed"))
			n = ju_int_or(x, "processes", -1);
	}
	ok(n == 3, "job digest: sed among the executables by count, 3 processes");
	ok(ju_int_or(ju_get(d, "scope", json_type_object), "processes", -1) == before + 3,
	   "job digest: the short processes counted");
	json_object_put(d);
}

static void short_processes(int dfd, struct lwm2_node_ident *id, struct logbuf *lb,
                            json_object *node)
{
	unsigned char *buf;
	int64_t before = ju_int_or(ju_get(node, "totals", json_type_object), "processes", -1);
	json_object *ser = ju_get(node, "series", json_type_object);
	int64_t first = ser ? ju_int_or(ser, "first_slice", 0) : 0;
	int64_t len = ser ? ju_int_or(ser, "slice_length_s", 60) : 60;
	int fd;

	json_object_put(node);
	buf = summary_of(id->step_id, first, len);
	fd = openat(dfd, LWM2_SUMMARY_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ok(fd >= 0 && write(fd, buf, LWM2_SUMMARY_SIZE) == (ssize_t)LWM2_SUMMARY_SIZE,
	   "summary written");
	close(fd);
	node = lwm2_node_merge(dfd, id, logger, lb);
	summary_merged(node, before);
	summary_in_digest(node, before);
	json_object_put(node);
	/* A summary of another size is skipped and logged. */
	fd = openat(dfd, LWM2_SUMMARY_FILE, O_WRONLY | O_TRUNC);
	ok(fd >= 0 && write(fd, buf, 100) == 100, "summary truncated");
	close(fd);
	lb->text[0] = '\0';
	node = lwm2_node_merge(dfd, id, logger, lb);
	ok(node && has_flag(node, "skipped_records") && strstr(lb->text, LWM2_SUMMARY_FILE),
	   "a bad summary is skipped and logged");
	unlinkat(dfd, LWM2_SUMMARY_FILE, 0);
	free(buf);
	json_object_put(node);
}

/* Slice alignment with coarsened series, in memory. */
static void slice_alignment(void)
{
	json_object *node;
	for (size_t i = 0; i < sizeof(scases) / sizeof(scases[0]); i++) {
		const struct scase *c = &scases[i];
		struct lwm2_rank_record *a = mk_rec(c->n0, 0, "n1"), *b = mk_rec(c->n1, 1, "n1");
		struct lwm2_rank_record *recs[2] = {a, b};
		struct lwm2_node_ident nid = {.cluster = "", .node = "n1"};
		json_object *s;
		a->first_slice = c->f0;
		a->slice_length_s = c->l0;
		b->first_slice = c->f1;
		b->slice_length_s = c->l1;
		for (uint32_t k = 0; k < c->n0; k++)
			mk_slices(a)[k].counters[LWM2_C_mpi_coll_calls] = k + 1;
		for (uint32_t k = 0; k < c->n1; k++)
			mk_slices(b)[k].counters[LWM2_C_mpi_coll_calls] = 10 * (k + 1);
		node = lwm2_node_merge_records(&nid, recs, NULL, 2, NULL, NULL);
		s = ju_get(node, "series", json_type_object);
		is_int(ju_int_or(s, "first_slice", -1), (int64_t)c->want_first, "%s: first slice",
		       c->name);
		is_int(ju_int_or(s, "slice_length_s", -1), (int64_t)c->want_len, "%s: length",
		       c->name);
		for (int k = 0; k < 4; k++)
			is_int(series_at(node, "mpi_coll_calls", (size_t)k), c->want[k],
			       "%s: slot %d", c->name, k);
		json_object_put(node);
		free(a);
		free(b);
	}
}

/* A hostile span (slices years apart) is coarsened, not allocated. */
static void hostile_span(void)
{
	json_object *node;
	struct lwm2_rank_record *a = mk_rec(1, 0, "n1"), *b = mk_rec(1, 1, "n1");
	struct lwm2_rank_record *recs[2] = {a, b};
	json_object *s;
	a->first_slice = 1;
	b->first_slice = 100000000;
	mk_slices(a)[0].counters[LWM2_C_cuda_calls] = 1;
	mk_slices(b)[0].counters[LWM2_C_cuda_calls] = 2;
	struct lwm2_node_ident nid = {.cluster = "", .node = "n1"};
	node = lwm2_node_merge_records(&nid, recs, NULL, 2, NULL, NULL);
	s = ju_get(node, "series", json_type_object);
	ok(ju_int_or(s, "n", 0) > 0 && ju_int_or(s, "n", 0) <= 4096 &&
	       has_flag(node, "series_approximate"),
	   "wide span bounded (%lld slots)", (long long)ju_int_or(s, "n", 0));
	json_object_put(node);
	free(a);
	free(b);
}

int main(void)
{
	char dir[] = "/tmp/lwm2-node-XXXXXX";
	struct lwm2_node_ident id = {
	    .cluster = "c1", .job_id = 42, .step_id = 0, .node = "n1", .expected_tasks = 4};
	struct logbuf lb = {.lines = 0};
	struct lwm2_rank_record *r[4];
	json_object *node;
	int dfd;
	uint64_t want_write = 0;

	ok(mkdtemp(dir) != NULL, "scratch directory");
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < 4; i++) {
		char name[32];
		r[i] = mk_rec(2, i, "n1");
		r[i]->job_id = 42;
		r[i]->counters[LWM2_C_mpi_p2p_ns] = (uint64_t)(i + 1) * 1000000000ull;
		r[i]->counters[LWM2_C_posix_write_bytes] = (uint64_t)(i + 1) * 100;
		want_write += r[i]->counters[LWM2_C_posix_write_bytes];
		r[i]->first_slice = 170000000;
		mk_slices(r[i])[0].counters[LWM2_C_posix_write_bytes] = 40;
		mk_slices(r[i])[1].counters[LWM2_C_posix_write_bytes] =
		    (uint64_t)(i + 1) * 100 - 40;
		if (i == 2)
			r[i]->flags |= LWM2_F_INCOMPLETE;
		snprintf(name, sizeof(name), "rank%d.lwm2", i);
		ok(write_rec(dfd, name, r[i]) == 0, "record %d written", i);
	}
	bad_records(dfd);
	merged(dfd, &id, &lb, r, want_write);
	fewer_tasks(dfd, &id, &lb);
	id.expected_tasks = 8;
	lb.text[0] = '\0';
	node = lwm2_node_merge(dfd, &id, logger, &lb);
	ok(has_flag(node, "missing_tasks"), "4 of 8 expected tasks flagged");
	short_processes(dfd, &id, &lb, node);
	slice_alignment();
	hostile_span();

	/* An unreadable directory is an error, not a crash. */
	errno = 0;
	ok(lwm2_node_merge(-1, &id, NULL, NULL) == NULL && errno == EBADF, "bad dirfd: EBADF");

	for (int i = 0; i < 4; i++)
		free(r[i]);
	{
		const char *names[] = {"rank0.lwm2",     "rank1.lwm2",   "rank2.lwm2",
		                       "rank3.lwm2",     "garbage.lwm2", "planted.lwm2",
		                       "other-job.lwm2", "ignored.txt",  "misaligned.lwm2"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			unlinkat(dfd, names[i], 0);
	}
	close(dfd);
	rmdir(dir);
	return done_testing();
}
