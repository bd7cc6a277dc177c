/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole writes, atomic replacement and bounded reads of small files, for
 * the library, jobcomp/lwm2 and the lwm2 command (not for liblwm2.so: none
 * of this is meant for a signal handler or an interposed call).
 */
#ifndef LWM2_FILEIO_H
#define LWM2_FILEIO_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* len bytes of buf to fd, through short writes and EINTR.  0, or -1 with
 * errno (EIO where the file takes nothing). */
int lwm2_write_all(int fd, const void *buf, size_t len);

/* fsync of the directory at dir: what makes a rename or an unlink in it
 * survive a crash.  0, or -1 with errno. */
int lwm2_fsync_dir(const char *dir);

/*
 * Replace name in the directory dirfd by a file (mode) holding the iovcnt
 * pieces of iov: written under tmp in the same directory (NULL:
 * ".<name>.tmp"), synced, renamed over name, and the directory synced, so
 * that after a crash name is the old file or the new one, never a part.
 * Whatever is found at tmp is removed first and the file made new
 * (O_EXCL), so a link planted there, symbolic or hard, is never written
 * through.  0, or -1 with errno, the step that failed in err and the
 * temporary file removed.
 */
int lwm2_atomic_write_at(int dirfd, const char *name, const char *tmp, const struct iovec *iov,
                         int iovcnt, mode_t mode, char *err, size_t errlen);

/* The same for a path: the temporary file is ".<base>.tmp" beside it. */
int lwm2_atomic_write(const char *path, const struct iovec *iov, int iovcnt, mode_t mode, char *err,
                      size_t errlen);

/*
 * Everything fd has until its end, at most max bytes, NUL-terminated
 * (malloc'd; *len without the NUL): a regular file, a pipe or a terminal
 * alike.  NULL with errno and err: EFBIG when there is more than max.
 */
char *lwm2_read_fd(int fd, size_t max, size_t *len, char *err, size_t errlen);

/*
 * The regular file name in dirfd (AT_FDCWD: a path), read as
 * lwm2_read_fd does.  A symlink, a FIFO, a device or a directory is
 * refused (EINVAL, "not a regular file") without blocking, and so is a file
 * larger than max (EFBIG) before anything is read.
 */
char *lwm2_read_file_at(int dirfd, const char *name, size_t max, size_t *len, char *err,
                        size_t errlen);

#endif /* LWM2_FILEIO_H */
