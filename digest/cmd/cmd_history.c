/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 history`: the runs of one application over time, read from
 * jobcomp/lwm2's JSON-lines log (the performance history of a code
 * project: build-ids change when the code is rebuilt), and `lwm2 diff JOB
 * --history`: one job against its application's earlier comparable runs,
 * by the same rule jobcomp applies when it builds the digest.
 *
 * Only the "job" and "application" members of each digest are parsed, so
 * a log of a million jobs streams in seconds.
 */
#include "config.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd_io.h"
#include "cmd_opt.h"
#include "db.h"
#include "jsonutil.h"
#include "log.h"
#include "logscan.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "lwm2_history.h"

struct hsel {
	const char *app, *build;
	char **users;
	size_t nusers;
	int64_t start, end; /* window on the end time; 0: open */
	struct lwm2_hist_entry *e;
	size_t n, cap;
	bool oom;
};

enum { OPT_JSON = LWM2_OPT_LONG, OPT_DB };

/* The command line as read. */
struct history_cli {
	struct hsel s;
	struct lwm2_source src;
	bool json;
};

static const struct lwm2_optspec history_spec = {
    .cmd = "history",
    .usage = "Usage: lwm2 history [OPTIONS] [--file LOG... | --db DATABASE]\n"
             "The runs of an application over time, from jobcomp/lwm2's log or the central\n"
             "database (default: lwm2.conf's Database=): date, job,\n"
             "ranks/nodes, duration, core-hours, MPI share, I/O share, CPI, busy threads\n"
             "and build.\n",
    .footer = LWM2_OPT_TIME_HELP ".  See lwm2(1).\n",
    .col = 26,
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"app", 'a', "NAME", "runs of this executable (basename)"},
        {"build-id", 'b', "ID", "runs of this build (a prefix of the build-id)"},
        {"user", 'u', "USER[,...]", "runs of these users"},
        {"starttime", 'S', "TIME", "runs that ended at or after TIME"},
        {"endtime", 'E', "TIME", "runs that ended at or before TIME"},
        {"file", 'f', "LOG", "the log (repeatable)"},
        {"db", OPT_DB, "DATABASE", "the central database instead (lwm2 db)"},
        {"json", OPT_JSON, NULL, "one JSON object per run, one per line"},
        {"help", 'h', NULL, "this text"},
        {0},
    }};

static int history_opt(void *ctx, int key, char *arg)
{
	struct history_cli *cli = ctx;
	struct hsel *s = &cli->s;

	switch (key) {
	case 'u':
		if (lwm2_split_list(arg, &s->users, &s->nusers) < 0)
			return lwm2_opt_error(&history_spec, LWM2_OPT_FAIL, "out of memory");
		break;
	case 'S':
	case 'E':
		if (lwm2_parse_time(arg, key == 'S' ? &s->start : &s->end) < 0)
			return lwm2_opt_error(&history_spec, LWM2_OPT_USAGE_HELP,
			                      "couldn't parse the time \"%s\"", arg);
		break;
	default: /* 'f' */
		return lwm2_cmd_push_arg(&cli->src.files, &cli->src.nfiles, arg) < 0 ? LWM2_OPT_FAIL
		                                                                     : 0;
	}
	return 0;
}

/* The entry of one log line, from the digest's "job" and "application". */
static int entry_of(const struct lwm2_logline *l, struct lwm2_hist_entry *e)
{
	const char *a, *j;
	json_object *d, *app, *job;
	int rc;

	if (!l->digest || !(a = lwm2_logline_member(l, LWM2_KEY_APPLICATION)) ||
	    !(j = lwm2_logline_member(l, LWM2_KEY_JOB)))
		return -1;
	app = lwm2_json_parse_at(a, l->end);
	job = lwm2_json_parse_at(j, l->end);
	d = json_object_new_object();
	if (app)
		ju_add(d, LWM2_KEY_APPLICATION, app);
	if (job)
		ju_add(d, LWM2_KEY_JOB, job);
	rc = lwm2_hist_from_digest(d, e);
	/* The log line's own fields where the digest lacks them. */
	if (rc == 0 && !e->user[0] && ju_str(l->fields, "user"))
		snprintf(e->user, sizeof(e->user), "%s", ju_str(l->fields, "user"));
	json_object_put(d);
	return rc;
}

static bool in_users(const struct hsel *s, const char *u)
{
	for (size_t i = 0; i < s->nusers; i++)
		if (!strcmp(s->users[i], u))
			return true;
	return !s->nusers;
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct hsel *s = arg;
	struct lwm2_hist_entry e;

	(void)err;
	(void)errlen;
	if (entry_of(l, &e) != 0)
		return 0; /* no digest, or one without an application */
	if (s->app && strcmp(e.exe, s->app))
		return 0;
	if (s->build && strncmp(e.build_id, s->build, strlen(s->build)))
		return 0;
	if (!in_users(s, e.user))
		return 0;
	if ((s->start && e.end < s->start) || (s->end && e.end > s->end))
		return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 256;
		struct lwm2_hist_entry *ne = realloc(s->e, nc * sizeof(*ne));
		if (!ne) {
			s->oom = true;
			return 1;
		}
		s->e = ne;
		s->cap = nc;
	}
	s->e[s->n++] = e;
	return 0;
}

static int cmp_end(const void *a, const void *b)
{
	const struct lwm2_hist_entry *x = a, *y = b;

	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->job_id < y->job_id ? -1 : x->job_id > y->job_id;
}

static void cell(char *b, size_t len, double v, const char *fmt)
{
	if (isfinite(v) && fmt)
		snprintf(b, len, fmt, v);
	else
		snprintf(b, len, "-");
}

static void add_num(json_object *o, const char *k, double v)
{
	if (isfinite(v))
		ju_add(o, k, ju_double(v));
}

static json_object *entry_json(const struct lwm2_hist_entry *e)
{
	json_object *o = json_object_new_object();

	ju_add(o, "job_id", ju_u64(e->job_id));
	ju_add(o, "app", json_object_new_string(e->exe));
	ju_add(o, "build_id", json_object_new_string(e->build_id));
	ju_add(o, "user", json_object_new_string(e->user));
	ju_add(o, "start", json_object_new_int64(e->start));
	ju_add(o, "end", json_object_new_int64(e->end));
	ju_add(o, "ranks", ju_u64(e->ranks));
	ju_add(o, "nodes", ju_u64(e->nodes));
	add_num(o, "duration", e->duration);
	add_num(o, "core_hours", e->core_hours);
	add_num(o, "mpi_time", e->mpi_share);
	add_num(o, "posix_io_time", e->io_share);
	add_num(o, "cpi", e->cpi);
	add_num(o, "avg_threads", e->threads);
	return o;
}

static void print_table(const struct hsel *s, bool json)
{
	if (json) {
		for (size_t i = 0; i < s->n; i++) {
			json_object *o = entry_json(&s->e[i]);
			printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
			json_object_put(o);
		}
		return;
	}
	printf("%-16s %-10s %-16s %-12s %9s %10s %6s %6s %5s %7s %s\n", "DATE", "JOB", "APP",
	       "RANKS/NODES", "DURATION", "CORE-H", "MPI%", "I/O%", "CPI", "THREADS", "BUILD");
	for (size_t i = 0; i < s->n; i++) {
		const struct lwm2_hist_entry *e = &s->e[i];
		char date[32] = "-", rn[32], dur[24], ch[24], mpi[16], io[16], cpi[16], th[16];
		time_t t = (time_t)e->end;
		struct tm tm;

		if (e->end > 0 && localtime_r(&t, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M", &tm);
		snprintf(rn, sizeof(rn), "%u/%u", e->ranks, e->nodes);
		cell(dur, sizeof(dur), e->duration, "%.1f");
		cell(ch, sizeof(ch), e->core_hours, "%.3f");
		cell(mpi, sizeof(mpi), e->mpi_share, "%.1f");
		cell(io, sizeof(io), e->io_share, "%.1f");
		cell(cpi, sizeof(cpi), e->cpi, "%.2f");
		cell(th, sizeof(th), e->threads, "%.2f");
		printf("%-16s %-10" PRIu32 " %-16.16s %-12s %9s %10s %6s %6s %5s %7s %.12s%s\n",
		       date, e->job_id, e->exe, rn, dur, ch, mpi, io, cpi, th,
		       e->build_id[0] ? e->build_id : "-",
		       i && strcmp(e->build_id, s->e[i - 1].build_id) &&
		               !strcmp(e->exe, s->e[i - 1].exe)
		           ? "  (new build)"
		           : "");
	}
	if (!s->n)
		printf("(no runs)\n");
}

static int scan(struct hsel *s, const struct lwm2_source *src, const char *cmd)
{
	struct lwm2_db_select sel = {
	    .start = s->start, .end = s->end, .users = s->users, .nusers = s->nusers, .metric = -1};
	int rc = 0;

	if (lwm2_source_scan(cmd, src, &sel, false, on_line, s) < 0)
		rc = -1;
	if (s->oom) {
		lwm2_log_error("%s: couldn't keep the runs: %s", cmd, strerror(ENOMEM));
		return -1;
	}
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), cmp_end);
	return rc;
}

int lwm2_history_job_ids(const char *cmd, const struct lwm2_source *src,
                         const struct lwm2_history_sel *sel, uint32_t **ids, size_t *n)
{
	struct hsel s = {.app = sel->app,
	                 .build = sel->build,
	                 .users = sel->users,
	                 .nusers = sel->nusers,
	                 .start = sel->start,
	                 .end = sel->end};
	int rc = scan(&s, src, cmd);

	*ids = NULL;
	*n = 0;
	if (rc == 0 && s.n && !(*ids = malloc(s.n * sizeof(**ids)))) {
		lwm2_log_error("%s: couldn't keep the runs: %s", cmd, strerror(ENOMEM));
		rc = -1;
	}
	for (size_t i = 0; rc == 0 && i < s.n; i++)
		(*ids)[(*n)++] = s.e[i].job_id;
	free(s.e);
	return rc;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore history_store[] = {
    {'a', LWM2_OPT_ARG(struct history_cli, s.app)},
    {'b', LWM2_OPT_ARG(struct history_cli, s.build)},
    {OPT_JSON, LWM2_OPT_TRUE(struct history_cli, json)},
    {OPT_DB, LWM2_OPT_ARG(struct history_cli, src.db_given)},
    {0},
};

int lwm2_cmd_history(int argc, char **argv)
{
	struct history_cli cli;
	struct hsel *s = &cli.s;
	int rc = 1, first;

	memset(&cli, 0, sizeof(cli));
	first = lwm2_opt_parse_store(&history_spec, history_store, argc, argv, history_opt, &cli);
	if (first < 0) {
		rc = lwm2_opt_status(first);
		goto out;
	}
	if (first < argc) {
		lwm2_log_error("history: unexpected argument \"%s\"", argv[first]);
		lwm2_opt_usage(&history_spec, stderr);
		goto out;
	}
	if (lwm2_source_resolve("history", &cli.src, true) < 0)
		goto out;
	if (!cli.src.nfiles && !cli.src.db[0]) {
		lwm2_log_error("history: couldn't read runs: no --file LOG given "
		               "(jobcomp/lwm2's JSON-lines log), no --db and no Database= in "
		               "lwm2.conf");
		lwm2_opt_usage(&history_spec, stderr);
		goto out;
	}
	rc = scan(s, &cli.src, "history") < 0 ? 1 : 0;
	print_table(s, cli.json);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		lwm2_log_error("history: couldn't write the output: %s", strerror(errno));
		rc = 1;
	}
out:
	for (size_t i = 0; i < s->nusers; i++)
		free(s->users[i]);
	free(s->users);
	free(s->e);
	free(cli.src.files);
	return rc;
}

/* ---- lwm2 diff JOB --history ---- */

int lwm2_diff_history(json_object *digest, const char *what, const struct lwm2_source *src,
                      bool json)
{
	static const struct {
		const char *label, *fmt;
		size_t off;
	} rows[] = {
	    {"Run time (s)", "%.2f", offsetof(struct lwm2_hist_entry, duration)},
	    {"MPI share (%)", "%.1f", offsetof(struct lwm2_hist_entry, mpi_share)},
	    {"I/O share (%)", "%.1f", offsetof(struct lwm2_hist_entry, io_share)},
	    {"CPI", "%.2f", offsetof(struct lwm2_hist_entry, cpi)},
	    {"Busy threads", "%.2f", offsetof(struct lwm2_hist_entry, threads)},
	    {"Core-hours", "%.3f", offsetof(struct lwm2_hist_entry, core_hours)},
	};
	struct lwm2_hist_entry cur, *sel = NULL;
	struct lwm2_hist_result res;
	struct hsel s;
	size_t k = 0;
	int rc = 2;

	memset(&s, 0, sizeof(s));
	if (lwm2_hist_from_digest(digest, &cur) != 0) {
		lwm2_log_error("diff: %s names no application (a digest made before lwm2 recorded "
		               "it, or no process ran)",
		               what);
		return 2;
	}
	if (!src->nfiles && !src->db[0]) {
		lwm2_log_error("diff: --history reads the earlier runs from --file LOG or "
		               "--db DATABASE");
		return 2;
	}
	s.app = cur.exe;
	/* a file not read may hold the runs the rule would compare: no
	 * verdict then, as for lwm2 diff A B */
	if (scan(&s, src, "diff") < 0)
		goto out;
	lwm2_history_judge(&cur, s.e, s.n, &res);
	/* The runs the rule compared, for the table: the same selection. */
	sel = calloc(LWM2_HIST_LAST, sizeof(*sel));
	for (size_t i = s.n; sel && i-- > 0 && k < LWM2_HIST_LAST;)
		if (s.e[i].job_id != cur.job_id && (!cur.end || s.e[i].end <= cur.end) &&
		    lwm2_hist_comparable(&cur, &s.e[i]))
			sel[k++] = s.e[i];
	if (json) {
		json_object *o = json_object_new_object(), *runs = json_object_new_array();
		ju_add(o, "job", entry_json(&cur));
		for (size_t i = 0; i < k; i++)
			json_object_array_add(runs, entry_json(&sel[i]));
		ju_add(o, "compared_runs", runs);
		ju_add(o, "history", lwm2_hist_result_json(&cur, &res));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		printf("Job %" PRIu32 ": %s at %u ranks on %u nodes, build %.12s\n", cur.job_id,
		       cur.exe, cur.ranks, cur.nodes, cur.build_id[0] ? cur.build_id : "unknown");
		printf("against the last %zu runs of %s at comparable rank counts (%zu earlier "
		       "runs in all; rank counts within a factor %.1f)\n\n",
		       res.compared, cur.exe, res.same_app, LWM2_HIST_RANK_FACTOR);
		printf("%-16s %12s %12s %12s %12s %9s\n", "", "this run", "median", "lowest",
		       "highest", "change");
		for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
			double x = *(const double *)((const char *)&cur + rows[r].off),
			       v[LWM2_HIST_LAST];
			double lo = INFINITY, hi = -INFINITY, med;
			char a[32], b[32], c[32], d[32], e[32] = "-";
			size_t m = 0;

			for (size_t i = 0; i < k; i++) {
				double y = *(const double *)((const char *)&sel[i] + rows[r].off);
				if (!isfinite(y))
					continue;
				v[m++] = y;
				lo = y < lo ? y : lo;
				hi = y > hi ? y : hi;
			}
			med = m ? lwm2_median(v, m) : NAN;
			cell(a, sizeof(a), x, rows[r].fmt);
			cell(b, sizeof(b), med, rows[r].fmt);
			cell(c, sizeof(c), m ? lo : NAN, rows[r].fmt);
			cell(d, sizeof(d), m ? hi : NAN, rows[r].fmt);
			if (isfinite(x) && isfinite(med) && med != 0)
				snprintf(e, sizeof(e), "%+.0f %%", 100 * (x - med) / fabs(med));
			printf("%-16s %12s %12s %12s %12s %9s\n", rows[r].label, a, b, c, d, e);
		}
		putchar('\n');
		if (res.nfind)
			for (size_t i = 0; i < res.nfind; i++)
				printf("! %s [%s]\n", res.find[i].text, res.find[i].rule->id);
		else if (res.compared < LWM2_HIST_MIN_RUNS)
			printf("Too few comparable runs to judge (%zu; %d are needed).\n",
			       res.compared, LWM2_HIST_MIN_RUNS);
		else
			printf("No metric outside its history.\n");
	}
	rc = res.nfind ? 1 : 0;
out:
	free(sel);
	free(s.e);
	return rc;
}
