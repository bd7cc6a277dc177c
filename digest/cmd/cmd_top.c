/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 top -j JOB[.STEP]: a running job's current state from its rank
 * records, per node and per rank, and the job so far as a digest.
 *
 * Each refresh runs `lwm2 snapshot` once on every node of the job through
 * srun --overlap (live_gather.c): Slurm decides who may start a step in a
 * job (its owner, root and SlurmUser), nothing runs while nobody watches,
 * and what runs is a short reader beside the job.  The screen is redrawn
 * with plain ANSI sequences (home, clear): the view is a page of text
 * rebuilt every few seconds, which needs no cursor addressing and so no
 * curses library; a terminal without ANSI support can use --once.
 */
#include "config.h"

#include "digest_internal.h"
#include "live.h"
#include "live_gather.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "numparse.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The previous frame's ranks, for CPU use and state between frames. */
struct prev {
	struct lwm2_live_rank *r;
	size_t n;
};

static const struct lwm2_live_rank *find_prev(const struct prev *p, const struct lwm2_live_rank *r)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->r[i].pid == r->pid && !strcmp(p->r[i].node, r->node))
			return &p->r[i];
	return NULL;
}

static double num(json_object *o, const char *k)
{
	double v = 0;

	ju_num(o, k, &v);
	return v;
}

/* The answer of node h among docs (the last, should it answer twice). */
static json_object *node_doc(json_object *docs, size_t nd, const char *h)
{
	json_object *doc = NULL;

	for (size_t i = 0; i < nd; i++) {
		json_object *d = json_object_array_get_idx(docs, i);
		const char *dn = ju_str(d, "node");
		if (dn && !strcmp(dn, h))
			doc = d;
	}
	return doc;
}

/* One rank of node h at time t: the last slice's shares and rates, the
 * CPU use since the previous frame (or since its start); the rank goes
 * into cur, its newest update into *newest. */
static json_object *frame_rank(json_object *r, const char *h, int64_t t,
                               const struct lwm2_live_rule *rule, const struct prev *prev,
                               struct prev *cur, int64_t *newest)
{
	json_object *o = json_object_new_object();
	json_object *ls = ju_get(r, "last_slice", json_type_object);
	struct lwm2_live_rank lr;
	const struct lwm2_live_rank *pr;
	double L = num(r, "slice_length_s"), cpu;
	struct lwm2_live_rank *nr;

	lwm2_live_rank_from_json(&lr, r, h);
	if (lr.update_ns > *newest)
		*newest = lr.update_ns;
	ju_add(o, "step", json_object_get(ju_get(r, "step", json_type_string)));
	ju_add(o, "rank", json_object_new_int(lr.rank));
	ju_add(o, "task", json_object_new_int(lr.task));
	ju_add(o, "pid", json_object_new_int(lr.pid));
	ju_add(o, "exe", json_object_get(ju_get(r, "exe", json_type_string)));
	ju_add(o, "age_s", ju_double((double)(t - lr.update_ns) / 1e9));
	if (ls && L > 0) {
		ju_add(o, "slice_s", ju_double(L));
		ju_add(o, "mpi_pct", ju_double(num(ls, "mpi_ns") / (L * 1e7)));
		ju_add(o, "io_pct", ju_double(num(ls, "io_ns") / (L * 1e7)));
		ju_add(o, "read_Bps", ju_double(num(ls, "read_bytes") / L));
		ju_add(o, "write_Bps", ju_double(num(ls, "write_bytes") / L));
		ju_add(o, "mpi_Bps", ju_double(num(ls, "mpi_bytes") / L));
	}
	pr = find_prev(prev, &lr);
	if (pr && lr.update_ns > pr->update_ns) {
		struct lwm2_live_delta d;
		lwm2_live_delta(rule, pr, &lr, &d);
		cpu = d.cpu;
		ju_add(o, "cpu_since", json_object_new_string("last refresh"));
		ju_add(o, "state", json_object_new_string(lwm2_live_state_name(d.state)));
		ju_add(o, "mpi_sample_pct", ju_double(100 * d.mpi_share));
	} else {
		double w = (double)(lr.update_ns - lr.start_ns) / 1e9;
		cpu = w > 0 ? (double)lr.cpu_us / 1e6 / w : 0;
		ju_add(o, "cpu_since", json_object_new_string("start"));
	}
	/* CPU cores used: the busy threads on average */
	ju_add(o, "cpu", ju_double(cpu));
	ju_add(o, "threads", json_object_new_int64(lr.threads_max));
	nr = realloc(cur->r, (cur->n + 1) * sizeof(*cur->r));
	if (nr) {
		cur->r = nr;
		cur->r[cur->n++] = lr;
	}
	return o;
}

/* The node records of a node's steps, for the digest so far. */
static void node_records(json_object *doc, json_object ***recs, size_t *nrec)
{
	json_object *st = ju_get(doc, "steps", json_type_array);

	for (size_t i = 0; st && i < json_object_array_length(st); i++) {
		json_object *nrj =
		    ju_get(json_object_array_get_idx(st, i), "node_record", json_type_object);
		json_object **g;
		if (!nrj || !(g = realloc(*recs, (*nrec + 1) * sizeof(**recs))))
			continue;
		*recs = g;
		(*recs)[(*nrec)++] = nrj;
	}
}

/* The digest of the job so far from its nodes' records, into out. */
static void frame_digest(json_object *out, const struct lwm2_live_job *j, json_object **recs,
                         size_t nrec, int64_t t)
{
	char cl[8] = "";
	struct lwm2_job_meta m = {.cluster = cl,
	                          .job_id = j->job_id,
	                          .user = j->user,
	                          .nodes = j->nodes,
	                          .node_count = j->node_count,
	                          .cpus_per_task = j->cpus_per_task,
	                          .start = j->start,
	                          .end = t / 1000000000,
	                          .state = "RUNNING"};
	json_object *dg = lwm2_job_digest_build(&m, recs, nrec);

	if (dg) {
		json_object_object_del(dg, "grid");
		ju_add(out, "digest", dg);
	}
}

/*
 * One frame as JSON: the nodes (answered or not, the age of their newest
 * update), per rank the last slice's shares and rates and the CPU use, and
 * the digest of the job so far.  prev is updated to this frame's ranks.
 */
static json_object *frame(json_object *docs, const char *err, const struct lwm2_live_job *j,
                          const struct lwm2_live_rule *rule, struct prev *prev)
{
	json_object *out = json_object_new_object(), *nodes = json_object_new_array(),
	            *missing = json_object_new_array();
	json_object **recs = NULL;
	size_t nrec = 0, nd = docs ? json_object_array_length(docs) : 0;
	struct prev cur = {0};
	int64_t t = now_ns();
	/* struct hostlist *: 22.05 spells it hostlist_t, 24.11 hostlist_t * */
	struct hostlist *hl = slurm_hostlist_create(j->nodes);
	char *h;

	ju_add(out, "job_id", ju_u64(j->job_id));
	ju_add(out, "user", json_object_new_string(j->user));
	ju_add(out, "steps", json_object_new_string(j->steps));
	ju_add(out, "time", json_object_new_int64(t / 1000000000));
	if (err && *err)
		ju_add(out, "error", json_object_new_string(err));
	/* the nodes of the job in Slurm's order, answered or not */
	while (hl && (h = slurm_hostlist_shift(hl))) {
		json_object *doc = node_doc(docs, nd, h), *n = json_object_new_object(), *ranks,
		            *jr;
		int64_t newest = 0;

		ju_add(n, "node", json_object_new_string(h));
		ju_add(n, "answered", json_object_new_boolean(doc != NULL));
		if (!doc) {
			json_object_array_add(missing, json_object_new_string(h));
			json_object_array_add(nodes, n);
			free(h);
			continue;
		}
		ranks = json_object_new_array();
		jr = ju_get(doc, "ranks", json_type_array);
		for (size_t i = 0; jr && i < json_object_array_length(jr); i++)
			json_object_array_add(ranks, frame_rank(json_object_array_get_idx(jr, i), h,
			                                        t, rule, prev, &cur, &newest));
		ju_add(n, "newest_update", json_object_new_int64(newest / 1000000000));
		ju_add(n, "age_s", newest ? ju_double((double)(t - newest) / 1e9) : NULL);
		ju_add(n, "ranks", ranks);
		node_records(doc, &recs, &nrec);
		json_object_array_add(nodes, n);
		free(h);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
	ju_add(out, "nodes", nodes);
	ju_add(out, "missing", missing);
	if (nrec)
		frame_digest(out, j, recs, nrec, t);
	free(recs);
	free(prev->r);
	*prev = cur;
	return out;
}

/* A string member for printing: "?" when it is not there. */
static const char *sstr(json_object *o, const char *k)
{
	const char *s = ju_str(o, k);

	return s ? s : "?";
}

static void fmt_rate(char *b, size_t n, double v)
{
	const char *u[] = {"B", "K", "M", "G", "T"};
	int i = 0;

	while (v >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(b, n, "%.1f%s", v, u[i]);
}

static void show(json_object *f, FILE *o, bool screen, unsigned interval)
{
	json_object *nodes = ju_get(f, "nodes", json_type_array), *dg;
	const char *e = ju_str(f, "error");
	time_t t = (time_t)num(f, "time");
	char ts[32];

	strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&t));
	if (screen)
		fputs("\033[H\033[2J", o);
	fprintf(o, "lwm2 top - job %s of %s, steps %s - %s",
	        json_object_get_string(ju_get(f, "job_id", json_type_int)), sstr(f, "user"),
	        sstr(f, "steps"), ts);
	if (screen)
		fprintf(o, ", every %u s (q quits)", interval);
	fputc('\n', o);
	if (e)
		fprintf(o, "gathering: %s\n", e);
	for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
		json_object *n = json_object_array_get_idx(nodes, i);
		json_object *rk = ju_get(n, "ranks", json_type_array);

		if (!json_object_get_boolean(ju_get(n, "answered", json_type_boolean))) {
			fprintf(o, "\nnode %s: no answer\n", sstr(n, "node"));
			continue;
		}
		fprintf(o, "\nnode %s: %zu processes, newest slice %.1f s old\n", sstr(n, "node"),
		        rk ? json_object_array_length(rk) : 0, num(n, "age_s"));
		fprintf(o, "  %-6s %5s %7s %6s %6s %8s %8s %8s %5s %4s %-9s %s\n", "step", "rank",
		        "pid", "MPI%", "IO%", "read/s", "write/s", "MPI B/s", "CPU", "thr", "state",
		        "exe");
		for (size_t k = 0; rk && k < json_object_array_length(rk); k++) {
			json_object *r = json_object_array_get_idx(rk, k);
			char rb[16], wb[16], mb[16];
			const char *st = ju_str(r, "state"), *exe = ju_str(r, "exe"), *sl;

			fmt_rate(rb, sizeof(rb), num(r, "read_Bps"));
			fmt_rate(wb, sizeof(wb), num(r, "write_Bps"));
			fmt_rate(mb, sizeof(mb), num(r, "mpi_Bps"));
			sl = exe ? strrchr(exe, '/') : NULL;
			fprintf(o, "  %-6s %5d %7d %6.1f %6.1f %8s %8s %8s %5.2f %4d %-9s %s\n",
			        sstr(r, "step"), (int)num(r, "rank"), (int)num(r, "pid"),
			        num(r, "mpi_pct"), num(r, "io_pct"), rb, wb, mb, num(r, "cpu"),
			        (int)num(r, "threads"), st ? st : "-",
			        sl    ? sl + 1
			        : exe ? exe
			              : "?");
		}
	}
	if ((dg = ju_get(f, "digest", json_type_object))) {
		struct lwm2_render_opts ro = {0};
		fprintf(o, "\nThe job so far:\n");
		lwm2_digest_render(dg, o, &ro);
	}
	fflush(o);
}

enum { OPT_ONCE = LWM2_OPT_LONG, OPT_JSON };

/* The command line as read. */
struct top_cli {
	uint64_t id;
	const char *step;
	unsigned delay;
	bool once, json;
};

static const struct lwm2_optspec top_spec = {
    .cmd = "top",
    .usage = "Usage: lwm2 top -j JOBID[.STEP] [-d SECONDS] [--once] [--json]\n"
             "The current state of a running job, per node and rank, refreshed like top(1).\n",
    .col = 26,
    .argsep = ' ',
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"job", 'j', "JOBID[.STEP]", "the job (its owner or an admin only)"},
        {"delay", 'd', "SECONDS", "refresh interval (default 5, at least 1)"},
        {"once", OPT_ONCE, NULL, "one frame, then exit"},
        {"json", OPT_JSON, NULL, "the frame as JSON (with --once: one document)"},
        {0},
    }};

/* -j and -d; the others are in top_store */
static int top_opt(void *ctx, int key, char *arg)
{
	struct top_cli *cli = ctx;
	const char *end;
	uint64_t d;

	if (key == 'j') {
		if (lwm2_parse_u64(arg, &end, 1, UINT64_MAX, &cli->id) < 0 ||
		    (*end && *end != '.') || (*end == '.' && !end[1]))
			return lwm2_opt_error(&top_spec, LWM2_OPT_USAGE, "bad job id '%s'", arg);
		cli->step = *end ? end + 1 : NULL;
		return 0;
	}
	if (lwm2_parse_u64(arg, NULL, 1, 3600, &d) < 0)
		return lwm2_opt_error(&top_spec, LWM2_OPT_USAGE, "bad delay '%s' (1 to 3600 s)",
		                      arg);
	cli->delay = (unsigned)d;
	return 0;
}

/* The configuration and the job, for its owner or root only.  Returns 0,
 * or lwm2's exit status having said why not. */
static int top_job(const struct top_cli *cli, struct lwm2_live_conf *conf,
                   struct lwm2_live_job *job)
{
	char err[1024];

	if (lwm2_live_conf_load(conf, err, sizeof(err)) != 0) {
		lwm2_log_error("top: %s", err);
		return 1;
	}
	if (lwm2_live_job_get(cli->id, cli->step, job, err, sizeof(err)) != 0) {
		lwm2_log_error("top: %s", err);
		return 1;
	}
	/* Slurm refuses the step anyway; saying so first is clearer than
	 * srun's "Access/permission denied" */
	if (getuid() != 0 && getuid() != job->uid) {
		lwm2_log_error("top: job %" PRIu64
		               " is not yours: only its owner and admins can watch it",
		               cli->id);
		return 1;
	}
	return 0;
}

/* The snapshot step of a refreshing view: one for the session, a new one
 * when the job's steps changed. */
struct top_stream {
	struct lwm2_live_stream *stream;
	char streamed[sizeof(((struct lwm2_live_job *)0)->steps)];
	uint64_t seq;
};

/* The nodes' answers for one frame: a gather of its own with --once, else
 * the stream's next round. */
static json_object *top_docs(const struct top_cli *cli, const struct lwm2_live_conf *conf,
                             struct lwm2_live_job *job, struct top_stream *s, char *gerr,
                             size_t gerrlen)
{
	if (cli->once)
		return lwm2_live_gather(conf, job, conf->gather_timeout_s, gerr, gerrlen);
	if (s->stream && strcmp(s->streamed, job->steps) != 0) {
		lwm2_live_stream_stop(s->stream);
		s->stream = NULL;
	}
	if (!s->stream) {
		s->stream = lwm2_live_stream_start(conf, job, cli->delay, gerr, gerrlen);
		snprintf(s->streamed, sizeof(s->streamed), "%s", job->steps);
		s->seq = 0;
	}
	return s->stream ? lwm2_live_stream_next(s->stream, job, s->seq++,
	                                         cli->delay + conf->gather_timeout_s, gerr, gerrlen)
	                 : json_object_new_array();
}

/* The nodes of a frame that answered. */
static size_t frame_answered(json_object *f)
{
	size_t answered = 0, nn;
	json_object *nodes = ju_get(f, "nodes", json_type_array);

	nn = nodes ? json_object_array_length(nodes) : 0;
	for (size_t i = 0; i < nn; i++)
		answered += json_object_get_boolean(
		    ju_get(json_object_array_get_idx(nodes, i), "answered", json_type_boolean));
	return answered;
}

/* Wait for the next refresh, or q (with a stream, its next round is the
 * wait: only look at the keyboard meanwhile). */
static void top_wait(bool raw, bool streaming, unsigned delay)
{
	for (unsigned w = 0; w < (streaming ? 1 : delay * 10) && !stop; w++) {
		struct pollfd p = {.fd = 0, .events = POLLIN};
		if (raw && poll(&p, 1, 100) > 0) {
			char ch;
			if (read(0, &ch, 1) == 1 && (ch == 'q' || ch == 'Q'))
				stop = 1;
		} else if (!raw) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore top_store[] = {
    {OPT_ONCE, LWM2_OPT_TRUE(struct top_cli, once)},
    {OPT_JSON, LWM2_OPT_TRUE(struct top_cli, json)},
    {0},
};

int lwm2_cmd_top(int argc, char **argv)
{
	struct top_cli cli = {.delay = 5};
	struct lwm2_live_conf conf;
	struct lwm2_live_job job;
	struct top_stream ts = {0};
	struct prev prev = {0};
	char err[1024];
	bool screen;
	struct termios saved;
	bool raw = false;
	int first = lwm2_opt_parse_store(&top_spec, top_store, argc, argv, top_opt, &cli), rc;

	if (first < 0)
		return lwm2_opt_status(first);
	if (!cli.id || first != argc) {
		lwm2_opt_usage(&top_spec, stderr);
		return 2;
	}
	if ((rc = top_job(&cli, &conf, &job)) != 0)
		return rc;
	screen = !cli.once && !cli.json && isatty(1);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (screen && isatty(0) && tcgetattr(0, &saved) == 0) {
		struct termios t = saved;
		t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw = tcsetattr(0, TCSANOW, &t) == 0;
	}
	for (;;) {
		char gerr[1024] = "";
		json_object *docs = top_docs(&cli, &conf, &job, &ts, gerr, sizeof(gerr)), *f;
		size_t answered;

		f = frame(docs, gerr, &job, &conf.rule, &prev);
		json_object_put(docs);
		answered = frame_answered(f);
		if (cli.json)
			puts(json_object_to_json_string_ext(f, JSON_C_TO_STRING_PLAIN));
		else
			show(f, stdout, screen, cli.delay);
		fflush(stdout);
		json_object_put(f);
		if (cli.once) {
			lwm2_live_stream_stop(ts.stream);
			free(prev.r);
			return answered ? 0 : 1;
		}
		top_wait(raw, ts.stream != NULL, cli.delay);
		if (stop)
			break;
		/* the job may have ended meanwhile */
		if (lwm2_live_job_get(cli.id, cli.step, &job, err, sizeof(err)) != 0) {
			lwm2_log_error("top: %s", err);
			break;
		}
	}
	lwm2_live_stream_stop(ts.stream);
	if (raw)
		tcsetattr(0, TCSANOW, &saved);
	free(prev.r);
	return 0;
}
