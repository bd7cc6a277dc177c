/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 grid` and `lwm2 nodes`: the space-time grid of jobcomp/lwm2's
 * JSON-lines log for a period, the interference findings of its jobs, and
 * the nodes that stand out across them (the rules are in grid.c, shared
 * with jobcomp/lwm2's worker).  The log is read with the same streaming
 * scanner as `lwm2 stats` and `lwm2 report`; each digest is parsed once,
 * its slices go into the index and the digest is dropped.
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
#include <time.h>

#include "cmd_io.h"
#include "grid.h"
#include "jsonutil.h"
#include "logscan.h"
#include "cmd_opt.h"
#include "db.h"
#include "lwm2_cmds.h"
#include "lwm2_digest.h"
#include "numparse.h"
#include "slurmutil.h"
#include "log.h"
#include "errmsg.h"

enum gmetric { G_WRITE, G_WRITE_BW, G_READ, G_READ_BW, G_MPI, G_MPI_RATE, G_MPI_SHARE, NG };
static const char *const g_name[NG] = {"write", "write_bw", "read",     "read_bw",
                                       "mpi",   "mpi_rate", "mpi_share"};

struct gctx {
	const char *cmd;
	int64_t start, end; /* 0: open */
	struct lwm2_grid g;
	struct lwm2_nodes *nodes; /* `lwm2 nodes` */
	int64_t *order;           /* job ids in log order */
	size_t norder, caporder;
	int rc;
};

static bool in_period(const struct gctx *x, int64_t s, int64_t e)
{
	return !(x->start && e < x->start) && !(x->end && s > x->end);
}

static int on_line(void *arg, const struct lwm2_logline *l, char *err, size_t errlen)
{
	struct gctx *x = arg;
	json_object *d, *job;
	int64_t s, e;

	if (!l->digest)
		return 0;
	s = ju_int_or(l->fields, "start", 0);
	e = ju_int_or(l->fields, "end", 0);
	if ((s || e) && !in_period(x, s, e))
		return 0;
	if (!(d = lwm2_logline_digest(l, err, errlen)))
		return -1;
	job = ju_get(d, LWM2_KEY_JOB, json_type_object);
	if (!in_period(x, ju_int_or(job, LWM2_KEY_START, 0), ju_int_or(job, LWM2_KEY_END, 0))) {
		json_object_put(d);
		return 0;
	}
	if (x->nodes ? lwm2_nodes_add(x->nodes, d) != 0 : lwm2_grid_add(&x->g, d) != 0) {
		lwm2_log_error("%s: couldn't index the log: %s", x->cmd, strerror(errno));
		json_object_put(d);
		x->rc = 1;
		return 1;
	}
	if (!x->nodes) {
		if (x->norder == x->caporder) {
			size_t nc = x->caporder ? 2 * x->caporder : 256;
			int64_t *no = realloc(x->order, nc * sizeof(*no));
			if (!no) {
				json_object_put(d);
				x->rc = 1;
				return 1;
			}
			x->order = no;
			x->caporder = nc;
		}
		x->order[x->norder++] = ju_int_or(job, LWM2_KEY_JOB_ID, 0);
	}
	json_object_put(d);
	return 0;
}

static void put_time(FILE *f, int64_t t)
{
	char b[40];
	time_t tt = (time_t)t;
	struct tm tm;

	if (localtime_r(&tt, &tm) && strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%S", &tm))
		fputs(b, f);
	else
		fprintf(f, "@%" PRId64, t);
}

static double gvalue(const struct lwm2_gcell *c, int m)
{
	const float *v = c->v;

	switch (m) {
	case G_WRITE:
		return v[LWM2_GM_WBYTES];
	case G_WRITE_BW:
		return v[LWM2_GM_WNS] > 0 ? v[LWM2_GM_WBYTES] / (v[LWM2_GM_WNS] / 1e9) : NAN;
	case G_READ:
		return v[LWM2_GM_RBYTES];
	case G_READ_BW:
		return v[LWM2_GM_RNS] > 0 ? v[LWM2_GM_RBYTES] / (v[LWM2_GM_RNS] / 1e9) : NAN;
	case G_MPI:
		return v[LWM2_GM_MBYTES];
	case G_MPI_RATE:
		return v[LWM2_GM_MNS] > 0 ? v[LWM2_GM_MBYTES] / (v[LWM2_GM_MNS] / 1e9) : NAN;
	default:
		return v[LWM2_GM_PROCS] > 0 ? lwm2_slice_mpi_share(v[LWM2_GM_MALLNS],
		                                                   (double)c->len, v[LWM2_GM_PROCS])
		                            : NAN;
	}
}

static const struct lwm2_grid *sort_grid;

static int cmp_cell(const void *a, const void *b)
{
	const struct lwm2_gcell *x = *(const struct lwm2_gcell *const *)a;
	const struct lwm2_gcell *y = *(const struct lwm2_gcell *const *)b;
	const char *nx = x->node == LWM2_GRID_ALLNODES ? "*" : sort_grid->nodes[x->node];
	const char *ny = y->node == LWM2_GRID_ALLNODES ? "*" : sort_grid->nodes[y->node];
	int c;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if ((c = strcmp(nx, ny)))
		return c;
	if (x->job != y->job)
		return x->job < y->job ? -1 : 1;
	return (x->step > y->step) - (x->step < y->step);
}

static const char *fmt_num(double v, char *b, size_t len)
{
	if (isnan(v))
		snprintf(b, len, "-");
	else
		snprintf(b, len, "%.4g", v);
	return b;
}

static int print_grid(struct gctx *x, const char *node, int metric, bool json)
{
	const struct lwm2_grid *g = &x->g;
	const struct lwm2_gcell **sel = malloc((g->ncells ? g->ncells : 1) * sizeof(*sel));
	size_t n = 0;

	if (!sel) {
		lwm2_log_error("grid: %s", strerror(ENOMEM));
		return 1;
	}
	for (size_t i = 0; i < g->ncells; i++) {
		const struct lwm2_gcell *c = &g->cells[i];
		const char *nn = c->node == LWM2_GRID_ALLNODES ? "*" : g->nodes[c->node];
		if (node && strcmp(nn, node))
			continue;
		if ((x->start && c->t + c->len <= x->start) || (x->end && c->t > x->end))
			continue;
		sel[n++] = c;
	}
	sort_grid = g;
	qsort(sel, n, sizeof(*sel), cmp_cell);
	if (json)
		fputs("{\"cells\":[", stdout);
	else {
		printf("%-19s %-10s %4s %10s %10s", "slice", "node", "len", "job", "step");
		for (int m = 0; m < NG; m++)
			if (metric < 0 || m == metric)
				printf(" %10s", g_name[m]);
		putchar('\n');
	}
	for (size_t i = 0; i < n; i++) {
		const struct lwm2_gcell *c = sel[i];
		const char *nn = c->node == LWM2_GRID_ALLNODES ? "*" : g->nodes[c->node];
		if (json) {
			printf("%s{\"t\":%" PRId64 ",\"len\":%" PRIu32 ",\"node\":", i ? "," : "",
			       c->t, c->len);
			json_object *js = json_object_new_string(nn);
			fputs(js ? json_object_to_json_string_ext(js, 0) : "null", stdout);
			json_object_put(js);
			printf(",\"job\":%" PRId64 ",\"step\":%" PRIu32, g->jobs[c->job].id,
			       c->step);
			for (int m = 0; m < NG; m++) {
				double v = gvalue(c, m);
				char num[32];
				if ((metric < 0 || m == metric) && !isnan(v))
					printf(",\"%s\":%s", g_name[m],
					       ju_double_text(v, num, sizeof(num)));
			}
			putchar('}');
			continue;
		}
		put_time(stdout, c->t);
		printf(" %-10s %4" PRIu32 " %10" PRId64 " %10" PRIu32, nn, c->len,
		       g->jobs[c->job].id, c->step);
		for (int m = 0; m < NG; m++)
			if (metric < 0 || m == metric) {
				char b[32];
				printf(" %10s", fmt_num(gvalue(c, m), b, sizeof(b)));
			}
		putchar('\n');
	}
	if (json)
		fputs("]}\n", stdout);
	free(sel);
	return 0;
}

static int print_interference(struct gctx *x, int64_t only, bool json)
{
	json_object *all = json ? json_object_new_array() : NULL;
	size_t found = 0;
	int rc = 0;

	for (size_t i = 0; i < x->norder; i++) {
		json_object *f;
		if (only && x->order[i] != only)
			continue;
		if (lwm2_grid_find(&x->g, x->order[i]) < 0)
			continue;
		if (!(f = lwm2_grid_interference(&x->g, x->order[i], NULL))) {
			lwm2_log_error("grid: %s", strerror(errno));
			rc = 1;
			break;
		}
		for (size_t k = 0; k < json_object_array_length(f); k++) {
			json_object *e = json_object_array_get_idx(f, k);
			found++;
			if (json) {
				json_object *o = json_object_new_object();
				ju_add(o, "job", json_object_new_int64(x->order[i]));
				ju_add(o, "finding", json_object_get(e));
				json_object_array_add(all, o);
			} else {
				const char *t = ju_str(e, LWM2_KEY_TEXT),
				           *r = ju_str(e, LWM2_KEY_RULE);
				printf("job %" PRId64 ": %s [%s]\n", x->order[i], t ? t : "",
				       r ? r : "");
			}
		}
		json_object_put(f);
	}
	if (json) {
		puts(json_object_to_json_string_ext(all, JSON_C_TO_STRING_PLAIN));
		json_object_put(all);
	} else if (!found && !rc) {
		printf("No interference found (%zu jobs).\n", x->norder);
	}
	return rc;
}

enum { OPT_JSON = LWM2_OPT_LONG, OPT_NODE, OPT_METRIC, OPT_INTERF, OPT_ALL, OPT_DB };

/* The command line as read. */
struct grid_cli {
	struct gctx *x;
	const struct lwm2_optspec *spec;
	const char *node;
	struct lwm2_source src;
	bool isnodes, json, interf, all;
	int metric;
	int64_t only;
};

/* lwm2 grid and lwm2 nodes take the same options. */
static const struct lwm2_opt grid_opts[] = {
    {"file", 'f', "LOG", NULL},
    {"db", OPT_DB, "DATABASE", NULL},
    {"starttime", 'S', "START", NULL},
    {"endtime", 'E', "END", NULL},
    {"jobs", 'j', "JOB", NULL},
    {"node", OPT_NODE, "NODE", NULL},
    {"metric", OPT_METRIC, "M", NULL},
    {"interference", OPT_INTERF, NULL, NULL},
    {"all", OPT_ALL, NULL, NULL},
    {"json", OPT_JSON, NULL, NULL},
    {0},
};

static const struct lwm2_optspec grid_spec = {
    .cmd = "grid",
    .usage = "usage: lwm2 grid SOURCE [-S START] [-E END] [--node NODE] [--metric M]\n"
             "                 [--json]\n"
             "       lwm2 grid SOURCE [-S START] [-E END] --interference [-j JOB] "
             "[--json]\n"
             "  Cells (node, slice) of the jobs that ran in the period, one line per job\n"
             "  step in a cell; M: write, write_bw, read, read_bw, mpi, mpi_rate,\n"
             "  mpi_share.  --interference: the interference findings of the jobs.\n"
             "  SOURCE: --file LOG (repeatable) or --db DATABASE (default: lwm2.conf's\n"
             "  Database=).\n",
    .opts = grid_opts,
    .no_operands = true,
};

static const struct lwm2_optspec nodes_spec = {
    .cmd = "nodes",
    .usage = "usage: lwm2 nodes SOURCE [-S START] [-E END] [--all] [--json]\n"
             "  Nodes whose ranks were the slowest of their multi-node jobs more often than\n"
             "  chance allows, with the jobs as evidence; --all lists every node.\n"
             "  SOURCE: --file LOG (repeatable) or --db DATABASE (default: lwm2.conf's\n"
             "  Database=).\n",
    .opts = grid_opts,
    .no_operands = true,
};

/* -S, -E, -j and --metric; the others are in grid_store */
static int grid_opt(void *ctx, int key, char *arg)
{
	struct grid_cli *cli = ctx;
	const char *cmd = cli->spec->cmd;

	switch (key) {
	case 'S':
	case 'E':
		return lwm2_cmd_time_opt(cmd, arg, key == 'S' ? &cli->x->start : &cli->x->end) < 0
		           ? LWM2_OPT_USAGE
		           : 0;
	case 'j':
		if (cli->isnodes || lwm2_parse_i64(arg, NULL, 1, INT64_MAX, &cli->only) < 0)
			return lwm2_opt_error(cli->spec, LWM2_OPT_USAGE, "couldn't take -j \"%s\"",
			                      arg);
		return 0;
	default: /* --metric */
		for (cli->metric = 0; cli->metric < NG && strcmp(arg, g_name[cli->metric]);
		     cli->metric++)
			;
		if (cli->metric == NG)
			return lwm2_opt_error(cli->spec, LWM2_OPT_USAGE,
			                      "couldn't show metric \"%s\": want write, write_bw, "
			                      "read, read_bw, mpi, mpi_rate or mpi_share",
			                      arg);
		return 0;
	}
}

/* lwm2 nodes: the nodes that stand out and their evidence, as text. */
static void print_nodes_text(json_object *r)
{
	json_object *arr = ju_get(r, "nodes", json_type_array);
	size_t n = arr ? json_object_array_length(arr) : 0, out = 0;

	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i), *ev;
		bool so = json_object_get_boolean(ju_get(e, "stands_out", json_type_boolean));
		const char *why = ju_str(e, "why");

		printf("%s %s\n", so ? "STANDS OUT" : "ok        ", why ? why : "");
		out += so;
		ev = ju_get(e, "evidence", json_type_array);
		for (size_t k = 0; so && ev && k < json_object_array_length(ev); k++) {
			json_object *v = json_object_array_get_idx(ev, k);

			if (!json_object_get_boolean(ju_get(v, "slowest", json_type_boolean)))
				continue;
			printf("    job %" PRId64 ": rank %" PRId64
			       ", %s; compute time %.2fx the median node's\n",
			       ju_int_or(v, "job", 0), ju_int_or(v, "rank", -1),
			       ju_str(v, "how") ? ju_str(v, "how") : "",
			       json_object_get_double(ju_get(v, "ratio", json_type_double)));
		}
	}
	if (!out)
		printf("No node stands out (%" PRId64 " multi-node jobs).\n",
		       ju_int_or(r, "jobs", 0));
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore grid_store[] = {
    {'f', LWM2_OPT_PUSH(struct grid_cli, src.files, src.nfiles)},
    {OPT_DB, LWM2_OPT_ARG(struct grid_cli, src.db_given)},
    {OPT_NODE, LWM2_OPT_ARG(struct grid_cli, node)},
    {OPT_INTERF, LWM2_OPT_TRUE(struct grid_cli, interf)},
    {OPT_ALL, LWM2_OPT_TRUE(struct grid_cli, all)},
    {OPT_JSON, LWM2_OPT_TRUE(struct grid_cli, json)},
    {0},
};

static int run(const char *cmd, int argc, char **argv)
{
	bool isnodes = !strcmp(cmd, "nodes");
	const struct lwm2_optspec *spec = isnodes ? &nodes_spec : &grid_spec;
	struct gctx x = {.cmd = cmd};
	struct grid_cli cli = {.x = &x, .spec = spec, .isnodes = isnodes, .metric = -1};
	int rc = 0, first = lwm2_opt_parse_store(spec, grid_store, argc, argv, grid_opt, &cli);

	if (first == LWM2_OPT_EXIT)
		goto done;
	if (first < 0)
		goto usage_err;
	if (lwm2_source_resolve(cmd, &cli.src, true) < 0)
		goto usage_err;
	if (!cli.src.nfiles && !cli.src.db[0]) {
		lwm2_log_error("%s: couldn't read digests: no --file LOG given (jobcomp/lwm2's "
		               "JSON-lines log), no --db and no Database= in lwm2.conf",
		               cmd);
		goto usage_err;
	}
	if (isnodes ? (cli.node || cli.metric >= 0 || cli.interf)
	            : (cli.all || (cli.interf && (cli.node || cli.metric >= 0)) ||
	               (cli.only && !cli.interf))) {
		lwm2_log_error("%s: options that do not go together; see --help", cmd);
		goto usage_err;
	}
	if (x.start && x.end && x.start > x.end) {
		lwm2_log_error("%s: the start is after the end", cmd);
		goto usage_err;
	}
	if (isnodes && !(x.nodes = lwm2_nodes_new(NULL))) {
		lwm2_log_error("%s: %s", cmd, strerror(ENOMEM));
		rc = 1;
		goto done;
	}
	/* the jobs that ran in the period: those that ended after its start
	 * (the command keeps those that started before its end) */
	if (lwm2_source_scan(cmd, &cli.src,
	                     &(struct lwm2_db_select){.start = x.start, .metric = -1}, true,
	                     on_line, &x) < 0)
		rc = 1;
	if (x.rc) {
		rc = 1;
	} else if (isnodes) {
		json_object *r = lwm2_nodes_result(x.nodes, cli.all);

		if (!r) {
			lwm2_log_error("nodes: %s", strerror(ENOMEM));
			rc = 1;
		} else if (cli.json) {
			puts(json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN));
		} else {
			print_nodes_text(r);
		}
		json_object_put(r);
	} else if (cli.interf) {
		rc |= print_interference(&x, cli.only, cli.json);
	} else {
		rc |= print_grid(&x, cli.node, cli.metric, cli.json);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		lwm2_log_error("%s: couldn't write the output: %s", cmd, strerror(errno));
		rc = 1;
	}
	goto done;
usage_err:
	lwm2_opt_usage(spec, stderr);
	rc = 2;
done:
	lwm2_grid_free(&x.g);
	lwm2_nodes_free(x.nodes);
	free(x.order);
	free(cli.src.files);
	return rc;
}

int lwm2_cmd_grid(int argc, char **argv)
{
	return run("grid", argc, argv);
}

int lwm2_cmd_nodes(int argc, char **argv)
{
	return run("nodes", argc, argv);
}
