/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Records of two builds, each read by the other (test/evolve.sh): built
 * once as this build (evolve) and once as the next version's shape
 * (evolve_next: -DLWM2_TEST_NEXT_COUNTERS, one counter more, linked with
 * the digest library built the same way).  A site that upgrades node by
 * node while jobs run has records, node records and step summaries of
 * both in one job; lwm2_record.h says how the format allows it.
 *
 *   evolve write DIR RANK         a rank record of this build in DIR
 *   evolve summary DIR            a step summary of this build in DIR
 *   evolve check FILE NC          read a record written with NC counters
 *   evolve node DIR OUT           DIR's records merged: a node record
 *   evolve job OUT NODE...        the job digest of node records:
 *                                 OUT.json and its text, OUT.txt
 *
 * Exit 0 when what was read is what was written; the reasons on stderr.
 */
#include "digest_internal.h"
#include "mkrecord.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JOB  9
#define STEP 0

static int failed;

#define expect(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "evolve (%d counters): ", LWM2_NCOUNTERS);                 \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failed = 1;                                                                \
		}                                                                                  \
	} while (0)

static int do_write(const char *dir, int rank)
{
	struct lwm2_rank_record *r = mk_rec(2, rank, "n1");
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), rc;
	char name[64];

	r->job_id = JOB;
	r->step_id = STEP;
	r->counters[LWM2_C_posix_read_bytes] = 1000;
	r->counters[LWM2_C_posix_read_calls] = 10;
	r->counters[LWM2_C_hwc_llc_misses] = 49; /* the last of version 3's ids */
	mk_slices(r)[1].counters[LWM2_C_posix_read_bytes] = 77;
#ifdef LWM2_TEST_NEXT_COUNTERS
	r->counters[LWM2_C_posix_msync_bytes] = 4096;
	mk_slices(r)[1].counters[LWM2_C_posix_msync_bytes] = 4096;
#endif
	r->identity_flags = LWM2_ID_DONE;
	r->launch_ntasks = 2;
	r->view_queries = 3;
	r->view_ns = 1000;
	lwm2_record_set_container(r, "podman:localhost/app:1");
	snprintf(name, sizeof(name), "rank-%d.lwm2", rank);
	rc = dfd >= 0 ? write_rec(dfd, name, r) : -1;
	if (dfd >= 0)
		close(dfd);
	free(r);
	return rc ? 1 : 0;
}

/* The step's summary of short processes, as this build's library leaves
 * it: sed ran 3 times and read 300 bytes (and, in the next build, gave
 * 100 bytes to msync), in the series' first slice. */
static int do_summary(const char *dir)
{
	struct lwm2_summary_header *h = calloc(1, LWM2_SUMMARY_SIZE);
	struct lwm2_summary_exe *e = lwm2_summary_exes(h);
	struct lwm2_summary_slice *sl = lwm2_summary_slices(h);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd = -1, rc = 1;

	memcpy(h->magic, LWM2_SUMMARY_MAGIC, 8);
	h->version = LWM2_SUMMARY_VERSION;
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(*e);
	h->nslots = LWM2_SUMMARY_SLOTS;
	h->ncounters = LWM2_NCOUNTERS;
	h->nearmarks = LWM2_NEARMARKS;
	h->nslices = LWM2_SUMMARY_SLICES;
	h->slice_size = sizeof(*sl);
	h->job_id = JOB;
	h->step_id = STEP;
	e[3].key = lwm2_summary_key("sed");
	memcpy(e[3].name, "sed", 3);
	e[3].processes = e[3].images = e[3].exit_ok = 3;
	e[3].counters[LWM2_C_posix_read_bytes] = 300;
	sl[7].key = lwm2_summary_slice_key(170000000, 10);
	sl[7].s.counters[LWM2_C_posix_read_bytes] = 300;
#ifdef LWM2_TEST_NEXT_COUNTERS
	e[3].counters[LWM2_C_posix_msync_bytes] = 100;
	sl[7].s.counters[LWM2_C_posix_msync_bytes] = 100;
#endif
	if (dfd >= 0)
		fd = openat(dfd, LWM2_SUMMARY_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, h, LWM2_SUMMARY_SIZE) == (ssize_t)LWM2_SUMMARY_SIZE)
		rc = 0;
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(h);
	return rc;
}

static int do_check(const char *path, unsigned nc)
{
	struct lwm2_rank_record *r;
	struct lwm2_proc_values pv;
	unsigned keep = nc < LWM2_NCOUNTERS ? nc : LWM2_NCOUNTERS;
	char err[256];

	if (lwm2_record_read_file(AT_FDCWD, path, &r, err, sizeof(err)) != 0) {
		fprintf(stderr, "evolve (%d counters): %s: %s\n", LWM2_NCOUNTERS, path, err);
		return 1;
	}
	expect(r->ncounters == keep, "ncounters %u, expected %u", r->ncounters, keep);
	expect(r->job_id == JOB && r->mpi_rank >= 0 && !strcmp(r->hostname, "n1"), "head");
	expect(r->counters[LWM2_C_posix_read_bytes] == 1000 &&
	           r->counters[LWM2_C_posix_read_calls] == 10 &&
	           r->counters[LWM2_C_hwc_llc_misses] == 49,
	       "counters of version 3");
	/* the tail, found after the writer's counters */
	expect(r->launch_ntasks == 2 && r->view_queries == 3 && r->view_ns == 1000 &&
	           !strcmp(r->container_runtime, "podman") &&
	           !strcmp(r->container_image, "localhost/app:1") &&
	           (r->identity_flags & LWM2_ID_DONE),
	       "tail: launch %d, view %u/%llu, container %s:%s", r->launch_ntasks, r->view_queries,
	       (unsigned long long)r->view_ns, r->container_runtime, r->container_image);
	expect(r->nslices == 2 &&
	           lwm2_record_slices(r)[1].counters[LWM2_C_posix_read_bytes] == 77 &&
	           lwm2_record_slices(r)[0].counters[LWM2_C_posix_read_bytes] == 0,
	       "slices");
	lwm2_proc_from_record(r, &pv);
	for (unsigned c = 0; c < LWM2_NCOUNTERS; c++)
		expect(pv.absent[c] == (c >= keep), "counter %s %s", lwm2_counter_names[c],
		       pv.absent[c] ? "absent" : "present");
#ifdef LWM2_TEST_NEXT_COUNTERS
	if (nc > LWM2_C_posix_msync_bytes)
		expect(r->counters[LWM2_C_posix_msync_bytes] == 4096 &&
		           lwm2_record_slices(r)[1].counters[LWM2_C_posix_msync_bytes] == 4096,
		       "the next version's counter");
	else {
		json_object *o = lwm2_record_to_json(r), *v = NULL;

		expect(r->counters[LWM2_C_posix_msync_bytes] == 0, "an absent counter is zero");
		json_object_object_get_ex(json_object_object_get(o, "counters"),
		                          "posix_msync_bytes", &v);
		expect(v && !strcmp(json_object_get_string(v), "not measured"),
		       "lwm2 dump: the absent counter not measured, not %s",
		       v ? json_object_get_string(v) : "absent");
		json_object_put(o);
	}
#endif
	/* a copy of this build's counters is a slot of this layout */
	if (keep == LWM2_NCOUNTERS)
		expect(lwm2_record_validate(r, sizeof(*r) + 2 * sizeof(struct lwm2_slice), err,
		                            sizeof(err)) == 0,
		       "copy: %s", err);
	free(r);
	return failed;
}

static int do_node(const char *dir, const char *out)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = JOB, .step_id = STEP, .node = "n1"};
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	json_object *node = dfd >= 0 ? lwm2_node_merge(dfd, &id, NULL, NULL) : NULL;

	if (dfd >= 0)
		close(dfd);
	if (!node || json_object_to_file_ext(out, node, JSON_C_TO_STRING_PLAIN) != 0)
		return 1;
	json_object_put(node);
	return 0;
}

static int do_job(const char *out, char **files, int n)
{
	struct lwm2_job_meta meta = {.cluster = "c1",
	                             .job_id = JOB,
	                             .start = 1700000000,
	                             .end = 1700000010,
	                             .state = "COMPLETED"};
	json_object *nodes[8], *d;
	char path[4096];
	FILE *f;
	int rc = 0;

	if (n > 8)
		return 1;
	for (int i = 0; i < n; i++)
		if (!(nodes[i] = json_object_from_file(files[i])))
			return 1;
	d = lwm2_job_digest_build(&meta, nodes, (size_t)n);
	snprintf(path, sizeof(path), "%s.json", out);
	if (!d || json_object_to_file_ext(path, d, JSON_C_TO_STRING_PLAIN) != 0)
		return 1;
	snprintf(path, sizeof(path), "%s.txt", out);
	if (!(f = fopen(path, "w")) || lwm2_digest_render(d, f, NULL) != 0)
		rc = 1;
	if (f && fclose(f) != 0)
		rc = 1;
	json_object_put(d);
	for (int i = 0; i < n; i++)
		json_object_put(nodes[i]);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "write"))
		return do_write(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "summary"))
		return do_summary(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "check"))
		return do_check(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "node"))
		return do_node(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "job"))
		return do_job(argv[2], argv + 3, argc - 3);
	if (argc == 2 && !strcmp(argv[1], "ncounters"))
		return printf("%d\n", LWM2_NCOUNTERS) < 0;
	fprintf(stderr, "usage: evolve write DIR RANK | summary DIR | check FILE NC | "
	                "node DIR OUT | job OUT NODE... | ncounters\n");
	return 2;
}
