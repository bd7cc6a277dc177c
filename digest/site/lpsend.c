/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Line protocol over HTTP with libcurl (see lineproto.h). */
#include "config.h"

#include "lineproto.h"

#include "errmsg.h"
#include "kvparse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ credentials */

int lwm2_lp_read_credentials(const char *path, bool private, char **user, char **password,
                             char **token, char *err, size_t errlen)
{
	char line[1024];
	struct stat st;
	unsigned lineno = 0;
	FILE *f;
	int fd;

	*user = *password = *token = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", path,
		                      strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lwm2_errprintf(EINVAL, err, errlen, "%s is not a regular file", path);
	}
	/* a secret others can read is no secret: refuse rather than use it */
	if (private && ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 077))) {
		lwm2_errprintf(
		    0, err, errlen,
		    "%s must belong to root and be readable by its owner only (chmod 600)", path);
		close(fd);
		errno = EPERM;
		return -1;
	}
	if (!(f = fdopen(fd, "r"))) {
		lwm2_errprintf(0, err, errlen, "couldn't read %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val, **dst;
		int kv;

		lineno++;
		/* '#' only at the start: a password may hold one */
		if (!(kv = lwm2_kv_split(line, false, &key, &val)))
			continue;
		if (kv < 0) {
			lwm2_errprintf(0, err, errlen, "%s:%u: no '='", path, lineno);
			goto bad;
		}
		if (!strcasecmp(key, "user"))
			dst = user;
		else if (!strcasecmp(key, "password"))
			dst = password;
		else if (!strcasecmp(key, "token"))
			dst = token;
		else {
			lwm2_errprintf(0, err, errlen, "%s:%u: unknown key %s", path, lineno, key);
			goto bad;
		}
		free(*dst);
		if (!(*dst = strdup(val))) {
			lwm2_errprintf(0, err, errlen, "out of memory");
			goto bad;
		}
	}
	fclose(f);
	return 0;
bad:
	fclose(f);
	free(*user);
	free(*password);
	free(*token);
	*user = *password = *token = NULL;
	errno = EINVAL;
	return -1;
}

#ifdef HAVE_LIBCURL
#include <pthread.h>

#include <curl/curl.h>
#include <zlib.h>

struct lwm2_lp_sender {
	CURL *h;
	struct curl_slist *hdrs;
	char *url;
	bool gzip;
	const atomic_bool *stop;
	unsigned char *gz;
	size_t gzcap;
	char reply[256]; /* the start of the engine's answer, for error messages */
	size_t replylen;
	char curlerr[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc = CURLE_FAILED_INIT;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

bool lwm2_lp_can_send(void)
{
	return true;
}

static size_t on_reply(char *p, size_t size, size_t n, void *arg)
{
	struct lwm2_lp_sender *s = arg;
	size_t len = size * n, room = sizeof(s->reply) - 1 - s->replylen;

	memcpy(s->reply + s->replylen, p, len < room ? len : room);
	s->replylen += len < room ? len : room;
	s->reply[s->replylen] = '\0';
	return len;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	struct lwm2_lp_sender *s = arg;

	(void)a;
	(void)b;
	(void)c;
	(void)d;
	/* non-zero aborts the transfer: slurmctld is shutting down */
	return s->stop && atomic_load(s->stop);
}

/* url?precision=s&db=... (bucket= and org= for InfluxDB 2.x's own API) */
static char *full_url(CURL *h, const struct lwm2_lp_target *t)
{
	const char *path_end = strchr(t->url, '?');
	size_t ulen = path_end ? (size_t)(path_end - t->url) : strlen(t->url);
	bool v2 = ulen >= 13 && !memcmp(t->url + ulen - 13, "/api/v2/write", 13);
	char *db = t->database && *t->database ? curl_easy_escape(h, t->database, 0) : NULL;
	char *org = t->org && *t->org ? curl_easy_escape(h, t->org, 0) : NULL;
	size_t n = strlen(t->url) + 64 + (db ? strlen(db) : 0) + (org ? strlen(org) : 0);
	char *u = malloc(n);

	if (u)
		snprintf(u, n, "%s%cprecision=s%s%s%s%s", t->url, path_end ? '&' : '?',
		         db ? (v2 ? "&bucket=" : "&db=") : "", db ? db : "", org ? "&org=" : "",
		         org ? org : "");
	curl_free(db);
	curl_free(org);
	return u;
}

struct lwm2_lp_sender *lwm2_lp_sender_new(const struct lwm2_lp_target *t, char *err, size_t errlen)
{
	struct lwm2_lp_sender *s;
	unsigned timeout = t->timeout_s ? t->timeout_s : 10;

	if (!t->url || (strncmp(t->url, "http://", 7) && strncmp(t->url, "https://", 8))) {
		lwm2_errprintf(EINVAL, err, errlen, "the URL must start with http:// or https://");
		return NULL;
	}
	pthread_once(&global_once, global_init);
	if (global_rc != CURLE_OK) {
		lwm2_errprintf(EIO, err, errlen, "couldn't initialise libcurl: %s",
		               curl_easy_strerror(global_rc));
		return NULL;
	}
	if (!(s = calloc(1, sizeof(*s))) || !(s->h = curl_easy_init()) ||
	    !(s->url = full_url(s->h, t))) {
		lwm2_lp_sender_free(s);
		lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
		return NULL;
	}
	s->gzip = t->gzip;
	s->stop = t->stop;
	s->hdrs = curl_slist_append(s->hdrs, "Content-Type: text/plain; charset=utf-8");
	/* no "100 Continue" round trip before every batch */
	s->hdrs = curl_slist_append(s->hdrs, "Expect:");
	if (t->gzip)
		s->hdrs = curl_slist_append(s->hdrs, "Content-Encoding: gzip");
	if (t->token) {
		size_t n = strlen(t->token) + sizeof("Authorization: Token ");
		char *h = malloc(n);

		if (h) {
			snprintf(h, n, "Authorization: Token %s", t->token);
			s->hdrs = curl_slist_append(s->hdrs, h);
			/* the header holds a secret: not left in freed memory */
			explicit_bzero(h, n);
			free(h);
		}
	}
	curl_easy_setopt(s->h, CURLOPT_URL, s->url);
	curl_easy_setopt(s->h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(s->h, CURLOPT_HTTPHEADER, s->hdrs);
	curl_easy_setopt(s->h, CURLOPT_POST, 1L);
	/* a thread of slurmctld: no SIGALRM for name lookups */
	curl_easy_setopt(s->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->h, CURLOPT_TIMEOUT, (long)timeout);
	curl_easy_setopt(s->h, CURLOPT_CONNECTTIMEOUT, (long)(timeout < 5 ? timeout : 5));
	curl_easy_setopt(s->h, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(s->h, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(s->h, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(s->h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, s->curlerr);
	if (t->user) {
		curl_easy_setopt(s->h, CURLOPT_USERNAME, t->user);
		curl_easy_setopt(s->h, CURLOPT_PASSWORD, t->password ? t->password : "");
	}
	return s;
}

void lwm2_lp_sender_free(struct lwm2_lp_sender *s)
{
	if (!s)
		return;
	if (s->h)
		curl_easy_cleanup(s->h);
	curl_slist_free_all(s->hdrs);
	free(s->url);
	free(s->gz);
	free(s);
}

/* gzip of text into s->gz; its length, or 0 on failure. */
static size_t compress_gzip(struct lwm2_lp_sender *s, const char *text, size_t len)
{
	z_stream z;
	size_t need, out;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header, which Content-Encoding: gzip names; level
	 * 1: line protocol repeats itself, the fastest level gets most of it */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	need = deflateBound(&z, (uLong)len) + 64;
	if (need > s->gzcap) {
		unsigned char *n = realloc(s->gz, need);

		if (!n) {
			deflateEnd(&z);
			return 0;
		}
		s->gz = n;
		s->gzcap = need;
	}
	z.next_in = (Bytef *)(uintptr_t)text;
	z.avail_in = (uInt)len;
	z.next_out = s->gz;
	z.avail_out = (uInt)s->gzcap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		return 0;
	}
	out = z.total_out;
	deflateEnd(&z);
	return out;
}

int lwm2_lp_send(struct lwm2_lp_sender *s, const char *text, size_t len, size_t *wire, char *err,
                 size_t errlen)
{
	const char *body = text;
	size_t blen = len;
	long status = 0;
	CURLcode rc;

	if (wire)
		*wire = 0;
	if (s->gzip) {
		if (len > 0xffffffffu || !(blen = compress_gzip(s, text, len))) {
			lwm2_errprintf(ENOMEM, err, errlen, "couldn't compress %zu bytes", len);
			return LWM2_LP_ERROR;
		}
		body = (const char *)s->gz;
	}
	s->replylen = 0;
	s->reply[0] = '\0';
	s->curlerr[0] = '\0';
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(s->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	rc = curl_easy_perform(s->h);
	if (rc != CURLE_OK) {
		lwm2_errprintf(0, err, errlen, "%s",
		               s->curlerr[0] ? s->curlerr : curl_easy_strerror(rc));
		if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL) {
			errno = EINVAL;
			return LWM2_LP_ERROR;
		}
		errno = EIO;
		return LWM2_LP_RETRY;
	}
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &status);
	if (wire)
		*wire = blen;
	if (status >= 200 && status < 300)
		return LWM2_LP_SENT;
	for (size_t i = 0; i < s->replylen; i++)
		if (s->reply[i] == '\n' || s->reply[i] == '\r')
			s->reply[i] = ' ';
	lwm2_errprintf(EIO, err, errlen, "HTTP %ld: %s", status,
	               s->replylen ? s->reply : "(no text)");
	/* The engine is down or overloaded, or the database and credentials
	 * are being set up: later.  Anything else is about the text itself
	 * (InfluxDB stores the good points of a batch and answers 400 for
	 * the bad ones): sending it again would not help. */
	if (status >= 500 || status == 429 || status == 401 || status == 403 || status == 404 ||
	    status == 408)
		return LWM2_LP_RETRY;
	return LWM2_LP_REJECTED;
}

#else /* !HAVE_LIBCURL */

struct lwm2_lp_sender {
	int unused;
};

bool lwm2_lp_can_send(void)
{
	return false;
}

struct lwm2_lp_sender *lwm2_lp_sender_new(const struct lwm2_lp_target *t, char *err, size_t errlen)
{
	(void)t;
	lwm2_errprintf(ENOSYS, err, errlen, "built without libcurl: no export over HTTP");
	return NULL;
}

void lwm2_lp_sender_free(struct lwm2_lp_sender *s)
{
	free(s);
}

int lwm2_lp_send(struct lwm2_lp_sender *s, const char *text, size_t len, size_t *wire, char *err,
                 size_t errlen)
{
	(void)s;
	(void)text;
	(void)len;
	if (wire)
		*wire = 0;
	lwm2_errprintf(ENOSYS, err, errlen, "built without libcurl: no export over HTTP");
	return LWM2_LP_ERROR;
}

#endif
