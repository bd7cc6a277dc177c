/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Job digests: statistics with locations, steps, compact form, parsing,
 * rendering. */
#include "digest_internal.h"
#include "mkrecord.h"
#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* A node record of nproc processes; process i spends mpi_ns(i) in MPI. */
static json_object *mk_node(const char *host, uint32_t step, int nproc, int rank0,
                            uint64_t (*mpi_ns)(int), uint32_t extra_flags_on_first)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = step, .node = host};
	struct lwm2_rank_record **recs = calloc((size_t)nproc, sizeof(*recs));
	json_object *node;

	for (int i = 0; i < nproc; i++) {
		recs[i] = mk_rec(0, rank0 + i, host);
		recs[i]->job_id = 7;
		recs[i]->step_id = step;
		recs[i]->counters[LWM2_C_mpi_p2p_ns] = mpi_ns(rank0 + i);
		recs[i]->counters[LWM2_C_mpi_p2p_calls] = 1000;
		recs[i]->counters[LWM2_C_mpi_p2p_bytes_sent] = 1000 * 64;
		recs[i]->counters[LWM2_C_posix_write_bytes] = 1000;
		recs[i]->missing = 1u << LWM2_G_HWC;
		strcpy(recs[i]->missing_reason[LWM2_G_HWC],
		       "no hardware counters on this platform");
	}
	if (nproc)
		recs[0]->flags |= extra_flags_on_first;
	node = lwm2_node_merge_records(&id, recs, NULL, (size_t)nproc, NULL, NULL);
	for (int i = 0; i < nproc; i++)
		free(recs[i]);
	free(recs);
	return node;
}

/* MPI time grows with the rank: 1 s, 2 s, ... of 10 s runs. */
static uint64_t mpi_linear(int rank)
{
	return (uint64_t)(rank + 1) * 1000000000ull;
}

static uint64_t mpi_heavy(int rank)
{
	return (uint64_t)(5 + rank % 3) * 1000000000ull;
}

static json_object *metric(json_object *scope, const char *id)
{
	return ju_get(ju_get(scope, "metrics", json_type_object), id, json_type_object);
}

static char *render(json_object *d, int steps)
{
	struct lwm2_render_opts o = {.steps = steps};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	lwm2_digest_render(d, f, &o);
	fclose(f);
	return buf;
}

static const struct {
	const char *name;
	const char *text;
	const char *err_has;
} bad_texts[] = {
    {"empty", "", "no digest found"},
    {"garbage", "hello world", "no digest found"},
    {"truncated JSON", "{\"lwm2_digest_version\":1,\"job\":{", "truncated"},
    {"other version", "{\"lwm2_digest_version\":99,\"job\":{},\"scope\":{}}", "version 99"},
    {"no scope", "{\"lwm2_digest_version\":1,\"job\":{}}", "scope"},
    {"metric with text",
     "{\"lwm2_digest_version\":1,\"job\":{},\"scope\":{\"processes\":1,\"metrics\":{\"cpi\":{"
     "\"min\":\"x\",\"avg\":1,\"max\":1,\"n\":1}}}}",
     "metric cpi malformed"},
    {"bad location",
     "{\"lwm2_digest_version\":1,\"job\":{},\"scope\":{\"processes\":1,\"metrics\":{\"cpi\":{"
     "\"min\":1,\"avg\":1,\"max\":1,\"n\":1,\"min_at\":[1]}}}}",
     "location malformed"},
    {"steps not an array",
     "{\"lwm2_digest_version\":1,\"job\":{},\"scope\":{\"processes\":0,\"metrics\":{}},"
     "\"steps\":{}}",
     "steps is not an array"},
    {"deep nesting",
     "LWM2:[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
     "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]",
     "not valid JSON"},
    {"prefix without JSON", "JS1:abc LWM2:", "not valid JSON"},
};

/* A rank record file as a version 2 library wrote it: the fixed part of
 * version 2 (no container), no slices. */
static int write_rec_v2(int dirfd, const char *name, const struct lwm2_rank_record *r)
{
	uint32_t cap = (uint32_t)lwm2_slot_capacity(0);
	size_t len = sizeof(struct lwm2_file_header) + 2 * (size_t)cap;
	char *buf = calloc(1, len);
	struct lwm2_file_header *h = (void *)buf;
	struct lwm2_rank_record *slot = (void *)(buf + sizeof(*h) + cap);
	int fd, rc = -1;

	lwm2_file_header_init(h, cap);
	h->version = 2;
	/* as version 2 wrote it: the 50 counters it had, then its tail */
	memcpy(slot, r, LWM2_RECORD_HEAD + 8 * LWM2_NCOUNTERS_V3);
	memcpy((char *)slot + LWM2_RECORD_HEAD + 8 * LWM2_NCOUNTERS_V3, &r->language,
	       LWM2_RECORD_TAIL_V2);
	memcpy(slot->magic, LWM2_RECORD_MAGIC, sizeof(slot->magic));
	slot->version = 2;
	slot->record_size = LWM2_RECORD_V2_SIZE;
	slot->ncounters = LWM2_NCOUNTERS_V3;
	slot->nearmarks = LWM2_NEARMARKS;
	slot->nslices = 0;
	slot->total_size = LWM2_RECORD_V2_SIZE;
	slot->generation = 7;
	slot->checksum = lwm2_record_checksum(slot);
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len)
		rc = 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static char *line_of(const char *text, const char *start)
{
	const char *s = strstr(text, start), *e;

	if (!s)
		return NULL;
	e = strchr(s, '\n');
	return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

/* The container each process ran in: rank records of versions 2 and 3
 * merged in one step, the node record's and the digest's groups, their
 * JSON and text, a hostile image name, more containers than listed. */
static void containers_digest(const struct lwm2_job_meta *meta, json_object *node)
{
	char err[256] = "";
	char *text;
	char *line;
	json_object *d;
	json_object *back;
	json_object *a;
	json_object *e;
	const char *json;
	double v = -1;

	d = lwm2_job_digest_build(meta, &node, 1);
	ok(d && lwm2_digest_validate(d, err, sizeof(err)) == 0, "containers: digest: %s", err);
	json = d ? json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN) : "";
	back = lwm2_digest_parse(json, strlen(json), err, sizeof(err));
	a = back ? ju_get(back, "containers", json_type_array) : NULL;
	e = a && json_object_array_length(a) == 1 ? json_object_array_get_idx(a, 0) : NULL;
	ok(e && !strcmp(ju_str(e, "runtime") ?: "", "charliecloud") &&
	       !strcmp(ju_str(e, "image") ?: "", "/img/x") && ju_int_or(e, "processes", 0) == 4 &&
	       ju_int_or(e, "ranks", 0) == 4 && ju_num(e, "cpu_s", &v) && fabs(v - 4) < 1e-9,
	   "digest JSON read back: charliecloud /img/x, 4 processes, 4 ranks, 4 CPU-s");
	ok(e && ju_num(e, "cpu_share", &v) && fabs(v - 400.0 / 4.5) < 1e-3,
	   "its CPU time share: 4 of 4.5 s");
	ok(back && !ju_get(back, "containers_omitted", json_type_int), "nothing omitted");
	text = back ? render(back, 0) : NULL;
	line = text ? line_of(text, "Container:") : NULL;
	is_str(line, "Container: charliecloud /img/x (4 of 5 processes, 88.9 % of CPU time)",
	       "text digest: the Container line");
	ok(text && strstr(text, "Container:") > strstr(text, "Job 7") &&
	       strstr(text, "Container:") < strstr(text, "lwm2 digest:"),
	   "after the job's header, before the metrics");
	free(line);
	free(text);
	/* the compact form keeps it */
	text = d ? lwm2_job_digest_compact(d, 0) : NULL;
	json_object_put(back);
	back = text ? lwm2_digest_parse(text, strlen(text), err, sizeof(err)) : NULL;
	ok(back && ju_get(back, "containers", json_type_array),
	   "the compact form keeps containers");
	json_object_put(back);
	free(text);
	json_object_put(d);
}

/* A hostile image: ':' and quotes and newlines and 300 bytes, an
 * escape, a byte that is not UTF-8 and a C1 control (CSI) */
static void hostile_image(const struct lwm2_job_meta *meta, const struct lwm2_node_ident *id)
{
	char err[256] = "";
	char *text;
	char *line;
	json_object *node;
	json_object *d;
	json_object *back;
	json_object *a;
	json_object *e;
	const char *json;

	struct lwm2_rank_record *r = mk_rec(0, 0, "n1");
	char v3[400], want[LWM2_CONTAINER_IMAGE_LEN];
	size_t k = 0;

	k += (size_t)snprintf(v3, sizeof(v3), "podman:docker.io/x:1\"\n\x1b[2J\xff\xc2\x9b");
	for (; k < 310; k++)
		v3[k] = "\":\n'\\ab"[k % 7];
	v3[k] = '\0';
	r->job_id = 7;
	lwm2_record_set_container(r, v3);
	ok(strlen(r->container_image) == LWM2_CONTAINER_IMAGE_LEN - 1,
	   "hostile image: cut to %d bytes in the record", LWM2_CONTAINER_IMAGE_LEN - 1);
	memcpy(want, r->container_image, sizeof(want));
	want[strlen("docker.io/x:1\"\n\x1b[2J")] = '?'; /* the byte 0xff */
	node = lwm2_node_merge_records(id, &r, NULL, 1, NULL, NULL);
	d = lwm2_job_digest_build(meta, &node, 1);
	json = d ? json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN) : "";
	ok(!strchr(json, '\n') && !strchr(json, '\x1b') && !strchr(json, '\xff'),
	   "hostile image: the JSON has no raw newline, escape or invalid byte");
	back = lwm2_digest_parse(json, strlen(json), err, sizeof(err));
	a = back ? ju_get(back, "containers", json_type_array) : NULL;
	e = a ? json_object_array_get_idx(a, 0) : NULL;
	is_str(e ? ju_str(e, "image") : NULL, want,
	       "hostile image: read back as written, the invalid byte as '?'");
	text = back ? render(back, 0) : NULL;
	line = text ? line_of(text, "Container:") : NULL;
	ok(line &&
	       strstr(line, "Container: podman docker.io/x:1\"\\x0a\\x1b[2J?\\xc2\\x9b") == line &&
	       strstr(line, "\":\\x0a'\\\\ab\"") && strstr(line, " (1 of 1 processes)") &&
	       !strchr(text, '\x1b') && !strstr(text, "\xc2\x9b"),
	   "hostile image: one escaped text line: %s", line ? line : "(none)");
	free(line);
	free(text);
	json_object_put(back);
	json_object_put(d);
	json_object_put(node);
	free(r);
}

/* Ten containers: the digest lists the eight with most CPU time, the
 * rest counted; a compact form cut down keeps the main one. */
static void ten_containers(const struct lwm2_job_meta *meta, const struct lwm2_node_ident *id)
{
	char err[256] = "";
	char *text;
	json_object *node;
	json_object *d;
	json_object *back;
	json_object *a;

	struct lwm2_rank_record *recs[10];
	char val[64];
	size_t cap;

	for (int i = 0; i < 10; i++) {
		recs[i] = mk_rec(0, i, "n1");
		recs[i]->job_id = 7;
		recs[i]->utime_us = (uint64_t)(10 - i) * 1000000;
		snprintf(val, sizeof(val), "apptainer:/img/%d.sif", i);
		lwm2_record_set_container(recs[i], val);
	}
	node = lwm2_node_merge_records(id, recs, NULL, 10, NULL, NULL);
	d = lwm2_job_digest_build(meta, &node, 1);
	a = ju_get(d, "containers", json_type_array);
	ok(a && json_object_array_length(a) == 8 &&
	       !strcmp(ju_str(json_object_array_get_idx(a, 0), "image") ?: "", "/img/0.sif") &&
	       ju_int_or(d, "containers_omitted", 0) == 2,
	   "ten containers: eight listed, the main one first, 2 processes omitted");
	text = render(d, 0);
	ok(text && strstr(text, "Container: 2 more processes in other containers\n"),
	   "and the text says so");
	free(text);
	text = lwm2_job_digest_compact(d, 0);
	back = text ? lwm2_digest_parse(text, strlen(text), err, sizeof(err)) : NULL;
	a = back ? ju_get(back, "containers", json_type_array) : NULL;
	ok(a && json_object_array_length(a) == 8, "the compact form of the default cap keeps 8");
	json_object_put(back);
	free(text);
	back = NULL;
	for (cap = 6000; cap >= 1500 && !back; cap -= 100) {
		json_object *c;
		if (!(text = lwm2_job_digest_compact(d, cap)))
			continue;
		c = lwm2_digest_parse(text, strlen(text), err, sizeof(err));
		free(text);
		a = c ? ju_get(c, "containers", json_type_array) : NULL;
		if (a && json_object_array_length(a) == 1)
			back = c;
		else
			json_object_put(c);
	}
	ok(back &&
	       !strcmp(
	           ju_str(json_object_array_get_idx(ju_get(back, "containers", json_type_array), 0),
	                  "image")
	               ?: "",
	           "/img/0.sif") &&
	       ju_int_or(back, "containers_omitted", 0) == 9,
	   "a small cap keeps the main container, 9 processes omitted (cap %zu)", cap + 100);
	json_object_put(back);
	json_object_put(d);
	json_object_put(node);
	for (int i = 0; i < 10; i++)
		free(recs[i]);
}

static void containers(void)
{
	struct lwm2_job_meta meta = {
	    .cluster = "c1", .job_id = 7, .user = "alice", .node_count = 1};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = 0, .node = "n1"};
	char dir[] = "/tmp/lwm2-ctr-test-XXXXXX";
	char err[256] = "";
	char name[64];
	json_object *node;
	json_object *a;
	json_object *e;
	int dfd = -1;

	ok(mkdtemp(dir) != NULL && (dfd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0,
	   "containers: scratch directory");
	/* four ranks in a container (version 3), a helper outside, written by
	 * a version 2 library (no container fields at all) */
	for (int i = 0; i < 5; i++) {
		struct lwm2_rank_record *r = mk_rec(0, i < 4 ? i : -1, "n1");

		r->job_id = 7;
		r->utime_us = i < 4 ? 1000000 : 500000;
		snprintf(name, sizeof(name), "r%d.lwm2", i);
		if (i < 4) {
			lwm2_record_set_container(r, "charliecloud:/img/x");
			ok(write_rec(dfd, name, r) == 0, "containers: version 3 record %d written",
			   i);
		} else {
			r->flags = 0;
			r->task_id = 0;
			strcpy(r->executable, "/bin/bash");
			ok(write_rec_v2(dfd, name, r) == 0, "containers: version 2 record written");
		}
		free(r);
	}
	node = lwm2_node_merge(dfd, &id, NULL, NULL);
	ok(node && lwm2_node_validate(node, err, sizeof(err)) == 0,
	   "containers: versions 2 and 3 merged into one node record: %s", err);
	a = ju_get(node, "containers", json_type_array);
	e = a && json_object_array_length(a) == 1 ? json_object_array_get_idx(a, 0) : NULL;
	ok(e && !strcmp(ju_str(e, "runtime") ?: "", "charliecloud") &&
	       !strcmp(ju_str(e, "image") ?: "", "/img/x") && ju_int_or(e, "processes", 0) == 4 &&
	       ju_int_or(e, "ranks", 0) == 4 && ju_int_or(e, "cpu_us", 0) == 4000000,
	   "node record: 4 processes, 4 ranks and 4 s of CPU in charliecloud /img/x");
	is_int(ju_int_or(ju_get(node, "totals", json_type_object), "processes", 0), 5,
	       "node record: 5 processes, the version 2 one in no container");

	containers_digest(&meta, node);
	json_object_put(node);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "r%d.lwm2", i);
		unlinkat(dfd, name, 0);
	}
	close(dfd);
	rmdir(dir);

	hostile_image(&meta, &id);
	ten_containers(&meta, &id);
}

/* The application's view queries (lwm2_view(3)): two ranks that queried
 * (version 3 records), one that did not and a version 2 record (no such
 * fields: zero); the node record keeps them per process and in total, the
 * digest shows them in JSON and as one line; a job without queries shows
 * neither. */
/* The scratch directory dir (open as dfd) and its records r0.lwm2 to
 * r<n-1>.lwm2 removed. */
static void remove_records(int dfd, const char *dir, int n)
{
	char name[64];

	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "r%d.lwm2", i);
		unlinkat(dfd, name, 0);
	}
	close(dfd);
	rmdir(dir);
}

/* o's processes are the 6 of unmeasured() below, 4 of them unmeasured:
 * 2 no_preload, 1 static, 1 container. */
static bool unmeasured_are(json_object *o)
{
	json_object *by = ju_get(o, "unmeasured", json_type_object);

	return ju_int_or(o, "processes", 0) == 6 && ju_int_or(o, "unmeasured_processes", 0) == 4 &&
	       ju_int_or(by, "no_preload", 0) == 2 && ju_int_or(by, "static", 0) == 1 &&
	       ju_int_or(by, "container", 0) == 1;
}

/* Processes started unmeasured, counted by the images that started them:
 * in the node's and the digest's process totals, by reason, in the text
 * digest's notes, the compact form and the report's line. */
static void unmeasured(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 7, .node_count = 1};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = 0, .node = "n1"};
	char dir[] = "/tmp/lwm2-unm-test-XXXXXX", err[256] = "", name[64], *text, *line;
	char report[160];
	json_object *node, *d, *back, *scope;
	struct lwm2_scope sc;
	int dfd = -1;

	ok(mkdtemp(dir) != NULL && (dfd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0,
	   "unmeasured: scratch directory");
	/* a task that started 2 without LD_PRELOAD, a child of it that
	 * started a static one, and an image that exec'd into a container
	 * without the library (not a process itself: the one it started is) */
	for (int i = 0; i < 3; i++) {
		struct lwm2_rank_record *r = mk_rec(0, i < 1 ? 0 : -1, "n1");

		r->job_id = 7;
		r->counters[i == 0   ? LWM2_C_unmeasured_no_preload
		            : i == 1 ? LWM2_C_unmeasured_static
		                     : LWM2_C_unmeasured_container] = i == 0 ? 2 : 1;
		r->flags = i == 2 ? LWM2_F_EXEC : i == 1 ? LWM2_F_FORK_CHILD : 0;
		r->pid = 100 + i;
		snprintf(name, sizeof(name), "r%d.lwm2", i);
		ok(write_rec(dfd, name, r) == 0, "unmeasured: record %d written", i);
		free(r);
	}
	node = lwm2_node_merge(dfd, &id, NULL, NULL);
	ok(node && lwm2_node_validate(node, err, sizeof(err)) == 0, "unmeasured: node record: %s",
	   err);
	ok(unmeasured_are(node ? ju_get(node, "totals", json_type_object) : NULL),
	   "node record: 6 processes, 4 of them started unmeasured, by reason");
	d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
	ok(d && lwm2_digest_validate(d, err, sizeof(err)) == 0, "unmeasured: digest: %s", err);
	ok(unmeasured_are(ju_get(d, "scope", json_type_object)),
	   "digest: 6 processes, 4 of them started unmeasured, by reason");
	text = d ? render(d, 0) : NULL;
	line = text ? line_of(text, "  * 4 process") : NULL;
	ok(line &&
	       strstr(line, "4 process(es) started unmeasured (no_preload 2, static 1, "
	                    "container 1):") &&
	       strstr(text, "counted among the processes"),
	   "text digest: a note says how many started unmeasured and why (%s)", line ?: "none");
	ok(text && strstr(text, "Number of processes") &&
	       strstr(strstr(text, "Number of processes"), "6 ("),
	   "text digest: they are in the number of processes");
	free(line);
	free(text);
	text = d ? lwm2_job_digest_compact(d, 0) : NULL;
	back = text ? lwm2_digest_parse(text, strlen(text), err, sizeof(err)) : NULL;
	scope = ju_get(back, "scope", json_type_object);
	ok(ju_int_or(scope, "processes", 0) == 6 &&
	       ju_int_or(scope, "unmeasured_processes", 0) == 4 &&
	       ju_get(scope, "unmeasured", json_type_object),
	   "the compact form keeps them");
	lwm2_scope_from_json(&sc, ju_get(d, "scope", json_type_object), "job 7", 0);
	lwm2_render_unmeasured(&sc, report, sizeof(report));
	is_str(report, "4 process(es) started unmeasured (no_preload 2, static 1, container 1)",
	       "the report's line");
	json_object_put(back);
	free(text);
	json_object_put(d);
	json_object_put(node);
	remove_records(dfd, dir, 3);
}

static void add_region(struct lwm2_rank_record *r, const char *name, uint64_t calls, uint64_t ns)
{
	struct lwm2_region_entry *e = &r->regions[r->regions_n++];

	snprintf(e->name, sizeof(e->name), "%s", name);
	e->calls = calls;
	e->ns = ns;
}

/* The program's named regions: each name's calls summed, its time and
 * share of wall time as statistics over the ranks that entered it, where
 * the least and the most are, the folded rest; the text lines; the
 * busiest 64 names of a job kept, the others folded. */
static void named_regions(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 8, .node_count = 1};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 8, .step_id = 0, .node = "n1"};
	struct lwm2_rank_record *recs[4];
	json_object *node, *d, *reg, *names, *e, *t, *other;
	char err[256] = "", name[16], *text, *line;
	double x = -1;

	for (int i = 0; i < 4; i++) {
		struct lwm2_rank_record *r = recs[i] = mk_rec(0, i, "n1");

		r->job_id = 8;
		r->start_ns = 1700000000000000000ll;
		r->end_ns = r->start_ns + 10000000000ll; /* 10 s */
		add_region(r, "solver", 10, 1000000000ull * (uint64_t)(i + 1));
		if (i < 2)
			add_region(r, "io", 5, 100000000ull);
		if (i == 3) {
			r->regions_folded = 3;
			r->regions_other_calls = 7;
			r->regions_other_ns = 200000000ull;
		}
		lwm2_record_seal(r);
	}
	node = lwm2_node_merge_records(&id, recs, NULL, 4, NULL, NULL);
	d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
	ok(d && lwm2_digest_validate(d, err, sizeof(err)) == 0, "regions: digest: %s", err);
	reg = d ? ju_get(d, "regions", json_type_object) : NULL;
	names = reg ? ju_get(reg, "names", json_type_array) : NULL;
	is_int(names ? (int)json_object_array_length(names) : -1, 2, "regions: two names");
	e = names ? json_object_array_get_idx(names, 0) : NULL;
	t = e ? ju_get(e, "seconds", json_type_object) : NULL;
	ok(e && !strcmp(ju_str(e, "name"), "solver") && ju_int_or(e, "calls", 0) == 40 &&
	       ju_int_or(e, "ranks", 0) == 4,
	   "solver first (the busiest): 40 calls by 4 ranks");
	ok(t && ju_num(t, "min", &x) && x == 1 && ju_num(t, "max", &x) && x == 4 &&
	       ju_num(t, "avg", &x) && x == 2.5 &&
	       json_object_get_int(
	           json_object_array_get_idx(ju_get(t, "min_at", json_type_array), 0)) == 0 &&
	       json_object_get_int(
	           json_object_array_get_idx(ju_get(t, "max_at", json_type_array), 0)) == 3,
	   "its time: min 1 s at rank 0, avg 2.5 s, max 4 s at rank 3");
	t = e ? ju_get(e, "share", json_type_object) : NULL;
	ok(t && ju_num(t, "avg", &x) && fabs(x - 25) < 1e-9, "its share of wall time: 25 %%");
	e = names ? json_object_array_get_idx(names, 1) : NULL;
	ok(e && !strcmp(ju_str(e, "name"), "io") && ju_int_or(e, "calls", 0) == 10 &&
	       ju_int_or(e, "ranks", 0) == 2,
	   "io: 10 calls by the 2 ranks that entered it");
	other = reg ? ju_get(reg, "other", json_type_object) : NULL;
	ok(reg && ju_int_or(reg, "folded", 0) == 3 && other && ju_int_or(other, "calls", 0) == 7 &&
	       ju_num(other, "seconds", &x) && fabs(x - 0.2) < 1e-9,
	   "the folded rest: 3 names, 7 calls, 0.2 s");
	text = d ? render(d, 0) : NULL;
	line = text ? line_of(text, "  solver:") : NULL;
	is_str(line,
	       "  solver: 40 calls by 4 processes, avg 2.50 s (min 1.00 s rank 0@n1, max 4.00 s "
	       "rank 3@n1), 25.0 % of their wall time",
	       "text digest: the solver line");
	free(line);
	line = text ? line_of(text, "  3 more") : NULL;
	is_str(line, "  3 more names folded: 7 calls, 0.2 s", "text digest: the folded line");
	free(line);
	free(text);
	text = d ? lwm2_job_digest_compact(d, 0) : NULL;
	ok(text && strstr(text, "\"regions\":{\"names\":[{\"name\":\"solver\""),
	   "the compact form keeps them");
	free(text);
	json_object_put(d);
	json_object_put(node);
	for (int i = 0; i < 4; i++)
		free(recs[i]);

	/* 4 ranks of 20 names each, 71 names in all: the busiest 64 kept */
	for (int i = 0; i < 4; i++) {
		struct lwm2_rank_record *r = recs[i] = mk_rec(0, i, "n1");

		r->job_id = 8;
		for (int k = 0; k < 20; k++) {
			int n = i == 0 ? k : 20 + (i - 1) * 17 + k % 17;

			snprintf(name, sizeof(name), "r%02d", n);
			add_region(r, name, 1, 1000000ull * (uint64_t)(100 - n));
		}
		lwm2_record_seal(r);
	}
	node = lwm2_node_merge_records(&id, recs, NULL, 4, NULL, NULL);
	d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
	reg = d ? ju_get(d, "regions", json_type_object) : NULL;
	names = reg ? ju_get(reg, "names", json_type_array) : NULL;
	e = names ? json_object_array_get_idx(names, 63) : NULL;
	ok(names && json_object_array_length(names) == 64 && ju_int_or(reg, "folded", 0) == 7 &&
	       e && !strcmp(ju_str(e, "name"), "r63"),
	   "71 names: the busiest 64 kept (r00 to r63), 7 folded");
	json_object_put(d);
	json_object_put(node);
	for (int i = 0; i < 4; i++)
		free(recs[i]);
}

static void view_queries(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 7, .node_count = 1};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = 0, .node = "n1"};
	char dir[] = "/tmp/lwm2-view-test-XXXXXX", err[256] = "", name[64], *text, *line;
	json_object *node, *d, *back, *v, *procs, *tot;
	const char *json;
	double s = -1;
	int dfd = -1, with = 0;

	ok(mkdtemp(dir) != NULL && (dfd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0,
	   "view: scratch directory");
	for (int i = 0; i < 4; i++) {
		struct lwm2_rank_record *r = mk_rec(0, i, "n1");

		r->job_id = 7;
		/* a version 2 library's record carries whatever the caller set
		 * beyond its size: it must read as none */
		r->view_queries = i < 2 || i == 3 ? 30 : 0;
		r->view_ns = i < 2 || i == 3 ? 600000 : 0;
		snprintf(name, sizeof(name), "r%d.lwm2", i);
		if (i < 3)
			ok(write_rec(dfd, name, r) == 0, "view: version 3 record %d written", i);
		else
			ok(write_rec_v2(dfd, name, r) == 0, "view: version 2 record written");
		free(r);
	}
	node = lwm2_node_merge(dfd, &id, NULL, NULL);
	ok(node && lwm2_node_validate(node, err, sizeof(err)) == 0,
	   "view: versions 2 and 3 merged into one node record: %s", err);
	procs = node ? ju_get(node, "procs", json_type_array) : NULL;
	for (size_t i = 0; procs && i < json_object_array_length(procs); i++) {
		json_object *p = json_object_array_get_idx(procs, i);
		if (ju_int_or(p, "view_queries", 0) == 30 && ju_int_or(p, "view_ns", 0) == 600000)
			with++;
		else if (ju_get(p, "view_queries", json_type_int) ||
		         ju_get(p, "view_ns", json_type_int))
			with = -100;
	}
	is_int(with, 2,
	       "node record: 2 processes with 30 queries in 600 us, no member on the others");
	tot = node ? ju_get(node, "totals", json_type_object) : NULL;
	ok(tot && ju_int_or(tot, "view_queries", 0) == 60 &&
	       ju_int_or(tot, "view_ns", 0) == 1200000 && ju_int_or(tot, "view_procs", 0) == 2,
	   "node record totals: 60 queries by 2 processes in 1.2 ms");

	d = lwm2_job_digest_build(&meta, &node, 1);
	ok(d && lwm2_digest_validate(d, err, sizeof(err)) == 0, "view: digest: %s", err);
	json = d ? json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN) : "";
	ok(strstr(json, "\"view\":{\"queries\":60,\"ranks\":2,\"seconds\":0.0012}") != NULL,
	   "digest JSON: \"view\":{\"queries\":60,\"ranks\":2,\"seconds\":0.0012}");
	back = lwm2_digest_parse(json, strlen(json), err, sizeof(err));
	v = back ? ju_get(back, "view", json_type_object) : NULL;
	ok(v && ju_int_or(v, "queries", 0) == 60 && ju_int_or(v, "ranks", 0) == 2 &&
	       ju_num(v, "seconds", &s) && fabs(s - 0.0012) < 1e-9,
	   "read back: 60 queries, 2 ranks, 0.0012 s");
	text = back ? render(back, 0) : NULL;
	line = text ? line_of(text, "Application view") : NULL;
	is_str(line, "Application view (lwm2_view): 60 queries by 2 ranks, 0.0012 s",
	       "text digest: the Application view line");
	ok(text && strstr(text, "Application view") > strstr(text, "Job 7") &&
	       strstr(text, "Application view") < strstr(text, "lwm2 digest:"),
	   "after the job's header, before the metrics");
	free(line);
	free(text);
	json_object_put(back);
	text = d ? lwm2_job_digest_compact(d, 0) : NULL;
	back = text ? lwm2_digest_parse(text, strlen(text), err, sizeof(err)) : NULL;
	v = back ? ju_get(back, "view", json_type_object) : NULL;
	ok(v && ju_int_or(v, "queries", 0) == 60, "the compact form keeps it");
	json_object_put(back);
	free(text);
	json_object_put(d);
	json_object_put(node);
	remove_records(dfd, dir, 4);

	/* one query by one rank; then a job without any */
	{
		struct lwm2_rank_record *r = mk_rec(0, 0, "n1");

		r->job_id = 7;
		r->view_queries = 1;
		r->view_ns = 2500000000ull;
		node = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
		d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
		text = d ? render(d, 0) : NULL;
		line = text ? line_of(text, "Application view") : NULL;
		is_str(line, "Application view (lwm2_view): 1 query by 1 rank, 2.50 s",
		       "text digest: one query, one rank, seconds");
		free(line);
		free(text);
		json_object_put(d);
		json_object_put(node);
		r->view_queries = 0;
		r->view_ns = 0;
		node = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
		tot = node ? ju_get(node, "totals", json_type_object) : NULL;
		procs = node ? ju_get(node, "procs", json_type_array) : NULL;
		ok(tot && !ju_get(tot, "view_queries", json_type_int) && procs &&
		       !ju_get(json_object_array_get_idx(procs, 0), "view_queries", json_type_int),
		   "no queries: no view member in the node record");
		d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
		text = d ? render(d, 0) : NULL;
		ok(d && !ju_get(d, "view", json_type_object) && text &&
		       !strstr(text, "Application view"),
		   "no queries: no view in the digest, no line in the text");
		free(text);
		json_object_put(d);
		json_object_put(node);
		free(r);
	}
}

/* Numbers in the JSON mean what they say: a byte count as its integer
 * (3.35544e+07 was printed for 33,554,432 beside exact totals), every
 * other double as text that reads back as the same double. */
static void exact_numbers(void)
{
	static const double doubles[] = {0.1,
	                                 1.0 / 3,
	                                 2.0 / 3,
	                                 1e-300,
	                                 12345.678901234567,
	                                 6.02214076e23,
	                                 -2.5e-7,
	                                 9007199254740994.0,
	                                 1e300};
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 9, .step_id = 0, .node = "n1"};
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 9, .node_count = 1};
	struct lwm2_rank_record *r[2];
	json_object *node, *d, *ranks, *back, *m, *want;
	const char *json;
	char b[32], err[256] = "";
	double bw = 0, want_bw = -1;
	int round_trips = 0;
	bool same;

	for (size_t i = 0; i < sizeof(doubles) / sizeof(doubles[0]); i++)
		round_trips += strtod(ju_double_text(doubles[i], b, sizeof(b)), NULL) == doubles[i];
	is_int(round_trips, (int)(sizeof(doubles) / sizeof(doubles[0])),
	       "every double's text reads back as the same double");
	is_str(ju_double_text(33554432.0, b, sizeof(b)), "33554432", "an integral double: exact");
	is_str(ju_double_text(-0.0, b, sizeof(b)), "0", "minus zero: 0");
	is_str(ju_double_text(NAN, b, sizeof(b)), "0", "NaN: 0, which JSON can carry");

	for (int i = 0; i < 2; i++) {
		r[i] = mk_rec(0, i, "n1");
		r[i]->job_id = 9;
		r[i]->counters[LWM2_C_posix_write_calls] = 8;
		r[i]->counters[LWM2_C_posix_write_bytes] = i ? 16777216 : 33554432;
		r[i]->counters[LWM2_C_posix_write_ns] = 300000001;
	}
	node = lwm2_node_merge_records(&id, r, NULL, 2, NULL, NULL);
	d = node ? lwm2_job_digest_build(&meta, &node, 1) : NULL;
	json = d ? json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN) : "";
	ok(strstr(json, "\"bytes_written\":{\"min\":16777216,\"avg\":25165824,\"max\":33554432,") !=
	       NULL,
	   "digest JSON: bytes written per rank exact (min 16777216, avg 25165824, max 33554432)");
	back = lwm2_digest_parse(json, strlen(json), err, sizeof(err));
	m = back ? ju_get(
	               ju_get(ju_get(back, "scope", json_type_object), "metrics", json_type_object),
	               "write_bw", json_type_object)
	         : NULL;
	want = d ? ju_get(ju_get(ju_get(d, "scope", json_type_object), "metrics", json_type_object),
	                  "write_bw", json_type_object)
	         : NULL;
	same = m && want && ju_num(m, "max", &bw) && ju_num(want, "max", &want_bw) &&
	       bw == want_bw && bw != floor(bw);
	ok(same,
	   "digest JSON: the write bandwidth reads back as the same double (%.17g, want %.17g)", bw,
	   want_bw);
	ranks = lwm2_job_digest_ranks(&node, 1);
	json = ranks ? json_object_to_json_string_ext(ranks, JSON_C_TO_STRING_PLAIN) : "";
	ok(strstr(json, ",33554432,") != NULL && strstr(json, ",16777216,") != NULL,
	   "per-process table: bytes written exact");
	json_object_put(ranks);
	json_object_put(back);
	json_object_put(d);
	json_object_put(node);
	free(r[0]);
	free(r[1]);
}

static void job_scope(json_object *d)
{
	json_object *scope;
	json_object *m;
	json_object *steps;

	scope = ju_get(d, "scope", json_type_object);
	is_int(ju_int_or(scope, "processes", -1), 10, "10 processes (the exec'd image not)");
	is_int(ju_int_or(scope, "nodes", -1), 2, "2 distinct nodes");
	{
		/* The per-rank table names each node once, in the order first
		 * seen, and each row points at its node's name. */
		json_object *r = ju_get(d, "ranks", json_type_object),
		            *names = r ? ju_get(r, "nodes", json_type_array) : NULL,
		            *rows = r ? ju_get(r, "rows", json_type_array) : NULL;
		int at[2] = {0, 0};

		ok(names && json_object_array_length(names) == 2 &&
		       !strcmp(json_object_get_string(json_object_array_get_idx(names, 0)), "n1") &&
		       !strcmp(json_object_get_string(json_object_array_get_idx(names, 1)), "n2"),
		   "ranks: the nodes n1 and n2, once each");
		for (size_t i = 0; rows && i < json_object_array_length(rows); i++) {
			int ni = json_object_get_int(
			    json_object_array_get_idx(json_object_array_get_idx(rows, i), 1));

			if (ni == 0 || ni == 1)
				at[ni]++;
		}
		ok(at[0] == 6 && at[1] == 4,
		   "ranks: 6 rows on n1 (both steps), 4 on n2 (got %d, %d)", at[0], at[1]);
	}
	is_int(ju_int_or(scope, "incomplete", -1), 1, "1 incomplete");
	m = metric(scope, "mpi_p2p_time");
	{
		/* ranks 0-7 of step 0 and 0-1 of step 1: (r+1) * 10 % */
		double want = 0;
		int ranks[] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1};
		for (int i = 0; i < 10; i++)
			want += (ranks[i] + 1) * 10.0;
		want /= 10;
		double avg = 0;
		ju_num(m, "avg", &avg);
		ok(fabs(avg - want) < 1e-3, "avg MPI p2p share %g == %g", avg, want);
	}
	{
		double mn = 0, mx = 0;
		json_object *at = ju_get(m, "max_at", json_type_array);
		ju_num(m, "min", &mn);
		ju_num(m, "max", &mx);
		ok(fabs(mn - 10) < 1e-9 && fabs(mx - 80) < 1e-9, "min 10 %%, max 80 %%");
		ok(at && json_object_get_int(json_object_array_get_idx(at, 0)) == 7 &&
		       !strcmp(json_object_get_string(json_object_array_get_idx(at, 1)), "n2"),
		   "max is rank 7 on n2");
		is_int(ju_int_or(m, "n", -1), 10, "n = 10 processes");
	}
	ok(!metric(scope, "cpi") &&
	       strstr(ju_str(ju_get(scope, "missing", json_type_object), "cpi") ?: "",
	              "no hardware counters"),
	   "CPI missing with the platform's reason");
	is_int(ju_int_or(ju_get(scope, "totals", json_type_object), "posix_write_bytes", -1),
	       11 * 1000, "totals include the exec'd image");
	steps = ju_get(d, "steps", json_type_array);
	ok(steps && json_object_array_length(steps) == 2, "two steps");
	is_int(ju_int_or(json_object_array_get_idx(steps, 1), "processes", -1), 2,
	       "step 1: 2 processes");
	is_int(ju_int_or(json_object_array_get_idx(steps, 0), "nodes", -1), 2, "step 0: 2 nodes");
}

static void rendered(json_object *d)
{
	char *text;

	text = render(d, 1);
	ok(strstr(text, "Time in MPI calls, without Init/Finalize [%]") &&
	       strstr(text, "Time in MPI_Init and MPI_Finalize [%]") &&
	       strstr(text, "Write bandwidth") &&
	       strstr(text, "Average cycles per instruction (CPI)"),
	   "render names the seed's metrics");
	ok(strstr(text, "[mpi-share]") && strstr(text, "Score-P"), "high MPI share guided");
	ok(strstr(text, "[mpi-imbalance]") && strstr(text, "Scalasca"),
	   "10 %% vs 80 %% MPI share flagged as imbalance");
	ok(strstr(text, "min rank 0@n1, max rank 7@n2") != NULL, "locations rendered");
	ok(strstr(text, "step 1") != NULL, "steps rendered");
	ok(strstr(text, "Job 7, user alice, account proj, partition batch, COMPLETED") != NULL,
	   "job header");
	ok(!ju_get(d, "containers", json_type_array) && !strstr(text, "Container"),
	   "no process in a container: no containers, no Container line");
	free(text);
}

/* Compact form: prefix, no grid, parses back and renders the same. */
static void compact_form(json_object *d)
{
	char err[256] = "";
	char *text;
	char *compact;

	compact = lwm2_job_digest_compact(d, 0);
	ok(compact && !strncmp(compact, LWM2_DIGEST_PREFIX, 5), "compact has the prefix");
	ok(compact && !strstr(compact, "\"grid\""), "compact has no grid");
	{
		char buf[65536];
		json_object *back;
		snprintf(buf, sizeof(buf), "JS1:H4sIAAAA %s trailing text", compact);
		back = lwm2_digest_parse(buf, strlen(buf), err, sizeof(err));
		ok(back != NULL, "compact parsed from among other AdminComment text: %s", err);
		text = render(back, 0);
		ok(text && strstr(text, "[mpi-share]"), "compact renders with guidance");
		free(text);
		json_object_put(back);
		snprintf(buf, sizeof(buf), "{\"job_id\":7,\"digest\":%s}\n",
		         json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN));
		back = lwm2_digest_parse(buf, strlen(buf), err, sizeof(err));
		ok(back && ju_get(back, "grid", json_type_array), "JSON-lines log entry parsed");
		json_object_put(back);
	}
	free(compact);
	errno = 0;
	ok(lwm2_job_digest_compact(d, 100) == NULL && errno == E2BIG, "cap too small: E2BIG");
}

static void bad_texts_rejected(void)
{
	char err[256] = "";

	for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
		json_object *o = lwm2_digest_parse(bad_texts[i].text, strlen(bad_texts[i].text),
		                                   err, sizeof(err));
		ok(!o && strstr(err, bad_texts[i].err_has), "%s rejected: %s", bad_texts[i].name,
		   err);
		json_object_put(o);
	}
}

/* Size of the compact form for 16, 1000, 10,000 processes (64 per
 * node), every process incomplete to fill the lists. */
static void compact_sizes(const struct lwm2_job_meta *meta)
{
	json_object *d;
	char *compact;

	static const int sizes[] = {16, 1000, 10000};
	for (size_t s = 0; s < 3; s++) {
		int np = sizes[s], nn = (np + 63) / 64;
		json_object **nv = calloc((size_t)nn, sizeof(*nv));
		for (int k = 0; k < nn; k++) {
			char host[16];
			int cnt = np - k * 64 < 64 ? np - k * 64 : 64;
			snprintf(host, sizeof(host), "node%04d", k);
			nv[k] = mk_node(host, 0, cnt, k * 64, mpi_heavy, LWM2_F_INCOMPLETE);
		}
		d = lwm2_job_digest_build(meta, nv, (size_t)nn);
		compact = lwm2_job_digest_compact(d, 0);
		ok(compact && strlen(compact) + 1 <= LWM2_COMPACT_CAP_DEFAULT,
		   "%d processes: compact %zu bytes <= %u", np, compact ? strlen(compact) : 0,
		   LWM2_COMPACT_CAP_DEFAULT);
		is_int(ju_int_or(ju_get(d, "scope", json_type_object), "processes", -1), np,
		       "%d processes counted", np);
		free(compact);
		json_object_put(d);
		for (int k = 0; k < nn; k++)
			json_object_put(nv[k]);
		free(nv);
	}
}

/* 300 steps do not fit: steps are dropped, and the drop is marked. */
static void many_steps(const struct lwm2_job_meta *meta)
{
	json_object *d;
	char err[256] = "";
	char *compact;

	json_object *nv[300];
	json_object *back;
	for (int k = 0; k < 300; k++)
		nv[k] = mk_node("n1", (uint32_t)k, 1, 0, mpi_linear, 0);
	d = lwm2_job_digest_build(meta, nv, 300);
	compact = lwm2_job_digest_compact(d, 0);
	ok(compact && strlen(compact) < LWM2_COMPACT_CAP_DEFAULT, "300 steps fit: %zu bytes",
	   compact ? strlen(compact) : 0);
	back = compact ? lwm2_digest_parse(compact, strlen(compact), err, sizeof(err)) : NULL;
	ok(back && ju_int_or(back, "steps_omitted", 0) > 0, "omitted steps counted (%lld)",
	   (long long)ju_int_or(back, "steps_omitted", 0));
	json_object_put(back);
	free(compact);
	json_object_put(d);
	for (int k = 0; k < 300; k++)
		json_object_put(nv[k]);
}

/* No node records at all (job cancelled while pending). */
static void no_records(const struct lwm2_job_meta *meta)
{
	json_object *d;
	char err[256] = "";
	char *text;

	d = lwm2_job_digest_build(meta, NULL, 0);
	ok(d && lwm2_digest_validate(d, err, sizeof(err)) == 0, "empty digest is valid");
	text = render(d, 0);
	ok(text && strstr(text, "Flags") && strstr(text, "no_data"), "empty digest says no_data");
	free(text);
	json_object_put(d);
}

/* A version 1 digest from AdminComment: read, brought to this
 * version, changed metrics moved aside with the reason. */
static void version1_digest(void)
{
	char *text;
	static const char v1[] =
	    "JS1:x LWM2:{\"lwm2_digest_version\":1,\"job\":{\"job_id\":7},\"scope\":{"
	    "\"processes\":2,\"mpi_processes\":2,\"metrics\":{"
	    "\"mpi_time\":{\"min\":99,\"avg\":99.5,\"max\":99.6,\"n\":2,"
	    "\"min_at\":[0,\"n1\"],\"max_at\":[1,\"n1\"]},"
	    "\"mpi_p2p_msg_size\":{\"min\":274,\"avg\":300,\"max\":635,\"n\":2},"
	    "\"cpi\":{\"min\":1,\"avg\":1.2,\"max\":1.4,\"n\":2}},"
	    "\"missing\":{}},\"steps\":[{\"step_id\":0,\"processes\":2,\"metrics\":{"
	    "\"write_bw\":{\"min\":3e9,\"avg\":3e9,\"max\":3e9,\"n\":2}}}]}";
	char why[256] = "";
	json_object *o = lwm2_digest_parse(v1, sizeof(v1) - 1, why, sizeof(why)), *sc, *st;
	struct lwm2_scope s1;

	ok(o != NULL, "version 1 digest read: %s", why);
	sc = o ? ju_get(o, "scope", json_type_object) : NULL;
	st = o ? json_object_array_get_idx(ju_get(o, "steps", json_type_array), 0) : NULL;
	is_int((int)ju_int_or(o, "lwm2_digest_version", 0), LWM2_DIGEST_VERSION,
	       "up-converted to the current version");
	is_int((int)ju_int_or(o, "upgraded_from", 0), 1, "upgraded_from says so");
	ok(sc && !ju_get(ju_get(sc, "metrics", json_type_object), "mpi_time", json_type_object),
	   "v1 mpi_time (Init/Finalize included) is not taken for the new one");
	ok(sc && strstr(ju_str(ju_get(sc, "missing", json_type_object), "mpi_time") ?: "",
	                "MPI_Init") != NULL,
	   "missing says why");
	ok(sc && ju_get(ju_get(sc, "v1_metrics", json_type_object), "mpi_p2p_msg_size",
	                json_type_object),
	   "v1 values kept under v1_metrics");
	ok(sc && ju_get(ju_get(sc, "metrics", json_type_object), "cpi", json_type_object),
	   "unchanged metrics kept");
	ok(st && strstr(ju_str(ju_get(st, "missing", json_type_object), "write_bw") ?: "",
	                "fsync") != NULL,
	   "steps up-converted too");
	lwm2_scope_from_json(&s1, sc, "v1", 0);
	ok(s1.stat[LWM2_M_mpi_time].n == 0 && s1.stat[LWM2_M_cpi].n == 2 &&
	       s1.stat[LWM2_M_mpi_time].min_rank == -1,
	   "the renderer reads the up-converted scope");
	text = render(o, 0);
	ok(text && strstr(text, "n/a (digest version 1 included MPI_Init") != NULL,
	   "rendered with the reason");
	free(text);
	json_object_put(o);
}

int main(void)
{
	struct lwm2_job_meta meta = {.cluster = "c1",
	                             .job_id = 7,
	                             .user = "alice",
	                             .account = "proj",
	                             .partition = "batch",
	                             .nodes = "n[1-2]",
	                             .node_count = 2,
	                             .cpus_per_task = 1,
	                             .start = 1700000000,
	                             .end = 1700000100,
	                             .state = "COMPLETED"};
	json_object *nodes[4];
	json_object *d;
	char err[256] = "";

	/* Step 0 on n1 (ranks 0-3) and n2 (ranks 4-7); step 1 on n1 only; an
	 * exec'd image on n2 that is not a process of its own. */
	nodes[0] = mk_node("n1", 0, 4, 0, mpi_linear, LWM2_F_INCOMPLETE);
	nodes[1] = mk_node("n2", 0, 4, 4, mpi_linear, 0);
	nodes[2] = mk_node("n1", 1, 2, 0, mpi_linear, 0);
	nodes[3] = mk_node("n2", 1, 1, 9, mpi_linear, LWM2_F_EXEC);
	d = lwm2_job_digest_build(&meta, nodes, 4);
	ok(d != NULL, "digest built");
	ok(lwm2_digest_validate(d, err, sizeof(err)) == 0, "digest validates: %s", err);
	job_scope(d);
	rendered(d);
	compact_form(d);
	json_object_put(d);
	for (int i = 0; i < 4; i++)
		json_object_put(nodes[i]);

	bad_texts_rejected();
	compact_sizes(&meta);
	many_steps(&meta);
	no_records(&meta);
	version1_digest();
	containers();
	unmeasured();
	view_queries();
	named_regions();
	exact_numbers();
	return done_testing();
}
