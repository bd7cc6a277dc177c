/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The worker: digests from signed node records in a real spool (signed
 * with munge the way slurmstepd signs them, through a private munged and
 * as whoever runs the test: see tests/munged.h), the JSON-lines log,
 * the AdminComment part and its read-back, and resuming after a stop.
 * Accounting here is an in-memory table standing in for slurmdbd; the
 * integration tests (tests/integration/t-jobcomp-*.sh) use the real one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "lwm2_digest.h"
#include "lwm2_jobcomp.h"
#include "mknode.h"
#include "munged.h"
#include "tap.h"
#include "worker_int.h"

static char tmp[] = "/tmp/lwm2-jc-worker.XXXXXX";
static char spool[600], state[600], logp[600];
static const char *munge_socket;

/* accounting stand-in: AdminComment per job id (db_comment: the last
 * one written) */
static char *db_rows[128];
static char *db_comment;
static bool db_ended = true;
static int modifies;
static bool completing;
static int completing_calls;
static char lastlog[2048], lastinfo[2048];
static int errors;
/* the worker's database groups: how many, and the jobs in them */
static atomic_int groups, grouped_jobs;

static void tlog(enum lwm2_log_level level, const char *msg)
{
	unsigned long n;

	if (level == LWM2_LOG_DEBUG &&
	    sscanf(msg, "lwm2: database group: %lu jobs in one", &n) == 1) {
		atomic_fetch_add(&groups, 1);
		atomic_fetch_add(&grouped_jobs, (int)n);
	}
	if (level == LWM2_LOG_ERROR) {
		errors++;
		snprintf(lastlog, sizeof(lastlog), "%s", msg);
	} else if (level == LWM2_LOG_INFO) {
		snprintf(lastinfo, sizeof(lastinfo), "%s", msg);
	}
	if (level <= LWM2_LOG_VERBOSE)
		diag("log: %s", msg);
}

/* One job through lwm2_jc_process, then the line it appended written to
 * the database as the worker's loop writes its groups (here at once). */
static int run_job(const struct lwm2_jc_conf *conf, const struct lwm2_jc_ops *o,
                   struct lwm2_jc_job *job, const atomic_bool *stop)
{
	int rc = lwm2_jc_process(conf, o, job, stop);

	lwm2_jc_db_write_waiting(conf, o);
	return rc;
}

static bool t_completing(uint32_t id)
{
	(void)id;
	completing_calls++;
	return completing;
}

static int t_modify(const struct lwm2_jc_job *job, const char *comment)
{
	modifies++;
	free(db_rows[job->job_id % 128]);
	db_rows[job->job_id % 128] = strdup(comment);
	db_comment = db_rows[job->job_id % 128];
	return 0;
}

static enum lwm2_jc_acct_state t_read(const struct lwm2_jc_job *job, char **comment)
{
	if (!db_ended)
		return LWM2_JC_ACCT_NOT_ENDED;
	*comment = db_rows[job->job_id % 128] ? strdup(db_rows[job->job_id % 128]) : NULL;
	return LWM2_JC_ACCT_ENDED;
}

static const struct lwm2_jc_ops ops = {
    .job_completing = t_completing,
    .acct_modify = t_modify,
    .acct_read = t_read,
};

static struct lwm2_jc_job *mkjob(uint32_t id)
{
	struct lwm2_jc_job *j = calloc(1, sizeof(*j));

	j->job_id = id;
	j->array_task_id = LWM2_JC_NONE;
	j->het_job_offset = LWM2_JC_NONE;
	j->submit = time(NULL) - 100;
	j->start = time(NULL) - 60;
	j->end = time(NULL);
	j->queued = time(NULL);
	j->uid = 1000;
	j->node_count = 2;
	j->cluster = strdup("lwm2");
	j->user = strdup("alice");
	j->account = strdup("proj");
	j->nodes = strdup("n[1-2]");
	j->state = strdup("COMPLETED");
	j->admin_comment = strdup("JS1:H4sIAAAA");
	/* the job-complete record brings the job's AdminComment along */
	free(db_rows[id % 128]);
	db_rows[id % 128] = strdup(j->admin_comment);
	return j;
}

static int sign(uint32_t job, uint32_t step, const char *host, int rank0, uint32_t as_job)
{
	json_object *node = mk_node("lwm2", as_job, step, host, 2, rank0);
	struct lwm2_node_ident id = {
	    .cluster = "lwm2", .job_id = as_job, .step_id = step, .node = host};
	char err[256];
	int rc = lwm2_node_write_signed_socket(spool, &id, node, munge_socket, err, sizeof(err));

	if (rc < 0)
		diag("sign: %s", err);
	json_object_put(node);
	/* a record of another job, copied into this job's directory */
	if (rc == 0 && as_job != job) {
		char from[900], to[900], name[128];

		lwm2_node_file_name(&id, name, sizeof(name));
		snprintf(from, sizeof(from), "%s/%u/%s", spool, as_job, name);
		snprintf(to, sizeof(to), "%s/%u/%s", spool, job, name);
		{
			char dir[900];

			snprintf(dir, sizeof(dir), "%s/%u", spool, job);
			mkdir(dir, 0700);
		}
		rc = rename(from, to);
	}
	return rc;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static int count_lines(const char *path)
{
	char *s = slurp(path), *p;
	int n = 0;

	for (p = s; p && *p; p++)
		n += *p == '\n';
	free(s);
	return n;
}

static json_object *last_line(const char *path)
{
	char *s = slurp(path), *p;
	json_object *o;

	if (!s || !*s)
		return NULL;
	s[strlen(s) - 1] = '\0';
	p = strrchr(s, '\n');
	o = json_tokener_parse(p ? p + 1 : s);
	free(s);
	return o;
}

static int64_t jint(json_object *o, const char *k)
{
	json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return json_object_get_int64(v);
}

static const char *jstr(json_object *o, const char *k)
{
	json_object *v = NULL;

	json_object_object_get_ex(o, k, &v);
	return json_object_get_string(v);
}

static bool exists(const char *fmt, uint32_t id)
{
	char p[900];
	struct stat st;

	snprintf(p, sizeof(p), fmt, spool, id);
	return stat(p, &st) == 0;
}

/* ------------------------------------------------------------ for the
 * requeue, recovery and marker cases */

static void set_mtime(uint32_t job, const char *name, time_t t)
{
	char p[900];
	struct timespec ts[2] = {{t, 0}, {t, 0}};

	snprintf(p, sizeof(p), "%s/%u/%s", spool, job, name);
	if (utimensat(AT_FDCWD, p, ts, 0) < 0)
		diag("utimensat %s: %s", p, strerror(errno));
}

static void touch(uint32_t job, const char *name)
{
	char p[900];
	int fd;

	snprintf(p, sizeof(p), "%s/%u", spool, job);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/%u/%s", spool, job, name);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
}

static int64_t next_start;
static int64_t t_next_run_start(const struct lwm2_jc_job *job)
{
	(void)job;
	return next_start;
}

static const struct lwm2_jc_ops ops_requeue = {
    .job_completing = t_completing,
    .acct_modify = t_modify,
    .acct_read = t_read,
    .next_run_start = t_next_run_start,
};

/* recovery: what slurmctld says about a job found in the spool */
static int lookup_rc = 1;
static bool looked[128];
static int t_lookup(uint32_t id, struct lwm2_jc_job **job)
{
	looked[id % 128] = true;
	if (lookup_rc == 1)
		*job = mkjob(id);
	if (lookup_rc < 0)
		errno = EAGAIN;
	return lookup_rc;
}

static const struct lwm2_jc_ops ops_recover = {
    .job_completing = t_completing,
    .job_lookup = t_lookup,
};

static uint32_t pending_id;
static bool t_is_pending(uint32_t id, void *arg)
{
	(void)arg;
	return id == pending_id;
}

static bool recovered[128];
static void t_recovered(struct lwm2_jc_job *job, void *arg)
{
	(void)arg;
	recovered[job->job_id % 128] = true;
	lwm2_jc_job_free(job);
}

/* accounting that hangs (slurmdbd stopped) until released */
static atomic_bool hang = false;
static atomic_int hanging = 0;
static enum lwm2_jc_acct_state t_read_hang(const struct lwm2_jc_job *job, char **comment)
{
	hanging++;
	while (atomic_load(&hang))
		usleep(10000);
	hanging--;
	return t_read(job, comment);
}

static const struct lwm2_jc_ops ops_hang = {
    .job_completing = t_completing,
    .acct_modify = t_modify,
    .acct_read = t_read_hang,
};

static bool state_file(uint32_t id)
{
	char cmd[900];
	int rc;

	snprintf(cmd, sizeof(cmd), "ls %s 2>/dev/null | grep -q '^%u\\..*\\.job$'", state, id);
	rc = system(cmd);
	return rc == 0;
}

/* a job with two good records and one copied from another job */
static void two_good_records(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	json_object *l;
	json_object *d;
	json_object *v;
	char err[256];
	atomic_bool stop = false;
	int rc;
	size_t off;
	size_t len = 0;
	int found;

	sign(42, 0, "n1", 0, 42);
	sign(42, 0, "n2", 2, 42);
	sign(42, 1, "n1", 0, 43);
	j = mkjob(42);
	completing = true;
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 1 && !j->logged && completing_calls == 1,
	   "while the nodes are completing: wait, nothing logged");
	completing = false;
	errors = 0;
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 1 && j->logged && j->acct_sent, "nodes done: logged, AdminComment queued");
	is_int(errors, 1, "one record rejected, with a log line");
	ok(strstr(lastlog, "couldn't accept node record") && strstr(lastlog, "1.n1.lwm2node"),
	   "the log line names the record: %s", lastlog);
	l = last_line(logp);
	is_int(jint(l, "records_accepted"), 2, "log: two records accepted");
	is_int(jint(l, "records_rejected"), 1, "log: one rejected");
	is_str(jstr(l, "status"), "ok", "log: status ok");
	d = NULL;
	json_object_object_get_ex(l, "digest", &d);
	v = NULL;
	json_object_object_get_ex(d, "scope", &v);
	is_int(jint(v, "processes"), 4, "digest: 4 processes");
	json_object_object_get_ex(v, "totals", &v);
	is_int(jint(v, "mpi_p2p_calls"), 400, "digest: exact point-to-point calls");
	is_int(jint(v, "mpi_p2p_bytes_sent"), 25600, "digest: exact bytes");
	ok(jint(l, "job_id") == 42 && !strcmp(jstr(l, "user"), "alice"), "log: job fields");
	json_object_put(l);
	is_int(modifies, 1, "one AdminComment modification");
	ok(db_comment && !strncmp(db_comment, "JS1:H4sIAAAA LWM2:{", 19),
	   "AdminComment: jobstats' part kept, ours appended");
	/* Found first: the message shows the length the search gave. */
	found = lwm2_jc_comment_find(db_comment, &off, &len) == 0;
	ok(found && len <= conf->cap, "our part within AdminCommentCap (%zu bytes)", len);
	{
		json_object *pd =
		    lwm2_digest_parse(db_comment, strlen(db_comment), err, sizeof(err));

		ok(pd != NULL, "the AdminComment digest parses: %s", pd ? "" : err);
		json_object_put(pd);
	}
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 0, "read back: the digest is there, job done");
	ok(!exists("%s/%u/0.n1.lwm2node", 42), "node records removed");
	is_int(count_lines(logp), 1, "one log line");
	lwm2_jc_job_free(j);
}

/* someone overwrites AdminComment after us */
static void overwritten(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	int rc;

	sign(44, 0, "n1", 0, 44);
	j = mkjob(44);
	free(j->admin_comment);
	j->admin_comment = NULL;
	free(db_rows[44]);
	db_rows[44] = NULL;
	modifies = 0;
	run_job(conf, &ops, j, &stop);
	ok(db_comment && !strncmp(db_comment, "LWM2:{", 6), "no other text: the field is our part");
	free(db_rows[44]);
	db_comment = db_rows[44] = strdup("JS1:later");
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 1 && modifies == 2, "overwritten: queued again");
	ok(!strncmp(db_comment, "JS1:later LWM2:{", 16), "merged into what is there now");
	j->next_try = 0;
	rc = run_job(conf, &ops, j, &stop);
	is_int(rc, 0, "then verified");
	lwm2_jc_job_free(j);
}

/* slurmdbd has not applied the job's record yet */
static void accounting_behind(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	int rc;

	sign(45, 0, "n1", 0, 45);
	j = mkjob(45);
	run_job(conf, &ops, j, &stop);
	db_ended = false;
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 1 && j->next_try > time(NULL) - 1 && j->attempts == 1,
	   "accounting behind: try again later, with backoff");
	db_ended = true;
	j->next_try = 0;
	is_int(run_job(conf, &ops, j, &stop), 0, "and done once it caught up");
	lwm2_jc_job_free(j);
}

/* a job that never ran; a job without records */
static void not_started_no_records(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	json_object *l;
	atomic_bool stop = false;

	j = mkjob(46);
	j->start = 0;
	free(j->nodes);
	j->nodes = NULL;
	j->node_count = 0;
	modifies = 0;
	completing_calls = 0;
	is_int(run_job(conf, &ops, j, &stop), 0, "never ran: done at once");
	ok(completing_calls == 0 && modifies == 0, "not waited for, AdminComment untouched");
	l = last_line(logp);
	ok(!strcmp(jstr(l, "status"), "not_started") && jint(l, "job_id") == 46,
	   "log: status not_started");
	json_object_put(l);
	lwm2_jc_job_free(j);

	j = mkjob(47);
	run_job(conf, &ops, j, &stop);
	l = last_line(logp);
	ok(!strcmp(jstr(l, "status"), "no_records") && strstr(jstr(l, "reason"), "lwm2 was off"),
	   "no records: status and reason in the log");
	json_object_put(l);
	ok(db_comment && strstr(db_comment, "\"status\":\"no_records\""),
	   "and in AdminComment, for `lwm2 digest` to say why");
	lwm2_jc_job_free(j);
}

/* the log cannot be written: nothing lost, tried again */
static void unwritable_log(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	int rc;

	sign(48, 0, "n1", 0, 48);
	j = mkjob(48);
	free(conf->log_path);
	conf->log_path = strdup("/nonexistent/dir/log");
	errors = 0;
	rc = run_job(conf, &ops, j, &stop);
	ok(rc == 1 && !j->logged && errors == 1 && strstr(lastlog, "couldn't append"),
	   "unwritable log: error, kept");
	ok(exists("%s/%u/0.n1.lwm2node", 48), "records kept for the next try");
	free(conf->log_path);
	conf->log_path = strdup(logp);
	j->next_try = 0;
	run_job(conf, &ops, j, &stop);
	ok(j->logged, "log back: logged");
	lwm2_jc_job_free(j);
}

static int count_row(void *arg, const struct lwm2_jobrow *j)
{
	(void)j;
	(*(int *)arg)++;
	return 0;
}

/* The rows of the database at path, -1 when it cannot be read. */
static int db_jobs(const char *path)
{
	char err[512];
	struct lwm2_db *db = lwm2_db_open(path, LWM2_DB_READ, err, sizeof(err));
	struct lwm2_db_select all = {.metric = -1};
	int n = 0;

	if (!db) {
		diag("%s", err);
		return -1;
	}
	if (lwm2_db_jobs(db, &all, count_row, &n, err, sizeof(err)) < 0)
		n = -1;
	lwm2_db_close(db);
	return n;
}

static int log_lines(void)
{
	FILE *f = fopen(logp, "re");
	int n = 0, c;

	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* Jobs first to first + 2 ended and processed: each logged whatever the
 * database does. */
static void three_logged(struct lwm2_jc_conf *conf, uint32_t first, const char *what)
{
	atomic_bool stop = false;

	for (uint32_t id = first; id < first + 3; id++) {
		struct lwm2_jc_job *j;

		sign(id, 0, "n1", 0, id);
		j = mkjob(id);
		run_job(conf, &ops, j, &stop);
		ok(j->logged, "%s: job %u logged all the same", what, id);
		lwm2_jc_job_free(j);
	}
}

/* A database another writer holds (an import, a reader summing days
 * up): each job is logged without waiting for it, said once, and the rows
 * caught up by the first job after it is let go. */
static void locked(struct lwm2_jc_conf *conf, const char *path)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	sqlite3 *h = NULL;
	struct timespec t0, t1;
	int rows = db_jobs(path);

	if (sqlite3_open(path, &h) != SQLITE_OK ||
	    sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		ok(0, "a second writer holds the database (%s)",
		   h ? sqlite3_errmsg(h) : "no memory");
		sqlite3_close(h);
		return;
	}
	errors = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	three_logged(conf, 70, "database locked");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(errors == 1 && strstr(lastlog, "lwm2: database:") && strstr(lastlog, "locked"),
	   "database locked: said once for three jobs (%d: %s)", errors, lastlog);
	/* a follow waits a quarter of a second for the lock, not SQLite's
	 * ten: three jobs well within two seconds */
	ok(t1.tv_sec - t0.tv_sec < 2, "  and the worker went on: 3 jobs in %ld s",
	   (long)(t1.tv_sec - t0.tv_sec));
	sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(h);
	is_int(db_jobs(path), rows, "  nothing written meanwhile");
	sign(73, 0, "n1", 0, 73);
	j = mkjob(73);
	run_job(conf, &ops, j, &stop);
	lwm2_jc_job_free(j);
	is_int(db_jobs(path), log_lines(), "let go: the next job's follow caught up every line");
	ok(strstr(lastinfo, "is written again (4 jobs caught up") != NULL, "  and said so (%s)",
	   lastinfo);
}

/* A database file that is no database (damaged): every job logged, said
 * once; a sound one named then catches up every line. */
static void corrupt(struct lwm2_jc_conf *conf, const char *good)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	char bad[600];
	FILE *f;

	snprintf(bad, sizeof(bad), "%s/damaged.db", tmp);
	f = fopen(bad, "we");
	for (int i = 0; f && i < 4096; i++)
		fputc((i * 7919) & 0xff, f);
	if (f)
		fclose(f);
	snprintf(conf->database, sizeof(conf->database), "%s", bad);
	errors = 0;
	three_logged(conf, 74, "damaged database");
	ok(errors == 1 && strstr(lastlog, "damaged.db") && strstr(lastlog, "not a database"),
	   "damaged database: said once for three jobs (%d: %s)", errors, lastlog);
	snprintf(conf->database, sizeof(conf->database), "%s", good);
	sign(77, 0, "n1", 0, 77);
	j = mkjob(77);
	run_job(conf, &ops, j, &stop);
	lwm2_jc_job_free(j);
	is_int(db_jobs(good), log_lines(), "a sound database named: every line caught up");
}

/* The database beside the log by default, a row for every line; one it
 * cannot write: the job logged all the same, one message for any number
 * of jobs, and the rows caught up from the log once it can be written. */
static void database(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;
	char def[600], path[600];

	snprintf(def, sizeof(def), "%s/lwm2.db", tmp);
	is_int(db_jobs(def), log_lines(), "the default database beside the log: a row per line");
	snprintf(conf->database, sizeof(conf->database), "%s/no/such/dir/site.db", tmp);
	conf->database_set = true;
	errors = 0;
	three_logged(conf, 60, "database not writable");
	ok(errors == 1 && strstr(lastlog, "lwm2: database:") && strstr(lastlog, "site.db"),
	   "database not writable: said once for three jobs (%d)", errors);
	snprintf(path, sizeof(path), "%s/site.db", tmp);
	snprintf(conf->database, sizeof(conf->database), "%s", path);
	sign(63, 0, "n1", 0, 63);
	j = mkjob(63);
	run_job(conf, &ops, j, &stop);
	lwm2_jc_job_free(j);
	is_int(db_jobs(path), log_lines(), "writable again: every line of the log caught up");
	locked(conf, path);
	corrupt(conf, path);
	/* none: the log alone */
	snprintf(conf->database, sizeof(conf->database), "%s", "");
	sign(64, 0, "n1", 0, 64);
	j = mkjob(64);
	run_job(conf, &ops, j, &stop);
	lwm2_jc_job_free(j);
	is_int(db_jobs(path), log_lines() - 1, "Database=none: the log alone");
	conf->database_set = false;
	lwm2_jc_db_close();
	{
		char shown[256];

		lwm2_db_url_shown("mysql://lwm2:s3cret@db.example:3306/lwm2", shown, sizeof(shown));
		ok(!strcmp(shown, "mysql://lwm2:***@db.example:3306/lwm2"),
		   "the database's address in slurmctld's log: its password as *** (%s)", shown);
		lwm2_db_url_shown("/var/log/slurm/lwm2.db", shown, sizeof(shown));
		ok(!strcmp(shown, "/var/log/slurm/lwm2.db"), "  a path as it is");
	}
}

/* a requeued job: each run takes its own records */
static void requeued(struct lwm2_jc_conf *conf)
{
	json_object *l;
	atomic_bool stop = false;

	{
		time_t s1 = time(NULL) - 100, s2 = time(NULL) - 30;
		struct lwm2_jc_job *r1, *r2;

		sign(52, 0, "n1", 0, 52);
		sign(52, 1, "n1", 0, 52);
		sign(52, 2, "n1", 0, 52);
		set_mtime(52, "0.n1.lwm2node", s1 + 5);
		set_mtime(52, "1.n1.lwm2node", s1 + 10);
		set_mtime(52, "2.n1.lwm2node", s1 + 15);
		r1 = mkjob(52);
		r1->start = s1;
		r1->end = s1 + 20;
		/* the second run's step 3 is already there when the first
		 * run's digest is made */
		sign(52, 3, "n1", 0, 52);
		set_mtime(52, "3.n1.lwm2node", s2 + 2);
		next_start = s2;
		run_job(conf, &ops_requeue, r1, &stop);
		l = last_line(logp);
		is_int(jint(l, "records_accepted"), 3, "requeue: run 1 takes its three steps only");
		json_object_put(l);
		r1->next_try = 0;
		is_int(run_job(conf, &ops_requeue, r1, &stop), 0, "run 1 done");
		ok(!exists("%s/%u/0.n1.lwm2node", 52) && exists("%s/%u/3.n1.lwm2node", 52),
		   "run 1's records removed, run 2's kept");
		lwm2_jc_job_free(r1);
		/* run 1's step 1 left behind (say KeepNodeRecords was on) */
		sign(52, 1, "n1", 0, 52);
		set_mtime(52, "1.n1.lwm2node", s1 + 10);
		r2 = mkjob(52);
		r2->start = s2;
		r2->restart_count = 1;
		next_start = 0;
		run_job(conf, &ops_requeue, r2, &stop);
		l = last_line(logp);
		is_int(jint(l, "records_accepted"), 1, "run 2 does not take run 1's step");
		json_object_put(l);
		lwm2_jc_job_free(r2);
	}
}

/* another tool wrote the whole field after log_record copied it */
static void field_rewritten(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	atomic_bool stop = false;

	sign(53, 0, "n1", 0, 53);
	j = mkjob(53);
	free(db_rows[53]);
	db_rows[53] = strdup("JS1:fromepilog");
	run_job(conf, &ops, j, &stop);
	ok(db_rows[53] && !strncmp(db_rows[53], "JS1:fromepilog LWM2:{", 21),
	   "merged into the field as accounting has it, not as log_record saw it");
	/* and after our part was confirmed, within VerifyWindow */
	conf->verify_window = 3600;
	j->next_try = 0;
	is_int(run_job(conf, &ops, j, &stop), 1,
	       "part confirmed, but still watched within VerifyWindow");
	ok(j->confirmed && j->next_try > time(NULL) - 1, "confirmed, next look scheduled");
	ok(!exists("%s/%u/0.n1.lwm2node", 53), "the records go once the part is confirmed");
	free(db_rows[53]);
	db_rows[53] = strdup("JS1:second");
	j->next_try = 0;
	run_job(conf, &ops, j, &stop);
	ok(db_rows[53] && !strncmp(db_rows[53], "JS1:second LWM2:{", 17),
	   "wiped by a later write of the whole field: merged in again");
	conf->verify_window = 0;
	j->next_try = 0;
	is_int(run_job(conf, &ops, j, &stop), 0, "window over: done");
	lwm2_jc_job_free(j);
}

/* markers: why a step has no record */
static void markers(struct lwm2_jc_conf *conf)
{
	struct lwm2_jc_job *j;
	json_object *l;
	atomic_bool stop = false;

	touch(54, "0.n1.lwm2start");
	touch(54, "0.n2.lwm2start");
	touch(54, "0.n2.28.lwm2fail");
	j = mkjob(54);
	run_job(conf, &ops, j, &stop);
	l = last_line(logp);
	ok(!strcmp(jstr(l, "status"), "no_records") &&
	       strstr(jstr(l, "reason"), "could not be written: No space left on device (ENOSPC)"),
	   "failed write: the reason says ENOSPC: %s", jstr(l, "reason"));
	{
		json_object *m = NULL;

		json_object_object_get_ex(l, "records_missing", &m);
		is_int((int64_t)json_object_array_length(m), 2, "both steps listed as missing");
		ok(m && strstr(json_object_to_json_string(m), "ended without its node record"),
		   "the other: ended without its node record");
	}
	json_object_put(l);
	lwm2_jc_job_free(j);
	sign(55, 0, "n1", 0, 55);
	touch(55, "0.n1.lwm2start");
	touch(55, "1.n1.lwm2start");
	j = mkjob(55);
	run_job(conf, &ops, j, &stop);
	l = last_line(logp);
	ok(!strcmp(jstr(l, "status"), "ok") &&
	       strstr(json_object_to_json_string_ext(l, JSON_C_TO_STRING_PLAIN),
	              "\"step\":\"1\",\"node\":\"n1\""),
	   "a digest with a step missing lists it");
	json_object_put(l);
	lwm2_jc_job_free(j);
}

/* recovery: records in the spool, job neither queued nor done */
static void recovery(struct lwm2_jc_conf *conf)
{
	sign(56, 0, "n1", 0, 56);
	pending_id = 0;
	{
		bool again = false;
		struct lwm2_jc_job *k = mkjob(56);

		lwm2_jc_recover(conf, &ops_recover, 0, t_is_pending, t_recovered, NULL, &again);
		ok(recovered[56], "recovered job 56 from the spool");
		pending_id = 56;
		memset(looked, 0, sizeof(looked));
		memset(recovered, 0, sizeof(recovered));
		lwm2_jc_recover(conf, &ops_recover, 0, t_is_pending, t_recovered, NULL, &again);
		ok(!looked[56] && !recovered[56], "a queued job is not looked up");
		pending_id = 0;
		mkdir(state, 0700);
		ok(lwm2_jc_state_mark_done(state, k) == 0, "done mark written");
		lwm2_jc_recover(conf, &ops_recover, 0, t_is_pending, t_recovered, NULL, &again);
		ok(looked[56] && !recovered[56], "a job marked done is not recovered");
		lwm2_jc_job_free(k);
		lookup_rc = -1;
		again = false;
		memset(recovered, 0, sizeof(recovered));
		sign(57, 0, "n1", 0, 57);
		lwm2_jc_recover(conf, &ops_recover, 0, t_is_pending, t_recovered, NULL, &again);
		ok(again && !recovered[57], "lookup not possible now: asked again later");
		lookup_rc = 1;
		memset(recovered, 0, sizeof(recovered));
		lwm2_jc_recover(conf, &ops_recover, time(NULL) + 120, t_is_pending, t_recovered,
		                NULL, &again);
		ok(!recovered[57], "records from before the previous start are not taken for lost");
	}
}

/* the worker hangs on accounting: new jobs still reach the state
 * dir at once */
static void hanging_accounting(struct lwm2_jc_conf *conf)
{
	sign(58, 0, "n1", 0, 58);
	sign(59, 0, "n1", 0, 59);
	conf->late_wait = 0;
	completing = false;
	atomic_store(&hang, true);
	ok(lwm2_jc_start(conf, &ops_hang) == 0, "worker started, accounting hangs");
	lwm2_jc_enqueue(mkjob(58));
	for (int i = 0; i < 200 && !atomic_load(&hanging); i++)
		usleep(10000);
	ok(atomic_load(&hanging), "the worker is stuck reading accounting");
	lwm2_jc_enqueue(mkjob(59));
	for (int i = 0; i < 100 && !state_file(59); i++)
		usleep(10000);
	ok(state_file(59), "a job finished meanwhile is in the state dir at once");
	atomic_store(&hang, false);
	for (int i = 0; i < 500 && (state_file(58) || state_file(59)); i++)
		usleep(10000);
	ok(!state_file(58) && !state_file(59), "accounting back: both done");
	lwm2_jc_stop();
	{
		char cmd[1300];

		/* jobs 56 and 57 stay out of the restart case below */
		snprintf(cmd, sizeof(cmd), "rm -rf %s/56 %s/57", spool, spool);
		if (system(cmd) != 0)
			diag("couldn't clean up");
	}
}

/* the thread: stop with jobs queued, start again, nothing lost */
static void thread_restart(struct lwm2_jc_conf *conf)
{

	sign(50, 0, "n1", 0, 50);
	sign(51, 0, "n1", 0, 51);
	completing = true; /* keep them waiting */
	conf->late_wait = 3600;
	ok(lwm2_jc_start(conf, &ops) == 0, "worker started");
	lwm2_jc_enqueue(mkjob(50));
	lwm2_jc_enqueue(mkjob(51));
	usleep(300000);
	lwm2_jc_stop();
	{
		char p[900];
		struct stat st;

		snprintf(p, sizeof(p), "%s/50.%ld.job", state, (long)(time(NULL) - 60));
		ok(stat(state, &st) == 0, "state dir made");
	}
	{
		int n = count_lines(logp);

		completing = false;
		ok(lwm2_jc_start(conf, &ops) == 0, "worker started again");
		for (int i = 0; i < 100 && count_lines(logp) < n + 2; i++)
			usleep(100000);
		is_int(count_lines(logp) - n, 2, "both queued jobs resumed and logged");
		for (int i = 0; i < 50 && exists("%s/%u", 51); i++)
			usleep(100000);
		lwm2_jc_stop();
	}
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "ls %s | grep -c '\\.job$' || true", state);
		FILE *p = popen(cmd, "r");
		int left = -1;

		if (fscanf(p, "%d", &left) != 1)
			left = -1;
		pclose(p);
		is_int(left, 0, "state dir empty when all is done");
	}
}

/* Jobs ending together through the worker: their lines go into the
 * database in fewer transactions than jobs; a lone job's line by itself a
 * moment later; a line still waiting when the worker stops goes in before
 * it ends. */
static void db_groups(struct lwm2_jc_conf *conf)
{
	enum { BURST = 20, FIRST = 90 };
	char path[700];
	int lines, i;

	snprintf(path, sizeof(path), "%s/groups.db", tmp);
	snprintf(conf->database, sizeof(conf->database), "%s", path);
	conf->database_set = true;
	conf->late_wait = 0;
	completing = false;
	for (uint32_t id = FIRST; id < FIRST + BURST + 2; id++)
		sign(id, 0, "n1", 0, id);
	lines = count_lines(logp);
	atomic_store(&groups, 0);
	atomic_store(&grouped_jobs, 0);
	ok(lwm2_jc_start(conf, &ops) == 0, "worker started for a burst of %d jobs", BURST);
	for (uint32_t id = FIRST; id < FIRST + BURST; id++)
		lwm2_jc_enqueue(mkjob(id));
	for (i = 0; i < 300 && count_lines(logp) < lines + BURST; i++)
		usleep(50000);
	is_int(count_lines(logp) - lines, BURST, "the burst logged");
	for (i = 0; i < 100 && db_jobs(path) != log_lines(); i++)
		usleep(50000);
	is_int(db_jobs(path), log_lines(), "  every line of it in the database");
	/* the first group also catches up the lines logged before: the
	 * database is new */
	ok(atomic_load(&groups) >= 1 && atomic_load(&groups) < BURST &&
	       atomic_load(&grouped_jobs) == log_lines(),
	   "  in %d transactions for %d jobs", atomic_load(&groups), atomic_load(&grouped_jobs));

	atomic_store(&groups, 0);
	lines = count_lines(logp);
	lwm2_jc_enqueue(mkjob(FIRST + BURST));
	for (i = 0; i < 300 && count_lines(logp) == lines; i++)
		usleep(10000);
	for (i = 0; i < 100 && db_jobs(path) != log_lines(); i++)
		usleep(50000);
	ok(db_jobs(path) == log_lines() && atomic_load(&groups) == 1,
	   "a lone job: its line in the database by itself (%d transactions)",
	   atomic_load(&groups));

	lines = count_lines(logp);
	lwm2_jc_enqueue(mkjob(FIRST + BURST + 1));
	for (i = 0; i < 1000 && count_lines(logp) == lines; i++)
		usleep(2000);
	lwm2_jc_stop();
	is_int(db_jobs(path), log_lines(), "a line logged as the worker stops: in the database");
	lwm2_jc_db_close();
	conf->database_set = false;
	conf->database[0] = '\0';
}

/* A database that cannot be written while jobs end (its directory gone
 * here; a full disk or a stopped server alike): the worker tries again by
 * itself, so once the fault is gone every line goes in with no job ending
 * after it, said once each way. */
static void db_catch_up_alone(struct lwm2_jc_conf *conf)
{
	char dir[600], path[700];
	int lines, i;

	snprintf(dir, sizeof(dir), "%s/later", tmp);
	snprintf(path, sizeof(path), "%s/site.db", dir);
	snprintf(conf->database, sizeof(conf->database), "%s", path);
	conf->database_set = true;
	conf->late_wait = 0;
	completing = false;
	lwm2_jc_db_retry_after(1);
	sign(80, 0, "n1", 0, 80);
	sign(81, 0, "n1", 0, 81);
	lines = count_lines(logp);
	errors = 0;
	lastinfo[0] = '\0';
	ok(lwm2_jc_start(conf, &ops) == 0, "worker started, its database cannot be written");
	lwm2_jc_enqueue(mkjob(80));
	lwm2_jc_enqueue(mkjob(81));
	for (i = 0; i < 100 && count_lines(logp) < lines + 2; i++)
		usleep(100000);
	is_int(count_lines(logp) - lines, 2, "both jobs logged");
	/* a few tries of the worker's own meanwhile */
	usleep(3500000);
	mkdir(dir, 0700);
	for (i = 0; i < 50 && db_jobs(path) != log_lines(); i++)
		usleep(100000);
	is_int(db_jobs(path), log_lines(),
	       "the fault gone: every line caught up, no job ending after");
	lwm2_jc_stop();
	/* read once the worker has ended: it writes them */
	ok(errors == 1 && strstr(lastlog, "lwm2: database:") && strstr(lastlog, "site.db"),
	   "the fault said once for two jobs and the worker's tries (%d: %s)", errors, lastlog);
	ok(strstr(lastinfo, "is written again") != NULL, "  and its end once (%s)", lastinfo);
	lwm2_jc_db_close();
	lwm2_jc_db_retry_after(30);
	conf->database_set = false;
	conf->database[0] = '\0';
}

static int run(const char *socket)
{
	struct lwm2_jc_conf conf;
	char err[256];

	lwm2_log_open("lwm2");
	lwm2_log_set_sink(tlog);
	if (!mkdtemp(tmp))
		return 1;
	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(logp, sizeof(logp), "%s/digests.jsonl", tmp);
	mkdir(spool, 0755);
	lwm2_jc_conf_load(&conf, NULL, NULL, err, sizeof(err));
	free(conf.spool_dir);
	free(conf.state_dir);
	free(conf.log_path);
	conf.spool_dir = strdup(spool);
	conf.state_dir = strdup(state);
	conf.log_path = strdup(logp);
	conf.settle = 0;
	conf.verify_delay = 0;
	conf.verify_window = 0;
	munge_socket = socket;
	free(conf.munge_socket);
	conf.munge_socket = strdup(socket);
	/* The records are signed by this uid, not slurmstepd's root. */
	conf.signer_uid = geteuid();

	if (!ok(sign(1, 0, "probe", 0, 1) == 0, "a node record signed through %s", socket))
		return done_testing();

	two_good_records(&conf);
	overwritten(&conf);

	accounting_behind(&conf);
	not_started_no_records(&conf);

	unwritable_log(&conf);
	database(&conf);
	requeued(&conf);

	field_rewritten(&conf);
	markers(&conf);

	recovery(&conf);
	hanging_accounting(&conf);

	thread_restart(&conf);
	db_groups(&conf);
	db_catch_up_alone(&conf);
	lwm2_jc_conf_free(&conf);
	for (int i = 0; i < 128; i++)
		free(db_rows[i]);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			diag("couldn't remove %s", tmp);
	}
	return done_testing();
}

int main(void)
{
	return tap_with_private_munged(run);
}
