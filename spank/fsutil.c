/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Directory and file handling for slurmstepd, which runs as root next to
 * directories the job's user can write.  Everything is done relative to
 * directory descriptors opened with O_NOFOLLOW, so a name planted by a user
 * (a symlink, a FIFO, a directory of someone else) is seen and refused,
 * never followed.  Files the user may influence are written with the
 * user's file-system identity (setfsuid), not as root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "fsutil.h"

static int fail(char *err, size_t errlen, const char *fmt, const char *a, int e)
{
	return lwm2_errprintf(e, err, errlen, fmt, a, strerror(e));
}

int lwm2_open_root_dir(int atfd, const char *path, mode_t mode, char *err, size_t errlen)
{
	struct stat st;
	int fd, e;

	if (mkdirat(atfd, path, mode) == 0) {
		/* umask may have taken bits away; the mode is part of the
		 * protection. */
		if (fchmodat(atfd, path, mode, 0) < 0)
			return fail(err, errlen, "chmod %s: %s", path, errno);
	} else if (errno != EEXIST)
		return fail(err, errlen, "mkdir %s: %s", path, errno);
	fd = openat(atfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, "open %s: %s", path,
		            errno == ELOOP || errno == ENOTDIR ? ENOTDIR : errno);
	if (fstat(fd, &st) < 0) {
		e = errno;
		close(fd);
		return fail(err, errlen, "stat %s: %s", path, e);
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		lwm2_errprintf(0, err, errlen,
		               "%s is owned by uid %u with mode %04o; it must be root's "
		               "and writable by root alone",
		               path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* Directories open at once in the walk; deeper ones are moved up. */
#define RMTREE_OPEN_MAX 32

/*
 * Empty the directory dfd.  Directories deeper than RMTREE_OPEN_MAX below
 * the top are renamed into the top directory (topfd) instead of entered:
 * the walk never holds more descriptors, never follows "..", and any depth
 * is removed in a few passes.  *moved counts the renames.
 */
static int empty_dir(int topfd, int dfd, int depth, unsigned *seq, size_t *moved)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	/* A description of its own: a dup would share the read position,
	 * left at the end by the previous pass. */
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((de = readdir(d))) {
		char up[32];
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR) {
			rc = -1;
			continue;
		}
		if (depth >= RMTREE_OPEN_MAX) {
			snprintf(up, sizeof(up), ".lwm2-rm.%u", (*seq)++);
			if (renameat(dfd, de->d_name, topfd, up) == 0)
				(*moved)++;
			else
				rc = -1;
			continue;
		}
		sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			rc = -1;
			continue;
		}
		if (empty_dir(topfd, sub, depth + 1, seq, moved) < 0)
			rc = -1;
		close(sub);
		if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int lwm2_rmtree_at(int parentfd, const char *name, int depth)
{
	unsigned seq = 0;
	int fd, rc = 0;

	(void)depth;
	fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		/* Not a directory (or a symlink): just the name goes. */
		return unlinkat(parentfd, name, 0);
	}
	/* Each pass removes RMTREE_OPEN_MAX levels of every deep branch and
	 * moves the rest up; the bound on passes only guards against a tree
	 * that someone keeps growing while it is removed. */
	for (int pass = 0; pass < 100000; pass++) {
		size_t moved = 0;

		rc = empty_dir(fd, fd, 0, &seq, &moved);
		if (!moved)
			break;
	}
	close(fd);
	if (unlinkat(parentfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = -1;
	return rc;
}

int lwm2_fs_become(uid_t uid, gid_t gid)
{
	/* setfsuid reports the previous value; a second call tells whether
	 * the first took effect.  It acts on this thread only. */
	setfsgid(gid);
	setfsuid(uid);
	if ((uid_t)setfsuid(uid) != uid || (gid_t)setfsgid(gid) != gid) {
		lwm2_fs_restore();
		errno = EPERM;
		return -1;
	}
	return 0;
}

void lwm2_fs_restore(void)
{
	setfsuid(0);
	setfsgid(0);
}
