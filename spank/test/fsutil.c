/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Removal of what a user can leave in a step directory: trees of any
 * depth, symlinks that must not be followed. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "tap.h"

/* A chain of depth directories below name, a file at every level. */
static int deep_tree(int top, const char *name, int depth)
{
	int fd = -1, nfd;

	if (mkdirat(top, name, 0700) < 0 ||
	    (fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	for (int i = 0; i < depth; i++) {
		int f = openat(fd, "f.lwm2", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (f < 0 || close(f) < 0 || mkdirat(fd, "d", 0700) < 0 ||
		    (nfd = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			close(fd);
			return -1;
		}
		close(fd);
		fd = nfd;
	}
	close(fd);
	return 0;
}

int main(void)
{
	char tmpl[] = "/tmp/lwm2-fsutil-XXXXXX", keep[PATH_MAX];
	struct stat sb;
	int top, fd;

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		return 1;
	}
	top = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(keep, sizeof(keep), "%s/keep", tmpl);
	fd = open(keep, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	close(fd);

	ok(deep_tree(top, "step", 300) == 0, "a tree 300 levels deep");
	/* symlinks to the outside, at the top and deep down */
	ok(symlinkat(keep, top, "step/link") == 0 &&
	       symlinkat(tmpl, top, "step/d/d/d/dirlink") == 0,
	   "symlinks to a file and a directory outside");
	ok(lwm2_rmtree_at(top, "step", 0) == 0, "removed without an error");
	ok(fstatat(top, "step", &sb, AT_SYMLINK_NOFOLLOW) < 0, "nothing of it is left");
	ok(stat(keep, &sb) == 0, "what the symlinks point to is untouched");
	ok(lwm2_rmtree_at(top, "step", 0) == 0, "removing what is gone: no error");
	ok(deep_tree(top, "x", 3000) == 0 && lwm2_rmtree_at(top, "x", 0) == 0 &&
	       fstatat(top, "x", &sb, AT_SYMLINK_NOFOLLOW) < 0,
	   "a tree 3000 levels deep removed too");
	unlink(keep);
	close(top);
	rmdir(tmpl);
	return done_testing();
}
