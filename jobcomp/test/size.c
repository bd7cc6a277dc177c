/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A 10,000-process job (100 nodes of 100 processes, two steps): its
 * AdminComment part stays within 16 KiB and still holds the job scope;
 * and how long the worker takes for it from the spool's node records,
 * signed through a private munged (tests/munged.h), to the log line
 * (printed as a diagnostic, not a limit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lwm2_digest.h"
#include "lwm2_jobcomp.h"
#include "mknode.h"
#include "munged.h"
#include "tap.h"

#define NODES    100
#define PER_NODE 100
#define STEPS    2

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static json_object *nodes[NODES * STEPS];

static void compact_form(const struct lwm2_job_meta *meta)
{
	char err[256];
	json_object *d;
	json_object *pd;
	json_object *scope = NULL;
	json_object *v = NULL;
	char *part;
	double t0;
	double t1;

	t0 = now_s();
	d = lwm2_job_digest_build(meta, nodes, NODES * STEPS);
	t1 = now_s();
	ok(d != NULL, "digest of %d processes built in %.3f s", NODES * PER_NODE, t1 - t0);
	t0 = now_s();
	part = lwm2_job_digest_compact(d, 16384);
	t1 = now_s();
	ok(part && strlen(part) < 16384, "compact form: %zu bytes (cap 16384), in %.3f s",
	   part ? strlen(part) : 0, t1 - t0);
	pd = part ? lwm2_digest_parse(part, strlen(part), err, sizeof(err)) : NULL;
	ok(pd != NULL, "compact form parses%s%s", pd ? "" : ": ", pd ? "" : err);
	{
		json_object *fit = NULL, *cpu = NULL, *pn = NULL;

		json_object_object_get_ex(pd, "fit", &fit);
		json_object_object_get_ex(fit, "cpu", &cpu);
		json_object_object_get_ex(fit, "nodes", &pn);
		ok(cpu && !pn, "compact form keeps the fit block, without its %d-node list", NODES);
	}
	json_object_object_get_ex(pd, "scope", &scope);
	json_object_object_get_ex(scope, "processes", &v);
	is_int(json_object_get_int64(v), NODES * PER_NODE * STEPS,
	       "compact form keeps the job scope: every process");
	v = NULL;
	json_object_object_get_ex(scope, "totals", &v);
	json_object_object_get_ex(v, "mpi_p2p_calls", &v);
	is_int(json_object_get_int64(v), 100LL * NODES * PER_NODE * STEPS, "and the exact totals");
	json_object_put(pd);
	free(part);
	json_object_put(d);
}

/* the worker, from records signed through munge_socket in a spool to the
 * log line */
static void worker_timing(const struct lwm2_job_meta *meta, const char *munge_socket)
{
	char host[16];
	char err[256];
	char tmp[] = "/tmp/lwm2-jc-size.XXXXXX";
	double t0;
	double t1;
	int i;
	int s;
	int signed_ok = 1;

	if (getuid() == 0 && mkdtemp(tmp)) {
		struct lwm2_jc_conf conf;
		struct lwm2_jc_job job = {0};
		char spool[600], logp[600], cmd[700];
		atomic_bool stop = false;

		snprintf(spool, sizeof(spool), "%s/spool", tmp);
		snprintf(logp, sizeof(logp), "%s/log", tmp);
		mkdir(spool, 0700);
		for (s = 0; s < STEPS && signed_ok; s++)
			for (i = 0; i < NODES && signed_ok; i++) {
				struct lwm2_node_ident id = {
				    .cluster = "lwm2", .job_id = 900, .step_id = (uint32_t)s};

				snprintf(host, sizeof(host), "n%03d", i);
				id.node = host;
				if (lwm2_node_write_signed_socket(spool, &id, nodes[s * NODES + i],
				                                  munge_socket, err,
				                                  sizeof(err)) < 0)
					signed_ok = 0;
			}
		if (signed_ok) {
			lwm2_jc_conf_load(&conf, NULL, NULL, err, sizeof(err));
			free(conf.spool_dir);
			free(conf.log_path);
			conf.spool_dir = strdup(spool);
			conf.log_path = strdup(logp);
			free(conf.munge_socket);
			conf.munge_socket = strdup(munge_socket);
			conf.settle = 0;
			job.job_id = 900;
			job.array_task_id = job.het_job_offset = LWM2_JC_NONE;
			job.start = meta->start;
			job.end = time(NULL);
			job.queued = time(NULL);
			job.node_count = NODES;
			job.cluster = strdup("lwm2");
			job.user = strdup("alice");
			job.nodes = strdup("n[000-099]");
			job.state = strdup("COMPLETED");
			t0 = now_s();
			lwm2_jc_process(&conf, NULL, &job, &stop);
			t1 = now_s();
			ok(job.logged && job.acct_part && strlen(job.acct_part) < 16384,
			   "worker: %d signed node records verified, digest logged in %.3f s",
			   NODES * STEPS, t1 - t0);
			free(job.cluster);
			free(job.user);
			free(job.nodes);
			free(job.state);
			free(job.acct_part);
			lwm2_jc_conf_free(&conf);
		} else {
			skip("worker timing: couldn't sign node records: %s", err);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("couldn't remove %s", tmp);
	} else {
		skip("worker timing: signing node records needs root");
	}
}

static int run(const char *munge_socket)
{
	struct lwm2_job_meta meta = {
	    .cluster = "lwm2",
	    .job_id = 900,
	    .user = "alice",
	    .account = "proj",
	    .partition = "big",
	    .nodes = "n[000-099]",
	    .node_count = NODES,
	    .start = 1700000000,
	    .end = 1700003600,
	    .state = "COMPLETED",
	    /* requests, so that the "fit" block counts in the size */
	    .have_requests = true,
	    .cpus = NODES * PER_NODE,
	    .time_limit_s = 86400,
	    .mem_req_mb = 40000ull * NODES,
	    .mem_req_per_node_mb = 40000,
	    .gpus = 4 * NODES,
	    .gpus_known = true,
	};
	char host[16];
	int i;
	int s;

	for (s = 0; s < STEPS; s++)
		for (i = 0; i < NODES; i++) {
			snprintf(host, sizeof(host), "n%03d", i);
			nodes[s * NODES + i] =
			    mk_node("lwm2", 900, (uint32_t)s, host, PER_NODE, i * PER_NODE);
		}
	compact_form(&meta);
	worker_timing(&meta, munge_socket);
	for (i = 0; i < NODES * STEPS; i++)
		json_object_put(nodes[i]);
	return done_testing();
}

int main(void)
{
	return tap_with_private_munged(run);
}
