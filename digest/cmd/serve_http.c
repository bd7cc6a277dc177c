/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The portal's HTTP side, on libmicrohttpd: a thread per connection (a
 * slow client holds only its own), limits on connections per address and
 * in all, on a request's size (a longer one is refused by the library
 * with 414 or 431) and on idle time; GET and HEAD only.
 *
 * Who asks: the site's web server does the login and names the user in a
 * header (X-Remote-User by default), as Open OnDemand's and XDMoD's
 * front ends do.  That header is believed only from the proxy: over the
 * Unix socket (its mode keeps it to the web server's group) or from an
 * address given with --trust-proxy.  Anyone else is refused (403), and a
 * request from the proxy that names nobody is 401.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <microhttpd.h>

#include "log.h"
#include "numparse.h"
#include "serve.h"

/* The addresses given with --trust-proxy, parsed. */
struct trusted {
	int family;
	unsigned char addr[16];
};

struct service {
	const struct serve_conf *conf;
	struct trusted trust[SERVE_TRUST_MAX];
	size_t ntrust;
	bool unix_socket;
};

static bool trusted_peer(const struct service *s, const struct sockaddr *sa)
{
	if (!sa)
		return false;
	if (sa->sa_family == AF_UNIX)
		return s->unix_socket;
	for (size_t i = 0; i < s->ntrust; i++) {
		const struct trusted *t = &s->trust[i];

		if (sa->sa_family == AF_INET && t->family == AF_INET &&
		    memcmp(&((const struct sockaddr_in *)sa)->sin_addr, t->addr, 4) == 0)
			return true;
		if (sa->sa_family == AF_INET6 && t->family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, t->addr, 16) == 0)
			return true;
	}
	return false;
}

static void peer_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a = NULL;

	snprintf(buf, len, "%s", "?");
	if (!sa)
		return;
	if (sa->sa_family == AF_UNIX) {
		snprintf(buf, len, "%s", "the socket");
		return;
	}
	if (sa->sa_family == AF_INET)
		a = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (a)
		inet_ntop(sa->sa_family, a, buf, (socklen_t)len);
}

static const char *get_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct serve_reply *rp)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(rp->len, rp->body ? rp->body : (void *)"",
	                                    rp->body ? MHD_RESPMEM_MUST_FREE
	                                             : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(rp->body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rp->type);
	/* the pages hold no script and fetch nothing from elsewhere */
	MHD_add_response_header(r, "Content-Security-Policy",
	                        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
	                        "form-action 'self'; frame-ancestors 'none'");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Cache-Control", "private, no-store");
	if (rp->disposition[0])
		MHD_add_response_header(r, "Content-Disposition", rp->disposition);
	ret = MHD_queue_response(c, rp->status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls)
{
	static int first_call;
	const struct service *s = cls;
	const union MHD_ConnectionInfo *ci;
	const struct sockaddr *peer;
	struct serve_viewer viewer;
	struct serve_reply rp = {0};
	const char *user;
	char err[512], from[INET6_ADDRSTRLEN + 16];

	(void)version;
	(void)upload_data;
	/* another method is answered before its body is read */
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		serve_error(&rp, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
		return send_reply(c, &rp);
	}
	/* the first call only announces the request: a body (refused
	 * below) has not come yet */
	if (!*req_cls) {
		*req_cls = &first_call;
		return MHD_YES;
	}
	if (*upload_data_size) {
		serve_error(&rp, MHD_HTTP_BAD_REQUEST, "a GET has no body");
		*upload_data_size = 0;
		return send_reply(c, &rp);
	}
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	peer = ci ? ci->client_addr : NULL;
	user = MHD_lookup_connection_value(c, MHD_HEADER_KIND, s->conf->user_header);
	if (!trusted_peer(s, peer)) {
		peer_text(peer, from, sizeof(from));
		if (user)
			lwm2_log_warning("serve: %s named user \"%.64s\" from %s, which is not a "
			                 "trusted proxy (--trust-proxy): refused",
			                 s->conf->user_header, user, from);
		serve_error(&rp, MHD_HTTP_FORBIDDEN,
		            "this service answers through the site's web server only");
		return send_reply(c, &rp);
	}
	if (!user || !*user) {
		serve_error(&rp, MHD_HTTP_UNAUTHORIZED, "no user: the web server names none in %s",
		            s->conf->user_header);
		return send_reply(c, &rp);
	}
	if (serve_viewer_get(user, &viewer, err, sizeof(err)) < 0) {
		serve_error(&rp, MHD_HTTP_SERVICE_UNAVAILABLE, "%s", err);
		return send_reply(c, &rp);
	}
	serve_handle(&(struct serve_request){.path = url,
	                                     .arg = get_arg,
	                                     .ctx = c,
	                                     .viewer = &viewer,
	                                     .db_url = s->conf->db_url},
	             &rp);
	serve_viewer_free(&viewer);
	return send_reply(c, &rp);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	lwm2_log_warning("serve: %s", line);
}

/* ADDR:PORT, [ADDR6]:PORT or PORT into sa.  0, or -1. */
static int listen_addr(const char *spec, struct sockaddr_storage *sa, socklen_t *len)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(spec, ':');
	const char *port_s = colon ? colon + 1 : spec;
	uint64_t port;

	if (colon) {
		size_t hl = (size_t)(colon - spec);

		if (hl >= sizeof(host))
			return -1;
		memcpy(host, spec, hl);
		host[hl] = 0;
		if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
			memmove(host, host + 1, hl - 2);
			host[hl - 2] = 0;
		}
	}
	if (lwm2_parse_u64(port_s, NULL, 1, 65535, &port) < 0)
		return -1;
	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)sa)->sin_addr) == 1) {
		((struct sockaddr_in *)sa)->sin_family = AF_INET;
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)sa)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)sa)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
		*len = sizeof(struct sockaddr_in6);
		return 0;
	}
	return -1;
}

/* A listening Unix socket at path, readable and writable by its group
 * (the web server's), or -1 (said). */
static int unix_listener(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		lwm2_log_error("serve: the socket's path is too long: %s", path);
		return -1;
	}
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		lwm2_log_error("serve: couldn't make a socket: %s", strerror(errno));
		return -1;
	}
	(void)unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || chmod(path, 0660) < 0 ||
	    listen(fd, 128) < 0) {
		lwm2_log_error("serve: couldn't listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int parse_trust(struct service *s)
{
	for (size_t i = 0; i < s->conf->ntrust; i++) {
		struct trusted *t = &s->trust[s->ntrust];

		if (inet_pton(AF_INET, s->conf->trust[i], t->addr) == 1)
			t->family = AF_INET;
		else if (inet_pton(AF_INET6, s->conf->trust[i], t->addr) == 1)
			t->family = AF_INET6;
		else {
			lwm2_log_error("serve: --trust-proxy takes an IP address, not '%s'",
			               s->conf->trust[i]);
			return -1;
		}
		s->ntrust++;
	}
	return 0;
}

int serve_run(const struct serve_conf *c)
{
	struct service s = {.conf = c};
	struct sockaddr_storage sa;
	socklen_t salen = 0;
	struct MHD_Daemon *d;
	unsigned flags =
	    MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	int fd = -1, sig;
	sigset_t set;

	if (parse_trust(&s) < 0)
		return 1;
	if (c->socket_path) {
		if ((fd = unix_listener(c->socket_path)) < 0)
			return 1;
		s.unix_socket = true;
	} else if (listen_addr(c->listen, &sa, &salen) < 0) {
		lwm2_log_error("serve: --listen takes ADDR:PORT, [ADDR6]:PORT or PORT, not '%s'",
		               c->listen);
		return 1;
	}
	if (!c->socket_path && sa.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* the signals that stop the service are taken by sigwait below, in
	 * every thread the library starts */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (fd >= 0)
		d = MHD_start_daemon(
		    flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		    MHD_OPTION_CONNECTION_TIMEOUT, c->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
		    c->connections, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768,
		    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd, MHD_OPTION_END);
	else
		d = MHD_start_daemon(
		    flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		    MHD_OPTION_CONNECTION_TIMEOUT, c->timeout_s, MHD_OPTION_CONNECTION_LIMIT,
		    c->connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->per_ip,
		    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)32768, MHD_OPTION_SOCK_ADDR,
		    (struct sockaddr *)&sa, MHD_OPTION_END);
	if (!d) {
		lwm2_log_error("serve: couldn't start serving on %s",
		               c->socket_path ? c->socket_path : c->listen);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	lwm2_log_info("serve: serving %s on %s", c->db_url,
	              c->socket_path ? c->socket_path : c->listen);
	if (c->ready_file) {
		FILE *f = fopen(c->ready_file, "w");

		if (f) {
			fprintf(f, "%ld\n", (long)getpid());
			fclose(f);
		}
	}
	while (sigwait(&set, &sig) != 0)
		;
	lwm2_log_info("serve: stopping (signal %d)", sig);
	MHD_stop_daemon(d);
	if (c->socket_path)
		(void)unlink(c->socket_path);
	return 0;
}
