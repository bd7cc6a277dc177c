/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The option table of an lwm2 subcommand (cmd_opt.h). */
#include "cmd_opt.h"
#include "cmd_io.h"
#include "logscan.h"
#include "log.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options a command may have, --help included. */
#define LWM2_OPT_MAX 40

void lwm2_opt_usage(const struct lwm2_optspec *spec, FILE *f)
{
	const struct lwm2_opt *o;

	fputs(spec->usage, f);
	for (o = spec->opts; o->name || o->help; o++) {
		const char *h = o->help, *nl;
		int w;

		if (!h)
			continue;
		if (!o->name) {
			fprintf(f, "%s\n", h);
			continue;
		}
		if (o->key < LWM2_OPT_LONG)
			w = fprintf(f, "  -%c, --%s", o->key, o->name);
		else
			w = fprintf(f, "      --%s", o->name);
		if (o->arg)
			w += fprintf(f, "%c%s", spec->argsep ? spec->argsep : '=', o->arg);
		do {
			nl = strchr(h, '\n');
			fprintf(f, "%*s%.*s\n", w < spec->col ? spec->col - w : 1, "",
			        nl ? (int)(nl - h) : (int)strlen(h), h);
			w = 0;
			h = nl + 1;
		} while (nl);
	}
	if (spec->footer)
		fputs(spec->footer, f);
}

/* getopt_long's tables from spec's; -1 when they do not fit. */
static int tables(const struct lwm2_optspec *spec, struct option *lo, char *so)
{
	const struct lwm2_opt *o;
	size_t n = 0, k = 0;
	bool help = false;

	if (spec->in_order)
		so[k++] = '+';
	for (o = spec->opts; o->name || o->help; o++) {
		if (!o->name)
			continue;
		if (n + 2 > LWM2_OPT_MAX)
			return -1;
		lo[n++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
		                          o->key};
		help = help || o->key == 'h';
		if (o->key < LWM2_OPT_LONG && !strchr(so, o->key)) {
			so[k++] = (char)o->key;
			if (o->arg)
				so[k++] = ':';
		}
	}
	if (!help) {
		lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
		so[k++] = 'h';
	}
	lo[n] = (struct option){0};
	so[k] = '\0';
	return 0;
}

/* Option key stored by table in ctx: 0, LWM2_OPT_USAGE when it could
 * not be, or 1 when the table does not have it. */
static int store(const struct lwm2_optstore *table, void *ctx, int key, char *arg)
{
	const struct lwm2_optstore *st;
	char *at;
	int r = 0;

	for (st = table; st && st->key && st->key != key; st++)
		;
	if (!st || !st->key)
		return 1;
	at = (char *)ctx + st->off;
	if (st->how == LWM2_OPT_SET_TRUE)
		*(bool *)at = true;
	else if (st->how == LWM2_OPT_SET_ARG)
		*(char **)at = arg;
	else if (st->how == LWM2_OPT_SET_LIST)
		r = lwm2_split_list(arg, (char ***)at, (size_t *)((char *)ctx + st->count));
	else
		r = lwm2_cmd_push_arg((char ***)at, (size_t *)((char *)ctx + st->count), arg);
	return r < 0 ? LWM2_OPT_USAGE : 0;
}

/* argv[first] when there is one: "unexpected argument" on stderr and -1. */
static int no_operand(const struct lwm2_optspec *spec, int argc, char **argv, int first)
{
	if (first >= argc)
		return 0;
	lwm2_log_error("%s: unexpected argument \"%s\"", spec->cmd, argv[first]);
	return -1;
}

/* The operands from argv[first] as spec wants them: first, or
 * LWM2_OPT_USAGE having said why not. */
static int operands(const struct lwm2_optspec *spec, int argc, char **argv, int first)
{
	if (spec->need && first >= argc)
		lwm2_log_error("%s: no %s given", spec->cmd, spec->need);
	else if (!spec->no_operands || no_operand(spec, argc, argv, first) == 0)
		return first;
	if (spec->usage_on_error)
		lwm2_opt_usage(spec, stderr);
	return LWM2_OPT_USAGE;
}

int lwm2_opt_parse(const struct lwm2_optspec *spec, int argc, char **argv, lwm2_opt_fn fn,
                   void *ctx)
{
	return lwm2_opt_parse_store(spec, NULL, argc, argv, fn, ctx);
}

int lwm2_opt_parse_store(const struct lwm2_optspec *spec, const struct lwm2_optstore *table,
                         int argc, char **argv, lwm2_opt_fn fn, void *ctx)
{
	struct option lo[LWM2_OPT_MAX + 1];
	char so[3 * LWM2_OPT_MAX + 2] = "";
	int c, r;

	if (tables(spec, lo, so) < 0) {
		lwm2_log_error("%s: too many options", spec->cmd);
		return LWM2_OPT_FAIL;
	}
	optind = 0; /* glibc starts over, argv[0] being the command's name */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			lwm2_opt_usage(spec, stdout);
			return LWM2_OPT_EXIT;
		}
		if (c == '?' || c == ':') {
			if (spec->usage_on_error)
				lwm2_opt_usage(spec, stderr);
			return LWM2_OPT_USAGE;
		}
		r = store(table, ctx, c, optarg);
		if (r == 1)
			r = fn(ctx, c, optarg);
		if (r == LWM2_OPT_USAGE_HELP) {
			lwm2_opt_usage(spec, stderr);
			return LWM2_OPT_USAGE;
		}
		if (r != 0)
			return r;
	}
	return operands(spec, argc, argv, optind);
}

int lwm2_opt_error(const struct lwm2_optspec *spec, int r, const char *fmt, ...)
{
	char *text = NULL;
	va_list ap;
	int n;

	/* the whole text, however long the argument it quotes */
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n >= 0 && (text = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(text, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	lwm2_log_error("%s: %s", spec->cmd, text ? text : strerror(ENOMEM));
	free(text);
	return r;
}

int lwm2_opt_status(int r)
{
	return r == LWM2_OPT_EXIT ? 0 : r == LWM2_OPT_FAIL ? 1 : 2;
}
