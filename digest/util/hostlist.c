/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's host lists expanded (hostlist.h): a name is text with bracketed
 * ranges ("n[01-03,7]"), each expanded in turn, the numbers as wide as
 * the range's first (Slurm's zero padding); names apart by commas
 * outside brackets.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"

#define NAME_MAX_LEN 256

struct walk {
	size_t left; /* names still allowed */
	int (*fn)(void *arg, const char *name);
	void *arg;
};

static int bad(void)
{
	errno = EINVAL;
	return -1;
}

/* The names of pattern p[0..n) with out[0..k) before them. */
static int expand(struct walk *w, const char *p, size_t n, char *out, size_t k)
{
	const char *open = memchr(p, '[', n), *close;

	if (!w->left)
		return 0;
	if (!open) {
		if (k + n >= NAME_MAX_LEN)
			return bad();
		memcpy(out + k, p, n);
		out[k + n] = '\0';
		w->left--;
		return w->fn(w->arg, out);
	}
	if (!(close = memchr(open, ']', n - (size_t)(open - p))) ||
	    k + (size_t)(open - p) >= NAME_MAX_LEN)
		return bad();
	memcpy(out + k, p, (size_t)(open - p));
	k += (size_t)(open - p);
	for (const char *r = open + 1; r < close;) {
		size_t len = strcspn(r, ",]");
		char *end;
		unsigned long lo, hi;
		int width = (int)strspn(r, "0123456789");

		lo = strtoul(r, &end, 10);
		if (!width || end != r + width)
			return bad();
		hi = lo;
		if (*end == '-') {
			const char *h = end + 1;

			hi = strtoul(h, &end, 10);
			if (end == h || hi < lo || hi - lo > 1000000)
				return bad();
		}
		if (end != r + len)
			return bad();
		for (unsigned long v = lo; v <= hi && w->left; v++) {
			int m = snprintf(out + k, NAME_MAX_LEN - k, "%0*lu", width, v);
			int rc;

			if (m < 0 || (size_t)m >= NAME_MAX_LEN - k)
				return bad();
			if ((rc = expand(w, close + 1, n - (size_t)(close + 1 - p), out,
			                 k + (size_t)m)) != 0)
				return rc;
		}
		r += len + (r[len] == ',');
	}
	return 0;
}

int lwm2_hostlist_each(const char *list, size_t max, int (*fn)(void *arg, const char *name),
                       void *arg)
{
	struct walk w = {max, fn, arg};
	char out[NAME_MAX_LEN];

	while (list && *list) {
		size_t n = 0;
		int depth = 0, rc;

		/* a comma inside brackets is the range's, not the list's */
		for (; list[n] && (depth || list[n] != ','); n++)
			depth += list[n] == '[' ? 1 : list[n] == ']' ? -1 : 0;
		if (n && (rc = expand(&w, list, n, out, 0)) != 0)
			return rc;
		list += n + (list[n] == ',');
	}
	return 0;
}
