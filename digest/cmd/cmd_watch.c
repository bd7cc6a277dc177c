/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 watch: run by the site (root, from cron or a systemd timer), looks
 * at every running job once, judges it against its previous look (kept in
 * a state file), and tells of the jobs that have been stuck in MPI, idle
 * or far below their cpus-per-task for longer than WatchStuckTime: only in
 * its summary, in syslog, or by mail to the owner through the mail path of
 * the job-end digest (lwm2-mail), as lwm2.conf says.  It cancels a job
 * only when the site enabled it, and then only WatchCancelAfter seconds
 * after the owner's notice.  Notices are rate-limited per job
 * (WatchJobInterval) and mails per user (WatchUserInterval).
 */
#include "config.h"

#include "digest_internal.h"
#include "fileio.h"
#include "live.h"
#include "live_gather.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

/* The state file: per job the previous look and its verdict, per user the
 * time of the last mail. */
static json_object *state_load(const char *path)
{
	json_object *s = json_object_from_file(path);

	if (!s || !json_object_is_type(s, json_type_object)) {
		json_object_put(s);
		s = json_object_new_object();
	}
	if (!ju_get(s, "jobs", json_type_object))
		ju_add(s, "jobs", json_object_new_object());
	if (!ju_get(s, "users", json_type_object))
		ju_add(s, "users", json_object_new_object());
	return s;
}

static int state_save(const char *path, json_object *s)
{
	const char *text = json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN);
	struct iovec iov = {(void *)text, strlen(text)};

	return lwm2_atomic_write(path, &iov, 1, 0600, NULL, 0);
}

static int64_t geti(json_object *o, const char *k)
{
	int64_t v = 0;

	ju_int(o, k, &v);
	return v;
}

/* Hand a notice to the mail path of the job-end digest: lwm2-mail with
 * the text as body (LWM2_MAIL_BODY), to the job's owner; it asks this
 * lwm2 (LWM2_COMMAND) for the settings of the same lwm2.conf. */
static int send_mail(const struct lwm2_live_conf *c, const char *user, const char *subject,
                     const char *body)
{
	char path[] = "/tmp/lwm2-watch.XXXXXX", self[4096];
	int fd = mkstemp(path), status = 0;
	ssize_t self_len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (fd < 0)
		return -1;
	if (lwm2_write_all(fd, body, strlen(body)) < 0) {
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	chmod(path, 0644);
	pid = fork();
	if (pid == 0) {
		setenv("LWM2_MAIL_BODY", path, 1);
		setenv("LWM2_CONF", c->path, 1);
		if (self_len > 0) {
			self[self_len] = '\0';
			setenv("LWM2_COMMAND", self, 1);
		}
		execl(c->mail_prog, c->mail_prog, "-s", subject, user, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	unlink(path);
	return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static const char *verdict_text(enum lwm2_live_verdict v)
{
	switch (v) {
	case LWM2_VERDICT_STUCK_MPI:
		return "every process waits in MPI (or is idle) and no MPI call completed, no "
		       "byte moved";
	case LWM2_VERDICT_IDLE:
		return "no process used CPU, did I/O or completed an MPI call";
	case LWM2_VERDICT_UNDERUSED:
		return "the processes use far fewer cores than the job's cpus-per-task";
	default:
		return "";
	}
}

struct run {
	const struct lwm2_live_conf *c;
	json_object *state, *seen;
	bool dry, json;
	json_object *report;
	unsigned checked, answered, flagged, mailed, cancelled;
	int64_t now;
};

/*
 * The waste mail (WatchWasteMail): a job that has used less than
 * WatchWasteEfficiency percent of its cores' time after WatchWasteAfter
 * seconds gets one mail to its owner, through the same mail path as the
 * notices, at most one per job (its state keeps "waste_mailed"; a mail
 * that failed is tried again at the next run).  Independent of
 * WatchAction: a site may want these mails and no stuck notices.
 */
static void waste_check(struct run *R, const struct lwm2_live_job *j, json_object *js,
                        json_object *line, double cpu_s)
{
	const struct lwm2_live_conf *c = R->c;
	int64_t running = R->now - j->start;
	double eff;
	char subject[256], body[2048];

	if (!lwm2_live_waste_due(&c->rule, cpu_s, j->cpus, running, geti(js, "waste_mailed") != 0,
	                         &eff)) {
		if (eff >= 0)
			ju_add(line, "cpu_efficiency_pct", ju_double(eff));
		return;
	}
	ju_add(line, "cpu_efficiency_pct", ju_double(eff));
	if (R->dry) {
		ju_add(line, "waste_mail", json_object_new_string("due"));
		return;
	}
	snprintf(subject, sizeof(subject), "lwm2: job %" PRIu64 " uses %.1f %% of its cores",
	         j->job_id, eff);
	snprintf(body, sizeof(body),
	         "Job %" PRIu64 " of user %s on %s has run for %" PRId64
	         " s on %u allocated cores, and its processes used %.0f s of CPU time:\n"
	         "%.1f %% of what it holds (the site asks for at least %g %%).\n\n"
	         "The cores it does not use are kept from other jobs.  If the job needs\n"
	         "fewer cores, ask for fewer (--ntasks, --cpus-per-task) next time; if it\n"
	         "should use them all, see what it is doing with: lwm2 top -j %" PRIu64 "\n"
	         "This is the only mail about this job.\n",
	         j->job_id, j->user, j->nodes, running, j->cpus, cpu_s, eff,
	         c->rule.waste_efficiency, j->job_id);
	if (send_mail(c, j->user, subject, body) == 0) {
		json_object_object_add(js, "waste_mailed", json_object_new_int64(R->now));
		ju_add(line, "waste_mail", json_object_new_string("mail"));
		R->mailed++;
	} else {
		ju_add(line, "waste_mail", json_object_new_string("mail failed"));
		syslog(LOG_ERR, "couldn't mail %s about the waste of job %" PRIu64, j->user,
		       j->job_id);
	}
}

/* What one look at a job's processes gives: their records (kept as the
 * job's previous look for the next run), the change of each since that
 * previous look, and the window the changes span. */
struct look {
	json_object *obs;
	struct lwm2_live_delta *d;
	bool *mpi;
	size_t nr, nmpi, nall;
	int64_t wstart, wend;
	double cpu_s; /* of every process seen, for the waste mail */
};

/* The same process (pid, node) in the previous look, into *before. */
static bool rank_before(json_object *prev, const struct lwm2_live_rank *now,
                        struct lwm2_live_rank *before)
{
	for (size_t p = 0; prev && p < json_object_array_length(prev); p++) {
		json_object *q = json_object_array_get_idx(prev, p);
		lwm2_live_rank_from_json(before, q, ju_str(q, "node"));
		if (before->pid == now->pid && !strcmp(before->node, now->node))
			return true;
	}
	return false;
}

/* One process of a node's answer: into the look, with its change since
 * the previous look (zero for a process new to this look). */
static void look_rank(const struct lwm2_live_conf *c, struct look *L, json_object *r,
                      const char *node, json_object *prev)
{
	struct lwm2_live_rank now, before;
	struct lwm2_live_delta *g;
	bool found;
	bool *m;

	json_object_object_add(r, "node", json_object_new_string(node ? node : "?"));
	lwm2_live_rank_from_json(&now, r, node);
	L->cpu_s += (double)now.cpu_us / 1e6;
	L->nall++;
	json_object_array_add(L->obs, json_object_get(r));
	found = rank_before(prev, &now, &before);
	if (!(g = realloc(L->d, (L->nr + 1) * sizeof(*L->d))))
		return;
	L->d = g;
	if (!(m = realloc(L->mpi, (L->nr + 1) * sizeof(*L->mpi))))
		return;
	L->mpi = m;
	L->mpi[L->nr] = now.rank >= 0;
	L->nmpi += L->mpi[L->nr];
	if (found) {
		lwm2_live_delta(&c->rule, &before, &now, &L->d[L->nr]);
		if (before.update_ns / 1000000000 < L->wstart)
			L->wstart = before.update_ns / 1000000000;
	} else {
		memset(&L->d[L->nr], 0, sizeof(L->d[L->nr]));
	}
	if (now.update_ns / 1000000000 > L->wend)
		L->wend = now.update_ns / 1000000000;
	L->nr++;
}

/* Every process of every node's answer, against the previous look. */
static void look_job(const struct lwm2_live_conf *c, struct look *L, json_object *docs, size_t nd,
                     json_object *prev)
{
	for (size_t i = 0; i < nd; i++) {
		json_object *doc = json_object_array_get_idx(docs, i);
		json_object *rk = ju_get(doc, "ranks", json_type_array);
		const char *node = ju_str(doc, "node");

		for (size_t k = 0; rk && k < json_object_array_length(rk); k++)
			look_rank(c, L, json_object_array_get_idx(rk, k), node, prev);
	}
	/* In a job with MPI ranks, the ranks are the job: the batch shell
	 * and srun only wait for them (and srun's threads use a little CPU
	 * even then).  Without MPI every process counts. */
	if (L->nmpi && L->nmpi < L->nr) {
		size_t k = 0;
		for (size_t i = 0; i < L->nr; i++)
			if (L->mpi[i])
				L->d[k++] = L->d[i];
		L->nr = k;
	}
	free(L->mpi);
	L->mpi = NULL;
}

/* The job's entry in the state file, made if it has none. */
static json_object *job_state(struct run *R, const char *key)
{
	json_object *jobs = ju_get(R->state, "jobs", json_type_object), *js;

	if (!json_object_object_get_ex(jobs, key, &js) ||
	    !json_object_is_type(js, json_type_object)) {
		js = json_object_new_object();
		json_object_object_add(jobs, key, js);
	}
	return js;
}

/* The notice on a flagged job, as WatchAction says (the report only, the
 * log, or a mail to the owner at most once per WatchUserInterval); what
 * was done, for the report. */
static const char *notice_send(struct run *R, const struct lwm2_live_job *j, uint64_t id,
                               json_object *js, const char *subject, const char *body,
                               int64_t for_s)
{
	const struct lwm2_live_conf *c = R->c;
	json_object *users = ju_get(R->state, "users", json_type_object);
	int64_t umail = geti(users, j->user);

	if (c->action == LWM2_WATCH_LOG && !R->dry) {
		syslog(LOG_WARNING, "%s (for %" PRId64 " s)", subject, for_s);
		return "log";
	}
	if (c->action != LWM2_WATCH_MAIL || R->dry)
		return "report";
	if (umail && R->now - umail < (int64_t)c->user_interval_s)
		return "mail held (user interval)";
	if (send_mail(c, j->user, subject, body) != 0) {
		syslog(LOG_ERR, "couldn't mail %s about job %" PRIu64, j->user, id);
		return "mail failed";
	}
	json_object_object_add(users, j->user, json_object_new_int64(R->now));
	if (!geti(js, "mailed"))
		json_object_object_add(js, "mailed", json_object_new_int64(R->now));
	R->mailed++;
	return "mail";
}

/* Cancelled only once the owner was told, by mail, and had
 * WatchCancelAfter seconds to act. */
static void cancel_check(struct run *R, const struct lwm2_live_job *j, uint64_t id, json_object *js,
                         json_object *line, const struct lwm2_live_track *tr, bool standing)
{
	const struct lwm2_live_conf *c = R->c;
	int64_t mailed = geti(js, "mailed");

	if (!c->cancel || standing || !mailed || R->now - mailed < (int64_t)c->cancel_after_s)
		return;
	if (R->dry) {
		ju_add(line, "cancel", json_object_new_string("due"));
	} else if (slurm_kill_job((uint32_t)id, SIGKILL, 0) == 0) {
		syslog(LOG_WARNING, "cancelled job %" PRIu64 " of %s: %s since %" PRId64, id,
		       j->user, lwm2_live_verdict_name(tr->verdict), tr->since);
		ju_add(line, "cancel", json_object_new_string("done"));
		R->cancelled++;
	} else {
		ju_add(line, "cancel", json_object_new_string(slurm_strerror(errno)));
	}
}

/* A job flagged (stuck, idle or underused for long enough, or still so
 * from a previous notice): its notice, unless one went out less than
 * WatchJobInterval ago or the look judged nothing new, then its cancel. */
static void flag_job(struct run *R, const struct lwm2_live_job *j, uint64_t id, json_object *js,
                     json_object *line, const struct lwm2_live_track *tr, int64_t wend,
                     bool standing)
{
	const struct lwm2_live_conf *c = R->c;
	int64_t noticed = geti(js, "noticed");
	char subject[256], body[2048];

	R->flagged++;
	ju_add(line, "flagged", json_object_new_boolean(true));
	snprintf(subject, sizeof(subject), "lwm2: job %" PRIu64 " looks %s", id,
	         tr->verdict == LWM2_VERDICT_STUCK_MPI ? "stuck in MPI"
	         : tr->verdict == LWM2_VERDICT_IDLE    ? "idle"
	                                               : "underused");
	snprintf(body, sizeof(body),
	         "Job %" PRIu64 " of user %s on %s has looked %s for %" PRId64
	         " s:\n%s.\n\nSee it with: lwm2 top -j %" PRIu64 "\n%s",
	         id, j->user, j->nodes, lwm2_live_verdict_name(tr->verdict), wend - tr->since,
	         verdict_text(tr->verdict), id,
	         c->cancel ? "If it stays so, the site's policy cancels it after the "
	                     "notice period (WatchCancelAfter).\n"
	                   : "");
	if (noticed && R->now - noticed < (int64_t)c->job_interval_s) {
		ju_add(line, "notice", json_object_new_string("held (job interval)"));
	} else if (standing) {
		ju_add(line, "notice", json_object_new_string("held (no fresh look)"));
	} else {
		const char *how = notice_send(R, j, id, js, subject, body, wend - tr->since);

		if (!R->dry)
			json_object_object_add(js, "noticed", json_object_new_int64(R->now));
		ju_add(line, "notice", json_object_new_string(how));
	}
	cancel_check(R, j, id, js, line, tr, standing);
}

static void check_job(struct run *R, uint64_t id)
{
	const struct lwm2_live_conf *c = R->c;
	struct lwm2_live_job j;
	char err[1024] = "", key[32];
	json_object *docs, *js, *line;
	struct look L = {.wstart = INT64_MAX};
	struct lwm2_live_track tr;
	size_t nd;
	enum lwm2_live_verdict v;
	bool judged, lasting, standing;

	if (lwm2_live_job_get(id, NULL, &j, err, sizeof(err)) != 0)
		return; /* ended meanwhile, or no step to look into */
	R->checked++;
	snprintf(key, sizeof(key), "%" PRIu64, id);
	json_object_array_add(R->seen, json_object_new_string(key));
	docs = lwm2_live_gather(c, &j, c->gather_timeout_s, err, sizeof(err));
	nd = docs ? json_object_array_length(docs) : 0;
	line = json_object_new_object();
	ju_add(line, "job_id", ju_u64(id));
	ju_add(line, "user", json_object_new_string(j.user));
	ju_add(line, "nodes_answered", json_object_new_int((int)nd));
	ju_add(line, "nodes", json_object_new_int((int)j.node_count));
	if (nd)
		R->answered++;
	js = job_state(R, key);
	L.obs = json_object_new_array();
	look_job(c, &L, docs, nd, ju_get(js, "obs", json_type_array));
	json_object_put(docs);
	/* a node that did not answer leaves the window unjudged */
	v = L.nr && nd == j.node_count
	        ? lwm2_live_judge(&c->rule, L.d, L.nr, j.cpus_per_task, &judged)
	        : (judged = false, LWM2_VERDICT_NONE);
	free(L.d);
	tr.verdict = (enum lwm2_live_verdict)geti(js, "verdict");
	tr.since = geti(js, "since");
	lasting = lwm2_live_track_update(&c->rule, &tr, v, judged, L.wstart, L.wend);
	json_object_object_add(js, "verdict", json_object_new_int(tr.verdict));
	json_object_object_add(js, "since", json_object_new_int64(tr.since));
	json_object_object_add(js, "user", json_object_new_string(j.user));
	if (nd)
		json_object_object_add(js, "obs", L.obs);
	else
		json_object_put(L.obs);
	ju_add(line, "judged", json_object_new_boolean(judged));
	ju_add(line, "verdict", json_object_new_string(lwm2_live_verdict_name(tr.verdict)));
	if (tr.since)
		ju_add(line, "for_s", json_object_new_int64(L.wend - tr.since));
	if (*err)
		ju_add(line, "error", json_object_new_string(err));
	/* A look that judged nothing (a record that did not move since the
	 * last run, a node that did not answer) leaves a job already
	 * noticed flagged as it was: it is not news, and no new notice goes
	 * out on it. */
	standing = !judged && tr.verdict != LWM2_VERDICT_NONE && geti(js, "noticed");
	if (lasting || standing) {
		flag_job(R, &j, id, js, line, &tr, L.wend, standing);
	} else if (tr.verdict == LWM2_VERDICT_NONE) {
		/* a job that recovered earns a fresh notice if it stalls again */
		json_object_object_del(js, "noticed");
		json_object_object_del(js, "mailed");
	}
	/* only with every node's processes seen: a node that did not answer
	 * would count as cores left unused */
	if (L.nall && nd == j.node_count)
		waste_check(R, &j, js, line, L.cpu_s);
	json_object_array_add(R->report, line);
}

enum { OPT_JSON = LWM2_OPT_LONG };

static const struct lwm2_optspec watch_spec = {
    .cmd = "watch",
    .usage_on_error = true,
    .usage = "Usage: lwm2 watch [--dry-run] [--json]\n"
             "Check every running job for being stuck or idle (as root, from cron or a\n"
             "systemd timer); the policy is in lwm2.conf (Watch* keys, see lwm2(1)).\n",
    .col = 17,
    .opts = (const struct lwm2_opt[]){
        {"dry-run", 'n', NULL, "judge and print, but notify, cancel and remember nothing"},
        {"json", OPT_JSON, NULL, "the summary as JSON"},
        {0},
    }};

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore watch_store[] = {
    {'n', LWM2_OPT_TRUE(struct run, dry)},
    {OPT_JSON, LWM2_OPT_TRUE(struct run, json)},
    {0},
};

int lwm2_cmd_watch(int argc, char **argv)
{
	struct lwm2_live_conf conf;
	struct run R = {0};
	char err[1024], path[1100], lock[1100];
	uint64_t *ids;
	size_t n;
	int lfd, first = lwm2_opt_parse_store(&watch_spec, watch_store, argc, argv, NULL, &R);

	if (first < 0)
		return lwm2_opt_status(first);
	if (first != argc) {
		lwm2_opt_usage(&watch_spec, stderr);
		return 2;
	}
	if (lwm2_live_conf_load(&conf, err, sizeof(err)) != 0) {
		lwm2_log_error("watch: %s", err);
		return 1;
	}
	openlog("lwm2-watch", LOG_PID, LOG_DAEMON);
	if (mkdir(conf.state_dir, 0700) != 0 && errno != EEXIST) {
		lwm2_log_error("watch: couldn't create %s: %s", conf.state_dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/watch.json", conf.state_dir);
	snprintf(lock, sizeof(lock), "%s/watch.lock", conf.state_dir);
	/* one run at a time: a slow run and the next timer must not both
	 * notify */
	lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX | LOCK_NB) != 0) {
		lwm2_log_error("watch: another run holds %s", lock);
		return 1;
	}
	if (lwm2_live_running_jobs(&ids, &n, err, sizeof(err)) != 0) {
		lwm2_log_error("watch: %s", err);
		return 1;
	}
	R.c = &conf;
	R.state = state_load(path);
	R.seen = json_object_new_array();
	R.report = json_object_new_array();
	R.now = (int64_t)time(NULL);
	for (size_t i = 0; i < n; i++)
		check_job(&R, ids[i]);
	free(ids);
	/* forget the jobs that are no longer running */
	{
		json_object *jobs = ju_get(R.state, "jobs", json_type_object), *keep;
		keep = json_object_new_object();
		for (size_t i = 0; i < json_object_array_length(R.seen); i++) {
			const char *k =
			    json_object_get_string(json_object_array_get_idx(R.seen, i));
			json_object *v;
			if (json_object_object_get_ex(jobs, k, &v))
				json_object_object_add(keep, k, json_object_get(v));
		}
		json_object_object_add(R.state, "jobs", keep);
	}
	if (!R.dry && state_save(path, R.state) != 0)
		lwm2_log_error("watch: couldn't save %s: %s", path, strerror(errno));
	if (R.json) {
		json_object *s = json_object_new_object();
		ju_add(s, "time", json_object_new_int64(R.now));
		ju_add(s, "checked", json_object_new_int((int)R.checked));
		ju_add(s, "answered", json_object_new_int((int)R.answered));
		ju_add(s, "flagged", json_object_new_int((int)R.flagged));
		ju_add(s, "mailed", json_object_new_int((int)R.mailed));
		ju_add(s, "cancelled", json_object_new_int((int)R.cancelled));
		ju_add(s, "jobs", json_object_get(R.report));
		puts(json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN));
		json_object_put(s);
	} else {
		printf(
		    "lwm2 watch: %u running jobs checked, %u answered, %u flagged, %u mailed, %u "
		    "cancelled\n",
		    R.checked, R.answered, R.flagged, R.mailed, R.cancelled);
		for (size_t i = 0; i < json_object_array_length(R.report); i++) {
			json_object *l = json_object_array_get_idx(R.report, i);
			if (ju_str(l, "waste_mail"))
				printf("  job %s (%s): %.1f %% of its cores used, waste mail: %s\n",
				       json_object_get_string(ju_get(l, "job_id", json_type_int)),
				       ju_str(l, "user"),
				       json_object_get_double(
				           ju_get(l, "cpu_efficiency_pct", json_type_double)),
				       ju_str(l, "waste_mail"));
			if (!ju_get(l, "flagged", json_type_boolean) && !ju_str(l, "error"))
				continue;
			printf("  job %s (%s): %s for %" PRId64 " s%s%s%s%s\n",
			       json_object_get_string(ju_get(l, "job_id", json_type_int)),
			       ju_str(l, "user"), ju_str(l, "verdict"), geti(l, "for_s"),
			       ju_str(l, "notice") ? ", notice: " : "",
			       ju_str(l, "notice") ? ju_str(l, "notice") : "",
			       ju_str(l, "error") ? ", " : "",
			       ju_str(l, "error") ? ju_str(l, "error") : "");
		}
	}
	json_object_put(R.report);
	json_object_put(R.seen);
	json_object_put(R.state);
	close(lfd);
	return 0;
}
