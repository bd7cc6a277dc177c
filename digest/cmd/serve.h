/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `lwm2 serve`: the site portal, a web service over the central database.
 *
 *   serve_access.c  who asks and what they may see (Slurm's rules)
 *   serve_query.c   a request's selection: its arguments read and checked
 *   serve_pages.c   the pages and the API: jobs, a job, a job's series
 *   serve_http.c    HTTP (libmicrohttpd): the trusted proxy, limits, replies
 *   cmd_serve.c     the command: options, the daemon's life
 *
 * The pages read nothing of HTTP: a request reaches them as a path, an
 * argument reader and the viewer, so they are tested without a socket.
 */
#ifndef LWM2_SERVE_H
#define LWM2_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ viewer */

#define SERVE_NAME_LEN 64

/* Who asks, and which jobs Slurm's rules let them see: all (an operator
 * or administrator, or a cluster whose PrivateData does not hide jobs),
 * else their own and those of the accounts they coordinate. */
struct serve_viewer {
	char user[SERVE_NAME_LEN];
	bool all;
	char (*accounts)[SERVE_NAME_LEN];
	size_t naccounts;
};

/* The viewer named user, as slurmdbd has them (asked at most once a
 * minute per user).  0, or -1 with err (slurmdbd unreachable: nothing is
 * shown rather than too much). */
int serve_viewer_get(const char *user, struct serve_viewer *v, char *err, size_t errlen);
/* libslurm read slurm.conf (and its plugins), before the first viewer and
 * before any thread asks (serve_access.c). */
void serve_access_init(void);
void serve_viewer_free(struct serve_viewer *v);

/* Whether v may see a job of user in account. */
bool serve_viewer_sees(const struct serve_viewer *v, const char *user, const char *account);

/* ------------------------------------------------------------ requests */

struct serve_request {
	const char *path; /* decoded, without the query */
	/* The value of argument name, NULL when absent. */
	const char *(*arg)(void *ctx, const char *name);
	void *ctx;
	const struct serve_viewer *viewer;
	const char *db_url;
};

struct serve_reply {
	unsigned status;  /* HTTP status */
	const char *type; /* Content-Type */
	char *body;       /* malloc'd */
	size_t len;
	char disposition[128]; /* Content-Disposition, "" for none */
	char location[256];    /* Location of a redirect, "" for none */
};

/* Answer rq into rp (serve_pages.c): never fails, an error is a page. */
void serve_handle(const struct serve_request *rq, struct serve_reply *rp);

/* An error page of status with text (escaped), into rp. */
void serve_error(struct serve_reply *rp, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------ service */

#define SERVE_TRUST_MAX 16

struct serve_conf {
	const char *db_url;
	const char *listen;                 /* ADDR:PORT (TCP), or NULL */
	const char *socket_path;            /* a Unix socket, or NULL */
	const char *user_header;            /* the proxy's header naming the user */
	const char *trust[SERVE_TRUST_MAX]; /* the proxy's addresses */
	size_t ntrust;
	unsigned threads;
	unsigned timeout_s;     /* an idle or slow connection is closed */
	unsigned per_ip;        /* connections from one address */
	unsigned connections;   /* connections in all */
	const char *ready_file; /* written once serving (tests, units) */
};

/* Serve until SIGTERM or SIGINT (serve_http.c).  0, or 1 when the
 * service could not start (said on stderr). */
int serve_run(const struct serve_conf *c);

#endif /* LWM2_SERVE_H */
