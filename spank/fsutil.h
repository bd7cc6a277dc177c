/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Safe file-system steps for root in slurmstepd (see fsutil.c). */
#ifndef LWM2_SPANK_FSUTIL_H
#define LWM2_SPANK_FSUTIL_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Make (one level, mode) or open a directory that must belong to root and
 * be writable by root alone; a symlink or anything else there is refused.
 * Returns an O_CLOEXEC descriptor, or -1 with errno and the reason in err.
 */
int lwm2_open_root_dir(int atfd, const char *path, mode_t mode, char *err, size_t errlen);

/* Remove name below parentfd and everything in it, following no symlink,
 * at any depth (with a bounded number of open descriptors).  depth is not
 * used.  A missing name is not an error. */
int lwm2_rmtree_at(int parentfd, const char *name, int depth);

/* Switch this thread's file-system identity to the user and back. */
int lwm2_fs_become(uid_t uid, gid_t gid);
void lwm2_fs_restore(void);

#endif /* LWM2_SPANK_FSUTIL_H */
