/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/stat.h>

#include "posix_fd.h"

_Atomic uint8_t lwm2_posix_fd_class[POSIX_FD_MAX];

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
	c = (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) ? POSIX_FD_FILE : POSIX_FD_OTHER;
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
