/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lwm2.conf: the table of its keys and its one reader (see lwm2conf.h). */
#include "lwm2conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errmsg.h"
#include "kvparse.h"
#include "numparse.h"

/* a key is one bit of the check set */
_Static_assert(LWM2_CONF_NKEYS <= 63, "lwm2.conf has more keys than a check set holds "
                                      "(its last bit is LWM2_CONF_LENIENT)");

#define LWM2_CONF_ENTRY(name, type, limits, def, parts, doc)                                       \
	{#name, LWM2_CONF_##type, LWM2_CONF_LIMITS limits, def, parts, doc},
const struct lwm2_conf_key lwm2_conf_keys[LWM2_CONF_NKEYS] = {LWM2_CONF_KEYS(LWM2_CONF_ENTRY)};
#undef LWM2_CONF_ENTRY

int lwm2_conf_find(const char *name)
{
	for (int i = 0; i < LWM2_CONF_NKEYS; i++)
		if (!strcasecmp(name, lwm2_conf_keys[i].name))
			return i;
	return -1;
}

uint64_t lwm2_conf_part_keys(unsigned parts)
{
	uint64_t set = 0;

	for (int i = 0; i < LWM2_CONF_NKEYS; i++)
		if (lwm2_conf_keys[i].parts & parts)
			set |= 1ull << i;
	return set;
}

char *lwm2_conf_path(const char *slurm_conf_path)
{
	const char *env = getenv("LWM2_CONF");
	const char *slash;
	size_t dir, n;
	char *p;

	if (env && *env)
		return strdup(env);
	if (!slurm_conf_path || !(slash = strrchr(slurm_conf_path, '/')))
		return strdup("/etc/slurm/lwm2.conf");
	dir = (size_t)(slash - slurm_conf_path);
	n = dir + sizeof("/lwm2.conf");
	if ((p = malloc(n)))
		snprintf(p, n, "%.*s/lwm2.conf", (int)dir, slurm_conf_path);
	return p;
}

/* v as a word of choices ("a|b|c"): its place, or -1. */
static int choice_of(const char *choices, const char *v)
{
	size_t n = strlen(v);
	int place = 0;

	for (const char *w = choices; *w; place++) {
		size_t wl = strcspn(w, "|");

		if (wl == n && !strncasecmp(w, v, n))
			return place;
		w += wl + (w[wl] == '|');
	}
	return -1;
}

/* v checked and converted by k's type into out (text aside): 0, or -1. */
static int convert(const struct lwm2_conf_key *k, const char *v, struct lwm2_conf_value *out)
{
	const struct lwm2_conf_limits *l = &k->limits;
	char *end;
	int place;

	if (l->len && strlen(v) >= l->len)
		return -1;
	switch (k->type) {
	case LWM2_CONF_TEXT:
	case LWM2_CONF_NONE_TEXT:
	case LWM2_CONF_LINES:
		return 0;
	case LWM2_CONF_PATH:
		return *v == '/' ? 0 : -1;
	case LWM2_CONF_PATH_EMPTY:
		return !*v || *v == '/' ? 0 : -1;
	case LWM2_CONF_URL:
		return !*v || !strncmp(v, "http://", 7) || !strncmp(v, "https://", 8) ? 0 : -1;
	case LWM2_CONF_UINT:
		return lwm2_parse_u64(v, NULL, l->min, l->max, &out->num);
	case LWM2_CONF_DURATION:
		return lwm2_parse_duration(v, l->min, l->max, &out->num);
	case LWM2_CONF_FRAC:
		errno = 0;
		out->frac = strtod(v, &end);
		return errno || *end || end == v || !(out->frac >= 0 && out->frac <= (double)l->max)
		           ? -1
		           : 0;
	case LWM2_CONF_BOOL:
		return lwm2_parse_bool(v, &out->yes);
	case LWM2_CONF_CHOICE:
		if ((place = choice_of(l->choices, v)) < 0)
			return -1;
		out->choice = (unsigned)place;
		return 0;
	}
	return -1;
}

/* key id set to v from line (0: the default); checked by its type where
 * check says so.  0, or -1 with errno EINVAL (a bad value) or ENOMEM. */
static int set_value(struct lwm2_conf *c, int id, const char *v, unsigned line, bool check)
{
	const struct lwm2_conf_key *k = &lwm2_conf_keys[id];
	struct lwm2_conf_value nv = c->v[id];
	char *text;

	if (check && convert(k, v, &nv) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (k->type == LWM2_CONF_NONE_TEXT && !strcasecmp(v, "none"))
		v = "";
	if (k->type == LWM2_CONF_LINES && line && c->v[id].line) {
		/* every line counts: the earlier ones kept before this one */
		size_t have = strlen(c->v[id].text);

		if (!(text = malloc(have + strlen(v) + 2)))
			return -1;
		memcpy(text, c->v[id].text, have);
		text[have] = '\n';
		strcpy(text + have + 1, v);
	} else if (!(text = strdup(v))) {
		return -1;
	}
	free(c->v[id].text);
	nv.text = text;
	nv.line = line;
	c->v[id] = nv;
	return 0;
}

static int read_lines(struct lwm2_conf *c, FILE *f, const char *path, uint64_t check, char *err,
                      size_t errlen)
{
	char line[4096];
	unsigned lineno = 0;

	while (fgets(line, sizeof(line), f)) {
		char *key, *val;
		int kv, id;

		lineno++;
		if (!(kv = lwm2_kv_split(line, true, &key, &val)))
			continue;
		if (kv < 0)
			return lwm2_errprintf(EINVAL, err, errlen, "%s:%u: no '=' in \"%s\"", path,
			                      lineno, key);
		if ((id = lwm2_conf_find(key)) < 0 && (check & LWM2_CONF_LENIENT))
			continue;
		if (id < 0)
			return lwm2_errprintf(EINVAL, err, errlen, "%s:%u: unknown key %s", path,
			                      lineno, key);
		if (set_value(c, id, val, lineno, check >> id & 1) < 0) {
			if (errno == ENOMEM)
				return lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
			return lwm2_errprintf(EINVAL, err, errlen, "%s:%u: bad value \"%s\" for %s",
			                      path, lineno, val, key);
		}
	}
	return 0;
}

int lwm2_conf_load(struct lwm2_conf *c, const char *path, uint64_t check, char *err, size_t errlen)
{
	FILE *f;
	int rc;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < LWM2_CONF_NKEYS; i++) {
		if (lwm2_conf_keys[i].def && set_value(c, i, lwm2_conf_keys[i].def, 0, true) < 0) {
			lwm2_conf_free(c);
			return lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
		}
	}
	if (!path)
		return 0;
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			return 0;
		lwm2_errprintf(0, err, errlen, "couldn't open %s: %s", path, strerror(errno));
		lwm2_conf_free(c);
		return -1;
	}
	rc = read_lines(c, f, path, check, err, errlen);
	fclose(f);
	if (rc < 0) {
		int e = errno;

		lwm2_conf_free(c);
		errno = e;
	}
	return rc;
}

void lwm2_conf_free(struct lwm2_conf *c)
{
	for (int i = 0; i < LWM2_CONF_NKEYS; i++)
		free(c->v[i].text);
	memset(c, 0, sizeof(*c));
}

int lwm2_conf_copy(const struct lwm2_conf *c, enum lwm2_conf_id id, char *dst, size_t len)
{
	const char *t = c->v[id].text ? c->v[id].text : "";

	if (strlen(t) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dst, t, strlen(t) + 1);
	return 0;
}
