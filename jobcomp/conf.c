/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2.conf: the one place for jobcomp/lwm2's settings (and lwm2-mail's). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errmsg.h"
#include "kvparse.h"
#include "lwm2_jobcomp.h"
#include "numparse.h"

#define DEFAULT_SPOOL "/var/spool/lwm2"
#define DEFAULT_LOG   "/var/log/slurm/lwm2-digests.jsonl"

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

/* The numeric keys: their range and their field, unsigned or size_t. */
#define NUM(key, min, max, field)                                                                  \
	{                                                                                          \
		key, min, max, offsetof(struct lwm2_jc_conf, field),                               \
		    sizeof(((struct lwm2_jc_conf *)0)->field) == sizeof(size_t)                    \
	}
static const struct num_key {
	const char *key;
	uint64_t min, max;
	size_t off;
	bool is_size;
} num_keys[] = {
    NUM("LateRecordWait", 0, 86400, late_wait),
    NUM("RecordSettle", 0, 600, settle),
    /* the LWM2 part must leave room for other tools' parts */
    NUM("AdminCommentCap", 256, 60000, cap),
    NUM("RetryMax", 0, 365ull * 86400, retry_max),
    NUM("VerifyDelay", 0, 86400, verify_delay),
    NUM("VerifyWindow", 0, 86400, verify_window),
    NUM("MaxQueued", 1, 10000000, max_queued),
};
#undef NUM

/* 0: a numeric key set, -1: its value refused, 1: not a numeric key. */
static int set_number(struct lwm2_jc_conf *c, const char *key, const char *val)
{
	for (size_t i = 0; i < sizeof(num_keys) / sizeof(num_keys[0]); i++) {
		const struct num_key *k = &num_keys[i];
		void *dst = (char *)c + k->off;
		uint64_t n;

		if (strcasecmp(key, k->key))
			continue;
		if (lwm2_parse_u64(val, NULL, 0, k->max, &n) || n < k->min)
			return -1;
		if (k->is_size)
			*(size_t *)dst = (size_t)n;
		else
			*(unsigned *)dst = (unsigned)n;
		return 0;
	}
	return 1;
}

static int apply(struct lwm2_jc_conf *c, const char *key, const char *val)
{
	size_t i;
	int rc;

	if (!strcasecmp(key, "SpoolDir"))
		return *val == '/' ? set_str(&c->spool_dir, val) : -1;
	if (!strcasecmp(key, "StateDir"))
		return *val == '/' ? set_str(&c->state_dir, val) : -1;
	/* lwm2-jobend's JSON-lines log: in that mode JobCompLoc belongs to
	 * the site's own jobcomp plugin.  jobcomp/lwm2 takes JobCompLoc. */
	if (!strcasecmp(key, "LogFile"))
		return *val == '/' ? set_str(&c->log_path, val) : -1;
	if (!strcasecmp(key, "JobEndLog")) {
		if (*val && *val != '/')
			return -1;
		if (strlen(val) >= sizeof(c->jobend_log)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		strcpy(c->jobend_log, val);
		return 0;
	}
	if (!strcasecmp(key, "Database")) {
		if (strlen(val) >= sizeof(c->database)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		/* none: the log alone */
		strcpy(c->database, strcasecmp(val, "none") ? val : "");
		c->database_set = true;
		return 0;
	}
	if (!strcasecmp(key, "MungeSocket"))
		return set_str(&c->munge_socket, val);
	if (!strcasecmp(key, "AdminComment"))
		return lwm2_parse_bool(val, &c->admin_comment);
	if (!strcasecmp(key, "KeepNodeRecords"))
		return lwm2_parse_bool(val, &c->keep_records);
	if ((rc = set_number(c, key, val)) <= 0)
		return rc;
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
		lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", path, strerror(errno));
		lwm2_jc_conf_free(c);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *val;
		int kv;

		lineno++;
		if (!(kv = lwm2_kv_split(line, true, &key, &val)))
			continue;
		if (kv < 0) {
			lwm2_errprintf(EINVAL, err, errlen, "%s:%u: no '=' in \"%s\"", path, lineno,
			               key);
			goto inval;
		}
		errno = 0;
		if (apply(c, key, val) < 0) {
			if (errno == ENOMEM)
				goto nomem_f;
			if (errno == ENOENT)
				lwm2_errprintf(0, err, errlen, "%s:%u: unknown key %s", path,
				               lineno, key);
			else
				lwm2_errprintf(0, err, errlen, "%s:%u: bad value \"%s\" for %s",
				               path, lineno, val, key);
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
	lwm2_errprintf(0, err, errlen, "out of memory");
	lwm2_jc_conf_free(c);
	errno = ENOMEM;
	return -1;
}
