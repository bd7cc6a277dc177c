/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2.conf for the live commands, running jobs from slurmctld, and the
 * gathering of snapshots with srun --overlap. */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include "digest_internal.h"
#include "live_gather.h"
#include "lwm2conf.h"
#include "stepname.h"
#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

/* f's values of the live keys into c (the buffers are as long as the
 * table's limits allow). */
static int from_conf(struct lwm2_live_conf *c, const struct lwm2_conf *f)
{
	const struct lwm2_conf_value *v = f->v;

	lwm2_live_rule_from_conf(f, &c->rule);
	c->action = (enum lwm2_watch_action)v[LWM2_CONF_WatchAction].choice;
	c->cancel = v[LWM2_CONF_WatchCancel].yes;
	c->cancel_after_s = (unsigned)v[LWM2_CONF_WatchCancelAfter].num;
	c->job_interval_s = (unsigned)v[LWM2_CONF_WatchJobInterval].num;
	c->user_interval_s = (unsigned)v[LWM2_CONF_WatchUserInterval].num;
	c->gather_timeout_s = (unsigned)v[LWM2_CONF_WatchGatherTimeout].num;
	return lwm2_conf_copy(f, LWM2_CONF_BaseDir, c->basedir, sizeof(c->basedir)) ||
	               lwm2_conf_copy(f, LWM2_CONF_Database, c->database, sizeof(c->database)) ||
	               lwm2_conf_copy(f, LWM2_CONF_LwmCommand, c->lwm2_cmd, sizeof(c->lwm2_cmd)) ||
	               lwm2_conf_copy(f, LWM2_CONF_WatchMailProg, c->mail_prog,
	                              sizeof(c->mail_prog)) ||
	               lwm2_conf_copy(f, LWM2_CONF_WatchStateDir, c->state_dir,
	                              sizeof(c->state_dir))
	           ? -1
	           : 0;
}

int lwm2_live_conf_load(struct lwm2_live_conf *c, char *err, size_t errlen)
{
	struct lwm2_conf f;
	char *path;
	int rc;

	memset(c, 0, sizeof(*c));
	if (!(path = lwm2_conf_path(getenv("SLURM_CONF"))))
		return lwm2_errprintf(0, err, errlen, "out of memory");
	snprintf(c->path, sizeof(c->path), "%s", path);
	rc = lwm2_conf_load(&f, path, lwm2_conf_part_keys(LWM2_CONF_LIVE) | LWM2_CONF_LENIENT, err,
	                    errlen);
	free(path);
	if (rc < 0)
		return -1;
	rc = from_conf(c, &f);
	lwm2_conf_free(&f);
	if (rc < 0)
		lwm2_errprintf(0, err, errlen, "%s: a value longer than lwm2 reads", c->path);
	return rc;
}

static void slurm_once(void)
{
	static bool done;

	if (!done) {
		slurm_init(NULL);
		done = true;
	}
}

int lwm2_live_job_get(uint64_t job_id, const char *step_filter, struct lwm2_live_job *j, char *err,
                      size_t errlen)
{
	job_info_msg_t *jm = NULL;
	job_step_info_response_msg_t *sm = NULL;
	job_info_t *ji;
	struct passwd *pw;

	slurm_once();
	memset(j, 0, sizeof(*j));
	if (job_id > UINT32_MAX || slurm_load_job(&jm, (uint32_t)job_id, SHOW_DETAIL) != 0 || !jm ||
	    jm->record_count < 1) {
		lwm2_errprintf(0, err, errlen, "job %" PRIu64 ": %s", job_id,
		               slurm_strerror(errno));
		if (jm)
			slurm_free_job_info_msg(jm);
		return -1;
	}
	ji = &jm->job_array[0];
	if ((ji->job_state & JOB_STATE_BASE) != JOB_RUNNING) {
		lwm2_errprintf(0, err, errlen, "job %" PRIu64 " is not running", job_id);
		slurm_free_job_info_msg(jm);
		return -1;
	}
	j->job_id = job_id;
	j->uid = ji->user_id;
	pw = getpwuid(ji->user_id);
	snprintf(j->user, sizeof(j->user), "%s", pw ? pw->pw_name : "?");
	snprintf(j->nodes, sizeof(j->nodes), "%s", ji->nodes ? ji->nodes : "");
	j->node_count = ji->num_nodes;
	j->cpus_per_task = ji->cpus_per_task == (uint16_t)NO_VAL ? 0 : ji->cpus_per_task;
	j->cpus = ji->num_cpus == NO_VAL ? 0 : ji->num_cpus;
	j->start = ji->start_time;
	slurm_free_job_info_msg(jm);
	if (slurm_get_job_steps(0, (uint32_t)job_id, NO_VAL, &sm, SHOW_ALL) == 0 && sm) {
		size_t used = 0;

		for (uint32_t i = 0; i < sm->job_step_count; i++) {
			job_step_info_t *s = &sm->job_steps[i];
			char b[16];
			const char *nm = lwm2_step_name(s->step_id.step_id, b, sizeof(b));
			int w;

			if (s->step_id.step_id == SLURM_EXTERN_CONT)
				continue; /* not measured: it runs no task of the job */
			if (step_filter && strcmp(step_filter, nm) != 0)
				continue;
			/* our own snapshot steps are not the job's */
			if (s->name && !strcmp(s->name, "lwm2-snapshot"))
				continue;
			w = snprintf(j->steps + used, sizeof(j->steps) - used, "%s%s",
			             used ? "," : "", nm);
			if (w < 0 || (size_t)w >= sizeof(j->steps) - used)
				break;
			used += (size_t)w;
			j->nsteps++;
		}
		slurm_free_job_step_info_response_msg(sm);
	}
	if (!j->nsteps)
		return lwm2_errprintf(0, err, errlen, "job %" PRIu64 " has no running step%s%s",
		                      job_id, step_filter ? " " : "",
		                      step_filter ? step_filter : "");
	return 0;
}

int lwm2_live_running_jobs(uint64_t **ids, size_t *n, char *err, size_t errlen)
{
	job_info_msg_t *jm = NULL;

	slurm_once();
	*ids = NULL;
	*n = 0;
	if (slurm_load_jobs(0, &jm, SHOW_ALL) != 0 || !jm)
		return lwm2_errprintf(0, err, errlen, "couldn't list jobs: %s",
		                      slurm_strerror(errno));
	*ids = calloc(jm->record_count + 1, sizeof(**ids));
	for (uint32_t i = 0; *ids && i < jm->record_count; i++)
		if ((jm->job_array[i].job_state & JOB_STATE_BASE) == JOB_RUNNING)
			(*ids)[(*n)++] = jm->job_array[i].job_id;
	slurm_free_job_info_msg(jm);
	return *ids ? 0 : -1;
}

int lwm2_snap_emit(FILE *f, const char *node, uint64_t seq, const char *doc)
{
	size_t len = strlen(doc), parts = len / LWM2_SNAP_CHUNK + 1;

	for (size_t i = 0; i < parts; i++) {
		size_t off = i * LWM2_SNAP_CHUNK, m = len - off;

		if (m > LWM2_SNAP_CHUNK)
			m = LWM2_SNAP_CHUNK;
		if (fprintf(f, "LWM2SNAP %s %" PRIu64 " %zu %zu %.*s\n", node, seq, i, parts,
		            (int)m, doc + off) < 0)
			return -1;
	}
	return fflush(f) == 0 ? 0 : -1;
}

/* The parts of the nodes' documents, as they come. */
struct part {
	char node[128];
	uint64_t seq;
	size_t i, n;
	char *text;
};

struct lwm2_live_stream {
	pid_t pid;
	int out, err;
	bool eof;
	int status;
	char *line;
	size_t llen, lcap;
	struct part *parts;
	size_t np, pcap;
	char ebuf[2048];
	size_t elen;
	json_object *latest; /* node -> its newest whole document */
};

/* A node's document is whole when its n parts of one seq are there: parse
 * it, keep it as the node's latest, drop its parts. */
static void complete(struct lwm2_live_stream *s, const char *node, uint64_t seq, size_t n)
{
	size_t total = 0, have = 0, k;
	char *buf;
	json_object *doc;

	for (k = 0; k < s->np; k++)
		if (!strcmp(s->parts[k].node, node) && s->parts[k].seq == seq) {
			total += strlen(s->parts[k].text);
			have++;
		}
	if (have != n || !(buf = calloc(1, total + 1)))
		return;
	for (size_t i = 0; i < n; i++)
		for (k = 0; k < s->np; k++)
			if (s->parts[k].i == i && s->parts[k].seq == seq &&
			    !strcmp(s->parts[k].node, node))
				strcat(buf, s->parts[k].text);
	doc = json_tokener_parse(buf);
	free(buf);
	if (doc && json_object_is_type(doc, json_type_object))
		json_object_object_add(s->latest, node, doc);
	else
		json_object_put(doc);
	/* this node's parts of this and older documents are done with */
	for (k = 0; k < s->np;) {
		if (!strcmp(s->parts[k].node, node) && s->parts[k].seq <= seq) {
			free(s->parts[k].text);
			s->parts[k] = s->parts[--s->np];
		} else {
			k++;
		}
	}
}

static void take_line(struct lwm2_live_stream *s, char *line)
{
	char node[128];
	unsigned long long seq;
	size_t i, n, k, have = 0;
	int off = 0;

	if (sscanf(line, "LWM2SNAP %127s %llu %zu %zu %n", node, &seq, &i, &n, &off) != 4 || !off ||
	    i >= n || n > 100000)
		return;
	if (s->np == s->pcap) {
		size_t nc = s->pcap ? s->pcap * 2 : 64;
		struct part *q = nc > 1000000 ? NULL : realloc(s->parts, nc * sizeof(*q));
		if (!q)
			return;
		s->parts = q;
		s->pcap = nc;
	}
	snprintf(s->parts[s->np].node, sizeof(s->parts[s->np].node), "%s", node);
	s->parts[s->np].seq = seq;
	s->parts[s->np].i = i;
	s->parts[s->np].n = n;
	if (!(s->parts[s->np].text = strdup(line + off)))
		return;
	s->np++;
	for (k = 0; k < s->np; k++)
		have += !strcmp(s->parts[k].node, node) && s->parts[k].seq == seq;
	if (have == n)
		complete(s, node, seq, n);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct lwm2_live_stream *lwm2_live_stream_start(const struct lwm2_live_conf *c,
                                                const struct lwm2_live_job *j, unsigned interval,
                                                char *err, size_t errlen)
{
	char jobarg[64], narg[32], cmd[1024], iv[16];
	int out[2] = {-1, -1}, eout[2] = {-1, -1};
	struct lwm2_live_stream *s = calloc(1, sizeof(*s));

	if (!s || !(s->latest = json_object_new_object())) {
		free(s);
		lwm2_errprintf(0, err, errlen, "out of memory");
		return NULL;
	}
	if (c->lwm2_cmd[0])
		snprintf(cmd, sizeof(cmd), "%s", c->lwm2_cmd);
	else {
		ssize_t r = readlink("/proc/self/exe", cmd, sizeof(cmd) - 1);
		cmd[r > 0 ? r : 0] = '\0';
		if (r <= 0)
			snprintf(cmd, sizeof(cmd), "lwm2");
	}
	snprintf(jobarg, sizeof(jobarg), "--jobid=%" PRIu64, j->job_id);
	snprintf(narg, sizeof(narg), "-N%u", j->node_count ? j->node_count : 1);
	snprintf(iv, sizeof(iv), "%u", interval);
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(eout, O_CLOEXEC) != 0) {
		lwm2_errprintf(0, err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	s->pid = fork();
	if (s->pid == 0) {
		char jid[32];
		const char *av[] = {"srun",
		                    jobarg,
		                    "--overlap",
		                    narg,
		                    "--ntasks-per-node=1",
		                    "--nodelist",
		                    j->nodes,
		                    "--job-name=lwm2-snapshot",
		                    "--chdir=/",
		                    "--quiet",
		                    "--kill-on-bad-exit=0",
		                    cmd,
		                    "snapshot",
		                    "-j",
		                    jid,
		                    "-s",
		                    j->steps,
		                    "--basedir",
		                    c->basedir,
		                    "--interval",
		                    iv,
		                    NULL};

		snprintf(jid, sizeof(jid), "%" PRIu64, j->job_id);
		/* Root (lwm2 watch) starts the step as the job's owner: Slurm
		 * lets nobody else start a step in a job, and the reader then
		 * reads the owner's records with the owner's rights only. */
		if (getuid() == 0 && j->uid != 0) {
			struct passwd *pw = getpwuid(j->uid);
			if (!pw || initgroups(pw->pw_name, pw->pw_gid) != 0 ||
			    setgid(pw->pw_gid) != 0 || setuid(j->uid) != 0) {
				fprintf(stderr, "couldn't become the job's owner (uid %u)\n",
				        (unsigned)j->uid);
				_exit(126);
			}
			setenv("HOME", pw->pw_dir, 1);
			setenv("USER", pw->pw_name, 1);
			setenv("LOGNAME", pw->pw_name, 1);
		}
		dup2(out[1], 1);
		dup2(eout[1], 2);
		/* The snapshot step is not measured: it is no part of the job
		 * (the SPANK plugin's --lwm2=off, as sbatch passes it on). */
		setenv("SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_lwm2", "off", 1);
		unsetenv("LD_PRELOAD");
		execvp("srun", (char *const *)av);
		fprintf(stderr, "couldn't run srun: %s\n", strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(eout[1]);
	out[1] = eout[1] = -1;
	if (s->pid < 0) {
		lwm2_errprintf(0, err, errlen, "fork: %s", strerror(errno));
		goto fail;
	}
	s->out = out[0];
	s->err = eout[0];
	return s;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (eout[i] >= 0)
			close(eout[i]);
	}
	json_object_put(s->latest);
	free(s);
	return NULL;
}

/* Read what srun gives until deadline (monotonic ms) or the end. */
static void pump(struct lwm2_live_stream *s, int64_t deadline, const uint64_t *want_seq,
                 const struct lwm2_live_job *j)
{
	char obuf[8192];

	while (!s->eof) {
		int64_t left = deadline - mono_ms();
		struct pollfd fds[2] = {{.fd = s->out, .events = POLLIN},
		                        {.fd = s->err, .events = POLLIN}};
		int r;

		if (want_seq && j) {
			/* every node of the job has a document of this round */
			size_t got = 0;
			json_object_object_foreach(s->latest, k, v)
			{
				int64_t q = 0;
				(void)k;
				if (ju_int(v, "seq", &q) && (uint64_t)q >= *want_seq)
					got++;
			}
			if (got >= j->node_count)
				return;
		}
		if (left <= 0)
			return;
		r = poll(fds, 2, (int)(left > 1000 ? 1000 : left));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return;
		for (int k = 0; k < 2; k++) {
			ssize_t m;

			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			m = read(fds[k].fd, obuf, sizeof(obuf));
			if (m <= 0) {
				if (k == 0)
					s->eof = true;
				else {
					close(s->err);
					s->err = -1;
				}
				continue;
			}
			if (k == 1) {
				size_t room = sizeof(s->ebuf) - 1 - s->elen;
				size_t take = (size_t)m < room ? (size_t)m : room;
				memcpy(s->ebuf + s->elen, obuf, take);
				s->elen += take;
				s->ebuf[s->elen] = '\0';
				continue;
			}
			for (ssize_t q = 0; q < m; q++) {
				if (s->llen + 1 >= s->lcap) {
					size_t nc = s->lcap ? s->lcap * 2 : 2048;
					char *nl = nc > (1u << 20) ? NULL : realloc(s->line, nc);
					if (!nl) {
						s->llen = 0; /* a line that long is not ours */
						continue;
					}
					s->line = nl;
					s->lcap = nc;
				}
				if (obuf[q] == '\n') {
					s->line[s->llen] = '\0';
					take_line(s, s->line);
					s->llen = 0;
				} else {
					s->line[s->llen++] = obuf[q];
				}
			}
		}
	}
}

/* srun's last error line, when it failed. */
static void srun_error(struct lwm2_live_stream *s, char *err, size_t errlen)
{
	char *nl;

	while (s->elen && (s->ebuf[s->elen - 1] == '\n' || s->ebuf[s->elen - 1] == ' '))
		s->ebuf[--s->elen] = '\0';
	if ((nl = strrchr(s->ebuf, '\n')))
		memmove(s->ebuf, nl + 1, strlen(nl + 1) + 1);
	lwm2_errprintf(0, err, errlen, "srun failed: %s", *s->ebuf ? s->ebuf : "no reason given");
}

json_object *lwm2_live_stream_next(struct lwm2_live_stream *s, const struct lwm2_live_job *j,
                                   uint64_t seq, unsigned timeout_s, char *err, size_t errlen)
{
	json_object *res = json_object_new_array();

	pump(s, mono_ms() + (int64_t)timeout_s * 1000, &seq, j);
	json_object_object_foreach(s->latest, k, v)
	{
		(void)k;
		json_object_array_add(res, json_object_get(v));
	}
	if (s->eof) {
		int st = 0;
		if (s->pid > 0 && waitpid(s->pid, &st, WNOHANG) == s->pid) {
			s->pid = -1;
			s->status = st;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
				srun_error(s, err, errlen);
		}
	}
	return res;
}

void lwm2_live_stream_stop(struct lwm2_live_stream *s)
{
	if (!s)
		return;
	if (s->pid > 0) {
		/* srun passes the signal on to the snapshot step and ends it */
		kill(s->pid, SIGTERM);
		for (int i = 0; i < 50 && waitpid(s->pid, NULL, WNOHANG) == 0; i++) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
		if (waitpid(s->pid, NULL, WNOHANG) == 0) {
			kill(s->pid, SIGKILL);
			waitpid(s->pid, NULL, 0);
		}
	}
	if (s->out >= 0)
		close(s->out);
	if (s->err >= 0)
		close(s->err);
	for (size_t k = 0; k < s->np; k++)
		free(s->parts[k].text);
	free(s->parts);
	free(s->line);
	json_object_put(s->latest);
	free(s);
}

json_object *lwm2_live_gather(const struct lwm2_live_conf *c, const struct lwm2_live_job *j,
                              unsigned timeout_s, char *err, size_t errlen)
{
	struct lwm2_live_stream *s = lwm2_live_stream_start(c, j, 0, err, errlen);
	int64_t deadline = mono_ms() + (int64_t)timeout_s * 1000;
	json_object *res;
	int st = 0;

	if (!s)
		return json_object_new_array();
	pump(s, deadline, NULL, NULL);
	res = json_object_new_array();
	json_object_object_foreach(s->latest, k, v)
	{
		(void)k;
		json_object_array_add(res, json_object_get(v));
	}
	if (!s->eof) {
		lwm2_errprintf(0, err, errlen, "srun did not finish within %u s", timeout_s);
	} else if (waitpid(s->pid, &st, 0) == s->pid) {
		s->pid = -1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			srun_error(s, err, errlen);
	}
	lwm2_live_stream_stop(s);
	return res;
}

#define COUNTER(f) #f, offsetof(struct lwm2_live_rank, f)
const struct lwm2_live_counter lwm2_live_counters[] = {
    {COUNTER(mpi_calls)}, {COUNTER(mpi_bytes)},  {COUNTER(io_bytes)},    {COUNTER(mpi_ns)},
    {COUNTER(io_ns)},     {COUNTER(read_bytes)}, {COUNTER(write_bytes)}, {0},
};
#undef COUNTER

static uint64_t gu(json_object *o, const char *k)
{
	int64_t v = 0;

	ju_int(o, k, &v);
	return v < 0 ? 0 : (uint64_t)v;
}

void lwm2_live_rank_from_json(struct lwm2_live_rank *o, json_object *jr, const char *node)
{
	json_object *s = ju_get(jr, "samples", json_type_array);
	int64_t v = 0;

	memset(o, 0, sizeof(*o));
	snprintf(o->node, sizeof(o->node), "%s", node ? node : "?");
	o->rank = ju_int(jr, "rank", &v) ? (int32_t)v : -1;
	o->task = ju_int(jr, "task", &v) ? (int32_t)v : -1;
	o->pid = (int32_t)gu(jr, "pid");
	o->flags = (uint32_t)gu(jr, "flags");
	o->start_ns = (int64_t)gu(jr, "start_ns");
	o->update_ns = (int64_t)gu(jr, "update_ns");
	o->cpu_us = gu(jr, "cpu_us");
	o->threads_max = (uint32_t)gu(jr, "threads_max");
	o->period_us = (uint32_t)gu(jr, "period_us");
	for (size_t e = 0; s && e < LWM2_NEARMARKS && e < json_object_array_length(s); e++) {
		json_object *x = json_object_array_get_idx(s, e);
		int64_t n = json_object_get_int64(x);
		o->samples[e] = n < 0 ? 0 : (uint64_t)n;
	}
	for (const struct lwm2_live_counter *c = lwm2_live_counters; c->name; c++)
		*(uint64_t *)((char *)o + c->off) = gu(jr, c->name);
}
