/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's host lists as the names they stand for, and what is refused. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hostlist.h"
#include "tap.h"

static int join(void *arg, const char *name)
{
	char *out = arg;
	size_t k = strlen(out);

	snprintf(out + k, 512 - k, "%s%s", k ? " " : "", name);
	return 0;
}

static const char *names(const char *list, size_t max)
{
	static char out[512];

	out[0] = '\0';
	if (lwm2_hostlist_each(list, max, join, out) < 0)
		snprintf(out, sizeof(out), "refused%s", errno == EINVAL ? "" : " (errno)");
	return out;
}

static int stop(void *arg, const char *name)
{
	(void)name;
	++*(int *)arg;
	return 1;
}

int main(void)
{
	int calls = 0;

	is_str(names("n1", 100), "n1", "one plain name");
	is_str(names("n1,gpu2", 100), "n1 gpu2", "two names");
	is_str(names("n[1-3]", 100), "n1 n2 n3", "a range");
	is_str(names("n[08-11,20]", 100), "n08 n09 n10 n11 n20",
	       "zero padding, and a list in the range");
	is_str(names("r[1-2]-n[1-2],x", 100), "r1-n1 r1-n2 r2-n1 r2-n2 x", "two ranges in a name");
	is_str(names("n[1-100]", 3), "n1 n2 n3", "at most max names");
	is_str(names("", 100), "", "an empty list: none");
	is_str(names("n[1-3", 100), "refused", "an unclosed bracket");
	is_str(names("n[3-1]", 100), "refused", "a range backwards");
	is_str(names("n[a-b]", 100), "refused", "a range not of numbers");
	ok(lwm2_hostlist_each("n[1-3]", 100, stop, &calls) == 1 && calls == 1,
	   "the callback stops the walk with its value");
	return done_testing();
}
