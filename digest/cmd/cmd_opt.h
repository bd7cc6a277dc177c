/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The options of an lwm2 subcommand as one table: getopt_long's long and
 * short options and the --help text are both made from it (flux-core's
 * optparse is the model).  -h/--help is every command's own.
 */
#ifndef LWM2_CMD_OPT_H
#define LWM2_CMD_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Keys of options without a short letter start here. */
#define LWM2_OPT_LONG 256

struct lwm2_opt {
	const char *name; /* long name; NULL: a heading line (help), or the end */
	int key;          /* the short letter, or LWM2_OPT_LONG and up */
	const char *arg;  /* the argument's name in the help; NULL: none */
	const char *help; /* help lines ('\n' between them); NULL: not listed */
};

/* What lwm2_opt_parse_store does itself with an option, the callback not
 * called: how, and where in the callback's context (offsetof). */
enum {
	LWM2_OPT_SET_TRUE = 1, /* a bool made true */
	LWM2_OPT_SET_ARG,      /* a char * set to the argument */
	LWM2_OPT_SET_LIST,     /* char ** and size_t: the argument's items added */
	LWM2_OPT_SET_PUSH,     /* char ** and size_t: the argument added */
};

struct lwm2_optstore {
	int key;      /* the option's key; 0 ends the table */
	int how;      /* LWM2_OPT_SET_... */
	size_t off;   /* the member's offset in the context */
	size_t count; /* a list's: its length's */
};

/* An optstore entry after its key: the option sets member field of T
 * (the context's type), as in {'p', LWM2_OPT_TRUE(struct cli, pretty)};
 * a list that cannot grow is a usage error (LWM2_OPT_USAGE). */
#define LWM2_OPT_TRUE(T, field) LWM2_OPT_SET_TRUE, offsetof(T, field), 0
#define LWM2_OPT_ARG(T, field)  LWM2_OPT_SET_ARG, offsetof(T, field), 0
/* a comma-separated list (lwm2_split_list), or each argument */
#define LWM2_OPT_LIST(T, list, n) LWM2_OPT_SET_LIST, offsetof(T, list), offsetof(T, n)
#define LWM2_OPT_PUSH(T, list, n) LWM2_OPT_SET_PUSH, offsetof(T, list), offsetof(T, n)

struct lwm2_optspec {
	const char *cmd;             /* "digest": messages say "lwm2: digest: ..." */
	const char *usage;           /* the help's text before the options */
	const char *footer;          /* and after them (or NULL) */
	int col;                     /* the column the options' help starts at */
	char argsep;                 /* between a long name and its argument: '=' or ' ' */
	bool in_order;               /* options end at the first operand ("+") */
	bool usage_on_error;         /* an unknown option prints the help on stderr */
	const struct lwm2_opt *opts; /* ends with {0} */
	const char *need;            /* operands wanted: "lwm2: CMD: no NEED given" else */
	bool no_operands;            /* an operand is an "unexpected argument" */
};

/* The forms of a TIME argument, for the help's footer: lwm2_parse_time's,
 * and with lwm2_cmd_time_opt (slurmutil.h) sacct's too. */
#define LWM2_OPT_TIME_HELP "TIME: now, now-N[s|m|h|d], YYYY-MM-DD[THH:MM[:SS]], @EPOCH"
#define LWM2_OPT_SACCT_TIME_HELP                                                                   \
	LWM2_OPT_TIME_HELP ", or as sacct\n"                                                       \
	                   "      takes it (MM/DD[/YY], HH:MM, today, now-3days, ...).\n"

/* What lwm2_opt_parse and the callback return besides an index:
 * stop with exit status 0 (help printed), 2 (usage) or 1 (failure). */
enum { LWM2_OPT_EXIT = -1, LWM2_OPT_USAGE = -2, LWM2_OPT_FAIL = -3 };

/* What the callback returns for a usage error after which the help is
 * printed on stderr (lwm2_opt_parse does it, then returns LWM2_OPT_USAGE). */
#define LWM2_OPT_USAGE_HELP (-4)

/* One option: 0 to go on, or one of LWM2_OPT_EXIT/USAGE/FAIL. */
typedef int (*lwm2_opt_fn)(void *ctx, int key, char *arg);

/* The options of argv by spec's table, fn called for each but --help: the
 * index of the first operand, or what fn (or an unknown option, operands
 * missing or not wanted: LWM2_OPT_USAGE) said. */
int lwm2_opt_parse(const struct lwm2_optspec *spec, int argc, char **argv, lwm2_opt_fn fn,
                   void *ctx);

/* The same, the options of store (ending with {0}) stored in ctx without
 * fn, which may be NULL where that is all of them. */
int lwm2_opt_parse_store(const struct lwm2_optspec *spec, const struct lwm2_optstore *store,
                         int argc, char **argv, lwm2_opt_fn fn, void *ctx);

/* "lwm2: CMD: " and the message by fmt on stderr: r, for the callback
 * to return. */
int lwm2_opt_error(const struct lwm2_optspec *spec, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The exit status of a negative result of lwm2_opt_parse. */
int lwm2_opt_status(int r);

/* The help text: usage, the table's listed options, footer. */
void lwm2_opt_usage(const struct lwm2_optspec *spec, FILE *f);

#endif /* LWM2_CMD_OPT_H */
