/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Settings, the job's JSON, the queue, and state files across a "restart". */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "lwm2_jobcomp.h"
#include "lwm2conf.h"
#include "tap.h"

static char tmpdir[] = "/tmp/lwm2-jc-state.XXXXXX";

static struct lwm2_jc_job *mkjob(uint32_t id, int64_t start)
{
	struct lwm2_jc_job *j = calloc(1, sizeof(*j));

	j->job_id = id;
	j->array_task_id = LWM2_JC_NONE;
	j->het_job_offset = LWM2_JC_NONE;
	j->start = start;
	j->end = start + 10;
	j->uid = 1000;
	j->node_count = 2;
	j->exit_code = 2 << 8;
	j->user = strdup("alice");
	j->nodes = strdup("n[1-2]");
	j->state = strdup("COMPLETED");
	j->admin_comment = strdup("JS1:abc 'quoted' \\ back");
	return j;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

static int loaded;
static uint32_t loaded_ids[8];

static void on_load(struct lwm2_jc_job *j, void *arg)
{
	(void)arg;
	if (loaded < 8)
		loaded_ids[loaded] = j->job_id;
	loaded++;
	lwm2_jc_job_free(j);
}

static int logged_errors;
static char logged[2][600];
static void count_log(enum lwm2_log_level level, const char *msg)
{
	if (level == LWM2_LOG_ERROR) {
		if (logged_errors < 2)
			snprintf(logged[logged_errors], sizeof(logged[0]), "%s", msg);
		logged_errors++;
		diag("log: %s", msg);
	}
}

struct popper {
	struct lwm2_jc_queue *q;
	struct lwm2_jc_job *got;
	atomic_bool done;
};

static void *pop_forever(void *arg)
{
	struct popper *p = arg;

	p->got = lwm2_jc_queue_pop(p->q, NULL);
	atomic_store(&p->done, true);
	return NULL;
}

/* settings */
static void conf_defaults(void)
{
	struct lwm2_jc_conf c;
	char err[256];

	ok(lwm2_jc_conf_load(&c, "/nonexistent/lwm2.conf", "/var/spool/slurmctld", err,
	                     sizeof(err)) == 0,
	   "missing lwm2.conf: defaults");
	is_str(c.state_dir, "/var/spool/slurmctld/lwm2",
	       "StateDir defaults under StateSaveLocation");
	is_int(c.cap, 16384, "AdminCommentCap defaults to 16 KiB");
	ok(c.admin_comment && !c.keep_records, "AdminComment=yes, KeepNodeRecords=no by default");
	lwm2_jc_conf_free(&c);
}

static void conf_file(const char *path)
{
	struct lwm2_jc_conf c;
	char err[256];

	write_file(path, "# site settings\nSpoolDir = /srv/lwm2/spool\nstatedir=/srv/lwm2/state\n"
	                 "LateRecordWait=30 # seconds\nAdminCommentCap=8192\nAdminComment=no\n"
	                 "KeepNodeRecords=yes\nMailWait=60\nMailer=/usr/sbin/sendmail\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) == 0, "lwm2.conf read");
	is_str(c.spool_dir, "/srv/lwm2/spool", "SpoolDir");
	is_str(c.state_dir, "/srv/lwm2/state", "StateDir (keys case-insensitive)");
	is_int(c.late_wait, 30, "LateRecordWait, comment after the value");
	is_int(c.cap, 8192, "AdminCommentCap");
	ok(!c.admin_comment && c.keep_records, "booleans");
	lwm2_jc_conf_free(&c);
}

/* the keys of lwm2 top and lwm2 watch live in the same file */
static void conf_other_keys(const char *path)
{
	struct lwm2_jc_conf c;
	char err[256];

	write_file(path, "BaseDir=/run/lwm2\nWatchStuckTime=1800\nWatchAction=mail\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) == 0,
	   "BaseDir and Watch* keys are left to the lwm2 command");
	lwm2_jc_conf_free(&c);

	write_file(path, "SpoolDirr=/x\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0 && errno == EINVAL &&
	       strstr(err, "unknown key") && strstr(err, ":1:"),
	   "unknown key refused with file and line: %s", err);
	write_file(path, "AdminCommentCap=70000\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0 && strstr(err, "bad value"),
	   "AdminCommentCap above 60000 refused: %s", err);
	write_file(path, "SpoolDir=relative\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0, "relative SpoolDir refused");
}

/* lwm2-jobend's keys: its log (JobCompLoc is the site's there) and
 * its messages */
static void conf_jobend_keys(const char *path)
{
	struct lwm2_jc_conf c;
	char err[256];

	ok(lwm2_jc_conf_load(&c, "/nonexistent/lwm2.conf", NULL, err, sizeof(err)) == 0 &&
	       !strcmp(c.log_path, "/var/log/slurm/lwm2-digests.jsonl") && !*c.jobend_log,
	   "LogFile defaults to the plugin's log, JobEndLog to syslog");
	lwm2_jc_conf_free(&c);
	write_file(path, "LogFile=/srv/lwm2/digests.jsonl\nJobEndLog=/srv/lwm2/jobend.log\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) == 0 &&
	       !strcmp(c.log_path, "/srv/lwm2/digests.jsonl") &&
	       !strcmp(c.jobend_log, "/srv/lwm2/jobend.log"),
	   "LogFile and JobEndLog read");
	lwm2_jc_conf_free(&c);
	write_file(path, "LogFile=digests.jsonl\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0 && strstr(err, "bad value"),
	   "relative LogFile refused: %s", err);
	write_file(path, "JobEndLog=jobend.log\n");
	ok(lwm2_jc_conf_load(&c, path, NULL, err, sizeof(err)) < 0 && strstr(err, "bad value"),
	   "relative JobEndLog refused: %s", err);
}

static void conf_path(void)
{
	char *p;

	setenv("LWM2_CONF", "/x/y.conf", 1);
	p = lwm2_conf_path("/etc/slurm/slurm.conf");
	is_str(p, "/x/y.conf", "LWM2_CONF overrides the path");
	free(p);
	unsetenv("LWM2_CONF");
	p = lwm2_conf_path("/opt/cluster/etc/slurm.conf");
	is_str(p, "/opt/cluster/etc/lwm2.conf", "lwm2.conf next to slurm.conf");
	free(p);
}

static void job_json(struct lwm2_jc_job *j)
{
	char ec[16];
	struct lwm2_jc_job *k;
	json_object *o;

	lwm2_jc_exit_code_str(j->exit_code, ec, sizeof(ec));
	is_str(ec, "2:0", "exit code as sacct prints it");
	j->logged = true;
	j->acct_part = strdup("LWM2:{\"v\":1}");
	o = lwm2_jc_job_to_json(j, true);
	k = lwm2_jc_job_from_json(o);
	ok(k && k->job_id == 42 && k->start == 1700000000 && k->array_task_id == LWM2_JC_NONE &&
	       k->logged && !k->acct_sent && !strcmp(k->admin_comment, j->admin_comment) &&
	       !strcmp(k->acct_part, j->acct_part) && k->exit_code == j->exit_code,
	   "job JSON round trip keeps fields and progress");
	json_object_put(o);
	lwm2_jc_job_free(k);
	o = lwm2_jc_job_to_json(j, false);
	ok(!json_object_object_get_ex(o, "admin_comment", NULL) &&
	       !json_object_object_get_ex(o, "array_task_id", NULL),
	   "log line form: no progress, no AdminComment copy, no array fields for a plain job");
	json_object_put(o);
}

/* the job's requests, from Slurm's numbers */
static void job_requests(struct lwm2_jc_job *j)
{
	struct lwm2_jc_job *k;
	json_object *o;

	{
		struct lwm2_jc_job r = {.total_cpus = 8, .node_count = 2};
		bool found;

		lwm2_jc_job_requests(&r, 90, 2048, "cpu=8,mem=4G,node=2,billing=8,gres/gpu=2",
		                     0xfffe);
		ok(r.time_limit_s == 5400 && r.mem_req_per_node_mb == 2048 &&
		       r.mem_req_mb == 4096 && r.gpus == 2 && r.gpus_known && r.cpus_per_task == 0,
		   "--time=90 --mem=2G on 2 nodes, 2 GPUs: 5400 s, 2048 MB a node, 4096 MB");
		lwm2_jc_job_requests(&r, 0xffffffffu, 512 | LWM2_JC_MEM_PER_CPU, "cpu=8,node=2", 4);
		ok(r.time_limit_s == 0 && r.time_unlimited && r.mem_req_mb == 4096 &&
		       r.mem_req_per_node_mb == 2048 && r.gpus == 0 && r.gpus_known &&
		       r.cpus_per_task == 4,
		   "--mem-per-cpu=512 on 8 CPUs: 4096 MB, 2048 a node; no limit; no GPU");
		lwm2_jc_job_requests(&r, 0xfffffffeu, 0, NULL, 0);
		ok(!r.time_limit_s && !r.time_unlimited && !r.mem_req_mb &&
		       !r.mem_req_per_node_mb && !r.gpus_known,
		   "nothing known: all unknown");
		is_int(lwm2_jc_tres_gpus("cpu=1,gres/gpu:a100=2,gres/gpu:v100=1", &found), 3,
		       "typed GPUs only: their sum");
		is_int(lwm2_jc_tres_gpus("gres/gpu=4,gres/gpu:a100=4,gres/gpumem=80G", &found), 4,
		       "untyped total beside typed: counted once, gpumem not a GPU");
	}
	j->time_limit_s = 3600;
	j->mem_req_mb = 4096;
	j->mem_req_per_node_mb = 2048;
	j->gpus = 1;
	j->gpus_known = true;
	o = lwm2_jc_job_to_json(j, false);
	k = lwm2_jc_job_from_json(o);
	ok(json_object_object_get_ex(o, "time_limit_s", NULL) &&
	       !json_object_object_get_ex(o, "time_unlimited", NULL) &&
	       json_object_object_get_ex(o, "mem_req_mb", NULL) &&
	       json_object_object_get_ex(o, "mem_req_per_node_mb", NULL) &&
	       json_object_object_get_ex(o, "gpus", NULL),
	   "the log line names the requests");
	ok(k && k->time_limit_s == 3600 && k->mem_req_mb == 4096 &&
	       k->mem_req_per_node_mb == 2048 && k->gpus == 1 && k->gpus_known,
	   "the requests read back");
	json_object_put(o);
	lwm2_jc_job_free(k);
	j->time_limit_s = 0;
	j->time_unlimited = true;
	o = lwm2_jc_job_to_json(j, false);
	k = o ? lwm2_jc_job_from_json(o) : NULL;
	ok(json_object_object_get_ex(o, "time_unlimited", NULL) &&
	       !json_object_object_get_ex(o, "time_limit_s", NULL) && k && k->time_unlimited,
	   "no limit: time_unlimited in the log line, read back");
	json_object_put(o);
	lwm2_jc_job_free(k);
	j->time_limit_s = 3600;
	j->time_unlimited = false;
	/* a line of an earlier lwm2 has no time_unlimited: read as false; an
	 * earlier reader meets this one's as a member it does not know,
	 * which the table's reader passes over, as here a later one */
	o = lwm2_jc_job_to_json(j, false);
	if (o)
		json_object_object_add(o, "a_later_member", json_object_new_boolean(1));
	k = o ? lwm2_jc_job_from_json(o) : NULL;
	ok(k && !k->time_unlimited && k->time_limit_s == 3600,
	   "no time_unlimited: false; a member not known: passed over");
	json_object_put(o);
	lwm2_jc_job_free(k);
}

/* state files */
static void state_files(struct lwm2_jc_job *j)
{
	char path[512];
	struct lwm2_jc_job *k;

	snprintf(path, sizeof(path), "%s/state", tmpdir);
	ok(lwm2_jc_state_save(path, j) == 0, "state saved (dir created)");
	k = mkjob(7, 1700000001);
	ok(lwm2_jc_state_save(path, k) == 0, "second job saved");
	k->start = 1700000500; /* the same job id, requeued and run again */
	ok(lwm2_jc_state_save(path, k) == 0, "a requeued run gets its own file");
	{
		char bad[600];

		snprintf(bad, sizeof(bad), "%s/99.0.job", path);
		write_file(bad, "{not json");
	}
	loaded = 0;
	logged_errors = 0;
	ok(lwm2_jc_state_load(path, on_load, NULL) == 0, "state loaded");
	is_int(loaded, 3, "three jobs resumed, the bad file not");
	ok(loaded_ids[0] == 7 && loaded_ids[2] == 42, "oldest job ids first");
	is_int(logged_errors, 1, "the bad file is logged");
	{
		char bad[600];
		struct stat st;

		snprintf(bad, sizeof(bad), "%s/99.0.job.bad", path);
		ok(stat(bad, &st) == 0, "and set aside as .bad");
	}
	ok(lwm2_jc_state_remove(path, j) == 0, "state removed");
	loaded = 0;
	lwm2_jc_state_load(path, on_load, NULL);
	is_int(loaded, 2, "removed job not resumed");
	ok(lwm2_jc_state_load("/nonexistent/dir", on_load, NULL) == 0,
	   "no state dir: nothing to resume");
	lwm2_jc_job_free(j);
	lwm2_jc_job_free(k);
}

/* state file versions: this one and the files from before the
 * version was written are read, others set aside by name */
static void state_versions(void)
{
	char path[512];
	struct lwm2_jc_job *j;
	json_object *o;

	j = mkjob(95, 1);
	o = lwm2_jc_job_to_json(j, true);
	{
		json_object *v;

		ok(json_object_object_get_ex(o, "state_version", &v) &&
		       json_object_get_int(v) == LWM2_JC_STATE_VERSION,
		   "a state file carries its version");
	}
	json_object_put(o);
	lwm2_jc_job_free(j);
	snprintf(path, sizeof(path), "%s/versions", tmpdir);
	mkdir(path, 0700);
	{
		static const struct {
			const char *name, *text;
		} files[] = {
		    {"96.0.job", "{\"job_id\":96}"},
		    {"97.0.job", "{\"job_id\":97,\"state_version\":0}"},
		    {"98.0.job", "{\"job_id\":98,\"state_version\":1}"},
		    {"99.0.job", "{\"job_id\":99,\"state_version\":2}"},
		};
		char file[600];

		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(file, sizeof(file), "%s/%s", path, files[i].name);
			write_file(file, files[i].text);
		}
	}
	loaded = 0;
	logged_errors = 0;
	lwm2_jc_state_load(path, on_load, NULL);
	ok(loaded == 2 && loaded_ids[0] == 96 && loaded_ids[1] == 98,
	   "versions 1 and none (before versions) resumed, %d in all", loaded);
	is_int(logged_errors, 2, "versions 0 and 2 logged");
	ok(strstr(logged[0], "97.0.job: state file version 0: no such version") != NULL,
	   "version 0: no such version (%s)", logged[0]);
	ok(strstr(logged[1], "99.0.job: state file version 2: written by a newer lwm2") != NULL,
	   "version 2: written by a newer lwm2 (%s)", logged[1]);
}

/* queue */
static void queue(void)
{
	struct lwm2_jc_job *j;
	struct lwm2_jc_queue *q;
	struct timespec dl;
	struct popper pp;
	pthread_t t;

	q = lwm2_jc_queue_new(2);
	ok(lwm2_jc_queue_push(q, mkjob(1, 1)) == 0 && lwm2_jc_queue_push(q, mkjob(2, 1)) == 0,
	   "two jobs queued");
	errno = 0;
	ok(lwm2_jc_queue_push(q, mkjob(3, 1)) < 0 && errno == ENOSPC, "third refused: ENOSPC");
	j = lwm2_jc_queue_pop(q, NULL);
	ok(j && j->job_id == 1, "FIFO order");
	lwm2_jc_job_free(j);
	j = lwm2_jc_queue_pop(q, NULL);
	lwm2_jc_job_free(j);
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += 50 * 1000 * 1000;
	if (dl.tv_nsec >= 1000000000) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000;
	}
	ok(lwm2_jc_queue_pop(q, &dl) == NULL, "empty queue: pop times out");
	pp.q = q;
	pp.got = NULL;
	atomic_init(&pp.done, false);
	pthread_create(&t, NULL, pop_forever, &pp);
	/* A wake ends the pops waiting at that moment, not a later one (the
	 * worker's pops all have deadlines): wake until the popper, however
	 * late it started to wait, has ended. */
	do {
		usleep(20000);
		lwm2_jc_queue_wake(q);
	} while (!atomic_load(&pp.done));
	pthread_join(t, NULL);
	ok(pp.got == NULL, "wake ends a waiting pop");
	/* Freed with a job still in it: the job goes with the queue, which
	 * LeakSanitizer (--enable-sanitizer=address) checks at exit. */
	ok(lwm2_jc_queue_push(q, mkjob(5, 1)) == 0, "a woken queue takes jobs again");
	lwm2_jc_queue_free(q);
}

int main(void)
{
	char path[512];
	struct lwm2_jc_job *j;

	if (!mkdtemp(tmpdir))
		return 1;
	lwm2_log_open("lwm2");
	lwm2_log_set_sink(count_log);

	conf_defaults();
	snprintf(path, sizeof(path), "%s/lwm2.conf", tmpdir);
	conf_file(path);
	conf_other_keys(path);
	conf_jobend_keys(path);
	conf_path();

	/* the job: as JSON, its requests, its state files */
	j = mkjob(42, 1700000000);
	job_json(j);
	job_requests(j);
	state_files(j);
	state_versions();
	queue();
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			diag("couldn't remove %s", tmpdir);
	}
	return done_testing();
}
