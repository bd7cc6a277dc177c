/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 snapshot (not listed: `lwm2 top` and `lwm2 watch` run it on every
 * node of a job with srun --overlap): the current rank records of the
 * job's steps on this node, each step's records merged into a node record
 * with the code the SPANK plugin uses at step end, and per rank the values
 * the live rule needs, as one JSON document.
 *
 * It only reads: the records are written in place by the running
 * processes, two slots each, and lwm2_record_read_file takes the newest
 * slot whose checksum holds, so a write in progress is never seen half
 * done and the writers are never waited for.
 *
 * The document goes out in lines of at most LWM2_SNAP_CHUNK bytes,
 * "LWM2SNAP <node> <i> <n> <part>": srun forwards the output of all nodes
 * through one stream, and short lines keep the parts of one node apart
 * from another's whatever the interleaving.
 */
#include "config.h"

#include "digest_internal.h"
#include "live.h"
#include "live_gather.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "numparse.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Records read per step and node at most: a real step has one per
 * process, and the reader must stay small beside the job. */
#define SNAP_MAX_RECORDS 4096

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void log_none(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static json_object *rank_json(const struct lwm2_rank_record *r, const char *step)
{
	struct lwm2_live_rank l;
	json_object *o = json_object_new_object(), *s = json_object_new_array();

	lwm2_live_from_record(&l, r);
	ju_add(o, "step", json_object_new_string(step));
	ju_add(o, "rank", json_object_new_int(l.rank));
	ju_add(o, "task", json_object_new_int(l.task));
	ju_add(o, "pid", json_object_new_int(l.pid));
	ju_add(o, "exe", json_object_new_string(r->executable[0] ? r->executable : "?"));
	ju_add(o, "flags", json_object_new_int64(l.flags));
	ju_add(o, "start_ns", json_object_new_int64(l.start_ns));
	ju_add(o, "update_ns", json_object_new_int64(l.update_ns));
	ju_add(o, "cpu_us", ju_u64(l.cpu_us));
	ju_add(o, "threads_max", json_object_new_int64(l.threads_max));
	ju_add(o, "period_us", json_object_new_int64(l.period_us));
	for (int e = 0; e < LWM2_NEARMARKS; e++)
		json_object_array_add(s, ju_u64(l.samples[e]));
	ju_add(o, "samples", s);
	for (const struct lwm2_live_counter *c = lwm2_live_counters; c->name; c++)
		ju_add(o, c->name, ju_u64(*(const uint64_t *)((const char *)&l + c->off)));
	ju_add(o, "slice_length_s", json_object_new_int64(r->slice_length_s));
	if (r->nslices) {
		/* the newest slice the record holds: closed at the last update */
		const struct lwm2_slice *sl = &lwm2_record_slices(r)[r->nslices - 1];
		struct lwm2_rank_record tmp;
		struct lwm2_live_rank ls;
		json_object *j = json_object_new_object();

		memset(&tmp, 0, sizeof(tmp));
		memcpy(tmp.counters, sl->counters, sizeof(tmp.counters));
		lwm2_live_from_record(&ls, &tmp);
		ju_add(j, "index", ju_u64(r->first_slice + r->nslices - 1));
		ju_add(j, "mpi_ns", ju_u64(ls.mpi_ns));
		ju_add(j, "io_ns", ju_u64(ls.io_ns));
		ju_add(j, "mpi_bytes", ju_u64(ls.mpi_bytes));
		ju_add(j, "read_bytes", ju_u64(ls.read_bytes));
		ju_add(j, "write_bytes", ju_u64(ls.write_bytes));
		ju_add(o, "last_slice", j);
	}
	return o;
}

/* One step's directory on this node: its ranks into ranks, the node
 * record (or why there is none) into the step's object. */
static json_object *snap_step(const char *basedir, uint64_t job, const char *step, const char *node,
                              json_object *ranks)
{
	json_object *o = json_object_new_object();
	struct lwm2_rank_record **recs = NULL;
	char **names = NULL;
	size_t n = 0;
	char path[4096];
	DIR *d;
	struct dirent *de;

	ju_add(o, "step", json_object_new_string(step));
	if (snprintf(path, sizeof(path), "%s/%" PRIu64 ".%s.%s", basedir, job, step, node) >=
	    (int)sizeof(path)) {
		ju_add(o, "error", json_object_new_string("path too long"));
		return o;
	}
	d = opendir(path);
	if (!d) {
		/* ENOENT: a step that is not measured here, or over already */
		ju_add(o, "error", json_object_new_string(strerror(errno)));
		return o;
	}
	recs = calloc(SNAP_MAX_RECORDS, sizeof(*recs));
	names = calloc(SNAP_MAX_RECORDS, sizeof(*names));
	while (recs && names && (de = readdir(d)) && n < SNAP_MAX_RECORDS) {
		size_t len = strlen(de->d_name);
		char err[256];

		if (len < 6 || strcmp(de->d_name + len - 5, ".lwm2") != 0)
			continue;
		if (lwm2_record_read_file(dirfd(d), de->d_name, &recs[n], err, sizeof(err)) != 0)
			continue; /* being created, or not a record: not this snapshot's */
		names[n] = strdup(de->d_name);
		json_object_array_add(ranks, rank_json(recs[n], step));
		n++;
	}
	closedir(d);
	if (recs && names) {
		uint64_t sid = 0;
		bool numbered = lwm2_parse_u64(step, NULL, 0, UINT32_MAX, &sid) == 0;
		struct lwm2_node_ident id = {
		    .cluster = NULL, .job_id = job, .step_id = (uint32_t)sid, .node = node};
		json_object *rec;

		/* batch and extern are named, not numbered: take the id the
		 * records carry */
		if (!numbered && n)
			id.step_id = recs[0]->step_id;
		rec = lwm2_node_merge_records(&id, recs, (const char *const *)names, n, log_none,
		                              NULL);
		if (rec)
			ju_add(o, "node_record", rec);
	}
	ju_add(o, "records", json_object_new_int64((int64_t)n));
	for (size_t i = 0; i < n; i++) {
		free(recs[i]);
		free(names[i]);
	}
	free(recs);
	free(names);
	return o;
}

enum { OPT_INTERVAL = LWM2_OPT_LONG };

/* The command line as read. */
struct snap_cli {
	const char *basedir, *node;
	char *steps;
	uint64_t job;
	bool plain;
	unsigned interval;
};

static const struct lwm2_optspec snapshot_spec = {
    .cmd = "snapshot",
    .usage = "Usage: lwm2 snapshot -j JOB -s STEP[,STEP...] [--basedir DIR] [--node NAME]\n"
             "                     [--interval SECONDS]\n"
             "The current rank records of a running job on this node, as JSON lines\n"
             "(run by `lwm2 top` and `lwm2 watch` through srun; see lwm2(1)).\n",
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"job", 'j', "JOB", NULL},
        {"steps", 's', "STEP[,STEP...]", NULL},
        {"basedir", 'b', "DIR", NULL},
        {"node", 'n', "NAME", NULL},
        {"plain", 'p', NULL, NULL},
        {"interval", OPT_INTERVAL, "SECONDS", NULL},
        {0},
    }};

/* -j and --interval; the others are in snapshot_store */
static int snapshot_opt(void *ctx, int key, char *arg)
{
	struct snap_cli *cli = ctx;
	uint64_t v;

	if (key == 'j') {
		if (lwm2_parse_u64(arg, NULL, 1, UINT64_MAX, &cli->job) < 0)
			return lwm2_opt_error(&snapshot_spec, LWM2_OPT_USAGE, "bad job id '%s'",
			                      arg);
		return 0;
	}
	if (lwm2_parse_u64(arg, NULL, 0, 3600, &v) < 0)
		return lwm2_opt_error(&snapshot_spec, LWM2_OPT_USAGE, "bad interval '%s'", arg);
	cli->interval = (unsigned)v;
	return 0;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore snapshot_store[] = {
    {'s', LWM2_OPT_ARG(struct snap_cli, steps)},
    {'b', LWM2_OPT_ARG(struct snap_cli, basedir)},
    {'n', LWM2_OPT_ARG(struct snap_cli, node)},
    {'p', LWM2_OPT_TRUE(struct snap_cli, plain)},
    {0},
};

int lwm2_cmd_snapshot(int argc, char **argv)
{
	struct snap_cli cli = {.basedir = "/run/lwm2", .node = getenv("SLURMD_NODENAME")};
	const char *node;
	char host[256], *tok, *save = NULL;
	/* a stream ends by itself after a day, whatever happens to its reader */
	uint64_t max_rounds = 1;
	json_object *doc, *jsteps, *ranks;
	int rc, first = lwm2_opt_parse_store(&snapshot_spec, snapshot_store, argc, argv,
	                                     snapshot_opt, &cli);

	if (first < 0)
		return lwm2_opt_status(first);
	node = cli.node;
	if (cli.interval)
		max_rounds = 86400 / cli.interval + 1;
	if (!cli.job || !cli.steps || first != argc) {
		lwm2_opt_usage(&snapshot_spec, stderr);
		return 2;
	}
	if (!node || !*node) {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	if (strchr(node, ' ') || strchr(node, '/')) {
		lwm2_log_error("snapshot: bad node name '%s'", node);
		return 2;
	}
	/* steps is parsed once: strtok_r writes into it */
	{
		char *list[256];
		size_t ns = 0;

		for (tok = strtok_r(cli.steps, ",", &save); tok && ns < 256;
		     tok = strtok_r(NULL, ",", &save))
			if (*tok && !strchr(tok, '/') && !strchr(tok, '.'))
				list[ns++] = tok;
		for (uint64_t seq = 0;; seq++) {
			size_t found = 0;

			doc = json_object_new_object();
			jsteps = json_object_new_array();
			ranks = json_object_new_array();
			ju_add(doc, "lwm2_snapshot_version", json_object_new_int(1));
			ju_add(doc, "node", json_object_new_string(node));
			ju_add(doc, "job_id", ju_u64(cli.job));
			ju_add(doc, "seq", ju_u64(seq));
			ju_add(doc, "now_ns", json_object_new_int64(now_ns()));
			for (size_t i = 0; i < ns; i++) {
				json_object *st =
				    snap_step(cli.basedir, cli.job, list[i], node, ranks);
				found += !ju_get(st, "error", json_type_string);
				json_object_array_add(jsteps, st);
			}
			ju_add(doc, "steps", jsteps);
			ju_add(doc, "ranks", ranks);
			{
				const char *s =
				    json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
				rc = cli.plain ? (puts(s) == EOF || fflush(stdout) != 0)
				               : lwm2_snap_emit(stdout, node, seq, s);
			}
			json_object_put(doc);
			/* once; or the reader is gone; or the steps ended here */
			if (!cli.interval || rc || !found || seq + 1 >= max_rounds)
				break;
			sleep(cli.interval);
		}
	}
	return rc ? 1 : 0;
}
