/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 mean A B C...` and `lwm2 combine A B...`: digests made of others
 * (CUBE's mean and merge; the difference is `lwm2 diff --output`), each
 * written as one line of a JSON-lines log, so that `lwm2 digest --file`,
 * `lwm2 report` and `lwm2 ranks` read it as they read jobcomp/lwm2's log.
 * `lwm2 merge` is the merge of rank records into a node record: the
 * merge of experiments is named combine.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_opt.h"
#include "jsonutil.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "lwm2_keys.h"
#include "lwm2conf.h"

int lwm2_cmd_derived_conf(const char *cmd, struct lwm2_derived_set *s)
{
	struct lwm2_conf c;
	char err[300], *path = lwm2_conf_path(getenv("SLURM_CONF"));
	int rc;

	if (!path) {
		lwm2_log_error("%s: out of memory", cmd);
		return -1;
	}
	/* a site that keeps lwm2.conf from its users keeps its derived metrics
	 * too: lwm2 digest must work as before for them */
	if (access(path, R_OK) < 0 && errno == EACCES) {
		free(path);
		return 0;
	}
	/* only DerivedMetric checked: a newer lwm2's keys are passed over */
	rc = lwm2_conf_load(&c, path, 1ull << LWM2_CONF_DerivedMetric | LWM2_CONF_LENIENT, err,
	                    sizeof(err));
	if (rc < 0) {
		lwm2_log_error("%s: %s", cmd, err);
		free(path);
		return -1;
	}
	rc = lwm2_derived_add_lines(s, c.v[LWM2_CONF_DerivedMetric].text, err, sizeof(err));
	if (rc < 0)
		lwm2_log_error("%s: %s: DerivedMetric: %s", cmd, path, err);
	lwm2_conf_free(&c);
	free(path);
	return rc;
}

/* The log line of d: the job's fields as jobcomp/lwm2 writes them beside
 * its digest, which the readers of a log select by. */
static json_object *log_line(json_object *d)
{
	static const char *const copied[] = {
	    LWM2_KEY_CLUSTER,   LWM2_KEY_JOB_ID, LWM2_KEY_USER,       LWM2_KEY_ACCOUNT,
	    LWM2_KEY_PARTITION, LWM2_KEY_NODES,  LWM2_KEY_NODE_COUNT, LWM2_KEY_START,
	    LWM2_KEY_END,       LWM2_KEY_STATE};
	json_object *job = ju_get(d, LWM2_KEY_JOB, json_type_object), *l = json_object_new_object(),
	            *v;

	for (size_t i = 0; i < sizeof(copied) / sizeof(copied[0]); i++)
		if (json_object_object_get_ex(job, copied[i], &v) && v)
			ju_add(l, copied[i], json_object_get(v));
	ju_add(l, "status", json_object_new_string("ok"));
	ju_add(l, "digest", json_object_get(d));
	return l;
}

int lwm2_algebra_write(const char *cmd, enum lwm2_algebra_op op, json_object *const *d,
                       const char *const *what, size_t n, const struct lwm2_derived_set *derived,
                       const char *path)
{
	char err[256];
	json_object *r = lwm2_digest_algebra(op, d, what, n, err, sizeof(err)), *line;
	bool to_stdout = !strcmp(path, "-");
	FILE *f;
	int rc = 0;

	if (!r) {
		lwm2_log_error("%s: %s", cmd, err);
		return -1;
	}
	lwm2_derived_apply(derived, r);
	line = log_line(r);
	if (!(f = to_stdout ? stdout : fopen(path, "we"))) {
		lwm2_log_error("%s: couldn't write %s: %s", cmd, path, strerror(errno));
		rc = -1;
	} else if (fprintf(f, "%s\n",
	                   json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN)) < 0 ||
	           fflush(f) != 0 || ferror(f) || (!to_stdout && fclose(f) != 0)) {
		lwm2_log_error("%s: couldn't write %s: %s", cmd, path, strerror(errno));
		rc = -1;
	}
	json_object_put(line);
	json_object_put(r);
	return rc;
}

enum { OPT_DB = LWM2_OPT_LONG, OPT_METRIC };

struct algebra_cli {
	struct lwm2_source src;
	const char *output;
	struct lwm2_derived_set derived;
	struct lwm2_history_sel hist; /* the operands: runs of an application */
};

/* At most this many operands (the last runs of a history selection). */
#define ALGEBRA_OPERANDS_MAX 16

static const struct lwm2_opt algebra_opts[] = {
    {"file", 'f', "LOG", "look job ids up in this JSON-lines log (several allowed)"},
    {"db", OPT_DB, "DATABASE", "look job ids up in the central database (lwm2 db)"},
    {"output", 'o', "FILE", "write the digest to FILE (default: stdout)"},
    {"metric", OPT_METRIC, "NAME=EXPR", "a derived metric (several allowed)"},
    {NULL, 0, NULL, "Operands from the runs of an application, as lwm2 history selects them:"},
    {"app", 'a', "NAME", "the runs of this executable (basename): the last 16"},
    {"build-id", 'b', "ID", "  of this build (a prefix of the build-id)"},
    {"user", 'u', "USER[,...]", "  of these users"},
    {"starttime", 'S', "TIME", "  that ended at or after TIME"},
    {"endtime", 'E', "TIME", "  that ended at or before TIME"},
    {0},
};

static const struct lwm2_optspec mean_spec = {
    .cmd = "mean",
    .usage = "Usage: lwm2 mean [OPTIONS] A B [C...]\n"
             "The mean of two or more digests, as a digest: every metric of the job and of\n"
             "the steps they all have, averaged; process by process where their ranks line\n"
             "up.  Operands: digest files or job ids, as lwm2 diff takes them, or the\n"
             "runs of an application (--app).\n\n",
    .footer = "Exit status: 0, 1 when an operand cannot be read, 2 usage.\n",
    .col = 24,
    .usage_on_error = true,
    .opts = algebra_opts};

static const struct lwm2_optspec combine_spec = {
    .cmd = "combine",
    .usage = "Usage: lwm2 combine [OPTIONS] A B [C...]\n"
             "Runs that measured different things merged into one digest: each metric\n"
             "from the first operand that has it, every step of any.  Operands: digest\n"
             "files or job ids, as lwm2 diff takes them, or the runs of an application\n"
             "(--app).\n\n",
    .footer = "Exit status: 0, 1 when an operand cannot be read, 2 usage.\n",
    .col = 24,
    .usage_on_error = true,
    .opts = algebra_opts};

static const struct lwm2_optstore algebra_store[] = {
    {'f', LWM2_OPT_PUSH(struct algebra_cli, src.files, src.nfiles)},
    {OPT_DB, LWM2_OPT_ARG(struct algebra_cli, src.db_given)},
    {'o', LWM2_OPT_ARG(struct algebra_cli, output)},
    {'a', LWM2_OPT_ARG(struct algebra_cli, hist.app)},
    {'b', LWM2_OPT_ARG(struct algebra_cli, hist.build)},
    {0},
};

static const struct lwm2_optspec *cur_spec;

/* --metric, --user, -S and -E; the others are in algebra_store */
static int algebra_opt(void *ctx, int key, char *arg)
{
	struct algebra_cli *cli = ctx;
	char err[300];

	switch (key) {
	case 'u':
		if (lwm2_split_list(arg, &cli->hist.users, &cli->hist.nusers) < 0)
			return lwm2_opt_error(cur_spec, LWM2_OPT_FAIL, "out of memory");
		return 0;
	case 'S':
	case 'E':
		if (lwm2_parse_time(arg, key == 'S' ? &cli->hist.start : &cli->hist.end) < 0)
			return lwm2_opt_error(cur_spec, LWM2_OPT_USAGE_HELP,
			                      "couldn't parse the time \"%s\"", arg);
		return 0;
	default:
		return lwm2_derived_add(&cli->derived, arg, err, sizeof(err)) < 0
		           ? lwm2_opt_error(cur_spec, LWM2_OPT_USAGE, "%s", err)
		           : 0;
	}
}

/* The operands of a history selection: the job ids of its last runs, as
 * text in ids (ALGEBRA_OPERANDS_MAX of 24 bytes), the count in *n. */
static int history_operands(const char *cmd, struct algebra_cli *cli, char (*ids)[24], size_t *n)
{
	uint32_t *runs = NULL;
	size_t nruns = 0, from;

	if (!cli->src.nfiles && !cli->src.db[0]) {
		lwm2_log_error("%s: --app reads the runs from --file LOG or --db (or lwm2.conf's "
		               "Database=)",
		               cmd);
		return -1;
	}
	if (lwm2_history_job_ids(cmd, &cli->src, &cli->hist, &runs, &nruns) < 0)
		return -1;
	if (nruns < 2) {
		lwm2_log_error("%s: %zu run(s) of %s in the selection; want at least 2", cmd, nruns,
		               cli->hist.app);
		free(runs);
		return -1;
	}
	from = nruns > ALGEBRA_OPERANDS_MAX ? nruns - ALGEBRA_OPERANDS_MAX : 0;
	if (from)
		fprintf(stderr, "lwm2: %s: the last %d of the %zu runs of %s\n", cmd,
		        ALGEBRA_OPERANDS_MAX, nruns, cli->hist.app);
	for (*n = 0; from < nruns; from++)
		snprintf(ids[(*n)++], sizeof(ids[0]), "%" PRIu32, runs[from]);
	free(runs);
	return 0;
}

static int run_algebra(const struct lwm2_optspec *spec, enum lwm2_algebra_op op, int argc,
                       char **argv)
{
	struct algebra_cli cli = {.output = "-"};
	struct lwm2_operand *ops = NULL;
	json_object **d = NULL;
	const char **what = NULL;
	char hist_ids[ALGEBRA_OPERANDS_MAX][24];
	size_t n = 0;
	int rc = 2, first;

	cur_spec = spec;
	first = lwm2_opt_parse_store(spec, algebra_store, argc, argv, algebra_opt, &cli);
	if (first < 0) {
		rc = lwm2_opt_status(first);
		goto out;
	}
	n = (size_t)(argc - first);
	if (cli.hist.app ? n != 0 : n < 2 || n > ALGEBRA_OPERANDS_MAX) {
		lwm2_log_error(cli.hist.app ? "%s: operands or --app, not both"
		                            : "%s: want 2 to 16 digests",
		               spec->cmd);
		lwm2_opt_usage(spec, stderr);
		goto out;
	}
	if (!cli.hist.app &&
	    (cli.hist.build || cli.hist.nusers || cli.hist.start || cli.hist.end)) {
		lwm2_log_error("%s: --build-id, --user, -S and -E select runs of --app", spec->cmd);
		lwm2_opt_usage(spec, stderr);
		goto out;
	}
	if (lwm2_source_resolve(spec->cmd, &cli.src, cli.hist.app != NULL) < 0) {
		lwm2_opt_usage(spec, stderr);
		goto out;
	}
	rc = 1;
	if (cli.hist.app && history_operands(spec->cmd, &cli, hist_ids, &n) < 0)
		goto out;
	ops = calloc(n, sizeof(*ops));
	d = calloc(n, sizeof(*d));
	what = calloc(n, sizeof(*what));
	if (!ops || !d || !what) {
		lwm2_log_error("%s: out of memory", spec->cmd);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ops[i].arg = cli.hist.app ? hist_ids[i] : argv[first + (int)i];
	if (lwm2_cmd_derived_conf(spec->cmd, &cli.derived) < 0 ||
	    lwm2_operands_load(spec->cmd, ops, n, &cli.src) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		d[i] = ops[i].digest;
		what[i] = ops[i].what;
	}
	rc = lwm2_algebra_write(spec->cmd, op, d, what, n, &cli.derived, cli.output) < 0 ? 1 : 0;
out:
	for (size_t i = 0; ops && i < n; i++)
		json_object_put(ops[i].digest);
	free(ops);
	free(d);
	free(what);
	free(cli.src.files);
	for (size_t i = 0; i < cli.hist.nusers; i++)
		free(cli.hist.users[i]);
	free(cli.hist.users);
	lwm2_derived_free(&cli.derived);
	return rc;
}

int lwm2_cmd_mean(int argc, char **argv)
{
	return run_algebra(&mean_spec, LWM2_ALGEBRA_MEAN, argc, argv);
}

int lwm2_cmd_combine(int argc, char **argv)
{
	return run_algebra(&combine_spec, LWM2_ALGEBRA_MERGE, argc, argv);
}
