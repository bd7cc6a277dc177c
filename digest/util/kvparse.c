/* SPDX-License-Identifier: GPL-2.0-or-later */
/* "Key = value" lines (see kvparse.h). */
#include "kvparse.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

char *lwm2_trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int lwm2_kv_split(char *line, bool hash_anywhere, char **key, char **val)
{
	char *hash, *eq;

	if (hash_anywhere && (hash = strchr(line, '#')))
		*hash = '\0';
	*key = lwm2_trim(line);
	if (!**key || **key == '#')
		return 0;
	if (!(eq = strchr(*key, '=')))
		return -1;
	*eq = '\0';
	*key = lwm2_trim(*key);
	*val = lwm2_trim(eq + 1);
	return 1;
}

int lwm2_parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
