/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The step's descriptors, for processes inside containers.
 *
 * A container has a mount namespace of its own: the step directory and
 * liblwm2.so are not at their paths there, or are other files.  A file
 * descriptor opened outside is inherited across exec into it, and
 * openat(fd, ...) and /proc/self/fd/N work there.  So whoever starts the
 * measured processes (spank_lwm2.so in each task, `lwm2 run`) opens both
 * and passes them on as N:DEV:INO (LWM2_LIB_FD, LWM2_DIR_FD), with the
 * identity of the root they started under (LWM2_ROOT, DEV:INO); the
 * library uses a descriptor only while it is still that file.
 */
#ifndef LWM2_STEPFDS_H
#define LWM2_STEPFDS_H

#include <stddef.h>
#include <stdint.h>

struct lwm2_fd_ident {
	int fd; /* -1 where only the identity is given (LWM2_ROOT) */
	uint64_t dev, ino;
};

/* The glibc loader a container image must have to load the library
 * (NULL where the architecture's is not known here): the library in the
 * exec into an image and the step's environment entering one both ask. */
#if defined(__x86_64__)
#define LWM2_GLIBC_LOADER "/lib64/ld-linux-x86-64.so.2"
#elif defined(__aarch64__)
#define LWM2_GLIBC_LOADER "/lib/ld-linux-aarch64.so.1"
#elif defined(__powerpc64__)
#define LWM2_GLIBC_LOADER "/lib64/ld64.so.2"
#else
#define LWM2_GLIBC_LOADER NULL
#endif

/* Room for "N:DEV:INO" with every number at its largest. */
#define LWM2_FD_IDENT_LEN 64

/*
 * Parse "N:DEV:INO" (with_fd) or "DEV:INO": 0, or -1 for anything else.
 * Inline and without libc's number parsers: the preload library parses it
 * in an exec wrapper, where the caller may be the child of vfork.
 */
static inline int lwm2_fd_ident_parse(const char *s, int with_fd, struct lwm2_fd_ident *id)
{
	uint64_t v[3] = {0, 0, 0};
	int n = with_fd ? 3 : 2, i;

	if (!s)
		return -1;
	for (i = 0; i < n; i++) {
		int digits = 0;

		for (; *s >= '0' && *s <= '9' && digits < 20; s++, digits++) {
			if (v[i] > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
				return -1;
			v[i] = v[i] * 10 + (uint64_t)(*s - '0');
		}
		if (!digits || *s != (i + 1 < n ? ':' : '\0'))
			return -1;
		s++;
	}
	if (with_fd && v[0] > 0x7fffffff)
		return -1;
	id->fd = with_fd ? (int)v[0] : -1;
	id->dev = v[with_fd ? 1 : 0];
	id->ino = v[with_fd ? 2 : 1];
	return 0;
}

/*
 * Open lib (read-only) and dir (a path descriptor) as descriptors that
 * survive exec, at high numbers where the application's own dup2 onto
 * low ones does not meet them, and write the three variables' values into
 * lib_val, dir_val and root_val (LWM2_FD_IDENT_LEN bytes each).  Returns
 * 0, or -1 with the reason in err and no descriptor left open.
 */
int lwm2_step_fds_open(const char *lib, const char *dir, char *lib_val, char *dir_val,
                       char *root_val, char *err, size_t errlen);

#endif /* LWM2_STEPFDS_H */
