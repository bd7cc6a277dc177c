/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * LD_PRELOAD editing: put liblwm2.so first (it must see the application's
 * calls before any other interposer forwards them), keep every entry of the
 * user's own, and never list it twice: the batch shell passes its
 * LD_PRELOAD on to srun and so to every step of the job.
 */
#include <errno.h>
#include <string.h>

#include "lwm2_spank.h"

#define SEPARATORS ": \t"

static const char *base_name(const char *p, size_t len, size_t *blen)
{
	const char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] == '/')
			b = p + i + 1;
	*blen = len - (size_t)(b - p);
	return b;
}

static bool is_ours(const char *entry, size_t len, const char *lib)
{
	size_t libbl, bl;
	const char *libb = base_name(lib, strlen(lib), &libbl);
	const char *b = base_name(entry, len, &bl);

	if (len == strlen(lib) && !memcmp(entry, lib, len))
		return true;
	return bl == libbl && libbl > 0 && !memcmp(b, libb, bl);
}

/* Append an entry with a ':' before it if out is not empty. */
static int append(char *out, size_t outlen, size_t *used, const char *s, size_t len)
{
	size_t need = len + (*used ? 1 : 0);

	if (*used + need + 1 > outlen) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (*used)
		out[(*used)++] = ':';
	memcpy(out + *used, s, len);
	*used += len;
	out[*used] = '\0';
	return 0;
}

/* Copy the entries of cur that are not ours after what out holds. */
static int copy_others(const char *cur, const char *lib, char *out, size_t outlen, size_t *used)
{
	const char *p = cur ? cur : "";

	while (*p) {
		size_t len;

		p += strspn(p, SEPARATORS);
		len = strcspn(p, SEPARATORS);
		if (len && !is_ours(p, len, lib) && append(out, outlen, used, p, len) < 0)
			return -1;
		p += len;
	}
	return 0;
}

int lwm2_preload_add(const char *cur, const char *lib, char *out, size_t outlen)
{
	size_t used = 0;

	if (outlen == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out[0] = '\0';
	if (append(out, outlen, &used, lib, strlen(lib)) < 0 ||
	    copy_others(cur, lib, out, outlen, &used) < 0) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

int lwm2_preload_remove(const char *cur, const char *lib, char *out, size_t outlen)
{
	size_t used = 0;

	if (outlen == 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	out[0] = '\0';
	if (copy_others(cur, lib, out, outlen, &used) < 0) {
		out[0] = '\0';
		return -1;
	}
	return 0;
}

bool lwm2_preload_has(const char *cur, const char *lib)
{
	const char *p = cur ? cur : "";

	while (*p) {
		size_t len;

		p += strspn(p, SEPARATORS);
		len = strcspn(p, SEPARATORS);
		if (len && is_ours(p, len, lib))
			return true;
		p += len;
	}
	return false;
}
