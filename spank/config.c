/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plugstack.conf arguments (key=value) into struct lwm2_config, and the
 * value parsers the user options share with them.  No Slurm here: the unit
 * test links this file alone.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "lwm2_spank.h"
#include "numparse.h"

#ifndef LWM2LIBDIR
#define LWM2LIBDIR "/usr/local/lib/lwm2"
#endif
/* /run is a root-only tmpfs on systemd machines: a user can plant nothing
 * at the base path there (unlike /dev/shm or /tmp). */
#define LWM2_BASEDIR_DEFAULT "/run/lwm2"
#define LWM2_SPOOL_DEFAULT   "/var/spool/lwm2"

void lwm2_config_defaults(struct lwm2_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = LWM2_MODE_ON;
	c->optout = true;
	snprintf(c->lib, sizeof(c->lib), "%s/liblwm2.so", LWM2LIBDIR);
	snprintf(c->basedir, sizeof(c->basedir), "%s", LWM2_BASEDIR_DEFAULT);
	snprintf(c->spool, sizeof(c->spool), "%s", LWM2_SPOOL_DEFAULT);
	c->slice = 60;
	c->print = LWM2_PRINT_SRUN | LWM2_PRINT_BATCH;
	c->keep = false;
	c->sample_hz = -1;
}

/* The words a value is given in, and what each means. */
struct word {
	const char *name;
	int value;
};
#define NWORDS(w) (sizeof(w) / sizeof((w)[0]))

/* The meaning of s among n words: 0, or -1 when it is none of them. */
static int word_value(const char *s, const struct word *w, size_t n, int *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, w[i].name)) {
			*out = w[i].value;
			return 0;
		}
	return -1;
}

/* Each mode's own name first: lwm2_mode_name gives it. */
static const struct word mode_words[] = {
    {"off", LWM2_MODE_OFF},     {"on", LWM2_MODE_ON},  {"print", LWM2_MODE_PRINT},
    {"light", LWM2_MODE_LIGHT}, {"yes", LWM2_MODE_ON}, {"1", LWM2_MODE_ON},
    {"no", LWM2_MODE_OFF},      {"0", LWM2_MODE_OFF},
};

const char *lwm2_mode_name(enum lwm2_mode m)
{
	for (size_t i = 0; i < NWORDS(mode_words); i++)
		if (mode_words[i].value == (int)m)
			return mode_words[i].name;
	return "unset";
}

int lwm2_parse_mode(const char *s, enum lwm2_mode *out, char *err, size_t errlen)
{
	int v;

	/* "--lwm2" alone (no value; "" when it comes through the environment
	 * from sbatch) means on. */
	if (!s || !*s) {
		*out = LWM2_MODE_ON;
		return 0;
	}
	if (word_value(s, mode_words, NWORDS(mode_words), &v) < 0)
		return lwm2_errprintf(0, err, errlen, "'%s' is not one of on, off, light, print",
		                      s);
	*out = (enum lwm2_mode)v;
	return 0;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out,
                      char *err, size_t errlen)
{
	uint64_t v = 0;
	int rc = lwm2_parse_u64(s, NULL, min, max, &v);

	*out = (unsigned long)v; /* 0 on failure */
	if (rc == 0)
		return 0;
	if (errno == ERANGE)
		return lwm2_errprintf(0, err, errlen, "%s is out of range %lu..%lu", s, min, max);
	return lwm2_errprintf(0, err, errlen, "'%s' is not a number", s ? s : "");
}

int lwm2_parse_slice(const char *s, unsigned *out, char *err, size_t errlen)
{
	unsigned long v;

	if (parse_uint(s, LWM2_SLICE_MIN, LWM2_SLICE_MAX, &v, err, errlen) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* A comma-separated list of names (PAPI presets and native events use
 * letters, digits, '_', ':', '.', '+', '-', '='); it goes into the
 * environment of every task, so nothing else is let through. */
int lwm2_parse_events(const char *s, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t n = s ? strlen(s) : 0;
	const char *p;

	if (n == 0)
		return lwm2_errprintf(0, err, errlen, "the event list is empty");
	if (n >= outlen || n >= LWM2_EVENTS_MAX)
		return lwm2_errprintf(0, err, errlen, "the event list is longer than %d characters",
		                      LWM2_EVENTS_MAX - 1);
	for (p = s; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (isalnum(ch) || strchr("_:.+-=,", ch))
			continue;
		return lwm2_errprintf(0, err, errlen,
		                      "character '%c' is not allowed in an event list",
		                      isprint(ch) ? ch : '?');
	}
	if (s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,"))
		return lwm2_errprintf(0, err, errlen, "'%s' has an empty event name", s);
	memcpy(out, s, n + 1);
	return 0;
}

static int parse_bool(const char *s, bool *out, char *err, size_t errlen)
{
	static const struct word words[] = {{"yes", 1}, {"true", 1},  {"1", 1},
	                                    {"no", 0},  {"false", 0}, {"0", 0}};
	int v;

	if (word_value(s, words, NWORDS(words), &v) < 0)
		return lwm2_errprintf(0, err, errlen, "'%s' is not yes or no", s);
	*out = v;
	return 0;
}

static int parse_path(const char *s, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t n = strlen(s);

	if (s[0] != '/')
		return lwm2_errprintf(0, err, errlen, "'%.200s' is not an absolute path", s);
	if (n >= outlen)
		return lwm2_errprintf(0, err, errlen, "the path is longer than %zu characters",
		                      outlen - 1);
	/* The library path goes into LD_PRELOAD, where ':' and blanks split. */
	if (strpbrk(s, ": \t\n"))
		return lwm2_errprintf(0, err, errlen, "'%.200s' contains ':' or a blank", s);
	memcpy(out, s, n + 1);
	/* A trailing slash would make two names for one directory. */
	while (n > 1 && out[n - 1] == '/')
		out[--n] = '\0';
	return 0;
}

static int parse_print(const char *s, unsigned *out, char *err, size_t errlen)
{
	static const struct word words[] = {{"srun", LWM2_PRINT_SRUN},
	                                    {"batch", LWM2_PRINT_BATCH},
	                                    {"all", LWM2_PRINT_SRUN | LWM2_PRINT_BATCH},
	                                    {"none", 0}};
	char buf[64], *tok, *save = NULL;
	unsigned v = 0;

	if (strlen(s) >= sizeof(buf) || !*s)
		return lwm2_errprintf(0, err, errlen,
		                      "'%s' is not a list of srun, batch, all, none", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int w;

		if (word_value(tok, words, NWORDS(words), &w) < 0)
			return lwm2_errprintf(0, err, errlen,
			                      "'%s' is not one of srun, batch, all, none", tok);
		v |= (unsigned)w;
	}
	*out = v;
	return 0;
}

static int parse_cluster(const char *s, char *out, size_t outlen, char *err, size_t errlen)
{
	size_t n = strlen(s);
	const char *p;

	if (n == 0 || n >= outlen)
		return lwm2_errprintf(0, err, errlen, "the name must have 1 to %zu characters",
		                      outlen - 1);
	/* It names directories and goes into signed payloads. */
	for (p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return lwm2_errprintf(0, err, errlen,
			                      "'%s' may hold only letters, digits, '_' and '-'", s);
	memcpy(out, s, n + 1);
	return 0;
}

/* A list of names for on.SCOPE= or off.SCOPE= (allowed: the characters
 * of Slurm's user, account, QOS and partition names, '@' for directory
 * users) or of nodes for off.nodes= (hostlist brackets too): checked
 * here, whole, so that a typo is an error at the start and never a rule
 * that silently names nobody. */
static int parse_names(const char *s, bool hostlist, char *out, size_t outlen, char *err,
                       size_t errlen)
{
	size_t n = strlen(s);
	const char *extra = hostlist ? "_.-[]," : "_.-@,";

	if (n == 0)
		return lwm2_errprintf(0, err, errlen, "the list is empty");
	if (n >= outlen)
		return lwm2_errprintf(0, err, errlen, "the list is longer than %zu characters",
		                      outlen - 1);
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(extra, *p))
			return lwm2_errprintf(0, err, errlen, "character '%c' is not allowed in %s",
			                      isprint((unsigned char)*p) ? *p : '?',
			                      hostlist ? "a node list" : "a list of names");
	if (!hostlist && (s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,")))
		return lwm2_errprintf(0, err, errlen, "'%s' has an empty name", s);
	memcpy(out, s, n + 1);
	return 0;
}

/* on.SCOPE= and off.SCOPE=: 1 when key is one (parsed into c, or -1 with
 * err), 0 when it is another key. */
static int parse_policy(struct lwm2_config *c, const char *key, const char *val, char *err,
                        size_t errlen)
{
	bool on = !strncmp(key, "on.", 3), off = !strncmp(key, "off.", 4);
	const char *scope = key + (on ? 3 : 4);

	if (!on && !off)
		return 0;
	if (off && !strcmp(scope, "nodes"))
		return parse_names(val, true, c->nodes_off, sizeof(c->nodes_off), err, errlen) < 0
		           ? -1
		           : 1;
	for (int s = 0; s < LWM2_NPOLICY; s++) {
		char *list = on ? c->policy_on[s] : c->policy_off[s];

		if (strcmp(scope, lwm2_policy_scope_names[s]))
			continue;
		return parse_names(val, false, list, LWM2_POLICY_LIST_MAX, err, errlen) < 0 ? -1
		                                                                            : 1;
	}
	return 0;
}

/* A name in both on.SCOPE= and off.SCOPE= would make the order of the
 * arguments decide: refused. */
static int policy_conflict(const struct lwm2_config *c, char *err, size_t errlen)
{
	for (int s = 0; s < LWM2_NPOLICY; s++) {
		const char *p = c->policy_on[s];

		while (*p) {
			size_t k = strcspn(p, ",");
			char name[LWM2_POLICY_LIST_MAX];

			snprintf(name, sizeof(name), "%.*s", (int)k, p);
			if (lwm2_policy_list_has(c->policy_off[s], name))
				return lwm2_errprintf(
				    0, err, errlen, "on.%s: '%s' is also in off.%s",
				    lwm2_policy_scope_names[s], name, lwm2_policy_scope_names[s]);
			p += k + (p[k] == ',');
		}
	}
	return 0;
}

static int parse_one(struct lwm2_config *c, const char *key, const char *val, char *err,
                     size_t errlen)
{
	unsigned long v;
	int rc;

	if (!strcmp(key, "default"))
		return lwm2_parse_mode(val, &c->mode, err, errlen);
	if (!strcmp(key, "optout"))
		return parse_bool(val, &c->optout, err, errlen);
	if (!strcmp(key, "lib"))
		return parse_path(val, c->lib, sizeof(c->lib), err, errlen);
	if (!strcmp(key, "basedir"))
		return parse_path(val, c->basedir, sizeof(c->basedir), err, errlen);
	if (!strcmp(key, "spool"))
		return parse_path(val, c->spool, sizeof(c->spool), err, errlen);
	if (!strcmp(key, "slice"))
		return lwm2_parse_slice(val, &c->slice, err, errlen);
	if (!strcmp(key, "events"))
		return lwm2_parse_events(val, c->events, sizeof(c->events), err, errlen);
	if (!strcmp(key, "print"))
		return parse_print(val, &c->print, err, errlen);
	if (!strcmp(key, "keep"))
		return parse_bool(val, &c->keep, err, errlen);
	if (!strcmp(key, "sample_hz")) {
		if (parse_uint(val, LWM2_SAMPLE_HZ_MIN, LWM2_SAMPLE_HZ_MAX, &v, err, errlen) < 0)
			return -1;
		c->sample_hz = (int)v;
		return 0;
	}
	if (!strcmp(key, "cluster"))
		return parse_cluster(val, c->cluster, sizeof(c->cluster), err, errlen);
	if (!strcmp(key, "ranks"))
		return lwm2_parse_ranks(val, c->ranks, sizeof(c->ranks), err, errlen);
	if ((rc = parse_policy(c, key, val, err, errlen)) != 0)
		return rc < 0 ? -1 : 0;
	return lwm2_errprintf(0, err, errlen,
	                      "unknown key (known: default, optout, lib, basedir, spool, slice, "
	                      "events, print, keep, sample_hz, cluster, ranks, on.user, off.user, "
	                      "on.account, off.account, on.qos, off.qos, on.partition, "
	                      "off.partition, off.nodes)");
}

int lwm2_config_parse(struct lwm2_config *c, int ac, char **av, char *err, size_t errlen)
{
	struct lwm2_config tmp = *c;
	char why[256];
	int i;

	for (i = 0; i < ac; i++) {
		const char *arg = av[i], *eq = strchr(arg, '=');
		char key[32];
		size_t klen;

		if (!eq || eq == arg)
			return lwm2_errprintf(0, err, errlen, "argument '%s' is not key=value",
			                      arg);
		klen = (size_t)(eq - arg);
		if (klen >= sizeof(key))
			return lwm2_errprintf(0, err, errlen, "argument '%.*s...': unknown key", 31,
			                      arg);
		memcpy(key, arg, klen);
		key[klen] = '\0';
		why[0] = '\0';
		if (parse_one(&tmp, key, eq + 1, why, sizeof(why)) < 0)
			return lwm2_errprintf(0, err, errlen, "%s: %.*s", key,
			                      (int)(errlen > 40 ? errlen - 40 : 0), why);
	}
	if (policy_conflict(&tmp, err, errlen) < 0)
		return -1;
	*c = tmp;
	return 0;
}
