/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 config`: lwm2.conf as lwm2 reads it (lwm2conf.h), for the site and
 * for lwm2-mail, which asks for its keys here instead of reading the file
 * itself: one key's effective value, every key's, or the table of keys.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_opt.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "lwm2conf.h"

enum { OPT_GET = LWM2_OPT_LONG, OPT_FILE, OPT_KEYS };

static const struct lwm2_optspec config_spec = {
    .cmd = "config",
    .usage = "Usage: lwm2 config [--get KEY] [--file PATH]\n"
             "       lwm2 config --keys\n"
             "lwm2.conf's settings as jobcomp/lwm2, lwm2-mail and the lwm2 command read\n"
             "them: every key's effective value as \"Key = value\" lines (a key whose\n"
             "default its part works out itself as a comment), or one key's value alone.\n"
             "Every value is checked; with --get only KEY's, as its part does.\n\n",
    .footer = "lwm2.conf: --file, else $LWM2_CONF, else lwm2.conf beside $SLURM_CONF, else\n"
              "/etc/slurm/lwm2.conf; a missing file means the defaults.  Exit status: 0, 1\n"
              "when the file cannot be read or has an unknown key or a bad value, 2 usage.\n",
    .col = 22,
    .no_operands = true,
    .opts = (const struct lwm2_opt[]){
        {"get", OPT_GET, "KEY", "only KEY's value (an empty line: no value)"},
        {"file", OPT_FILE, "PATH", "read PATH"},
        {"keys", OPT_KEYS, NULL, "every key: its parts, default and meaning"},
        {0},
    }};

struct config_cli {
	const char *get, *file;
	bool keys;
};

static const struct lwm2_optstore config_store[] = {
    {OPT_GET, LWM2_OPT_ARG(struct config_cli, get)},
    {OPT_FILE, LWM2_OPT_ARG(struct config_cli, file)},
    {OPT_KEYS, LWM2_OPT_TRUE(struct config_cli, keys)},
    {0},
};

static const char *parts_text(unsigned parts)
{
	switch (parts) {
	case LWM2_CONF_JOBCOMP:
		return "jobcomp";
	case LWM2_CONF_LIVE:
		return "lwm2";
	case LWM2_CONF_MAIL:
		return "lwm2-mail";
	case LWM2_CONF_JOBCOMP | LWM2_CONF_LIVE:
		return "jobcomp,lwm2";
	case LWM2_CONF_MAIL | LWM2_CONF_LIVE:
		return "lwm2-mail,lwm2";
	default:
		return "?";
	}
}

static void print_keys(void)
{
	for (int i = 0; i < LWM2_CONF_NKEYS; i++) {
		const struct lwm2_conf_key *k = &lwm2_conf_keys[i];

		printf("%-21s %-14s %-34s %s\n", k->name, parts_text(k->parts),
		       k->def ? (*k->def ? k->def : "\"\"") : "-", k->doc);
	}
}

static void print_all(const struct lwm2_conf *c)
{
	for (int i = 0; i < LWM2_CONF_NKEYS; i++) {
		const struct lwm2_conf_key *k = &lwm2_conf_keys[i];

		if (c->v[i].text)
			printf("%s =%s%s\n", k->name, *c->v[i].text ? " " : "", c->v[i].text);
		else
			printf("# %s: %s\n", k->name, k->doc);
	}
}

int lwm2_cmd_config(int argc, char **argv)
{
	struct config_cli cli = {0};
	struct lwm2_conf c;
	char err[1024], *path;
	int first = lwm2_opt_parse_store(&config_spec, config_store, argc, argv, NULL, &cli),
	    id = -1, rc;

	if (first < 0)
		return lwm2_opt_status(first);
	if (cli.keys) {
		if (cli.get || cli.file)
			return lwm2_opt_status(lwm2_opt_error(&config_spec, LWM2_OPT_USAGE,
			                                      "--keys takes no other option"));
		print_keys();
		return 0;
	}
	if (cli.get && (id = lwm2_conf_find(cli.get)) < 0)
		return lwm2_opt_status(lwm2_opt_error(
		    &config_spec, LWM2_OPT_USAGE, "unknown key %s (lwm2 config --keys)", cli.get));
	if (!(path = cli.file ? strdup(cli.file) : lwm2_conf_path(getenv("SLURM_CONF")))) {
		lwm2_log_error("config: out of memory");
		return 1;
	}
	/* all of it checked; one key (--get, the mailer's question) read past
	 * a newer lwm2's keys */
	rc = lwm2_conf_load(&c, path,
	                    id < 0 ? lwm2_conf_part_keys(~0u) : 1ull << id | LWM2_CONF_LENIENT, err,
	                    sizeof(err));
	free(path);
	if (rc < 0) {
		lwm2_log_error("config: %s", err);
		return 1;
	}
	if (id >= 0)
		printf("%s\n", c.v[id].text ? c.v[id].text : "");
	else
		print_all(&c);
	lwm2_conf_free(&c);
	return 0;
}
