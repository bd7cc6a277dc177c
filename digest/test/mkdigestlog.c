/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writes a JSON-lines log as jobcomp/lwm2 does, for the `lwm2 digest
 * --file` tests: mkdigestlog N [FIRST_JOB_ID] > LOG.  Job i belongs to user
 * "u<i%3>" and account "a<i%2>", ended at 1700000000+i; every 10th job has
 * no digest ("no_records"), job FIRST+1 is an array task (FIRST_7) and
 * FIRST+2 a het job component (FIRST+1).  Each digest: 2 nodes, 4 MPI
 * processes, 100 point-to-point calls of 64 bytes per process.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../jobcomp/test/mknode.h"
#include "lwm2_digest.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, i;
	uint32_t first = argc > 2 ? (uint32_t)atol(argv[2]) : 1000;
	json_object *nodes[2], *digest, *job;
	struct lwm2_job_meta meta = {
	    .cluster = "lwm2",
	    .job_id = first,
	    .user = "u0",
	    .account = "a0",
	    .partition = "debug",
	    .nodes = "n[1-2]",
	    .node_count = 2,
	    .start = 1699999000,
	    .end = 1700000000,
	    .state = "COMPLETED",
	};
	const char *dtext;

	nodes[0] = mk_node("lwm2", first, 0, "n1", 2, 0);
	nodes[1] = mk_node("lwm2", first, 0, "n2", 2, 2);
	if (!nodes[0] || !nodes[1] || !(digest = lwm2_job_digest_build(&meta, nodes, 2))) {
		fprintf(stderr, "mkdigestlog: couldn't build the digest\n");
		return 1;
	}
	job = NULL;
	json_object_object_get_ex(digest, "job", &job);
	for (i = 0; i < n; i++) {
		uint32_t id = first + (uint32_t)i;
		int64_t end = 1700000000 + i;
		char extra[128] = "";

		if (i == 1)
			snprintf(extra, sizeof(extra),
			         ",\"array_job_id\":%" PRIu32 ",\"array_task_id\":7", first);
		else if (i == 2)
			snprintf(extra, sizeof(extra),
			         ",\"het_job_id\":%" PRIu32 ",\"het_job_offset\":1", first + 1);
		printf("{\"cluster\":\"lwm2\",\"job_id\":%" PRIu32
		       "%s,\"user\":\"u%ld\",\"uid\":%ld,"
		       "\"account\":\"a%ld\",\"partition\":\"debug\",\"name\":\"job \\\"%ld\\\"\","
		       "\"nodes\":\"n[1-2]\",\"node_count\":2,\"submit\":%" PRId64
		       ",\"start\":%" PRId64 ",\"end\":%" PRId64 ",\"state\":\"COMPLETED\","
		       "\"exit_code\":\"0:0\",",
		       id, extra, i % 3, 5000 + i % 3, i % 2, i, end - 1100, end - 1000, end);
		if (i % 10 == 9) {
			printf(
			    "\"status\":\"no_records\",\"reason\":\"no node records: lwm2 was off "
			    "for this job, or no step ran\",\"records_accepted\":0,"
			    "\"records_rejected\":0}\n");
			continue;
		}
		json_object_object_add(job, "job_id", json_object_new_int64(id));
		dtext = json_object_to_json_string_ext(digest, JSON_C_TO_STRING_PLAIN);
		printf("\"status\":\"ok\",\"records_accepted\":2,\"records_rejected\":0,"
		       "\"digest\":%s}\n",
		       dtext);
	}
	json_object_put(digest);
	json_object_put(nodes[0]);
	json_object_put(nodes[1]);
	return 0;
}
