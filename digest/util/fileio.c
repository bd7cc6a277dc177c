/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Whole writes, atomic replacement, bounded reads (see fileio.h). */
#include "fileio.h"

#include "errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lwm2_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int lwm2_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc, e;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	e = errno;
	close(fd);
	errno = e;
	return rc;
}

int lwm2_atomic_write_at(int dirfd, const char *name, const char *tmp, const struct iovec *iov,
                         int iovcnt, mode_t mode, char *err, size_t errlen)
{
	char tbuf[NAME_MAX + 1];
	int fd, i, e;

	if (!tmp) {
		if ((size_t)snprintf(tbuf, sizeof(tbuf), ".%s.tmp", name) >= sizeof(tbuf))
			return lwm2_errprintf(ENAMETOOLONG, err, errlen,
			                      "couldn't create .%s.tmp: %s", name,
			                      strerror(ENAMETOOLONG));
		tmp = tbuf;
	}
	/* A new file, never one found at tmp: in a directory another user
	 * can write (a step directory), a link planted there must not have
	 * its target truncated or written. */
	if (unlinkat(dirfd, tmp, 0) < 0 && errno != ENOENT) {
		e = errno;
		return lwm2_errprintf(e, err, errlen, "couldn't remove %s: %s", tmp, strerror(e));
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		e = errno;
		return lwm2_errprintf(e, err, errlen, "couldn't create %s: %s", tmp, strerror(e));
	}
	for (i = 0; i < iovcnt; i++)
		if (lwm2_write_all(fd, iov[i].iov_base, iov[i].iov_len) < 0)
			break;
	if (i < iovcnt || fsync(fd) < 0) {
		e = errno;
		close(fd);
		goto fail_write;
	}
	if (close(fd) < 0) {
		e = errno;
		goto fail_write;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		e = errno;
		unlinkat(dirfd, tmp, 0);
		return lwm2_errprintf(e, err, errlen, "couldn't rename %s to %s: %s", tmp, name,
		                      strerror(e));
	}
	/* the rename is durable only once the directory is */
	if (fsync(dirfd) < 0) {
		e = errno;
		return lwm2_errprintf(e, err, errlen, "couldn't sync the directory of %s: %s", name,
		                      strerror(e));
	}
	return 0;
fail_write:
	unlinkat(dirfd, tmp, 0);
	return lwm2_errprintf(e, err, errlen, "couldn't write %s: %s", tmp, strerror(e));
}

int lwm2_atomic_write(const char *path, const struct iovec *iov, int iovcnt, mode_t mode, char *err,
                      size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int dfd, rc, e;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return lwm2_errprintf(ENAMETOOLONG, err, errlen,
		                      "couldn't open the directory of %s: %s", path,
		                      strerror(ENAMETOOLONG));
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		e = errno;
		return lwm2_errprintf(e, err, errlen, "couldn't open the directory %s: %s", dir,
		                      strerror(e));
	}
	rc = lwm2_atomic_write_at(dfd, slash ? slash + 1 : path, NULL, iov, iovcnt, mode, err,
	                          errlen);
	e = errno;
	close(dfd);
	errno = e;
	return rc;
}

char *lwm2_read_fd(int fd, size_t max, size_t *len, char *err, size_t errlen)
{
	size_t cap = 65536, n = 0;
	struct stat st;
	char *buf = NULL;
	int e;

	if (max > SIZE_MAX - 2)
		max = SIZE_MAX - 2;
	/* a regular file's size is a good first guess: one allocation, and
	 * the read that sees its end fits in the byte left over */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size < max)
		cap = (size_t)st.st_size + 2;
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 >= cap) {
			char *nb;

			if (buf)
				cap = cap > SIZE_MAX / 2 ? SIZE_MAX : 2 * cap;
			/* one byte beyond max tells a file of max bytes
			 * from a larger one */
			if (cap > max + 2)
				cap = max + 2;
			if (!(nb = realloc(buf, cap))) {
				free(buf);
				lwm2_errprintf(ENOMEM, err, errlen, "out of memory");
				return NULL;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			/* opened O_NONBLOCK (so that a FIFO does not block
			 * the open): wait for the writer */
			struct pollfd p = {.fd = fd, .events = POLLIN};

			if (poll(&p, 1, -1) >= 0 || errno == EINTR)
				continue;
		}
		if (r < 0) {
			e = errno;
			free(buf);
			lwm2_errprintf(e, err, errlen, "%s", strerror(e));
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			lwm2_errprintf(EFBIG, err, errlen, "larger than %zu bytes", max);
			return NULL;
		}
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

char *lwm2_read_file_at(int dirfd, const char *name, size_t max, size_t *len, char *err,
                        size_t errlen)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), e;
	struct stat st;
	char *buf = NULL;

	if (fd < 0) {
		e = errno;
		lwm2_errprintf(e, err, errlen, "open: %s", strerror(e));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		lwm2_errprintf(EINVAL, err, errlen, "not a regular file");
	else if ((uint64_t)st.st_size > max)
		lwm2_errprintf(EFBIG, err, errlen, "%lld bytes, more than the limit %zu",
		               (long long)st.st_size, max);
	else
		buf = lwm2_read_fd(fd, max, len, err, errlen);
	e = errno;
	close(fd);
	errno = e;
	return buf;
}
