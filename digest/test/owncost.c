/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The digest's "lwm2_cost" from made-up records of known counts: each
 * part is its count times the cost lwm2(1) lists (a call: 5 ns and two
 * reads of the process's own clock; a sample 400 ns; a process start and
 * end 0.27 ms; a heartbeat 20 us, one a slice of a process's life), the
 * share against the job's CPU time, and the text line.
 */
#include "digest_internal.h"
#include "lwm2_keys.h"
#include "mkrecord.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define START 1700000000

static struct lwm2_job_meta meta(void)
{
	struct lwm2_job_meta m = {.cluster = "c1",
	                          .job_id = 5,
	                          .nodes = "n1",
	                          .node_count = 1,
	                          .start = START,
	                          .end = START + 100,
	                          .state = "COMPLETED"};
	return m;
}

static double num(json_object *o, const char *key)
{
	double v = -1;

	return o && ju_num(o, key, &v) ? v : -1;
}

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fabs(b) + 1e-9;
}

int main(void)
{
	struct lwm2_node_ident id = {.cluster = "c1", .job_id = 5, .step_id = 0, .node = "n1"};
	struct lwm2_rank_record *recs[2];
	struct lwm2_job_meta m = meta();
	json_object *node, *d, *c;
	double want_calls_s, want_samples_s, want_images_s, want_hb_s, want;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	/* two processes of 10 s (slices of 10 s: one heartbeat each), each
	 * with 1,000,000 file and 10,000 MPI calls, 1000 samples, 2 s of CPU
	 * time; clock reads of 10 ns and 30 ns */
	for (int i = 0; i < 2; i++) {
		recs[i] = mk_rec(1, i, "n1");
		recs[i]->job_id = 5;
		recs[i]->utime_us = 2000000;
		recs[i]->clock_source = LWM2_CLOCK_TSC;
		recs[i]->clock_cost_ps = i ? 30000 : 10000;
		recs[i]->counters[LWM2_C_posix_write_calls] = 600000;
		recs[i]->counters[LWM2_C_posix_read_calls] = 300000;
		recs[i]->counters[LWM2_C_posix_meta_calls] = 100000;
		recs[i]->counters[LWM2_C_posix_sync_calls] = 50000; /* also meta: not again */
		recs[i]->counters[LWM2_C_mpi_p2p_calls] = 10000;
		recs[i]->counters[LWM2_C_posix_write_bytes] = 123456789;
		recs[i]->samples[0] = 1000;
	}
	node = lwm2_node_merge_records(&id, recs, NULL, 2, NULL, NULL);
	d = node ? lwm2_job_digest_build(&m, &node, 1) : NULL;
	c = d ? ju_get(d, LWM2_KEY_LWM2_COST, json_type_object) : NULL;
	ok(c != NULL, "the digest has lwm2_cost");
	is_int(ju_int_or(c, LWM2_KEY_CALLS, -1), 2 * 1010000, "calls: each wrapped call once");
	want_calls_s = 1010000 * (5 + 2 * 10.0) / 1e9 + 1010000 * (5 + 2 * 30.0) / 1e9;
	ok(near(num(c, LWM2_KEY_WRAPPERS_S), round(want_calls_s * 1e6) / 1e6),
	   "wrappers: calls x (5 ns + 2 clock reads of the process) (%g, want %g)",
	   num(c, LWM2_KEY_WRAPPERS_S), want_calls_s);
	is_int(ju_int_or(c, LWM2_KEY_SAMPLES, -1), 2000, "samples");
	want_samples_s = 2000 * 400e-9;
	ok(near(num(c, LWM2_KEY_SAMPLING_S), want_samples_s), "sampling: 400 ns a sample (%g)",
	   num(c, LWM2_KEY_SAMPLING_S));
	is_int(ju_int_or(c, LWM2_KEY_IMAGES, -1), 2, "two process starts");
	want_images_s = 2 * 270e-6;
	ok(near(num(c, LWM2_KEY_START_END_S), want_images_s), "start and end: 0.27 ms each (%g)",
	   num(c, LWM2_KEY_START_END_S));
	is_int(ju_int_or(c, LWM2_KEY_HEARTBEATS, -1), 2, "a heartbeat a slice of each process");
	want_hb_s = 2 * 20e-6;
	want = want_calls_s + want_samples_s + want_images_s + want_hb_s;
	ok(near(num(c, LWM2_KEY_SECONDS), round(want * 1e6) / 1e6), "total %g s (want %g)",
	   num(c, LWM2_KEY_SECONDS), want);
	ok(fabs(num(c, LWM2_KEY_COST_SHARE) - 100 * want / 4.0) < 1e-5,
	   "share of the job's 4 s of CPU time: %g %%", num(c, LWM2_KEY_COST_SHARE));
	is_str(ju_str(c, LWM2_KEY_CLOCK) ? ju_str(c, LWM2_KEY_CLOCK) : "(none)", "tsc", "clock");
	ok(near(num(c, LWM2_KEY_CLOCK_READ_NS), 30), "the dearest clock read: 30 ns");

	f = open_memstream(&text, &len);
	lwm2_digest_render(d, f, NULL);
	fclose(f);
	ok(text && strstr(text, "lwm2 used 2.3 % of this job's CPU time, 0.092 s (estimated: "
	                        "2020000 calls, 2 process starts, 2000 samples; clock tsc, 30 ns "
	                        "a read)\n"),
	   "text: the one line");
	if (text && !strstr(text, "lwm2 used"))
		diag("%s", text);
	free(text);
	json_object_put(d);
	json_object_put(node);

	/* counts past what 64 bits hold, summed over two records: the count
	 * is the digest's largest integer (2^63 - 1, as every count it
	 * writes), not a conversion out of range */
	for (int i = 0; i < 2; i++)
		recs[i]->counters[LWM2_C_posix_write_calls] = UINT64_MAX;
	node = lwm2_node_merge_records(&id, recs, NULL, 2, NULL, NULL);
	d = node ? lwm2_job_digest_build(&m, &node, 1) : NULL;
	c = d ? ju_get(d, LWM2_KEY_LWM2_COST, json_type_object) : NULL;
	ok(c && ju_int_or(c, LWM2_KEY_CALLS, -1) == INT64_MAX,
	   "calls past 2^64 in all: the largest count (%s)",
	   c ? json_object_to_json_string(c) : "no lwm2_cost");
	json_object_put(d);
	json_object_put(node);

	/* no process measured: no lwm2_cost, no line */
	d = lwm2_job_digest_build(&m, NULL, 0);
	ok(d && !ju_get(d, LWM2_KEY_LWM2_COST, json_type_object), "no records: no lwm2_cost");
	text = NULL;
	f = open_memstream(&text, &len);
	if (d)
		lwm2_digest_render(d, f, NULL);
	fclose(f);
	ok(text && !strstr(text, "lwm2 used"), "no records: no line");
	free(text);
	json_object_put(d);
	for (int i = 0; i < 2; i++)
		free(recs[i]);
	return done_testing();
}
