/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 diff A B`: two experiments side by side, the difference view of
 * CUBE for job digests.  Every metric of the whole job and of every step
 * (matched by step id) with its absolute and relative change, changes
 * beyond a threshold marked, and the guidance rules that fired in one run
 * but not in the other.
 *
 * A and B are digest files (JSON, AdminComment text or a log line), or job
 * ids: looked up in the --file logs, else read from Slurm accounting
 * through lwm2 digest's own reader (lwm2_digest_last_run), so the same
 * retrieval and the same PrivateData rules apply.
 *
 * Exit status as diff(1): 0 nothing changed beyond the threshold and the
 * same guidance fired, 1 something did, 2 trouble.
 */
#include "config.h"
#include "lwm2_keys.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd_digest.h"
#include "cmd_io.h"
#include "cmd_opt.h"
#include "db.h"
#include "errmsg.h"
#include "fileio.h"
#include "jsonutil.h"
#include "log.h"
#include "logscan.h"
#include "lwm2_cmds.h"
#include "lwm2_algebra.h"
#include "lwm2_digest.h"
#include "lwm2_render.h"
#include "numparse.h"
#include "stepname.h"

#define side lwm2_operand

struct diffopts {
	double threshold; /* percent */
	bool json;
	struct lwm2_source src; /* --file logs or --db */
	const char *output;     /* --output: the difference as a digest */
	struct lwm2_derived_set derived;
};

enum { OPT_JSON = LWM2_OPT_LONG, OPT_HISTORY, OPT_DB, OPT_OUTPUT, OPT_METRIC };

/* The command line as read. */
struct diff_cli {
	struct diffopts o;
	bool history;
};

static const struct lwm2_optspec diff_spec = {
    .cmd = "diff",
    .usage = "Usage: lwm2 diff [OPTIONS] A B\n"
             "Compare two digests: every metric of the job and of each step (matched by\n"
             "step id) with absolute and relative change, and the guidance that fired in\n"
             "one but not the other.  A and B: digest files (JSON, AdminComment, log line)\n"
             "or job ids (ID or ID_TASK), read from --file logs, the central database\n"
             "(--db) or Slurm accounting.\n\n",
    .footer = "Exit status: 0 no change beyond the threshold, 1 changes, 2 trouble.\n",
    .col = 24,
    .usage_on_error = true,
    .opts = (const struct lwm2_opt[]){
        {"file", 'f', "LOG", "look job ids up in this JSON-lines log (several allowed)"},
        {"db", OPT_DB, "DATABASE", "look job ids up in the central database (lwm2 db)"},
        {"threshold", 't', "PCT", "mark relative changes beyond PCT percent (default 10)"},
        {"json", OPT_JSON, NULL, "one JSON object"},
        {"output", OPT_OUTPUT, "FILE",
         "also write the difference B - A as a digest\n"
         "(a log line) for lwm2 digest --file, report, ranks"},
        {"metric", OPT_METRIC, "NAME=EXPR",
         "a derived metric of --output's digest\n(several allowed)"},
        {"history", OPT_HISTORY, NULL,
         "lwm2 diff --history JOB --file LOG: one job against its\n"
         "application's earlier comparable runs in LOG (or --db)"},
        {0},
    }};

static void usage(FILE *f)
{
	lwm2_opt_usage(&diff_spec, f);
}

/* -t and --metric; the others are in diff_store */
static int diff_opt(void *ctx, int key, char *arg)
{
	struct diff_cli *cli = ctx;
	char *end, err[300];

	if (key == OPT_METRIC)
		return lwm2_derived_add(&cli->o.derived, arg, err, sizeof(err)) < 0
		           ? lwm2_opt_error(&diff_spec, LWM2_OPT_USAGE, "%s", err)
		           : 0;
	cli->o.threshold = strtod(arg, &end);
	if (end == arg || *end || !isfinite(cli->o.threshold) || cli->o.threshold < 0)
		return lwm2_opt_error(&diff_spec, LWM2_OPT_USAGE_HELP,
		                      "couldn't parse --threshold \"%s\": want a percentage", arg);
	return 0;
}

/* ------------------------------------------------------------ reading */

/* "ID" or "ID_TASK" (an array task). */
static int parse_jobarg(const char *s, int64_t *job, int64_t *task)
{
	const char *end;
	int64_t v, t = -1;

	if (lwm2_parse_i64(s, &end, 1, INT64_MAX, &v) < 0 ||
	    (*end == '_' && lwm2_parse_i64(end + 1, NULL, 0, INT64_MAX, &t) < 0) ||
	    (*end && *end != '_'))
		return -1;
	*job = v;
	*task = t;
	return 0;
}

struct lookup {
	struct side *s;
	size_t n;
	const char *cmd;
	const char *unit; /* "line" of a log, "row" of the database */
};

static bool matches(const struct side *s, json_object *f)
{
	if (s->job_id < 0)
		return false;
	if (s->array_task >= 0)
		return ju_int_or(f, "array_job_id", -1) == s->job_id &&
		       ju_int_or(f, "array_task_id", -1) == s->array_task;
	return ju_int_or(f, "job_id", -1) == s->job_id;
}

/* The last entry of a job wins: a requeued job's latest run. */
static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct lookup *lk = arg;

	for (size_t i = 0; i < lk->n; i++) {
		struct side *s = &lk->s[i];
		json_object *d;

		if (!l->digest || !matches(s, l->fields))
			continue;
		if (!(d = lwm2_json_parse_at(l->digest, l->end)) ||
		    lwm2_digest_validate(d, err, errlen) < 0) {
			if (!d)
				lwm2_errprintf(0, err, errlen, "the digest of job %s is unreadable",
				               s->arg);
			json_object_put(d);
			return -1;
		}
		lwm2_digest_upgrade(d);
		json_object_put(s->digest);
		s->digest = d;
		snprintf(s->what, sizeof(s->what), "job %s (%s %s %lu)", s->arg, l->path, lk->unit,
		         l->lineno);
	}
	return 0;
}

/* The job's digest from accounting, as lwm2 digest -j ID --json gives it
 * (its last run's). */
static json_object *from_accounting(const char *cmd, struct side *s)
{
	char err[256];
	json_object *d = lwm2_digest_last_run(s->arg, NULL, NULL);

	if (!d)
		return NULL;
	if (lwm2_digest_validate(d, err, sizeof(err)) < 0) {
		lwm2_log_error("%s: couldn't use the digest of job %s: %s", cmd, s->arg, err);
		json_object_put(d);
		return NULL;
	}
	lwm2_digest_upgrade(d);
	snprintf(s->what, sizeof(s->what), "job %s (accounting)", s->arg);
	return d;
}

int lwm2_operands_load(const char *cmd, struct lwm2_operand *sides, size_t nsides,
                       const struct lwm2_source *src)
{
	struct lookup lk = {sides, nsides, cmd, src->db[0] ? "row" : "line"};
	bool need = false;
	int rc = 0;

	for (size_t i = 0; i < nsides; i++) {
		struct side *s = &sides[i];
		struct stat sb;

		s->job_id = -1;
		if (stat(s->arg, &sb) == 0 ||
		    parse_jobarg(s->arg, &s->job_id, &s->array_task) < 0) {
			char err[256];
			size_t len = 0;
			char *text =
			    lwm2_cmd_slurp(s->arg, LWM2_DIGEST_TEXT_MAX, &len, err, sizeof(err));

			s->job_id = -1;
			if (!text) {
				lwm2_log_error("%s: couldn't read %s: %s", cmd, s->arg, err);
				rc = -1;
				continue;
			}
			s->digest = lwm2_digest_parse(text, len, err, sizeof(err));
			free(text);
			if (!s->digest) {
				lwm2_log_error("%s: couldn't read a digest from %s: %s", cmd,
				               s->arg, err);
				rc = -1;
				continue;
			}
			snprintf(s->what, sizeof(s->what), "%s", s->arg);
		} else {
			need = true;
		}
	}
	if (!need || rc < 0)
		return rc;
	{
		/* the database reads the jobs asked for only, where all are plain ids */
		int64_t *ids = calloc(nsides, sizeof(*ids));
		size_t n = 0;
		bool plain = ids != NULL; /* an array task is matched by its array's id */

		for (size_t i = 0; ids && i < nsides; i++)
			if (sides[i].job_id >= 0 && !sides[i].digest) {
				ids[n++] = sides[i].job_id;
				plain = plain && sides[i].array_task < 0;
			}
		if (lwm2_source_scan(
		        cmd, src,
		        plain
		            ? &(struct lwm2_db_select){.metric = -1, .job_ids = ids, .njob_ids = n}
		            : NULL,
		        true, on_line, &lk) < 0)
			rc = -1;
		free(ids);
	}
	for (size_t i = 0; i < nsides; i++) {
		struct side *s = &sides[i];

		if (s->job_id < 0 || s->digest)
			continue;
		if (!src->nfiles && !src->db[0] && (s->digest = from_accounting(cmd, s)))
			continue;
		lwm2_log_error("%s: couldn't find a digest of job %s%s", cmd, s->arg,
		               src->nfiles  ? " in the log"
		               : src->db[0] ? " in the database"
		                            : " in accounting");
		rc = -1;
	}
	return rc;
}

/* ------------------------------------------------------------ compare */

struct cmp {
	const struct diffopts *o;
	json_object *scopes; /* JSON output */
	unsigned changed;    /* metrics beyond the threshold, rules that differ */
};

static void step_name(int64_t id, char *buf, size_t len)
{
	char num[24];

	if (id < 0)
		snprintf(buf, len, "job");
	else
		snprintf(buf, len, "step %s", lwm2_step_name(id, num, sizeof(num)));
}

static void rules_fired(const struct lwm2_scope *s, bool *fired)
{
	for (size_t r = 0; r < lwm2_nguidance_rules; r++)
		fired[r] = lwm2_guidance_fires(&lwm2_guidance_rules[r], s);
}

/* A scope's heading: its JSON object (scope, step id, processes in A and
 * B), or the title line and the metrics' column heads; NULL for text. */
static json_object *scope_head(const struct cmp *c, const char *title, int64_t step_id,
                               const struct lwm2_scope *sa, const struct lwm2_scope *sb)
{
	json_object *js;

	if (!c->o->json) {
		printf("\n%s: %" PRIu64 " processes on %" PRIu64 " node(s) in A, %" PRIu64
		       " on %" PRIu64 " in B\n",
		       title, sa->processes, sa->nodes, sb->processes, sb->nodes);
		printf("  %-20s %12s %12s %12s %9s\n", "metric", "A", "B", "change", "relative");
		return NULL;
	}
	js = json_object_new_object();
	ju_add(js, "scope", json_object_new_string(title));
	if (step_id >= 0)
		ju_add(js, "step_id", json_object_new_int64(step_id));
	ju_add(js, "processes", json_object_new_array());
	json_object_array_add(ju_get(js, LWM2_KEY_PROCESSES, json_type_array),
	                      ju_u64(sa->processes));
	json_object_array_add(ju_get(js, LWM2_KEY_PROCESSES, json_type_array),
	                      ju_u64(sb->processes));
	return js;
}

/* One metric of both scopes as JSON: the averages, their change, the
 * ranges, why one is missing. */
static json_object *metric_json(int k, const struct lwm2_metric_stat *a,
                                const struct lwm2_metric_stat *b, double d, double rel, bool beyond)
{
	json_object *m = json_object_new_object();

	ju_add(m, "id", json_object_new_string(lwm2_metric_ids[k]));
	ju_add(m, "unit", json_object_new_string(lwm2_metric_units[k]));
	ju_add(m, "a", a->n ? ju_double(a->avg) : NULL);
	ju_add(m, "b", b->n ? ju_double(b->avg) : NULL);
	if (a->n && b->n)
		ju_add(m, "change", ju_double(d));
	if (!isnan(rel))
		ju_add(m, "relative_pct", ju_double(rel));
	if (a->n && b->n) {
		ju_add(m, "a_min_max", json_object_new_array());
		json_object_array_add(ju_get(m, "a_min_max", json_type_array), ju_double(a->min));
		json_object_array_add(ju_get(m, "a_min_max", json_type_array), ju_double(a->max));
		ju_add(m, "b_min_max", json_object_new_array());
		json_object_array_add(ju_get(m, "b_min_max", json_type_array), ju_double(b->min));
		json_object_array_add(ju_get(m, "b_min_max", json_type_array), ju_double(b->max));
	}
	if (!a->n && a->reason)
		ju_add(m, "a_missing", json_object_new_string(a->reason));
	if (!b->n && b->reason)
		ju_add(m, "b_missing", json_object_new_string(b->reason));
	ju_add(m, "beyond_threshold", json_object_new_boolean(beyond));
	return m;
}

/* One metric of both scopes as a line of the table. */
static void metric_line(int k, const struct lwm2_metric_stat *a, const struct lwm2_metric_stat *b,
                        double d, double rel, bool beyond)
{
	const char *unit = lwm2_metric_units[k];
	char va[32], vb[32], vd[32], rb[24];

	snprintf(va, sizeof(va), "-");
	snprintf(vb, sizeof(vb), "-");
	snprintf(vd, sizeof(vd), "-");
	snprintf(rb, sizeof(rb), "-");
	if (a->n)
		lwm2_format_value(a->avg, unit, va, sizeof(va));
	if (b->n)
		lwm2_format_value(b->avg, unit, vb, sizeof(vb));
	if (a->n && b->n) {
		lwm2_format_value(d, unit, vd, sizeof(vd));
		if (d > 0) {
			memmove(vd + 1, vd,
			        strlen(vd) + 1 < sizeof(vd) - 1 ? strlen(vd) + 1 : sizeof(vd) - 1);
			vd[0] = '+';
			vd[sizeof(vd) - 1] = '\0';
		}
		if (!isnan(rel))
			snprintf(rb, sizeof(rb), "%+.1f %%", rel);
		else if (d != 0)
			snprintf(rb, sizeof(rb), "new");
	} else {
		snprintf(rb, sizeof(rb), a->n ? "only A" : "only B");
	}
	printf("%c %-20s %12s %12s %12s %9s\n", beyond ? '!' : ' ', lwm2_metric_ids[k], va, vb, vd,
	       rb);
}

/* One metric of both scopes: its change, counted where beyond the
 * threshold (or measured in one run only), into jm or the table. */
static void compare_metric(struct cmp *c, int k, const struct lwm2_metric_stat *a,
                           const struct lwm2_metric_stat *b, json_object *jm)
{
	double d = 0, rel = NAN;
	bool beyond = false;

	if (!a->n && !b->n)
		return;
	if (a->n && b->n) {
		d = b->avg - a->avg;
		if (a->avg != 0)
			rel = 100.0 * d / fabs(a->avg);
		beyond = a->avg != 0 ? fabs(rel) > c->o->threshold : b->avg != 0;
	} else {
		beyond = true; /* measured in one run only */
	}
	c->changed += beyond;
	if (c->o->json)
		json_object_array_add(jm, metric_json(k, a, b, d, rel, beyond));
	else
		metric_line(k, a, b, d, rel, beyond);
}

/* The guidance that fired in A only, in B only, in both, as JSON into
 * the scope's object js (with its metrics jm), then js into the scopes. */
static void guidance_json(struct cmp *c, const bool *fa, const bool *fb, size_t nr, json_object *js,
                          json_object *jm)
{
	json_object *ao = json_object_new_array(), *bo = json_object_new_array(),
	            *both = json_object_new_array(), *g;

	for (size_t r = 0; r < nr; r++) {
		json_object *id = json_object_new_string(lwm2_guidance_rules[r].id);

		if (fa[r] && fb[r])
			json_object_array_add(both, id);
		else if (fa[r])
			json_object_array_add(ao, id);
		else if (fb[r])
			json_object_array_add(bo, id);
		else
			json_object_put(id);
		c->changed += fa[r] != fb[r];
	}
	g = json_object_new_object();
	ju_add(g, "a_only", ao);
	ju_add(g, "b_only", bo);
	ju_add(g, "both", both);
	ju_add(js, "metrics", jm);
	ju_add(js, "guidance", g);
	json_object_array_add(c->scopes, js);
}

/* The same, as up to three lines of text. */
static void guidance_text(struct cmp *c, const bool *fa, const bool *fb, size_t nr)
{
	static const char *const head[] = {"guidance fired in A only", "guidance fired in B only",
	                                   "guidance fired in both"};

	for (int side = 0; side < 3; side++) {
		bool any = false;

		for (size_t r = 0; r < nr; r++) {
			bool in = side == 0   ? fa[r] && !fb[r]
			          : side == 1 ? fb[r] && !fa[r]
			                      : fa[r] && fb[r];

			if (!in)
				continue;
			if (!any)
				printf("%s%s: ", side < 2 ? "! " : "  ", head[side]);
			printf("%s%s", any ? ", " : "", lwm2_guidance_rules[r].id);
			any = true;
			c->changed += side < 2;
		}
		if (any)
			putchar('\n');
	}
}

/* One scope (the job or a step) of both digests. */
static void compare_scope(struct cmp *c, const char *title, int64_t step_id, json_object *ja,
                          json_object *jb, uint32_t cpt_a, uint32_t cpt_b)
{
	struct lwm2_scope sa, sb;
	bool fa[64] = {0}, fb[64] = {0};
	json_object *js, *jm = NULL;
	size_t nr = lwm2_nguidance_rules < 64 ? lwm2_nguidance_rules : 64;

	lwm2_scope_from_json(&sa, ja, title, cpt_a);
	lwm2_scope_from_json(&sb, jb, title, cpt_b);
	rules_fired(&sa, fa);
	rules_fired(&sb, fb);
	js = scope_head(c, title, step_id, &sa, &sb);
	if (c->o->json)
		jm = json_object_new_array();
	for (int k = 0; k < LWM2_NMETRICS; k++)
		compare_metric(c, k, &sa.stat[k], &sb.stat[k], jm);
	if (c->o->json)
		guidance_json(c, fa, fb, nr, js, jm);
	else
		guidance_text(c, fa, fb, nr);
}

static void run_compare(struct cmp *c, struct side *s)
{
	json_object *a = s[0].digest, *b = s[1].digest;
	json_object *ja = ju_get(a, LWM2_KEY_JOB, json_type_object),
	            *jb = ju_get(b, LWM2_KEY_JOB, json_type_object);
	uint32_t cpa = (uint32_t)ju_int_or(ja, LWM2_KEY_CPUS_PER_TASK, 0);
	uint32_t cpb = (uint32_t)ju_int_or(jb, LWM2_KEY_CPUS_PER_TASK, 0);
	json_object *sta = ju_get(a, LWM2_KEY_STEPS, json_type_array),
	            *stb = ju_get(b, LWM2_KEY_STEPS, json_type_array);
	json_object *only_a = json_object_new_array(), *only_b = json_object_new_array();
	char name[64];

	compare_scope(c, "job", -1, ju_get(a, LWM2_KEY_SCOPE, json_type_object),
	              ju_get(b, LWM2_KEY_SCOPE, json_type_object), cpa, cpb);
	for (size_t i = 0; sta && i < json_object_array_length(sta); i++) {
		json_object *x = json_object_array_get_idx(sta, i), *y;
		int64_t id = ju_int_or(x, LWM2_KEY_STEP_ID, -1);

		step_name(id, name, sizeof(name));
		if ((y = lwm2_digest_step(b, id)))
			compare_scope(c, name, id, x, y, cpa, cpb);
		else
			json_object_array_add(only_a, json_object_new_int64(id));
	}
	for (size_t i = 0; stb && i < json_object_array_length(stb); i++) {
		int64_t id = ju_int_or(json_object_array_get_idx(stb, i), LWM2_KEY_STEP_ID, -1);

		if (!lwm2_digest_step(a, id))
			json_object_array_add(only_b, json_object_new_int64(id));
	}
	c->changed +=
	    (unsigned)(json_object_array_length(only_a) + json_object_array_length(only_b));
	if (c->o->json) {
		json_object *o = json_object_new_object();

		for (int i = 0; i < 2; i++) {
			json_object *x = json_object_new_object(),
			            *j = ju_get(s[i].digest, LWM2_KEY_JOB, json_type_object);

			ju_add(x, "source", json_object_new_string(s[i].what));
			ju_add(x, "job_id",
			       json_object_new_int64(ju_int_or(j, LWM2_KEY_JOB_ID, 0)));
			if (ju_str(j, LWM2_KEY_USER))
				ju_add(x, "user", json_object_new_string(ju_str(j, LWM2_KEY_USER)));
			ju_add(o, i ? "b" : "a", x);
		}
		ju_add(o, "threshold_pct", ju_double(c->o->threshold));
		ju_add(o, "scopes", json_object_get(c->scopes));
		ju_add(o, "steps_only_in_a", json_object_get(only_a));
		ju_add(o, "steps_only_in_b", json_object_get(only_b));
		ju_add(o, "changes", ju_u64(c->changed));
		printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	} else {
		for (int k = 0; k < 2; k++) {
			json_object *l = k ? only_b : only_a;

			for (size_t i = 0; i < json_object_array_length(l); i++) {
				step_name(json_object_get_int64(json_object_array_get_idx(l, i)),
				          name, sizeof(name));
				printf("\n! %s only in %s\n", name, k ? "B" : "A");
			}
		}
		printf("\n%u change%s beyond %g %% or in guidance ('!')\n", c->changed,
		       c->changed == 1 ? "" : "s", c->o->threshold);
	}
	json_object_put(only_a);
	json_object_put(only_b);
}

/* --output: B - A as a digest. */
static int write_difference(struct side *s, const struct diffopts *o)
{
	json_object *d[2] = {s[0].digest, s[1].digest};
	const char *what[2] = {s[0].what, s[1].what};

	return lwm2_algebra_write("diff", LWM2_ALGEBRA_DIFF, d, what, 2, &o->derived, o->output);
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore diff_store[] = {
    {'f', LWM2_OPT_PUSH(struct diff_cli, o.src.files, o.src.nfiles)},
    {OPT_DB, LWM2_OPT_ARG(struct diff_cli, o.src.db_given)},
    {OPT_JSON, LWM2_OPT_TRUE(struct diff_cli, o.json)},
    {OPT_OUTPUT, LWM2_OPT_ARG(struct diff_cli, o.output)},
    {OPT_HISTORY, LWM2_OPT_TRUE(struct diff_cli, history)},
    {0},
};

int lwm2_cmd_diff(int argc, char **argv)
{
	struct diff_cli cli = {.o = {.threshold = 10}};
	struct diffopts o;
	struct side s[2];
	struct cmp c = {.o = &o};
	int rc = 2,
	    first = lwm2_opt_parse_store(&diff_spec, diff_store, argc, argv, diff_opt, &cli);
	bool history = cli.history;

	o = cli.o;
	memset(s, 0, sizeof(s));
	if (first < 0) {
		rc = lwm2_opt_status(first);
		goto out;
	}
	if (lwm2_source_resolve("diff", &o.src, false) < 0) {
		usage(stderr);
		goto out;
	}
	if (history) {
		/* One job against its application's earlier runs. */
		if (argc - first != 1) {
			lwm2_log_error("diff: --history wants one digest or job");
			usage(stderr);
			goto out;
		}
		s[0].arg = s[1].arg = argv[first];
		if (lwm2_operands_load("diff", s, 2, &o.src) < 0)
			goto out;
		rc = lwm2_diff_history(s[0].digest, s[0].what, &o.src, o.json);
		goto out;
	}
	if (argc - first != 2) {
		lwm2_log_error("diff: want two digests, A and B");
		usage(stderr);
		goto out;
	}
	s[0].arg = argv[first];
	s[1].arg = argv[first + 1];
	if (lwm2_operands_load("diff", s, 2, &o.src) < 0)
		goto out;
	if (o.output && write_difference(s, &o) < 0)
		goto out;
	if (!o.json) {
		printf("A: %s\nB: %s\n", s[0].what, s[1].what);
		printf("Relative changes beyond %g %%, metrics of one run only and guidance of "
		       "one run only are marked '!'\n",
		       o.threshold);
	}
	c.scopes = json_object_new_array();
	run_compare(&c, s);
	json_object_put(c.scopes);
	rc = c.changed ? 1 : 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		lwm2_log_error("diff: couldn't write the output: %s", strerror(errno));
		rc = 2;
	}
out:
	json_object_put(s[0].digest);
	json_object_put(s[1].digest);
	free(o.src.files);
	lwm2_derived_free(&cli.o.derived);
	return rc;
}
