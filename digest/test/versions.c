/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every versioned reader takes the versions it knows, brings an older one
 * to the current layout, and refuses the one before the first and the
 * one after its own by name: step summaries, node records, digests.  Rank
 * records and their file header take a newer version too, whose fields
 * only follow this version's (lwm2_record.h): those are read, the new
 * ones skipped (test/evolve.sh: records of another number of counters).
 */
#include "digest_internal.h"
#include "lwm2_keys.h"
#include "mkrecord.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static char err[256];

/* A version v record built from r in buf: versions 3 to 5 with this
 * build's counters and the tail as far as that version's; versions 1
 * and 2 as they were written, with the 50 counters those versions had
 * (the head, the counters, the version's tail, then r's slices of 50
 * counters each); sealed with v's checksum. */
static struct lwm2_rank_record *as_version(const struct lwm2_rank_record *r, uint32_t v, void *buf)
{
	struct lwm2_rank_record *o = buf;
	size_t tail = v == 1   ? LWM2_RECORD_TAIL_V1
	              : v == 2 ? LWM2_RECORD_TAIL_V2
	              : v == 3 ? LWM2_RECORD_TAIL_V3
	              : v == 4 ? LWM2_RECORD_TAIL_V4
	                       : LWM2_RECORD_TAIL;
	size_t nc = v == 1 || v == 2 ? LWM2_NCOUNTERS_V3 : LWM2_NCOUNTERS;
	size_t fixed = LWM2_RECORD_HEAD + 8 * nc + tail;
	char *at = (char *)buf;

	memcpy(at, r, LWM2_RECORD_HEAD + 8 * nc);
	at += LWM2_RECORD_HEAD + 8 * nc;
	memcpy(at, &r->language, tail);
	at = (char *)buf + fixed;
	for (uint32_t k = 0; k < r->nslices; k++, at += 8 * nc)
		memcpy(at, lwm2_record_slices(r)[k].counters, 8 * nc);
	o->version = v;
	o->ncounters = (uint32_t)nc;
	o->record_size = (uint32_t)fixed;
	o->total_size = (uint32_t)(fixed + r->nslices * 8 * nc);
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	return o;
}

/* A record of a newer version than this one: this version's tail, then
 * `more` bytes of fields this reader does not know, then the slices. */
static struct lwm2_rank_record *as_newer(const struct lwm2_rank_record *r, size_t more, void *buf)
{
	struct lwm2_rank_record *o = buf;
	size_t slices = (size_t)r->nslices * sizeof(struct lwm2_slice);

	memcpy(buf, r, sizeof(*r));
	memset((char *)buf + sizeof(*r), 0xab, more);
	memcpy((char *)buf + sizeof(*r) + more, r + 1, slices);
	o->version = LWM2_RECORD_VERSION + 1;
	o->record_size = (uint32_t)(sizeof(*r) + more);
	o->total_size = (uint32_t)(sizeof(*r) + more + slices);
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	return o;
}

static void records(void)
{
	static char buf[8192], file[2 * 8192];
	struct lwm2_rank_record *r = mk_rec(2, 3, "n1"), *o, *up;
	struct lwm2_file_header *h = (void *)file;

	r->generation = 1;
	mk_slices(r)[1].counters[LWM2_C_posix_read_bytes] = 77;
	r->identity_flags = LWM2_ID_DONE;
	r->launch_ntasks = 4;
	lwm2_record_set_container(r, "podman:docker.io/library/debian:11");
	r->view_queries = 5;
	r->view_ns = 1000;
	snprintf(r->hwc_events, sizeof(r->hwc_events), "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS");
	r->regions_n = 2;
	snprintf(r->regions[0].name, sizeof(r->regions[0].name), "solver");
	r->regions[0].calls = 10;
	r->regions[0].ns = 5000;
	snprintf(r->regions[1].name, sizeof(r->regions[1].name), "halo");
	r->regions[1].calls = 20;
	r->regions[1].ns = 700;
	r->regions_folded = 3;
	r->regions_other_calls = 6;
	r->regions_other_ns = 90;
	lwm2_record_seal(r);
	o = as_version(r, 5, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0, "record version 5 read: %s",
	   err);
	up = lwm2_record_upconvert(o);
	ok(up && up->regions_n == 2 && !strcmp(up->regions[1].name, "halo") &&
	       up->regions[0].calls == 10 && up->regions[0].ns == 5000 && up->regions_folded == 3 &&
	       up->regions_other_calls == 6 && up->regions_other_ns == 90,
	   "and its named regions kept");
	free(up);
	memset(o->regions[1].name, 'x', sizeof(o->regions[1].name));
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) != 0 &&
	       strstr(err, "unterminated region name"),
	   "version 5 with an unterminated region name refused: %s", err);
	o = as_version(r, 5, buf);
	o->regions_n = LWM2_REGIONS_MAX + 1;
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) != 0 &&
	       strstr(err, "named regions, more than"),
	   "version 5 with more regions than its table refused: %s", err);
	o = as_version(r, 4, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0, "record version 4 read: %s",
	   err);
	up = lwm2_record_upconvert(o);
	ok(up && up->version == LWM2_RECORD_VERSION &&
	       !strcmp(up->hwc_events, "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS") &&
	       !up->regions_n && !up->regions[0].name[0] && !up->regions_folded,
	   "and brought to version 5: its counters' events kept, no named regions");
	free(up);
	memset(o->hwc_events, 'x', sizeof(o->hwc_events));
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) != 0 &&
	       strstr(err, "unterminated counter events"),
	   "version 4 with unterminated events refused: %s", err);
	o = as_version(r, 3, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0, "record version 3 read: %s",
	   err);
	up = lwm2_record_upconvert(o);
	ok(up && up->version == LWM2_RECORD_VERSION && !up->hwc_events[0] && up->view_ns == 1000 &&
	       !strcmp(up->container_runtime, "podman") && !up->regions_n &&
	       mk_slices(up)[1].counters[LWM2_C_posix_read_bytes] == 77,
	   "and brought to version 5: no counters' events, the rest kept");
	free(up);
	o = as_version(r, 2, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0, "record version 2 read: %s",
	   err);
	up = lwm2_record_upconvert(o);
	ok(up && up->version == LWM2_RECORD_VERSION && !up->container_runtime[0] &&
	       !up->container_image[0] && !up->view_queries && !up->view_ns &&
	       up->launch_ntasks == 4 && (up->identity_flags & LWM2_ID_DONE) &&
	       mk_slices(up)[1].counters[LWM2_C_posix_read_bytes] == 77 &&
	       up->ncounters == LWM2_NCOUNTERS_V3,
	   "and brought to version 5: no container, no view queries, identity and slices kept, "
	   "the later counters not measured");
	free(up);
	o = as_version(r, 1, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0, "record version 1 read: %s",
	   err);
	up = lwm2_record_upconvert(o);
	ok(up && up->launch_ntasks == -1 &&
	       mk_slices(up)[1].counters[LWM2_C_posix_read_bytes] == 77,
	   "and brought to version 5: identity unknown, slices kept");
	free(up);
	o = as_version(r, 0, buf);
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) != 0 &&
	       strstr(err, "record version 0: no such version"),
	   "record version 0 refused: %s", err);
	/* A newer version adds fields at the end of the tail: read, the
	 * fields this version knows kept, the new ones skipped. */
	o = as_newer(r, 16, buf);
	err[0] = '\0';
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) == 0,
	   "record version 6 (16 bytes more) read: %s", err);
	up = lwm2_record_upconvert(o);
	ok(up && up->version == LWM2_RECORD_VERSION && up->view_ns == 1000 &&
	       up->launch_ntasks == 4 && !strcmp(up->container_runtime, "podman") &&
	       up->regions_n == 2 && !strcmp(up->regions[0].name, "solver") &&
	       !strcmp(up->hwc_events, "cycles=PAPI_TOT_CYC fp_ops=PAPI_FP_INS") &&
	       mk_slices(up)[1].counters[LWM2_C_posix_read_bytes] == 77 &&
	       lwm2_record_validate(up, sizeof(*up) + 2 * sizeof(struct lwm2_slice), err,
	                            sizeof(err)) == 0,
	   "and brought to version 5: its fields kept, the new ones skipped, valid");
	free(up);
	o = as_newer(r, 0, buf);
	o->record_size -= 8;
	o->total_size -= 8;
	o->checksum = 0;
	o->checksum = lwm2_record_checksum(o);
	ok(lwm2_record_validate(o, sizeof(buf), err, sizeof(err)) != 0 &&
	       strstr(err, "layout differs (version 6"),
	   "record version 6 shorter than version 5 refused: %s", err);

	memset(file, 0, sizeof(file));
	lwm2_file_header_init(h, 8192);
	h->version = 6;
	memcpy(file + sizeof(*h), as_newer(r, 16, buf), 8192);
	ok(lwm2_record_pick(file, sizeof(file), err, sizeof(err)) != NULL,
	   "file header version 6 read: %s", err);
	h->version = 0;
	ok(lwm2_record_pick(file, sizeof(file), err, sizeof(err)) == NULL &&
	       strstr(err, "rank record file version 0: no such version"),
	   "file header version 0 refused: %s", err);
	free(r);
}

static void summaries(void)
{
	char *buf = calloc(1, LWM2_SUMMARY_SIZE);
	struct lwm2_summary_header *h = (void *)buf;

	memcpy(h->magic, LWM2_SUMMARY_MAGIC, 8);
	h->header_size = sizeof(*h);
	h->slot_size = sizeof(struct lwm2_summary_exe);
	h->nslots = LWM2_SUMMARY_SLOTS;
	h->ncounters = LWM2_NCOUNTERS;
	h->nearmarks = LWM2_NEARMARKS;
	h->nslices = LWM2_SUMMARY_SLICES;
	h->slice_size = sizeof(struct lwm2_summary_slice);
	h->version = LWM2_SUMMARY_VERSION;
	err[0] = '\0';
	ok(lwm2_summary_check(buf, LWM2_SUMMARY_SIZE, err, sizeof(err)) == 0,
	   "step summary version %d read: %s", LWM2_SUMMARY_VERSION, err);
	h->version = LWM2_SUMMARY_VERSION + 1;
	ok(lwm2_summary_check(buf, LWM2_SUMMARY_SIZE, err, sizeof(err)) != 0 &&
	       strstr(err, "written by a newer lwm2"),
	   "step summary version %d refused: %s", LWM2_SUMMARY_VERSION + 1, err);
	h->version = LWM2_SUMMARY_VERSION - 1;
	ok(lwm2_summary_check(buf, LWM2_SUMMARY_SIZE, err, sizeof(err)) != 0 &&
	       strstr(err, "step summary version 1: older than this lwm2 converts"),
	   "step summary version 1 (of another installation) refused: %s", err);
	free(buf);
}

static void nodes_and_digests(void)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 7, .step_id = 0, .node = "n1"};
	struct lwm2_rank_record *r = mk_rec(0, 0, "n1");
	struct lwm2_job_meta meta = {.cluster = "c1", .job_id = 7};
	json_object *node, *d;
	char *text;

	r->job_id = 7;
	node = lwm2_node_merge_records(&id, &r, NULL, 1, NULL, NULL);
	free(r);
	err[0] = '\0';
	ok(lwm2_node_validate(node, err, sizeof(err)) == 0, "node record version 1 read: %s", err);
	json_object_object_add(node, "lwm2_node_version", json_object_new_int(0));
	ok(lwm2_node_validate(node, err, sizeof(err)) != 0 &&
	       strstr(err, "node record version 0: no such version"),
	   "node record version 0 refused: %s", err);
	json_object_object_add(node, "lwm2_node_version", json_object_new_int(2));
	ok(lwm2_node_validate(node, err, sizeof(err)) != 0 &&
	       strstr(err, "node record version 2: written by a newer lwm2"),
	   "node record version 2 refused: %s", err);
	json_object_object_add(node, "lwm2_node_version", json_object_new_int(1));

	d = lwm2_job_digest_build(&meta, &node, 1);
	err[0] = '\0';
	ok(lwm2_digest_validate(d, err, sizeof(err)) == 0, "digest version %d read: %s",
	   LWM2_DIGEST_VERSION, err);
	for (int v = 0; v <= LWM2_DIGEST_VERSION + 1; v++) {
		json_object *o;
		char want[64];

		ju_add(d, LWM2_KEY_DIGEST_VERSION, json_object_new_int(v));
		text = strdup(json_object_to_json_string(d));
		err[0] = '\0';
		o = lwm2_digest_parse(text, strlen(text), err, sizeof(err));
		if (v >= 1 && v <= LWM2_DIGEST_VERSION) {
			ok(o && ju_int_or(o, LWM2_KEY_DIGEST_VERSION, 0) == LWM2_DIGEST_VERSION &&
			       ju_int_or(o, LWM2_KEY_UPGRADED_FROM, 0) ==
			           (v < LWM2_DIGEST_VERSION ? v : 0),
			   "digest version %d read as version %d: %s", v, LWM2_DIGEST_VERSION, err);
		} else {
			snprintf(want, sizeof(want), "digest version %d: %s", v,
			         v ? "written by a newer lwm2" : "no such version");
			ok(!o && strstr(err, want), "digest version %d refused: %s", v, err);
		}
		json_object_put(o);
		free(text);
	}
	json_object_put(d);
	json_object_put(node);
}

int main(void)
{
	records();
	summaries();
	nodes_and_digests();
	return done_testing();
}
