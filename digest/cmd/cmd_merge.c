/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2 merge: rank records into a node record, or a one-node digest. */
#include "config.h"

#include "cmd_io.h"
#include "cmd_opt.h"
#include "digest_internal.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "numparse.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void log_stderr(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

struct merge_opts {
	struct lwm2_node_ident id;
	bool pretty, digest;
};

static const struct lwm2_optspec merge_spec = {
    .cmd = "merge",
    .usage = "Usage: lwm2 merge [--job ID --step ID] [--node NAME] [--cluster NAME]\n"
             "                  [--digest] [--pretty] DIR | FILE...\n"
             "Merge the rank records (*.lwm2) of a directory, or the given files,\n"
             "into one node record (JSON on stdout).  Malformed records are\n"
             "reported and skipped.  With --job, records of other jobs or steps\n"
             "are skipped too.  With --digest, print the job digest of that one\n"
             "node instead.\n",
    .need = "directory or file",
    .opts = (const struct lwm2_opt[]){
        {"pretty", 'p', NULL, NULL},
        {"job", 'j', "ID", NULL},
        {"step", 's', "ID", NULL},
        {"node", 'n', "NAME", NULL},
        {"cluster", 'M', "NAME", NULL},
        {"digest", 'd', NULL, NULL},
        {0},
    }};

/* -j and -s; the others are in merge_store */
static int merge_opt(void *ctx, int key, char *arg)
{
	struct merge_opts *o = ctx;
	uint64_t v;

	if (key == 'j') {
		if (lwm2_parse_u64(arg, NULL, 1, UINT32_MAX - 2, &o->id.job_id) < 0)
			return lwm2_opt_error(&merge_spec, LWM2_OPT_USAGE,
			                      "couldn't parse --job \"%s\": want 1 to %u", arg,
			                      UINT32_MAX - 2);
		return 0;
	}
	/* 's': up to Slurm's batch step, the highest a record can carry */
	if (lwm2_parse_u64(arg, NULL, 0, UINT32_MAX - 3, &v) < 0)
		return lwm2_opt_error(&merge_spec, LWM2_OPT_USAGE,
		                      "couldn't parse --step \"%s\": want 0 to %u", arg,
		                      UINT32_MAX - 3);
	o->id.step_id = (uint32_t)v;
	return 0;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore merge_store[] = {
    {'p', LWM2_OPT_TRUE(struct merge_opts, pretty)},
    {'d', LWM2_OPT_TRUE(struct merge_opts, digest)},
    {'n', LWM2_OPT_ARG(struct merge_opts, id.node)},
    {'M', LWM2_OPT_ARG(struct merge_opts, id.cluster)},
    {0},
};

int lwm2_cmd_merge(int argc, char **argv)
{
	struct merge_opts o = {.id = {.cluster = "", .node = ""}};
	struct lwm2_node_ident id;
	char host[256] = "";
	json_object *node;
	struct stat st;
	int rc = 0,
	    first = lwm2_opt_parse_store(&merge_spec, merge_store, argc, argv, merge_opt, &o);

	if (first < 0)
		return lwm2_opt_status(first);
	id = o.id;
	if (!*id.node && gethostname(host, sizeof(host) - 1) == 0)
		id.node = host;
	if (first + 1 == argc && stat(argv[first], &st) == 0 && S_ISDIR(st.st_mode)) {
		int dfd = open(argv[first], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		node = dfd < 0 ? NULL : lwm2_node_merge(dfd, &id, log_stderr, NULL);
		if (!node) {
			lwm2_log_error("merge: couldn't read %s: %s", argv[first], strerror(errno));
			if (dfd >= 0)
				close(dfd);
			return 1;
		}
		close(dfd);
	} else {
		int n = argc - first;
		struct lwm2_rank_record **recs = calloc((size_t)n, sizeof(*recs));
		const char **files = calloc((size_t)n, sizeof(*files));
		size_t k = 0;
		if (!recs || !files) {
			lwm2_log_error("merge: out of memory");
			free(recs);
			free(files);
			return 1;
		}
		for (int i = first; i < argc; i++) {
			char err[256];
			if (lwm2_record_read_file(AT_FDCWD, argv[i], &recs[k], err, sizeof(err))) {
				lwm2_log_error("merge: couldn't read %s: %s", argv[i], err);
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
			lwm2_log_error("merge: couldn't merge: %s", strerror(errno));
			return 1;
		}
	}
	if (o.digest) {
		struct lwm2_job_meta meta = {
		    .cluster = id.cluster, .job_id = id.job_id, .nodes = id.node, .node_count = 1};
		json_object *d = lwm2_job_digest_build(&meta, &node, 1);
		if (!d) {
			lwm2_log_error("merge: couldn't build the digest: %s", strerror(errno));
			json_object_put(node);
			return 1;
		}
		json_object_put(node);
		node = d;
	}
	if (lwm2_cmd_print_json(node, o.pretty) != 0 || fflush(stdout) != 0)
		rc = 1;
	json_object_put(node);
	return rc;
}
