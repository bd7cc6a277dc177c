/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "posix_fd.h"

_Atomic uint8_t lwm2_posix_fd_class[POSIX_FD_MAX];

/*
 * Files of /proc and /sys are regular files to fstat, but reading them asks
 * the kernel, it is no file I/O (an MPI library reads dozens of them at
 * start).  Their devices are looked up once; 0 means not yet, so a device
 * is stored plus one.  Only a real proc or sysfs counts: in a container
 * without them (bubblewrap binds neither by default) /proc or /sys is a
 * plain directory of the image's root, whose device is where the image's
 * files are, and taking it would leave all their I/O uncounted.
 */
#define PROC_SUPER_MAGIC 0x9fa0
#define SYSFS_MAGIC      0x62656572
#define NO_PSEUDO_FS     UINT64_MAX

static _Atomic uint64_t pseudo_fs_dev[2];

static bool on_pseudo_fs(dev_t dev)
{
	static const char *const roots[2] = {"/proc", "/sys"};
	static const long magic[2] = {PROC_SUPER_MAGIC, SYSFS_MAGIC};

	for (int i = 0; i < 2; i++) {
		uint64_t known = atomic_load_explicit(&pseudo_fs_dev[i], memory_order_relaxed);
		struct stat st;
		struct statfs fs;

		if (!known) {
			known = statfs(roots[i], &fs) == 0 && (long)fs.f_type == magic[i] &&
			                stat(roots[i], &st) == 0
			            ? (uint64_t)st.st_dev + 1
			            : NO_PSEUDO_FS;
			atomic_store_explicit(&pseudo_fs_dev[i], known, memory_order_relaxed);
		}
		if (known != NO_PSEUDO_FS && known - 1 == (uint64_t)dev)
			return true;
	}
	return false;
}

/*
 * Cold: taken once per descriptor.  A descriptor closed by another thread
 * between our fstat and our store may keep a stale class until it is
 * closed again; that needs the application itself to race on the
 * descriptor number, and costs at most a miscounted call.
 */
__attribute__((noinline, cold)) bool lwm2_posix_fd_classify(int fd)
{
	int saved = errno;
	struct stat st;
	enum posix_fd_class c;

	if (fstat(fd, &st) != 0) {
		errno = saved;
		return false;
	}
	c = (S_ISBLK(st.st_mode) || (S_ISREG(st.st_mode) && !on_pseudo_fs(st.st_dev)))
	        ? POSIX_FD_FILE
	        : POSIX_FD_OTHER;
	posix_fd_set(fd, c);
	errno = saved;
	return c == POSIX_FD_FILE;
}

void lwm2_posix_fd_forget_range(unsigned first, unsigned last)
{
	if (first >= POSIX_FD_MAX)
		return;
	if (last >= POSIX_FD_MAX)
		last = POSIX_FD_MAX - 1;
	for (unsigned fd = first; fd <= last; fd++)
		atomic_store_explicit(&lwm2_posix_fd_class[fd], POSIX_FD_UNKNOWN,
		                      memory_order_relaxed);
}
