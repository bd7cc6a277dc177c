/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 serve`: the site portal over the central database, behind the
 * site's web server (serve.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_opt.h"
#include "log.h"
#include "lwm2_cmds.h"
#include "numparse.h"
#include "serve.h"

enum {
	OPT_DB = LWM2_OPT_LONG,
	OPT_LISTEN,
	OPT_SOCKET,
	OPT_TRUST,
	OPT_HEADER,
	OPT_TIMEOUT,
	OPT_PER_IP,
	OPT_CONNECTIONS,
	OPT_READY,
};

static const struct lwm2_optspec serve_spec = {
    .cmd = "serve",
    .usage = "Usage: lwm2 serve [--db DATABASE] (--socket PATH | --listen [ADDR:]PORT\n"
             "                  --trust-proxy ADDR...) [--user-header NAME]\n"
             "The site portal: the jobs of the central database as web pages, a query\n"
             "builder, every job's report and its time-slice series as CSV, behind the\n"
             "site's web server, which logs users in and names them in a header.\n\n",
    .footer = "Each user sees what Slurm shows them: their own jobs, those of the accounts\n"
              "they coordinate; an operator or administrator every job (PrivateData=jobs;\n"
              "without it every job).  Stops on SIGTERM or SIGINT.  Exit status: 0, 1 when\n"
              "it could not start, 2 usage.  See lwm2-serve(8).\n",
    .col = 26,
    .no_operands = true,
    .opts = (const struct lwm2_opt[]){
        {"db", OPT_DB, "DATABASE", "the database (default: lwm2.conf's Database=)"},
        {"socket", OPT_SOCKET, "PATH",
         "listen on a Unix socket (mode 0660), for a web server\n"
         "of the same group: its requests are trusted"},
        {"listen", OPT_LISTEN, "[ADDR:]PORT", "listen on TCP (ADDR default 127.0.0.1)"},
        {"trust-proxy", OPT_TRUST, "ADDR",
         "the web server's address: only its requests are\n"
         "answered (repeat for more than one)"},
        {"user-header", OPT_HEADER, "NAME", "the header naming the user (X-Remote-User)"},
        {"timeout", OPT_TIMEOUT, "S", "close a connection idle for S s (default 30)"},
        {"per-address", OPT_PER_IP, "N", "connections from one address (default 64)"},
        {"connections", OPT_CONNECTIONS, "N", "connections in all (default 256)"},
        {"ready-file", OPT_READY, "PATH", "write the process id to PATH once serving"},
        {0},
    }};

struct serve_cli {
	struct serve_conf c;
	const char *db;
};

static int number(const char *opt, const char *arg, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v;

	if (lwm2_parse_u64(arg, NULL, min, max, &v) < 0)
		return lwm2_opt_error(&serve_spec, LWM2_OPT_USAGE, "--%s takes %u to %u, not '%s'",
		                      opt, min, max, arg);
	*out = (unsigned)v;
	return 0;
}

static int serve_opt(void *ctx, int key, char *arg)
{
	struct serve_cli *cli = ctx;

	switch (key) {
	case OPT_DB:
		cli->db = arg;
		return 0;
	case OPT_LISTEN:
		cli->c.listen = arg;
		return 0;
	case OPT_SOCKET:
		cli->c.socket_path = arg;
		return 0;
	case OPT_TRUST:
		if (cli->c.ntrust == SERVE_TRUST_MAX)
			return lwm2_opt_error(&serve_spec, LWM2_OPT_USAGE,
			                      "at most %d --trust-proxy addresses",
			                      SERVE_TRUST_MAX);
		cli->c.trust[cli->c.ntrust++] = arg;
		return 0;
	case OPT_HEADER:
		cli->c.user_header = arg;
		return 0;
	case OPT_TIMEOUT:
		return number("timeout", arg, 1, 3600, &cli->c.timeout_s);
	case OPT_PER_IP:
		return number("per-address", arg, 1, 100000, &cli->c.per_ip);
	case OPT_CONNECTIONS:
		return number("connections", arg, 1, 100000, &cli->c.connections);
	default:
		cli->c.ready_file = arg;
		return 0;
	}
}

int lwm2_cmd_serve(int argc, char **argv)
{
	struct serve_cli cli = {
	    .c = {
	        .user_header = "X-Remote-User", .timeout_s = 30, .per_ip = 64, .connections = 256}};
	char db[1024];
	int first = lwm2_opt_parse(&serve_spec, argc, argv, serve_opt, &cli);

	if (first < 0)
		return lwm2_opt_status(first);
	if (!cli.c.socket_path == !cli.c.listen)
		return lwm2_opt_status(lwm2_opt_error(&serve_spec, LWM2_OPT_USAGE,
		                                      "want one of --socket and --listen"));
	if (cli.c.listen && !cli.c.ntrust)
		return lwm2_opt_status(lwm2_opt_error(
		    &serve_spec, LWM2_OPT_USAGE,
		    "--listen wants --trust-proxy: the web server's address, whose header names "
		    "the user"));
	if (lwm2_cmd_db_url("serve", cli.db, db, sizeof(db)) < 0)
		return 1;
	if (!db[0]) {
		lwm2_log_error("serve: no database: --db, or Database= in lwm2.conf");
		return 1;
	}
	cli.c.db_url = db;
	serve_access_init();
	return serve_run(&cli.c);
}
