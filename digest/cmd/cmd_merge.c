/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2 merge: rank records into a node record, or a one-node digest. */
#include "config.h"

#include "cmd_io.h"
#include "digest_internal.h"
#include "lwm2_cmds.h"
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void log_stderr(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

/* A decimal number in [lo, hi]: no sign, no wrap, nothing after it. */
int lwm2_cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"pretty", no_argument, NULL, 'p'},        {"job", required_argument, NULL, 'j'},
	    {"step", required_argument, NULL, 's'},    {"node", required_argument, NULL, 'n'},
	    {"cluster", required_argument, NULL, 'M'}, {"digest", no_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},          {0},
	};
	struct lwm2_node_ident id = {.cluster = "", .node = ""};
	char host[256] = "";
	bool pretty = false, digest = false;
	json_object *node;
	struct stat st;
	int c, rc = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "pj:s:n:M:dh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pretty = true;
			break;
		case 'd':
			digest = true;
			break;
		case 'j':
			if (lwm2_parse_u64(optarg, NULL, 1, UINT32_MAX - 2, &id.job_id) < 0) {
				fprintf(stderr,
				        "lwm2: merge: couldn't parse --job \"%s\": want 1 to %u\n",
				        optarg, UINT32_MAX - 2);
				return 2;
			}
			break;
		case 's': {
			uint64_t v;

			/* up to Slurm's batch step, the highest a record can carry */
			if (lwm2_parse_u64(optarg, NULL, 0, UINT32_MAX - 3, &v) < 0) {
				fprintf(stderr,
				        "lwm2: merge: couldn't parse --step \"%s\": want 0 to %u\n",
				        optarg, UINT32_MAX - 3);
				return 2;
			}
			id.step_id = (uint32_t)v;
			break;
		}
		case 'n':
			id.node = optarg;
			break;
		case 'M':
			id.cluster = optarg;
			break;
		case 'h':
			printf(
			    "Usage: lwm2 merge [--job ID --step ID] [--node NAME] [--cluster "
			    "NAME]\n"
			    "                  [--digest] [--pretty] DIR | FILE...\n"
			    "Merge the rank records (*.lwm2) of a directory, or the given files,\n"
			    "into one node record (JSON on stdout).  Malformed records are\n"
			    "reported and skipped.  With --job, records of other jobs or steps\n"
			    "are skipped too.  With --digest, print the job digest of that one\n"
			    "node instead.\n");
			return 0;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lwm2: merge: no directory or file given\n");
		return 2;
	}
	if (!*id.node && gethostname(host, sizeof(host) - 1) == 0)
		id.node = host;
	if (optind + 1 == argc && stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode)) {
		int dfd = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		node = dfd < 0 ? NULL : lwm2_node_merge(dfd, &id, log_stderr, NULL);
		if (!node) {
			fprintf(stderr, "lwm2: merge: couldn't read %s: %s\n", argv[optind],
			        strerror(errno));
			if (dfd >= 0)
				close(dfd);
			return 1;
		}
		close(dfd);
	} else {
		int n = argc - optind;
		struct lwm2_rank_record **recs = calloc((size_t)n, sizeof(*recs));
		const char **files = calloc((size_t)n, sizeof(*files));
		size_t k = 0;
		if (!recs || !files) {
			fprintf(stderr, "lwm2: merge: out of memory\n");
			return 1;
		}
		for (int i = optind; i < argc; i++) {
			char err[256];
			if (lwm2_record_read_file(AT_FDCWD, argv[i], &recs[k], err, sizeof(err))) {
				fprintf(stderr, "lwm2: merge: couldn't read %s: %s\n", argv[i],
				        err);
				rc = 1;
				continue;
			}
			files[k++] = argv[i];
		}
		node = lwm2_node_merge_records(&id, recs, files, k, log_stderr, NULL);
		for (size_t i = 0; i < k; i++)
			free(recs[i]);
		free(recs);
		free(files);
		if (!node) {
			fprintf(stderr, "lwm2: merge: couldn't merge: %s\n", strerror(errno));
			return 1;
		}
	}
	if (digest) {
		struct lwm2_job_meta meta = {
		    .cluster = id.cluster, .job_id = id.job_id, .nodes = id.node, .node_count = 1};
		json_object *d = lwm2_job_digest_build(&meta, &node, 1);
		if (!d) {
			fprintf(stderr, "lwm2: merge: couldn't build the digest: %s\n",
			        strerror(errno));
			json_object_put(node);
			return 1;
		}
		json_object_put(node);
		node = d;
	}
	if (lwm2_cmd_print_json(node, pretty) != 0 || fflush(stdout) != 0)
		rc = 1;
	json_object_put(node);
	return rc;
}
