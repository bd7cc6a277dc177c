/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The step's descriptors for processes inside containers: see stepfds.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_PATH */
#endif
#include "stepfds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"

/* The lowest number the descriptors take: above what programs use by
 * habit (a shell's redirections go to 3-9, bash keeps its script at 255),
 * below the smallest limit of open files a site sets (1024). */
#define STEP_FD_BASE 900

static int move_high(int fd)
{
	struct rlimit rl;
	int base = STEP_FD_BASE, hi;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur <= (rlim_t)base + 16)
		base = rl.rlim_cur > 32 ? (int)rl.rlim_cur / 2 : 3;
	hi = fcntl(fd, F_DUPFD, base); /* without FD_CLOEXEC: it crosses exec */
	close(fd);
	return hi;
}

static int open_one(const char *path, int flags, const char *what, char *val, char *err,
                    size_t errlen)
{
	struct stat st;
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		lwm2_errprintf(0, err, errlen, "couldn't open the %s %s: %s", what, path,
		               strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fd = move_high(fd);
	if (fd < 0)
		return lwm2_errprintf(0, err, errlen, "couldn't keep the %s %s open: %s", what,
		                      path, strerror(errno));
	snprintf(val, LWM2_FD_IDENT_LEN, "%d:%llu:%llu", fd, (unsigned long long)st.st_dev,
	         (unsigned long long)st.st_ino);
	return fd;
}

int lwm2_step_fds_open(const char *lib, const char *dir, char *lib_val, char *dir_val,
                       char *root_val, char *err, size_t errlen)
{
	struct stat root;
	int lfd, dfd;

	if (stat("/", &root) != 0)
		return lwm2_errprintf(0, err, errlen, "couldn't look at /: %s", strerror(errno));
	lfd = open_one(lib, O_RDONLY, "library", lib_val, err, errlen);
	if (lfd < 0)
		return -1;
	dfd = open_one(dir, O_PATH | O_DIRECTORY, "step directory", dir_val, err, errlen);
	if (dfd < 0) {
		close(lfd);
		return -1;
	}
	snprintf(root_val, LWM2_FD_IDENT_LEN, "%llu:%llu", (unsigned long long)root.st_dev,
	         (unsigned long long)root.st_ino);
	return 0;
}
