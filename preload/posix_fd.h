/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Descriptor classification for the POSIX I/O module: is this descriptor a
 * file (regular file or block device) whose I/O we count, or something else
 * (socket, pipe, terminal, character device, directory)?
 *
 * One byte per descriptor for the first POSIX_FD_MAX descriptors, in .bss:
 * the kernel maps its pages on first touch, so a process that uses 10
 * descriptors pays for one page.  The byte is read with a relaxed atomic
 * load (a plain byte load on every target), so the hot path is one load
 * and one compare; no lock, no system call.
 *
 * Entries are filled eagerly by the wrappers that create descriptors
 * (open and friends with one fstat, pipe and socket without one, dup
 * copies the class) and lazily, with one fstat, the first time an unknown
 * descriptor is used (inherited descriptors, descriptors made inside libc).
 * Every wrapped way to close or replace a descriptor (close, fclose,
 * freopen, pclose, dup2, dup3, close_range, closefrom) resets or
 * overwrites the entry, so a descriptor number reused by a pipe is not
 * taken for the file it once was.
 *
 * Descriptors at or above POSIX_FD_MAX are classified by fstat on each
 * use: correct, slower, and rare enough (64Ki open descriptors) not to
 * deserve a second table.
 */
#ifndef LWM2_POSIX_FD_H
#define LWM2_POSIX_FD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lwm2_core.h"

/* Overridable so a test can run every descriptor through the path above
 * the table. */
#ifndef POSIX_FD_MAX
#define POSIX_FD_MAX 65536
#endif

enum posix_fd_class {
	POSIX_FD_UNKNOWN = 0, /* not looked at yet, or closed since */
	POSIX_FD_FILE = 1,    /* regular file or block device: counted */
	POSIX_FD_OTHER = 2,   /* anything else: passed through */
};

extern _Atomic uint8_t lwm2_posix_fd_class[POSIX_FD_MAX] LWM2_HIDDEN;

/* fstat the descriptor and remember the answer; true for a file.  Keeps
 * errno.  A descriptor that fstat rejects (not open) is not a file and is
 * not remembered. */
bool lwm2_posix_fd_classify(int fd) LWM2_HIDDEN;

static inline bool posix_fd_is_file(int fd)
{
	if (LWM2_LIKELY((unsigned)fd < POSIX_FD_MAX)) {
		uint8_t c = atomic_load_explicit(&lwm2_posix_fd_class[fd], memory_order_relaxed);

		if (LWM2_LIKELY(c != POSIX_FD_UNKNOWN))
			return c == POSIX_FD_FILE;
	}
	if (fd < 0)
		return false;
	return lwm2_posix_fd_classify(fd);
}

static inline void posix_fd_set(int fd, enum posix_fd_class c)
{
	if ((unsigned)fd < POSIX_FD_MAX)
		atomic_store_explicit(&lwm2_posix_fd_class[fd], (uint8_t)c, memory_order_relaxed);
}

static inline enum posix_fd_class posix_fd_get(int fd)
{
	if ((unsigned)fd < POSIX_FD_MAX)
		return atomic_load_explicit(&lwm2_posix_fd_class[fd], memory_order_relaxed);
	return POSIX_FD_UNKNOWN;
}

/* Forget descriptors first..last (inclusive), as close_range does. */
void lwm2_posix_fd_forget_range(unsigned first, unsigned last) LWM2_HIDDEN;

#endif /* LWM2_POSIX_FD_H */
