/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2.conf: the one place for jobcomp/lwm2's settings (and lwm2-mail's). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lwm2_jobcomp.h"

#define DEFAULT_SPOOL "/var/spool/lwm2"
#define DEFAULT_LOG   "/var/log/slurm/lwm2-digests.jsonl"

__attribute__((format(printf, 3, 4))) static void seterr(char *err, size_t len, const char *fmt,
                                                         ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

char *lwm2_jc_conf_path(const char *slurm_conf_path)
{
	const char *env = getenv("LWM2_CONF");
	const char *slash;
	char *p;

	if (env && *env)
		return strdup(env);
	if (!slurm_conf_path || !(slash = strrchr(slurm_conf_path, '/')))
		return strdup("/etc/slurm/lwm2.conf");
	if (!(p = malloc((size_t)(slash - slurm_conf_path) + sizeof("/lwm2.conf"))))
		return NULL;
	memcpy(p, slurm_conf_path, (size_t)(slash - slurm_conf_path));
	strcpy(p + (slash - slurm_conf_path), "/lwm2.conf");
	return p;
}

void lwm2_jc_conf_free(struct lwm2_jc_conf *conf)
{
	free(conf->log_path);
	free(conf->spool_dir);
	free(conf->state_dir);
	free(conf->munge_socket);
	memset(conf, 0, sizeof(*conf));
}

static int parse_uint(const char *v, unsigned long long max, unsigned long long *out)
{
	char *end;
	unsigned long long n;

	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || n > max)
		return -1;
	*out = n;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

static int set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

/* Keys lwm2-mail reads from the same file; jobcomp accepts and ignores
 * them. */
static const char *const mail_keys[] = {"MailDigest", "MailWait", "Mailer", "LwmCommand",
                                        "SlurmConf"};

static int apply(struct lwm2_jc_conf *c, const char *key, const char *val)
{
	unsigned long long n;
	size_t i;
	int rc;

	if (!strcasecmp(key, "SpoolDir"))
		return *val == '/' ? set_str(&c->spool_dir, val) : -1;
	if (!strcasecmp(key, "StateDir"))
		return *val == '/' ? set_str(&c->state_dir, val) : -1;
	if (!strcasecmp(key, "MungeSocket"))
		return set_str(&c->munge_socket, val);
	if (!strcasecmp(key, "LateRecordWait")) {
		if (parse_uint(val, 86400, &n))
			return -1;
		c->late_wait = (unsigned)n;
		return 0;
	}
	if (!strcasecmp(key, "RecordSettle")) {
		if (parse_uint(val, 600, &n))
			return -1;
		c->settle = (unsigned)n;
		return 0;
	}
	if (!strcasecmp(key, "AdminCommentCap")) {
		/* the LWM2 part must leave room for other tools' parts */
		if (parse_uint(val, 60000, &n) || n < 256)
			return -1;
		c->cap = (size_t)n;
		return 0;
	}
	if (!strcasecmp(key, "AdminComment"))
		return parse_bool(val, &c->admin_comment);
	if (!strcasecmp(key, "KeepNodeRecords"))
		return parse_bool(val, &c->keep_records);
	if (!strcasecmp(key, "RetryMax")) {
		if (parse_uint(val, 365ull * 86400, &n))
			return -1;
		c->retry_max = (unsigned)n;
		return 0;
	}
	if (!strcasecmp(key, "VerifyDelay")) {
		if (parse_uint(val, 86400, &n))
			return -1;
		c->verify_delay = (unsigned)n;
		return 0;
	}
	if (!strcasecmp(key, "VerifyWindow")) {
		if (parse_uint(val, 86400, &n))
			return -1;
		c->verify_window = (unsigned)n;
		return 0;
	}
	if (!strcasecmp(key, "MaxQueued")) {
		if (parse_uint(val, 10000000, &n) || n == 0)
			return -1;
		c->max_queued = (size_t)n;
		return 0;
	}
	if (lwm2_jc_export_conf(c, key, val, &rc)) /* Export* keys: export.c */
		return rc;
	for (i = 0; i < sizeof(mail_keys) / sizeof(mail_keys[0]); i++)
		if (!strcasecmp(key, mail_keys[i]))
			return 0;
	/* `lwm2 top` and `lwm2 watch` read BaseDir and the Watch* keys (their
	 * values are checked there) */
	if (!strcasecmp(key, "BaseDir") || !strncasecmp(key, "Watch", 5))
		return 0;
	errno = ENOENT;
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int lwm2_jc_conf_load(struct lwm2_jc_conf *c, const char *path, const char *state_save, char *err,
                      size_t errlen)
{
	char line[4096];
	FILE *f;
	unsigned lineno = 0;

	memset(c, 0, sizeof(*c));
	c->late_wait = 120;
	c->settle = 1;
	c->cap = 16384;
	c->admin_comment = true;
	c->retry_max = 7 * 86400;
	c->verify_delay = 5;
	c->max_queued = 100000;
	lwm2_jc_export_defaults(c);
	c->verify_window = 120;
	if (set_str(&c->spool_dir, DEFAULT_SPOOL) || set_str(&c->log_path, DEFAULT_LOG))
		goto nomem;
	if (state_save && *state_save) {
		size_t n = strlen(state_save) + sizeof("/lwm2");

		if (!(c->state_dir = malloc(n)))
			goto nomem;
		snprintf(c->state_dir, n, "%s/lwm2", state_save);
	} else if (set_str(&c->state_dir, DEFAULT_SPOOL "/jobcomp")) {
		goto nomem;
	}
	if (!path)
		return 0;
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			return 0;
		seterr(err, errlen, "couldn't open %s: %s", path, strerror(errno));
		lwm2_jc_conf_free(c);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *hash, *eq, *key, *val;

		lineno++;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		if (!(eq = strchr(key, '='))) {
			seterr(err, errlen, "%s:%u: no '=' in \"%s\"", path, lineno, key);
			goto inval;
		}
		*eq = '\0';
		key = trim(key);
		val = trim(eq + 1);
		errno = 0;
		if (apply(c, key, val) < 0) {
			if (errno == ENOMEM)
				goto nomem_f;
			if (errno == ENOENT)
				seterr(err, errlen, "%s:%u: unknown key %s", path, lineno, key);
			else
				seterr(err, errlen, "%s:%u: bad value \"%s\" for %s", path, lineno,
				       val, key);
			goto inval;
		}
	}
	fclose(f);
	return 0;
inval:
	fclose(f);
	lwm2_jc_conf_free(c);
	errno = EINVAL;
	return -1;
nomem_f:
	fclose(f);
nomem:
	seterr(err, errlen, "out of memory");
	lwm2_jc_conf_free(c);
	errno = ENOMEM;
	return -1;
}
