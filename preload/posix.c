/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The POSIX I/O module: calls, bytes and time of reads and writes on files,
 * and a count and time of file metadata calls (open, close, seek, sync).
 *
 * What is counted
 * ---------------
 * Only regular files and block devices (posix_fd.h); sockets, pipes,
 * terminals, /dev/null, directories pass straight through.  The stdio
 * family is counted at the stdio level, with the bytes the application
 * handed over or got back: glibc's stdio writes its buffers with internal
 * calls that never reach our write(), so nothing is counted twice and a
 * 1-byte fputc is one call of one byte, as the application sees it.
 *
 * A call is counted whether it succeeds or fails: the time was spent in the
 * file system either way.  Bytes are counted only for what was transferred
 * (a positive return value).  A failed open counts as a metadata call: the
 * path lookup loaded the file system, whatever the answer.  A call on a
 * descriptor that is not open (EBADF) is not a file call and not counted.
 *
 * Wrapped, by role:
 *   read:  read pread pread64 readv preadv preadv64 preadv2 preadv64v2
 *          __read_chk __pread_chk __pread64_chk
 *          fread fread_unlocked __fread_chk __fread_unlocked_chk
 *          fgets fgets_unlocked __fgets_chk __fgets_unlocked_chk
 *          fgetc getc fgetc_unlocked getc_unlocked getchar getline getdelim
 *          __getdelim
 *   write: write pwrite pwrite64 writev pwritev pwritev64 pwritev2 pwritev64v2
 *          fwrite fwrite_unlocked fputs fputs_unlocked fputc putc
 *          fputc_unlocked putc_unlocked putchar puts
 *          fprintf vfprintf printf vprintf
 *          __fprintf_chk __vfprintf_chk __printf_chk __vprintf_chk
 *   both:  copy_file_range sendfile sendfile64: a read of the source and a
 *          write of the destination, each counted where it is a file, with
 *          the call's bytes; the time is split evenly when both are files
 *          (cp copies with copy_file_range: without these, unseen)
 *   meta:  open open64 openat openat64 creat creat64 __open_2 __open64_2
 *          __openat_2 __openat64_2 close lseek lseek64 fsync fdatasync
 *          fopen fopen64 fdopen freopen freopen64 fclose fflush
 *          fseek fseeko fseeko64
 *   descriptor bookkeeping only (never counted): dup dup2 dup3 fcntl
 *          fcntl64 pipe pipe2 socket socketpair accept accept4 pclose
 *          close_range closefrom
 * The __*_chk entry points are what -D_FORTIFY_SOURCE compiles read,
 * fread, fgets and the printf family into; without them a fortified
 * application's I/O would go unseen.  printf and puts are here because a
 * batch job's stdout is a file.  Not wrapped: the scanf family (its bytes
 * consumed are not returned; line and block readers cover input files),
 * wide-character stdio, dprintf, mmap'd I/O, and metadata beyond
 * open/close/seek/sync (stat, unlink, mkdir: the record has no counter).
 *
 * Asynchronous I/O (at the end of this file): POSIX aio and libaio are
 * counted per request when its result is collected (aio_return, the events
 * of io_getevents), in aio byte counters of their own; the time of every
 * aio call (submitting, polling, waiting) is aio time, apart from read and
 * write time, since a request runs while the program does other work.
 * io_uring is not followed (the ring is shared memory): setting one up
 * (the io_uring_setup system call through syscall(), or liburing's
 * io_uring_queue_init*) flags the process, as does mapping a file shared
 * and writable (stores through the mapping are not calls).
 * Unseen by any interposer: the bodies glibc's headers inline into
 * optimised applications (getc_unlocked, putc_unlocked, fputc_unlocked,
 * fgetc_unlocked, and fread_unlocked/fwrite_unlocked of small constant
 * sizes); getline, inlined to __getdelim, is caught there.
 *
 * Real functions
 * --------------
 * Each real function is looked up once with lwm2_real (dlsym RTLD_NEXT)
 * and kept in an atomic pointer.  The descriptor functions, which are
 * async-signal-safe and may run in a signal handler, are resolved in the
 * module's init so a handler never enters dlsym; stdio functions (not
 * async-signal-safe anyway) are resolved on first use, so a short-lived
 * process pays only for the functions it calls.  Two threads resolving at
 * once store the same pointer.  Before resolution is possible (inside
 * dlsym itself) a descriptor function falls back to its raw system call; a
 * stdio function fails with ENOSYS.
 *
 * Cost
 * ----
 * Not a file, or lwm2 off: one load of the real pointer, one of lwm2_on,
 * one of the descriptor's class byte, then a tail call.  A file: in
 * addition, the earmark store, two clock reads, three counter adds into
 * the thread's own buffer.  No lock, no allocation, no system call (but
 * one fstat the first time a descriptor is seen).  Measured with
 * posix_bench (AMD EPYC guest, one rdtsc 12 ns): +1.3..2.1 ns per 1-byte
 * write, read or fwrite on /dev/null, +19 ns per 1-byte write and
 * +18..27 ns per read on a file, +15 ns per 1-byte fwrite or fread on a
 * file; the two clock reads are most of it.
 */
#define _GNU_SOURCE
/* Our definitions must be the functions themselves: no fortify inlines, no
 * 64-bit offset renaming, and none of the inline stdio bodies glibc's
 * headers give optimised builds (getline, putchar, fread_unlocked...). */
#undef _FORTIFY_SOURCE
#undef _FILE_OFFSET_BITS
#ifndef __NO_INLINE__
#define __NO_INLINE__ 1
#endif

#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core_int.h"
#include "lwm2_core.h"
#include "posix_fd.h"

/* Fortified entry points and GNU extensions the headers do not declare
 * without _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
char *__fgets_chk(char *s, size_t size, int n, FILE *fp);
char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *fp);
int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);
int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap);
int __printf_chk(int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int fcntl64(int fd, int cmd, ...);

/*
 * The real functions: X(name, return type, parameter types).  FD_REALS are
 * resolved at init (async-signal-safe callers), STDIO_REALS on first use.
 */
#define FD_REALS(X)                                                                                \
	X(read, ssize_t, (int, void *, size_t))                                                    \
	X(write, ssize_t, (int, const void *, size_t))                                             \
	X(pread, ssize_t, (int, void *, size_t, off_t))                                            \
	X(pread64, ssize_t, (int, void *, size_t, off64_t))                                        \
	X(pwrite, ssize_t, (int, const void *, size_t, off_t))                                     \
	X(pwrite64, ssize_t, (int, const void *, size_t, off64_t))                                 \
	X(readv, ssize_t, (int, const struct iovec *, int))                                        \
	X(writev, ssize_t, (int, const struct iovec *, int))                                       \
	X(preadv, ssize_t, (int, const struct iovec *, int, off_t))                                \
	X(preadv64, ssize_t, (int, const struct iovec *, int, off64_t))                            \
	X(pwritev, ssize_t, (int, const struct iovec *, int, off_t))                               \
	X(pwritev64, ssize_t, (int, const struct iovec *, int, off64_t))                           \
	X(preadv2, ssize_t, (int, const struct iovec *, int, off_t, int))                          \
	X(preadv64v2, ssize_t, (int, const struct iovec *, int, off64_t, int))                     \
	X(pwritev2, ssize_t, (int, const struct iovec *, int, off_t, int))                         \
	X(pwritev64v2, ssize_t, (int, const struct iovec *, int, off64_t, int))                    \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t))                                      \
	X(__pread_chk, ssize_t, (int, void *, size_t, off_t, size_t))                              \
	X(__pread64_chk, ssize_t, (int, void *, size_t, off64_t, size_t))                          \
	X(open, int, (const char *, int, ...))                                                     \
	X(open64, int, (const char *, int, ...))                                                   \
	X(openat, int, (int, const char *, int, ...))                                              \
	X(openat64, int, (int, const char *, int, ...))                                            \
	X(creat, int, (const char *, mode_t))                                                      \
	X(creat64, int, (const char *, mode_t))                                                    \
	X(__open_2, int, (const char *, int))                                                      \
	X(__open64_2, int, (const char *, int))                                                    \
	X(__openat_2, int, (int, const char *, int))                                               \
	X(__openat64_2, int, (int, const char *, int))                                             \
	X(close, int, (int))                                                                       \
	X(lseek, off_t, (int, off_t, int))                                                         \
	X(lseek64, off64_t, (int, off64_t, int))                                                   \
	X(fsync, int, (int))                                                                       \
	X(fdatasync, int, (int))                                                                   \
	X(dup, int, (int))                                                                         \
	X(dup2, int, (int, int))                                                                   \
	X(dup3, int, (int, int, int))                                                              \
	X(fcntl, int, (int, int, ...))                                                             \
	X(fcntl64, int, (int, int, ...))                                                           \
	X(pipe, int, (int *))                                                                      \
	X(pipe2, int, (int *, int))                                                                \
	X(socket, int, (int, int, int))                                                            \
	X(socketpair, int, (int, int, int, int *))                                                 \
	X(accept, int, (int, struct sockaddr *, socklen_t *))                                      \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int))                                \
	X(close_range, int, (unsigned, unsigned, int))                                             \
	X(closefrom, void, (int))                                                                  \
	X(copy_file_range, ssize_t, (int, loff_t *, int, loff_t *, size_t, unsigned))              \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                                          \
	X(sendfile64, ssize_t, (int, int, off64_t *, size_t))

#define STDIO_REALS(X)                                                                             \
	X(fread, size_t, (void *, size_t, size_t, FILE *))                                         \
	X(fread_unlocked, size_t, (void *, size_t, size_t, FILE *))                                \
	X(__fread_chk, size_t, (void *, size_t, size_t, size_t, FILE *))                           \
	X(__fread_unlocked_chk, size_t, (void *, size_t, size_t, size_t, FILE *))                  \
	X(fgets, char *, (char *, int, FILE *))                                                    \
	X(fgets_unlocked, char *, (char *, int, FILE *))                                           \
	X(__fgets_chk, char *, (char *, size_t, int, FILE *))                                      \
	X(__fgets_unlocked_chk, char *, (char *, size_t, int, FILE *))                             \
	X(fgetc, int, (FILE *))                                                                    \
	X(getc, int, (FILE *))                                                                     \
	X(fgetc_unlocked, int, (FILE *))                                                           \
	X(getc_unlocked, int, (FILE *))                                                            \
	X(getchar, int, (void))                                                                    \
	X(getline, ssize_t, (char **, size_t *, FILE *))                                           \
	X(getdelim, ssize_t, (char **, size_t *, int, FILE *))                                     \
	X(__getdelim, ssize_t, (char **, size_t *, int, FILE *))                                   \
	X(fwrite, size_t, (const void *, size_t, size_t, FILE *))                                  \
	X(fwrite_unlocked, size_t, (const void *, size_t, size_t, FILE *))                         \
	X(fputs, int, (const char *, FILE *))                                                      \
	X(fputs_unlocked, int, (const char *, FILE *))                                             \
	X(fputc, int, (int, FILE *))                                                               \
	X(putc, int, (int, FILE *))                                                                \
	X(fputc_unlocked, int, (int, FILE *))                                                      \
	X(putc_unlocked, int, (int, FILE *))                                                       \
	X(putchar, int, (int))                                                                     \
	X(puts, int, (const char *))                                                               \
	X(vfprintf, int, (FILE *, const char *, va_list))                                          \
	X(__vfprintf_chk, int, (FILE *, int, const char *, va_list))                               \
	X(fopen, FILE *, (const char *, const char *))                                             \
	X(fopen64, FILE *, (const char *, const char *))                                           \
	X(fdopen, FILE *, (int, const char *))                                                     \
	X(freopen, FILE *, (const char *, const char *, FILE *))                                   \
	X(freopen64, FILE *, (const char *, const char *, FILE *))                                 \
	X(fclose, int, (FILE *))                                                                   \
	X(fflush, int, (FILE *))                                                                   \
	X(fseek, int, (FILE *, long, int))                                                         \
	X(fseeko, int, (FILE *, off_t, int))                                                       \
	X(fseeko64, int, (FILE *, off64_t, int))                                                   \
	X(pclose, int, (FILE *))

/*
 * real_NAME: the atomic pointer; get_NAME(): the pointer, resolving it on
 * first use (NULL while lwm2_real cannot answer, or if libc lacks NAME).
 */
#define POSIX_REAL(name, ret, params)                                                              \
	typedef ret(*name##_fn) params;                                                            \
	static _Atomic(name##_fn) real_##name;                                                     \
	static __attribute__((noinline, cold)) name##_fn resolve_##name(void)                      \
	{                                                                                          \
		int saved = errno;                                                                 \
		name##_fn f = (name##_fn)lwm2_real(#name);                                         \
                                                                                                   \
		if (f)                                                                             \
			atomic_store_explicit(&real_##name, f, memory_order_relaxed);              \
		errno = saved;                                                                     \
		return f;                                                                          \
	}                                                                                          \
	static inline name##_fn get_##name(void)                                                   \
	{                                                                                          \
		name##_fn f = atomic_load_explicit(&real_##name, memory_order_relaxed);            \
                                                                                                   \
		return LWM2_LIKELY(f != NULL) ? f : resolve_##name();                              \
	}
FD_REALS(POSIX_REAL)
STDIO_REALS(POSIX_REAL)
#undef POSIX_REAL

static void posix_init(void)
{
#define POSIX_RESOLVE(name, ret, params) (void)get_##name();
	FD_REALS(POSIX_RESOLVE)
#undef POSIX_RESOLVE
}

static void posix_fini(void);

LWM2_HIDDEN const struct lwm2_module lwm2_module_posix = {
    .name = "posix",
    .init = posix_init,
    .fini = posix_fini,
};

/* ---- counting ---------------------------------------------------------- */

static __attribute__((noinline, cold)) struct lwm2_thread *posix_attach(void)
{
	int saved = errno;
	struct lwm2_thread *t = lwm2_thread_attach_slow();

	errno = saved;
	return t;
}

static inline struct lwm2_thread *posix_thread(void)
{
	struct lwm2_thread *t = lwm2_self;

	return LWM2_LIKELY(t != NULL) ? t : posix_attach();
}

static inline bool posix_on(void)
{
	return atomic_load_explicit(&lwm2_on, memory_order_relaxed) != 0;
}

/* Storage to count a call on fd into, or NULL to pass the call through. */
static inline struct lwm2_thread *posix_enter_fd(int fd)
{
	if (LWM2_UNLIKELY(!posix_on()) || !posix_fd_is_file(fd))
		return NULL;
	return posix_thread();
}

static inline int posix_stream_fd(FILE *fp)
{
#ifdef __GLIBC__
	/* The public struct _IO_FILE field: fileno() without the call.
	 * Memory and cookie streams hold -1 here. */
	return fp->_fileno;
#else
	return fileno(fp);
#endif
}

static inline struct lwm2_thread *posix_enter_stream(FILE *fp)
{
	if (LWM2_UNLIKELY(!posix_on()) || LWM2_UNLIKELY(!fp) ||
	    !posix_fd_is_file(posix_stream_fd(fp)))
		return NULL;
	return posix_thread();
}

enum posix_route { POSIX_PASS, POSIX_COUNT, POSIX_SLOW };

/*
 * The fast path of the read and write wrappers.  Their exported function
 * decides from two or three loads what to do with the call: pass a call on
 * a descriptor the table knows is not a file (/dev/null, a socket, a pipe),
 * or any call while lwm2 is off, on to libc with a tail jump, before any
 * register is saved or the thread's storage is looked at; count a call on
 * a known file; and leave everything else (a descriptor not classified
 * yet, a real function not resolved yet) to the wrapper's full body,
 * NAME_body, which makes every decision again from the start.
 */
static inline enum posix_route posix_fd_route(const void *real, int fd)
{
	enum posix_fd_class c = posix_fd_get(fd);

	if (LWM2_UNLIKELY(real == NULL))
		return POSIX_SLOW;
	if (LWM2_LIKELY(c == POSIX_FD_OTHER) || LWM2_UNLIKELY(!posix_on()))
		return POSIX_PASS;
	return LWM2_LIKELY(c == POSIX_FD_FILE) ? POSIX_COUNT : POSIX_SLOW;
}

/* The same for a stream; a NULL stream takes the full body. */
static inline enum posix_route posix_stream_route(const void *real, FILE *fp)
{
	if (LWM2_UNLIKELY(fp == NULL))
		return POSIX_SLOW;
	return posix_fd_route(real, posix_stream_fd(fp));
}

struct posix_span {
	struct lwm2_thread *t;
	uint32_t earmark;
	uint64_t start;
};

static inline struct posix_span posix_begin(struct lwm2_thread *t)
{
	struct posix_span s;

	s.t = t;
	s.earmark = lwm2_earmark_enter(t, LWM2_EARMARK_io);
	s.start = lwm2_ticks();
	return s;
}

static inline uint64_t posix_finish(struct posix_span s)
{
	uint64_t end = lwm2_ticks();

	lwm2_earmark_leave(s.t, s.earmark);
	return end - s.start;
}

static inline void posix_end_read(struct posix_span s, uint64_t bytes)
{
	uint64_t ticks = posix_finish(s);

	lwm2_count_call(s.t, LWM2_C_posix_read_calls, LWM2_C_posix_read_bytes, bytes,
	                LWM2_C_posix_read_ns, ticks);
}

static inline void posix_end_write(struct posix_span s, uint64_t bytes)
{
	uint64_t ticks = posix_finish(s);

	lwm2_count_call(s.t, LWM2_C_posix_write_calls, LWM2_C_posix_write_bytes, bytes,
	                LWM2_C_posix_write_ns, ticks);
}

static inline void posix_count_meta(struct lwm2_thread *t, uint64_t ticks)
{
	_Atomic uint64_t *b = lwm2_buffer(t);

	lwm2_add(b, LWM2_C_posix_meta_calls, 1);
	lwm2_add(b, LWM2_C_posix_meta_ns, ticks);
}

static inline void posix_end_meta(struct posix_span s)
{
	posix_count_meta(s.t, posix_finish(s));
}

/* fsync and fdatasync stay metadata calls (the I/O time share is unchanged)
 * and are counted once more on their own: the write bandwidth includes the
 * time a writer waits for its data to reach the device. */
static inline void posix_end_sync(struct posix_span s)
{
	uint64_t ticks = posix_finish(s);
	_Atomic uint64_t *b = lwm2_buffer(s.t);

	posix_count_meta(s.t, ticks);
	lwm2_add(b, LWM2_C_posix_sync_calls, 1);
	lwm2_add(b, LWM2_C_posix_sync_ns, ticks);
}

/*
 * End of an open-like call that made fd (or failed with fd < 0): classify
 * the new descriptor (one fstat, outside the timed span) and count the
 * call if it opened a file or failed.
 */
static void posix_end_open(struct posix_span s, int fd)
{
	uint64_t ticks = posix_finish(s);

	if (fd < 0) {
		posix_count_meta(s.t, ticks);
		return;
	}
	posix_fd_set(fd, POSIX_FD_UNKNOWN);
	if (lwm2_posix_fd_classify(fd))
		posix_count_meta(s.t, ticks);
}

static inline uint64_t posix_bytes(ssize_t r)
{
	return r > 0 ? (uint64_t)r : 0;
}

static inline long posix_lo(off64_t off)
{
	return (long)off;
}

/* The high half the preadv family's system calls take; shifted out by the
 * kernel on 64-bit. */
static inline long posix_hi(off64_t off)
{
	return (long)(((uint64_t)off >> 16) >> 16);
}

static inline bool posix_open_needs_mode(int flags)
{
	return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

static __attribute__((noinline, cold)) void posix_no_real(void)
{
	errno = ENOSYS;
}

/* ---- reads and writes on descriptors ----------------------------------- */

static __attribute__((noinline)) ssize_t read_body(int fd, void *buf, size_t n)
{
	read_fn real = get_read();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_read, fd, buf, n);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n);
	s = posix_begin(t);
	r = real(fd, buf, n);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t read_count(int fd, void *buf, size_t n, read_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	read_fn real = atomic_load_explicit(&real_read, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n);
	case POSIX_COUNT:
		return read_count(fd, buf, n, real);
	case POSIX_SLOW:
		break;
	}
	return read_body(fd, buf, n);
}

static __attribute__((noinline)) ssize_t __read_chk_body(int fd, void *buf, size_t n, size_t buflen)
{
	__read_chk_fn real = get___read_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return read(fd, buf, n);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, buflen);
	s = posix_begin(t);
	r = real(fd, buf, n, buflen);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t __read_chk_count(int fd, void *buf, size_t n,
                                                          size_t buflen, __read_chk_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, buflen);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	__read_chk_fn real = atomic_load_explicit(&real___read_chk, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, buflen);
	case POSIX_COUNT:
		return __read_chk_count(fd, buf, n, buflen, real);
	case POSIX_SLOW:
		break;
	}
	return __read_chk_body(fd, buf, n, buflen);
}

static __attribute__((noinline)) ssize_t write_body(int fd, const void *buf, size_t n)
{
	write_fn real = get_write();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_write, fd, buf, n);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n);
	s = posix_begin(t);
	r = real(fd, buf, n);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t write_count(int fd, const void *buf, size_t n,
                                                     write_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	write_fn real = atomic_load_explicit(&real_write, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n);
	case POSIX_COUNT:
		return write_count(fd, buf, n, real);
	case POSIX_SLOW:
		break;
	}
	return write_body(fd, buf, n);
}

static __attribute__((noinline)) ssize_t pread_body(int fd, void *buf, size_t n, off_t off)
{
	pread_fn real = get_pread();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pread64, fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off);
	s = posix_begin(t);
	r = real(fd, buf, n, off);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pread_count(int fd, void *buf, size_t n, off_t off,
                                                     pread_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	pread_fn real = atomic_load_explicit(&real_pread, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off);
	case POSIX_COUNT:
		return pread_count(fd, buf, n, off, real);
	case POSIX_SLOW:
		break;
	}
	return pread_body(fd, buf, n, off);
}

static __attribute__((noinline)) ssize_t pread64_body(int fd, void *buf, size_t n, off64_t off)
{
	pread64_fn real = get_pread64();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pread64, fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off);
	s = posix_begin(t);
	r = real(fd, buf, n, off);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pread64_count(int fd, void *buf, size_t n, off64_t off,
                                                       pread64_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	pread64_fn real = atomic_load_explicit(&real_pread64, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off);
	case POSIX_COUNT:
		return pread64_count(fd, buf, n, off, real);
	case POSIX_SLOW:
		break;
	}
	return pread64_body(fd, buf, n, off);
}

static __attribute__((noinline)) ssize_t __pread_chk_body(int fd, void *buf, size_t n, off_t off,
                                                          size_t buflen)
{
	__pread_chk_fn real = get___pread_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return pread(fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off, buflen);
	s = posix_begin(t);
	r = real(fd, buf, n, off, buflen);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t __pread_chk_count(int fd, void *buf, size_t n, off_t off,
                                                           size_t buflen, __pread_chk_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off, buflen);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	__pread_chk_fn real = atomic_load_explicit(&real___pread_chk, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off, buflen);
	case POSIX_COUNT:
		return __pread_chk_count(fd, buf, n, off, buflen, real);
	case POSIX_SLOW:
		break;
	}
	return __pread_chk_body(fd, buf, n, off, buflen);
}

static __attribute__((noinline)) ssize_t __pread64_chk_body(int fd, void *buf, size_t n,
                                                            off64_t off, size_t buflen)
{
	__pread64_chk_fn real = get___pread64_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return pread64(fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off, buflen);
	s = posix_begin(t);
	r = real(fd, buf, n, off, buflen);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t
__pread64_chk_count(int fd, void *buf, size_t n, off64_t off, size_t buflen, __pread64_chk_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off, buflen);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	__pread64_chk_fn real = atomic_load_explicit(&real___pread64_chk, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off, buflen);
	case POSIX_COUNT:
		return __pread64_chk_count(fd, buf, n, off, buflen, real);
	case POSIX_SLOW:
		break;
	}
	return __pread64_chk_body(fd, buf, n, off, buflen);
}

static __attribute__((noinline)) ssize_t pwrite_body(int fd, const void *buf, size_t n, off_t off)
{
	pwrite_fn real = get_pwrite();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwrite64, fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off);
	s = posix_begin(t);
	r = real(fd, buf, n, off);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwrite_count(int fd, const void *buf, size_t n, off_t off,
                                                      pwrite_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	pwrite_fn real = atomic_load_explicit(&real_pwrite, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off);
	case POSIX_COUNT:
		return pwrite_count(fd, buf, n, off, real);
	case POSIX_SLOW:
		break;
	}
	return pwrite_body(fd, buf, n, off);
}

static __attribute__((noinline)) ssize_t pwrite64_body(int fd, const void *buf, size_t n,
                                                       off64_t off)
{
	pwrite64_fn real = get_pwrite64();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwrite64, fd, buf, n, off);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, buf, n, off);
	s = posix_begin(t);
	r = real(fd, buf, n, off);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwrite64_count(int fd, const void *buf, size_t n,
                                                        off64_t off, pwrite64_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, buf, n, off);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	pwrite64_fn real = atomic_load_explicit(&real_pwrite64, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, buf, n, off);
	case POSIX_COUNT:
		return pwrite64_count(fd, buf, n, off, real);
	case POSIX_SLOW:
		break;
	}
	return pwrite64_body(fd, buf, n, off);
}

static __attribute__((noinline)) ssize_t readv_body(int fd, const struct iovec *iov, int cnt)
{
	readv_fn real = get_readv();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_readv, fd, iov, cnt);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt);
	s = posix_begin(t);
	r = real(fd, iov, cnt);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t readv_count(int fd, const struct iovec *iov, int cnt,
                                                     readv_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	readv_fn real = atomic_load_explicit(&real_readv, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt);
	case POSIX_COUNT:
		return readv_count(fd, iov, cnt, real);
	case POSIX_SLOW:
		break;
	}
	return readv_body(fd, iov, cnt);
}

static __attribute__((noinline)) ssize_t writev_body(int fd, const struct iovec *iov, int cnt)
{
	writev_fn real = get_writev();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_writev, fd, iov, cnt);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt);
	s = posix_begin(t);
	r = real(fd, iov, cnt);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t writev_count(int fd, const struct iovec *iov, int cnt,
                                                      writev_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	writev_fn real = atomic_load_explicit(&real_writev, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt);
	case POSIX_COUNT:
		return writev_count(fd, iov, cnt, real);
	case POSIX_SLOW:
		break;
	}
	return writev_body(fd, iov, cnt);
}

static __attribute__((noinline)) ssize_t preadv_body(int fd, const struct iovec *iov, int cnt,
                                                     off_t off)
{
	preadv_fn real = get_preadv();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_preadv, fd, iov, cnt, posix_lo(off), posix_hi(off));
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t preadv_count(int fd, const struct iovec *iov, int cnt,
                                                      off_t off, preadv_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	preadv_fn real = atomic_load_explicit(&real_preadv, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off);
	case POSIX_COUNT:
		return preadv_count(fd, iov, cnt, off, real);
	case POSIX_SLOW:
		break;
	}
	return preadv_body(fd, iov, cnt, off);
}

static __attribute__((noinline)) ssize_t preadv64_body(int fd, const struct iovec *iov, int cnt,
                                                       off64_t off)
{
	preadv64_fn real = get_preadv64();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_preadv, fd, iov, cnt, posix_lo(off), posix_hi(off));
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t preadv64_count(int fd, const struct iovec *iov, int cnt,
                                                        off64_t off, preadv64_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	preadv64_fn real = atomic_load_explicit(&real_preadv64, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off);
	case POSIX_COUNT:
		return preadv64_count(fd, iov, cnt, off, real);
	case POSIX_SLOW:
		break;
	}
	return preadv64_body(fd, iov, cnt, off);
}

static __attribute__((noinline)) ssize_t pwritev_body(int fd, const struct iovec *iov, int cnt,
                                                      off_t off)
{
	pwritev_fn real = get_pwritev();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwritev, fd, iov, cnt, posix_lo(off), posix_hi(off));
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwritev_count(int fd, const struct iovec *iov, int cnt,
                                                       off_t off, pwritev_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	pwritev_fn real = atomic_load_explicit(&real_pwritev, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off);
	case POSIX_COUNT:
		return pwritev_count(fd, iov, cnt, off, real);
	case POSIX_SLOW:
		break;
	}
	return pwritev_body(fd, iov, cnt, off);
}

static __attribute__((noinline)) ssize_t pwritev64_body(int fd, const struct iovec *iov, int cnt,
                                                        off64_t off)
{
	pwritev64_fn real = get_pwritev64();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwritev, fd, iov, cnt, posix_lo(off), posix_hi(off));
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwritev64_count(int fd, const struct iovec *iov, int cnt,
                                                         off64_t off, pwritev64_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	pwritev64_fn real = atomic_load_explicit(&real_pwritev64, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off);
	case POSIX_COUNT:
		return pwritev64_count(fd, iov, cnt, off, real);
	case POSIX_SLOW:
		break;
	}
	return pwritev64_body(fd, iov, cnt, off);
}

static __attribute__((noinline)) ssize_t preadv2_body(int fd, const struct iovec *iov, int cnt,
                                                      off_t off, int flags)
{
	preadv2_fn real = get_preadv2();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_preadv2, fd, iov, cnt, posix_lo(off), posix_hi(off), flags);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off, flags);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off, flags);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t preadv2_count(int fd, const struct iovec *iov, int cnt,
                                                       off_t off, int flags, preadv2_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off, flags);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	preadv2_fn real = atomic_load_explicit(&real_preadv2, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off, flags);
	case POSIX_COUNT:
		return preadv2_count(fd, iov, cnt, off, flags, real);
	case POSIX_SLOW:
		break;
	}
	return preadv2_body(fd, iov, cnt, off, flags);
}

static __attribute__((noinline)) ssize_t preadv64v2_body(int fd, const struct iovec *iov, int cnt,
                                                         off64_t off, int flags)
{
	preadv64v2_fn real = get_preadv64v2();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_preadv2, fd, iov, cnt, posix_lo(off), posix_hi(off), flags);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off, flags);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off, flags);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t preadv64v2_count(int fd, const struct iovec *iov, int cnt,
                                                          off64_t off, int flags,
                                                          preadv64v2_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off, flags);

	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	preadv64v2_fn real = atomic_load_explicit(&real_preadv64v2, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off, flags);
	case POSIX_COUNT:
		return preadv64v2_count(fd, iov, cnt, off, flags, real);
	case POSIX_SLOW:
		break;
	}
	return preadv64v2_body(fd, iov, cnt, off, flags);
}

static __attribute__((noinline)) ssize_t pwritev2_body(int fd, const struct iovec *iov, int cnt,
                                                       off_t off, int flags)
{
	pwritev2_fn real = get_pwritev2();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwritev2, fd, iov, cnt, posix_lo(off), posix_hi(off), flags);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off, flags);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off, flags);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwritev2_count(int fd, const struct iovec *iov, int cnt,
                                                        off_t off, int flags, pwritev2_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off, flags);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	pwritev2_fn real = atomic_load_explicit(&real_pwritev2, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off, flags);
	case POSIX_COUNT:
		return pwritev2_count(fd, iov, cnt, off, flags, real);
	case POSIX_SLOW:
		break;
	}
	return pwritev2_body(fd, iov, cnt, off, flags);
}

static __attribute__((noinline)) ssize_t pwritev64v2_body(int fd, const struct iovec *iov, int cnt,
                                                          off64_t off, int flags)
{
	pwritev64v2_fn real = get_pwritev64v2();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_pwritev2, fd, iov, cnt, posix_lo(off), posix_hi(off), flags);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, iov, cnt, off, flags);
	s = posix_begin(t);
	r = real(fd, iov, cnt, off, flags);
	posix_end_write(s, posix_bytes(r));
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) ssize_t pwritev64v2_count(int fd, const struct iovec *iov, int cnt,
                                                           off64_t off, int flags,
                                                           pwritev64v2_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	ssize_t r = real(fd, iov, cnt, off, flags);

	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	pwritev64v2_fn real = atomic_load_explicit(&real_pwritev64v2, memory_order_relaxed);

	switch (posix_fd_route(real, fd)) {
	case POSIX_PASS:
		return real(fd, iov, cnt, off, flags);
	case POSIX_COUNT:
		return pwritev64v2_count(fd, iov, cnt, off, flags, real);
	case POSIX_SLOW:
		break;
	}
	return pwritev64v2_body(fd, iov, cnt, off, flags);
}

/* ---- copies between descriptors -------------------------------------- */

static inline void posix_end_copy(struct posix_span s, bool from_file, bool to_file, ssize_t r)
{
	uint64_t ticks = posix_finish(s), bytes = posix_bytes(r);
	uint64_t read_ticks = to_file ? (from_file ? ticks / 2 : 0) : ticks;

	if (from_file)
		lwm2_count_call(s.t, LWM2_C_posix_read_calls, LWM2_C_posix_read_bytes, bytes,
		                LWM2_C_posix_read_ns, read_ticks);
	if (to_file)
		lwm2_count_call(s.t, LWM2_C_posix_write_calls, LWM2_C_posix_write_bytes, bytes,
		                LWM2_C_posix_write_ns, ticks - read_ticks);
}

/* Storage when either end is a file; the classes come back through the
 * flags. */
static inline struct lwm2_thread *posix_enter_copy(int from, int to, bool *from_file, bool *to_file)
{
	if (LWM2_UNLIKELY(!posix_on()))
		return NULL;
	*from_file = posix_fd_is_file(from);
	*to_file = posix_fd_is_file(to);
	return *from_file || *to_file ? posix_thread() : NULL;
}

LWM2_EXPORT ssize_t copy_file_range(int in, loff_t *off_in, int out, loff_t *off_out, size_t len,
                                    unsigned flags)
{
	copy_file_range_fn real = get_copy_file_range();
	struct lwm2_thread *t;
	struct posix_span s;
	bool fin, fout;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_copy_file_range, in, off_in, out, off_out, len, flags);
	t = posix_enter_copy(in, out, &fin, &fout);
	if (!t)
		return real(in, off_in, out, off_out, len, flags);
	s = posix_begin(t);
	r = real(in, off_in, out, off_out, len, flags);
	posix_end_copy(s, fin, fout, r);
	return r;
}

LWM2_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	sendfile_fn real = get_sendfile();
	struct lwm2_thread *t;
	struct posix_span s;
	bool fin, fout;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_sendfile, out, in, off, n);
	t = posix_enter_copy(in, out, &fin, &fout);
	if (!t)
		return real(out, in, off, n);
	s = posix_begin(t);
	r = real(out, in, off, n);
	posix_end_copy(s, fin, fout, r);
	return r;
}

LWM2_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	sendfile64_fn real = get_sendfile64();
	struct lwm2_thread *t;
	struct posix_span s;
	bool fin, fout;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_sendfile, out, in, off, n);
	t = posix_enter_copy(in, out, &fin, &fout);
	if (!t)
		return real(out, in, off, n);
	s = posix_begin(t);
	r = real(out, in, off, n);
	posix_end_copy(s, fin, fout, r);
	return r;
}

/* ---- metadata on descriptors ------------------------------------------- */

static inline int posix_mode_arg(int flags, va_list ap)
{
	return posix_open_needs_mode(flags) ? va_arg(ap, int) : 0;
}

/* Shared tail of every open-like wrapper once the real call is known. */
static inline struct lwm2_thread *posix_enter_open(void)
{
	return LWM2_UNLIKELY(!posix_on()) ? NULL : posix_thread();
}

static int posix_opened_untimed(int fd)
{
	/* Whatever this number was before, it is something new now. */
	posix_fd_set(fd, POSIX_FD_UNKNOWN);
	return fd;
}

LWM2_EXPORT int open(const char *path, int flags, ...)
{
	open_fn real = get_open();
	struct lwm2_thread *t;
	struct posix_span s;
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = posix_mode_arg(flags, ap);
	va_end(ap);
	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed((int)syscall(SYS_openat, AT_FDCWD, path, flags, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, flags, mode));
	s = posix_begin(t);
	fd = real(path, flags, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int open64(const char *path, int flags, ...)
{
	open64_fn real = get_open64();
	struct lwm2_thread *t;
	struct posix_span s;
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = posix_mode_arg(flags, ap);
	va_end(ap);
	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed(
		    (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_LARGEFILE, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, flags, mode));
	s = posix_begin(t);
	fd = real(path, flags, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	openat_fn real = get_openat();
	struct lwm2_thread *t;
	struct posix_span s;
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = posix_mode_arg(flags, ap);
	va_end(ap);
	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed((int)syscall(SYS_openat, dirfd, path, flags, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(dirfd, path, flags, mode));
	s = posix_begin(t);
	fd = real(dirfd, path, flags, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	openat64_fn real = get_openat64();
	struct lwm2_thread *t;
	struct posix_span s;
	va_list ap;
	int mode, fd;

	va_start(ap, flags);
	mode = posix_mode_arg(flags, ap);
	va_end(ap);
	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed(
		    (int)syscall(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(dirfd, path, flags, mode));
	s = posix_begin(t);
	fd = real(dirfd, path, flags, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int creat(const char *path, mode_t mode)
{
	creat_fn real = get_creat();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed(
		    (int)syscall(SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, mode));
	s = posix_begin(t);
	fd = real(path, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int creat64(const char *path, mode_t mode)
{
	creat64_fn real = get_creat64();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return posix_opened_untimed((int)syscall(
		    SYS_openat, AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode));
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, mode));
	s = posix_begin(t);
	fd = real(path, mode);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int __open_2(const char *path, int flags)
{
	__open_2_fn real = get___open_2();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return open(path, flags);
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, flags));
	s = posix_begin(t);
	fd = real(path, flags);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int __open64_2(const char *path, int flags)
{
	__open64_2_fn real = get___open64_2();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return open64(path, flags);
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(path, flags));
	s = posix_begin(t);
	fd = real(path, flags);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	__openat_2_fn real = get___openat_2();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return openat(dirfd, path, flags);
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(dirfd, path, flags));
	s = posix_begin(t);
	fd = real(dirfd, path, flags);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	__openat64_2_fn real = get___openat64_2();
	struct lwm2_thread *t;
	struct posix_span s;
	int fd;

	if (LWM2_UNLIKELY(!real))
		return openat64(dirfd, path, flags);
	t = posix_enter_open();
	if (!t)
		return posix_opened_untimed(real(dirfd, path, flags));
	s = posix_begin(t);
	fd = real(dirfd, path, flags);
	posix_end_open(s, fd);
	return fd;
}

LWM2_EXPORT int close(int fd)
{
	close_fn real = get_close();
	struct lwm2_thread *t = posix_enter_fd(fd);
	struct posix_span s;
	int r;

	if (!t) {
		r = LWM2_LIKELY(real != NULL) ? real(fd) : (int)syscall(SYS_close, fd);
	} else {
		s = posix_begin(t);
		r = real ? real(fd) : (int)syscall(SYS_close, fd);
		posix_end_meta(s);
	}
	/* After the close, not before: a lazy classification between a reset
	 * and the close would see the old file again. */
	posix_fd_set(fd, POSIX_FD_UNKNOWN);
	return r;
}

LWM2_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	lseek_fn real = get_lseek();
	struct lwm2_thread *t;
	struct posix_span s;
	off_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_lseek, fd, off, whence);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, off, whence);
	s = posix_begin(t);
	r = real(fd, off, whence);
	posix_end_meta(s);
	return r;
}

LWM2_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	lseek64_fn real = get_lseek64();
	struct lwm2_thread *t;
	struct posix_span s;
	off64_t r;

	if (LWM2_UNLIKELY(!real))
		return syscall(SYS_lseek, fd, off, whence);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, off, whence);
	s = posix_begin(t);
	r = real(fd, off, whence);
	posix_end_meta(s);
	return r;
}

LWM2_EXPORT int fsync(int fd)
{
	fsync_fn real = get_fsync();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return (int)syscall(SYS_fsync, fd);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd);
	s = posix_begin(t);
	r = real(fd);
	posix_end_sync(s);
	return r;
}

LWM2_EXPORT int fdatasync(int fd)
{
	fdatasync_fn real = get_fdatasync();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return (int)syscall(SYS_fdatasync, fd);
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd);
	s = posix_begin(t);
	r = real(fd);
	posix_end_sync(s);
	return r;
}

/* ---- descriptor bookkeeping (never counted) ---------------------------- */

/*
 * A descriptor number that now names something else is reset rather than
 * given the class of its source: the reset is always safe (one lazy fstat
 * later), including in a vfork child, which shares this table with its
 * parent but not its descriptors.
 */
static inline int posix_made(int fd)
{
	if (fd >= 0)
		posix_fd_set(fd, POSIX_FD_UNKNOWN);
	return fd;
}

static inline int posix_made_pair(int r, const int fds[2])
{
	if (r == 0) {
		posix_fd_set(fds[0], POSIX_FD_OTHER);
		posix_fd_set(fds[1], POSIX_FD_OTHER);
	}
	return r;
}

static inline int posix_made_other(int fd)
{
	if (fd >= 0)
		posix_fd_set(fd, POSIX_FD_OTHER);
	return fd;
}

LWM2_EXPORT int dup(int fd)
{
	dup_fn real = get_dup();

	return posix_made(LWM2_LIKELY(real != NULL) ? real(fd) : (int)syscall(SYS_dup, fd));
}

LWM2_EXPORT int dup2(int oldfd, int newfd)
{
	dup2_fn real = get_dup2();

	if (LWM2_UNLIKELY(!real)) {
		if (oldfd == newfd)
			return (int)syscall(SYS_fcntl, oldfd, F_GETFD) < 0 ? -1 : newfd;
		return posix_made((int)syscall(SYS_dup3, oldfd, newfd, 0));
	}
	if (oldfd == newfd)
		return real(oldfd, newfd);
	return posix_made(real(oldfd, newfd));
}

LWM2_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	dup3_fn real = get_dup3();

	return posix_made(LWM2_LIKELY(real != NULL) ? real(oldfd, newfd, flags)
	                                            : (int)syscall(SYS_dup3, oldfd, newfd, flags));
}

static inline bool posix_fcntl_dups(int cmd)
{
	return cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC;
}

/* As glibc itself does, the third argument is taken as a pointer: every
 * command's argument (int, long or pointer) travels in one register. */
LWM2_EXPORT int fcntl(int fd, int cmd, ...)
{
	fcntl_fn real = get_fcntl();
	va_list ap;
	void *arg;
	int r;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	r = LWM2_LIKELY(real != NULL) ? real(fd, cmd, arg) : (int)syscall(SYS_fcntl, fd, cmd, arg);
	return posix_fcntl_dups(cmd) ? posix_made(r) : r;
}

LWM2_EXPORT int fcntl64(int fd, int cmd, ...)
{
	fcntl64_fn real = get_fcntl64();
	va_list ap;
	void *arg;
	int r;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	r = LWM2_LIKELY(real != NULL) ? real(fd, cmd, arg) : (int)syscall(SYS_fcntl, fd, cmd, arg);
	return posix_fcntl_dups(cmd) ? posix_made(r) : r;
}

LWM2_EXPORT int pipe(int fds[2])
{
	pipe_fn real = get_pipe();

	return posix_made_pair(
	    LWM2_LIKELY(real != NULL) ? real(fds) : (int)syscall(SYS_pipe2, fds, 0), fds);
}

LWM2_EXPORT int pipe2(int fds[2], int flags)
{
	pipe2_fn real = get_pipe2();

	return posix_made_pair(LWM2_LIKELY(real != NULL) ? real(fds, flags)
	                                                 : (int)syscall(SYS_pipe2, fds, flags),
	                       fds);
}

LWM2_EXPORT int socket(int domain, int type, int protocol)
{
	socket_fn real = get_socket();

	return posix_made_other(LWM2_LIKELY(real != NULL)
	                            ? real(domain, type, protocol)
	                            : (int)syscall(SYS_socket, domain, type, protocol));
}

LWM2_EXPORT int socketpair(int domain, int type, int protocol, int fds[2])
{
	socketpair_fn real = get_socketpair();

	return posix_made_pair(LWM2_LIKELY(real != NULL)
	                           ? real(domain, type, protocol, fds)
	                           : (int)syscall(SYS_socketpair, domain, type, protocol, fds),
	                       fds);
}

LWM2_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	accept_fn real = get_accept();

	return posix_made_other(LWM2_LIKELY(real != NULL)
	                            ? real(fd, addr, len)
	                            : (int)syscall(SYS_accept4, fd, addr, len, 0));
}

LWM2_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	accept4_fn real = get_accept4();

	return posix_made_other(LWM2_LIKELY(real != NULL)
	                            ? real(fd, addr, len, flags)
	                            : (int)syscall(SYS_accept4, fd, addr, len, flags));
}

LWM2_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	close_range_fn real = get_close_range();
	int r = LWM2_LIKELY(real != NULL) ? real(first, last, flags)
	                                  : (int)syscall(SYS_close_range, first, last, flags);

	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		lwm2_posix_fd_forget_range(first, last);
	return r;
}

LWM2_EXPORT void closefrom(int lowfd)
{
	closefrom_fn real = get_closefrom();

	if (LWM2_LIKELY(real != NULL))
		real(lowfd);
	else
		(void)syscall(SYS_close_range, (unsigned)lowfd, ~0u, 0);
	if (lowfd >= 0)
		lwm2_posix_fd_forget_range((unsigned)lowfd, ~0u);
}

/* ---- stdio reads ------------------------------------------------------- */

static __attribute__((noinline)) size_t fread_body(void *ptr, size_t size, size_t n, FILE *fp)
{
	fread_fn real = get_fread();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), 0;
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, size, n, fp);
	posix_end_read(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t fread_count(void *ptr, size_t size, size_t n, FILE *fp,
                                                    fread_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, size, n, fp);

	posix_end_read(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t fread(void *ptr, size_t size, size_t n, FILE *fp)
{
	fread_fn real = atomic_load_explicit(&real_fread, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, size, n, fp);
	case POSIX_COUNT:
		return fread_count(ptr, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return fread_body(ptr, size, n, fp);
}

static __attribute__((noinline)) size_t fread_unlocked_body(void *ptr, size_t size, size_t n,
                                                            FILE *fp)
{
	fread_unlocked_fn real = get_fread_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), 0;
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, size, n, fp);
	posix_end_read(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t fread_unlocked_count(void *ptr, size_t size, size_t n,
                                                             FILE *fp, fread_unlocked_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, size, n, fp);

	posix_end_read(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *fp)
{
	fread_unlocked_fn real = atomic_load_explicit(&real_fread_unlocked, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, size, n, fp);
	case POSIX_COUNT:
		return fread_unlocked_count(ptr, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return fread_unlocked_body(ptr, size, n, fp);
}

static __attribute__((noinline)) size_t __fread_chk_body(void *ptr, size_t ptrlen, size_t size,
                                                         size_t n, FILE *fp)
{
	__fread_chk_fn real = get___fread_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return fread(ptr, size, n, fp);
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, ptrlen, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, ptrlen, size, n, fp);
	posix_end_read(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t __fread_chk_count(void *ptr, size_t ptrlen, size_t size,
                                                          size_t n, FILE *fp, __fread_chk_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, ptrlen, size, n, fp);

	posix_end_read(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp)
{
	__fread_chk_fn real = atomic_load_explicit(&real___fread_chk, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, ptrlen, size, n, fp);
	case POSIX_COUNT:
		return __fread_chk_count(ptr, ptrlen, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return __fread_chk_body(ptr, ptrlen, size, n, fp);
}

static __attribute__((noinline)) size_t __fread_unlocked_chk_body(void *ptr, size_t ptrlen,
                                                                  size_t size, size_t n, FILE *fp)
{
	__fread_unlocked_chk_fn real = get___fread_unlocked_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return fread_unlocked(ptr, size, n, fp);
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, ptrlen, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, ptrlen, size, n, fp);
	posix_end_read(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t __fread_unlocked_chk_count(void *ptr, size_t ptrlen,
                                                                   size_t size, size_t n, FILE *fp,
                                                                   __fread_unlocked_chk_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, ptrlen, size, n, fp);

	posix_end_read(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp)
{
	__fread_unlocked_chk_fn real =
	    atomic_load_explicit(&real___fread_unlocked_chk, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, ptrlen, size, n, fp);
	case POSIX_COUNT:
		return __fread_unlocked_chk_count(ptr, ptrlen, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return __fread_unlocked_chk_body(ptr, ptrlen, size, n, fp);
}

static inline uint64_t posix_line_bytes(const char *r)
{
	return r ? strlen(r) : 0;
}

LWM2_EXPORT char *fgets(char *buf, int n, FILE *fp)
{
	fgets_fn real = get_fgets();
	struct lwm2_thread *t;
	struct posix_span s;
	char *r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	t = posix_enter_stream(fp);
	if (!t)
		return real(buf, n, fp);
	s = posix_begin(t);
	r = real(buf, n, fp);
	posix_end_read(s, posix_line_bytes(r));
	return r;
}

LWM2_EXPORT char *fgets_unlocked(char *buf, int n, FILE *fp)
{
	fgets_unlocked_fn real = get_fgets_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	char *r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	t = posix_enter_stream(fp);
	if (!t)
		return real(buf, n, fp);
	s = posix_begin(t);
	r = real(buf, n, fp);
	posix_end_read(s, posix_line_bytes(r));
	return r;
}

LWM2_EXPORT char *__fgets_chk(char *buf, size_t size, int n, FILE *fp)
{
	__fgets_chk_fn real = get___fgets_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	char *r;

	if (LWM2_UNLIKELY(!real))
		return fgets(buf, n, fp);
	t = posix_enter_stream(fp);
	if (!t)
		return real(buf, size, n, fp);
	s = posix_begin(t);
	r = real(buf, size, n, fp);
	posix_end_read(s, posix_line_bytes(r));
	return r;
}

LWM2_EXPORT char *__fgets_unlocked_chk(char *buf, size_t size, int n, FILE *fp)
{
	__fgets_unlocked_chk_fn real = get___fgets_unlocked_chk();
	struct lwm2_thread *t;
	struct posix_span s;
	char *r;

	if (LWM2_UNLIKELY(!real))
		return fgets_unlocked(buf, n, fp);
	t = posix_enter_stream(fp);
	if (!t)
		return real(buf, size, n, fp);
	s = posix_begin(t);
	r = real(buf, size, n, fp);
	posix_end_read(s, posix_line_bytes(r));
	return r;
}

static inline uint64_t posix_char_bytes(int r)
{
	return r != EOF ? 1 : 0;
}

LWM2_EXPORT int fgetc(FILE *fp)
{
	fgetc_fn real = get_fgetc();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp);
	s = posix_begin(t);
	r = real(fp);
	posix_end_read(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int getc(FILE *fp)
{
	getc_fn real = get_getc();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp);
	s = posix_begin(t);
	r = real(fp);
	posix_end_read(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int fgetc_unlocked(FILE *fp)
{
	fgetc_unlocked_fn real = get_fgetc_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp);
	s = posix_begin(t);
	r = real(fp);
	posix_end_read(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int getc_unlocked(FILE *fp)
{
	getc_unlocked_fn real = get_getc_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp);
	s = posix_begin(t);
	r = real(fp);
	posix_end_read(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int getchar(void)
{
	getchar_fn real = get_getchar();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(stdin);
	if (!t)
		return real();
	s = posix_begin(t);
	r = real();
	posix_end_read(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t getline(char **line, size_t *cap, FILE *fp)
{
	getline_fn real = get_getline();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(line, cap, fp);
	s = posix_begin(t);
	r = real(line, cap, fp);
	posix_end_read(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT ssize_t getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
	getdelim_fn real = get_getdelim();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(line, cap, delim, fp);
	s = posix_begin(t);
	r = real(line, cap, delim, fp);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* What an optimised build's inline getline calls. */
LWM2_EXPORT ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *fp)
{
	__getdelim_fn real = get___getdelim();
	struct lwm2_thread *t;
	struct posix_span s;
	ssize_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(line, cap, delim, fp);
	s = posix_begin(t);
	r = real(line, cap, delim, fp);
	posix_end_read(s, posix_bytes(r));
	return r;
}

/* ---- stdio writes ------------------------------------------------------ */

static __attribute__((noinline)) size_t fwrite_body(const void *ptr, size_t size, size_t n,
                                                    FILE *fp)
{
	fwrite_fn real = get_fwrite();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), 0;
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, size, n, fp);
	posix_end_write(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t fwrite_count(const void *ptr, size_t size, size_t n,
                                                     FILE *fp, fwrite_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, size, n, fp);

	posix_end_write(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t fwrite(const void *ptr, size_t size, size_t n, FILE *fp)
{
	fwrite_fn real = atomic_load_explicit(&real_fwrite, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, size, n, fp);
	case POSIX_COUNT:
		return fwrite_count(ptr, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return fwrite_body(ptr, size, n, fp);
}

static __attribute__((noinline)) size_t fwrite_unlocked_body(const void *ptr, size_t size, size_t n,
                                                             FILE *fp)
{
	fwrite_unlocked_fn real = get_fwrite_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	size_t r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), 0;
	t = posix_enter_stream(fp);
	if (!t)
		return real(ptr, size, n, fp);
	s = posix_begin(t);
	r = real(ptr, size, n, fp);
	posix_end_write(s, (uint64_t)r * size);
	return r;
}

/* A call on a file, lwm2 on: timed and counted. */
static __attribute__((noinline)) size_t
fwrite_unlocked_count(const void *ptr, size_t size, size_t n, FILE *fp, fwrite_unlocked_fn real)
{
	struct posix_span s = posix_begin(posix_thread());
	size_t r = real(ptr, size, n, fp);

	posix_end_write(s, (uint64_t)r * size);
	return r;
}

LWM2_EXPORT size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *fp)
{
	fwrite_unlocked_fn real = atomic_load_explicit(&real_fwrite_unlocked, memory_order_relaxed);

	switch (posix_stream_route(real, fp)) {
	case POSIX_PASS:
		return real(ptr, size, n, fp);
	case POSIX_COUNT:
		return fwrite_unlocked_count(ptr, size, n, fp, real);
	case POSIX_SLOW:
		break;
	}
	return fwrite_unlocked_body(ptr, size, n, fp);
}

static inline uint64_t posix_puts_bytes(int r, const char *str, size_t extra)
{
	return r != EOF ? strlen(str) + extra : 0;
}

LWM2_EXPORT int fputs(const char *str, FILE *fp)
{
	fputs_fn real = get_fputs();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(str, fp);
	s = posix_begin(t);
	r = real(str, fp);
	posix_end_write(s, posix_puts_bytes(r, str, 0));
	return r;
}

LWM2_EXPORT int fputs_unlocked(const char *str, FILE *fp)
{
	fputs_unlocked_fn real = get_fputs_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(str, fp);
	s = posix_begin(t);
	r = real(str, fp);
	posix_end_write(s, posix_puts_bytes(r, str, 0));
	return r;
}

LWM2_EXPORT int puts(const char *str)
{
	puts_fn real = get_puts();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(stdout);
	if (!t)
		return real(str);
	s = posix_begin(t);
	r = real(str);
	posix_end_write(s, posix_puts_bytes(r, str, 1));
	return r;
}

LWM2_EXPORT int fputc(int c, FILE *fp)
{
	fputc_fn real = get_fputc();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(c, fp);
	s = posix_begin(t);
	r = real(c, fp);
	posix_end_write(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int putc(int c, FILE *fp)
{
	putc_fn real = get_putc();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(c, fp);
	s = posix_begin(t);
	r = real(c, fp);
	posix_end_write(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int fputc_unlocked(int c, FILE *fp)
{
	fputc_unlocked_fn real = get_fputc_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(c, fp);
	s = posix_begin(t);
	r = real(c, fp);
	posix_end_write(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int putc_unlocked(int c, FILE *fp)
{
	putc_unlocked_fn real = get_putc_unlocked();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(c, fp);
	s = posix_begin(t);
	r = real(c, fp);
	posix_end_write(s, posix_char_bytes(r));
	return r;
}

LWM2_EXPORT int putchar(int c)
{
	putchar_fn real = get_putchar();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(stdout);
	if (!t)
		return real(c);
	s = posix_begin(t);
	r = real(c);
	posix_end_write(s, posix_char_bytes(r));
	return r;
}

/* The formatted writers all land here: vfprintf for the plain ones,
 * __vfprintf_chk for the fortified ones. */
static int posix_vfprintf(FILE *fp, bool chk, int flag, const char *fmt, va_list ap)
{
	struct lwm2_thread *t = posix_enter_stream(fp);
	struct posix_span s;
	int r;

	if (chk) {
		__vfprintf_chk_fn real = get___vfprintf_chk();

		if (LWM2_UNLIKELY(!real))
			return posix_vfprintf(fp, false, flag, fmt, ap);
		if (!t)
			return real(fp, flag, fmt, ap);
		s = posix_begin(t);
		r = real(fp, flag, fmt, ap);
	} else {
		vfprintf_fn real = get_vfprintf();

		if (LWM2_UNLIKELY(!real))
			return posix_no_real(), -1;
		if (!t)
			return real(fp, fmt, ap);
		s = posix_begin(t);
		r = real(fp, fmt, ap);
	}
	posix_end_write(s, posix_bytes(r));
	return r;
}

LWM2_EXPORT int vfprintf(FILE *fp, const char *fmt, va_list ap)
{
	return posix_vfprintf(fp, false, 0, fmt, ap);
}

LWM2_EXPORT int fprintf(FILE *fp, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = posix_vfprintf(fp, false, 0, fmt, ap);
	va_end(ap);
	return r;
}

LWM2_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return posix_vfprintf(stdout, false, 0, fmt, ap);
}

LWM2_EXPORT int printf(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = posix_vfprintf(stdout, false, 0, fmt, ap);
	va_end(ap);
	return r;
}

LWM2_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return posix_vfprintf(fp, true, flag, fmt, ap);
}

LWM2_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = posix_vfprintf(fp, true, flag, fmt, ap);
	va_end(ap);
	return r;
}

LWM2_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return posix_vfprintf(stdout, true, flag, fmt, ap);
}

LWM2_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = posix_vfprintf(stdout, true, flag, fmt, ap);
	va_end(ap);
	return r;
}

/* ---- stdio metadata ---------------------------------------------------- */

static inline int posix_fp_fd(FILE *fp)
{
	return fp ? posix_stream_fd(fp) : -1;
}

LWM2_EXPORT FILE *fopen(const char *path, const char *mode)
{
	fopen_fn real = get_fopen();
	struct lwm2_thread *t;
	struct posix_span s;
	FILE *fp;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	t = posix_enter_open();
	if (!t) {
		fp = real(path, mode);
		if (fp)
			posix_made(posix_stream_fd(fp));
		return fp;
	}
	s = posix_begin(t);
	fp = real(path, mode);
	posix_end_open(s, posix_fp_fd(fp));
	return fp;
}

LWM2_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	fopen64_fn real = get_fopen64();
	struct lwm2_thread *t;
	struct posix_span s;
	FILE *fp;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	t = posix_enter_open();
	if (!t) {
		fp = real(path, mode);
		if (fp)
			posix_made(posix_stream_fd(fp));
		return fp;
	}
	s = posix_begin(t);
	fp = real(path, mode);
	posix_end_open(s, posix_fp_fd(fp));
	return fp;
}

LWM2_EXPORT FILE *fdopen(int fd, const char *mode)
{
	fdopen_fn real = get_fdopen();
	struct lwm2_thread *t;
	struct posix_span s;
	FILE *fp;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	t = posix_enter_fd(fd);
	if (!t)
		return real(fd, mode);
	s = posix_begin(t);
	fp = real(fd, mode);
	posix_end_meta(s);
	return fp;
}

/* freopen closes the stream's old descriptor inside libc. */
static FILE *posix_freopen(freopen_fn real, const char *path, const char *mode, FILE *fp)
{
	int oldfd = posix_fp_fd(fp);
	struct lwm2_thread *t = posix_enter_open();
	struct posix_span s;
	FILE *r;

	if (!t) {
		r = real(path, mode, fp);
		posix_made(oldfd);
		if (r)
			posix_made(posix_stream_fd(r));
		return r;
	}
	s = posix_begin(t);
	r = real(path, mode, fp);
	posix_made(oldfd);
	posix_end_open(s, posix_fp_fd(r));
	return r;
}

LWM2_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	freopen_fn real = get_freopen();

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	return posix_freopen(real, path, mode, fp);
}

LWM2_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	freopen64_fn real = get_freopen64();

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), NULL;
	return posix_freopen(real, path, mode, fp);
}

LWM2_EXPORT int fclose(FILE *fp)
{
	fclose_fn real = get_fclose();
	int fd = posix_fp_fd(fp);
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_fd(fd);
	if (!t) {
		r = real(fp);
	} else {
		s = posix_begin(t);
		r = real(fp);
		posix_end_meta(s);
	}
	posix_made(fd);
	return r;
}

LWM2_EXPORT int pclose(FILE *fp)
{
	pclose_fn real = get_pclose();
	int fd = posix_fp_fd(fp);
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	r = real(fp);
	posix_made(fd);
	return r;
}

/* fflush(NULL) flushes every stream, files or not: passed through. */
LWM2_EXPORT int fflush(FILE *fp)
{
	fflush_fn real = get_fflush();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), EOF;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp);
	s = posix_begin(t);
	r = real(fp);
	posix_end_meta(s);
	return r;
}

LWM2_EXPORT int fseek(FILE *fp, long off, int whence)
{
	fseek_fn real = get_fseek();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp, off, whence);
	s = posix_begin(t);
	r = real(fp, off, whence);
	posix_end_meta(s);
	return r;
}

LWM2_EXPORT int fseeko(FILE *fp, off_t off, int whence)
{
	fseeko_fn real = get_fseeko();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp, off, whence);
	s = posix_begin(t);
	r = real(fp, off, whence);
	posix_end_meta(s);
	return r;
}

LWM2_EXPORT int fseeko64(FILE *fp, off64_t off, int whence)
{
	fseeko64_fn real = get_fseeko64();
	struct lwm2_thread *t;
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(!real))
		return posix_no_real(), -1;
	t = posix_enter_stream(fp);
	if (!t)
		return real(fp, off, whence);
	s = posix_begin(t);
	r = real(fp, off, whence);
	posix_end_meta(s);
	return r;
}

/* ---- asynchronous I/O --------------------------------------------------- */

/* Flags once per process: a lock in the core, taken at most once each. */
static _Atomic uint32_t posix_flags_set;

static __attribute__((noinline, cold)) void posix_flag(uint32_t flag)
{
	if (atomic_fetch_or(&posix_flags_set, flag) & flag)
		return;
	lwm2_set_flag(flag);
}

static inline void posix_count_aio(struct lwm2_thread *t, uint64_t ticks, uint64_t rbytes,
                                   uint64_t wbytes)
{
	_Atomic uint64_t *b = lwm2_buffer(t);

	lwm2_add(b, LWM2_C_posix_aio_calls, 1);
	lwm2_add(b, LWM2_C_posix_aio_ns, ticks);
	if (rbytes)
		lwm2_add(b, LWM2_C_posix_aio_read_bytes, rbytes);
	if (wbytes)
		lwm2_add(b, LWM2_C_posix_aio_write_bytes, wbytes);
}

/*
 * POSIX aio: the direction of a request on a file, from its submission to
 * aio_return, keyed by the control block's address (aio_read and aio_write
 * do not set aio_lio_opcode for us to read back).  Open addressing over a
 * fixed table, a window of AIO_PROBE slots per address, every slot of the
 * window looked at on lookup, so a freed slot never hides a later entry.
 * A request that finds no free slot is counted as a call, without bytes.
 */
#define AIO_SLOTS 4096u
#define AIO_PROBE 16u
static _Atomic uintptr_t aio_tab[AIO_SLOTS];

static inline size_t aio_hash(const void *cb)
{
	uintptr_t x = (uintptr_t)cb >> 4;

	return (size_t)((x * 0x9e3779b97f4a7c15ull) >> 52) & (AIO_SLOTS - 1);
}

static void aio_remember(const void *cb, bool write)
{
	uintptr_t v = (uintptr_t)cb | (write ? 1u : 0u);
	size_t h = aio_hash(cb);

	for (size_t i = 0; i < AIO_PROBE; i++) {
		_Atomic uintptr_t *e = &aio_tab[(h + i) & (AIO_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(e, memory_order_relaxed), zero = 0;

		if ((cur & ~(uintptr_t)1) == (uintptr_t)cb) { /* resubmitted */
			atomic_store_explicit(e, v, memory_order_relaxed);
			return;
		}
		if (cur == 0 && atomic_compare_exchange_strong(e, &zero, v))
			return;
	}
}

/* 0: not ours; 1: a read; 2: a write.  Forgets the request. */
static int aio_forget(const void *cb)
{
	size_t h = aio_hash(cb);

	for (size_t i = 0; i < AIO_PROBE; i++) {
		_Atomic uintptr_t *e = &aio_tab[(h + i) & (AIO_SLOTS - 1)];
		uintptr_t cur = atomic_load_explicit(e, memory_order_relaxed);

		if (cur && (cur & ~(uintptr_t)1) == (uintptr_t)cb &&
		    atomic_compare_exchange_strong(e, &cur, 0))
			return (cur & 1) ? 2 : 1;
	}
	return 0;
}

#define AIO_REALS(X)                                                                               \
	X(aio_read, int, (struct aiocb *))                                                         \
	X(aio_read64, int, (struct aiocb64 *))                                                     \
	X(aio_write, int, (struct aiocb *))                                                        \
	X(aio_write64, int, (struct aiocb64 *))                                                    \
	X(lio_listio, int, (int, struct aiocb *const[], int, struct sigevent *))                   \
	X(lio_listio64, int, (int, struct aiocb64 *const[], int, struct sigevent *))               \
	X(aio_error, int, (const struct aiocb *))                                                  \
	X(aio_error64, int, (const struct aiocb64 *))                                              \
	X(aio_return, ssize_t, (struct aiocb *))                                                   \
	X(aio_return64, ssize_t, (struct aiocb64 *))                                               \
	X(aio_suspend, int, (const struct aiocb *const[], int, const struct timespec *))           \
	X(aio_suspend64, int, (const struct aiocb64 *const[], int, const struct timespec *))       \
	X(aio_cancel, int, (int, struct aiocb *))                                                  \
	X(aio_cancel64, int, (int, struct aiocb64 *))                                              \
	X(io_submit, int, (void *, long, void **))                                                 \
	X(io_getevents, int, (void *, long, long, void *, struct timespec *))                      \
	X(io_uring_queue_init, int, (unsigned, void *, unsigned))                                  \
	X(io_uring_queue_init_params, int, (unsigned, void *, void *))                             \
	X(mmap, void *, (void *, size_t, int, int, int, off_t))                                    \
	X(mmap64, void *, (void *, size_t, int, int, int, off64_t))
#define POSIX_REAL(name, ret, params)                                                              \
	typedef ret(*name##_fn) params;                                                            \
	static _Atomic(name##_fn) real_##name;                                                     \
	static __attribute__((noinline, cold)) name##_fn resolve_##name(void)                      \
	{                                                                                          \
		int saved = errno;                                                                 \
		name##_fn f = (name##_fn)lwm2_real(#name);                                         \
                                                                                                   \
		if (f)                                                                             \
			atomic_store_explicit(&real_##name, f, memory_order_relaxed);              \
		errno = saved;                                                                     \
		return f;                                                                          \
	}                                                                                          \
	static inline name##_fn get_##name(void)                                                   \
	{                                                                                          \
		name##_fn f = atomic_load_explicit(&real_##name, memory_order_relaxed);            \
                                                                                                   \
		return LWM2_LIKELY(f != NULL) ? f : resolve_##name();                              \
	}
AIO_REALS(POSIX_REAL)
#undef POSIX_REAL

/* A submission of one request on fd: timed, remembered when it was taken. */
#define AIO_SUBMIT(name, type, write)                                                              \
	LWM2_EXPORT int name(type *cb)                                                             \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t;                                                             \
		struct posix_span s;                                                               \
		int r;                                                                             \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return posix_no_real(), -1;                                                \
		t = posix_enter_fd(cb->aio_fildes);                                                \
		if (!t)                                                                            \
			return real(cb);                                                           \
		s = posix_begin(t);                                                                \
		r = real(cb);                                                                      \
		if (r == 0)                                                                        \
			aio_remember(cb, write);                                                   \
		posix_count_aio(t, posix_finish(s), 0, 0);                                         \
		return r;                                                                          \
	}
AIO_SUBMIT(aio_read, struct aiocb, false)
AIO_SUBMIT(aio_read64, struct aiocb64, false)
AIO_SUBMIT(aio_write, struct aiocb, true)
AIO_SUBMIT(aio_write64, struct aiocb64, true)
#undef AIO_SUBMIT

/* The list's requests on files are remembered before the call: with
 * LIO_WAIT they may be complete (and collected by another thread) by the
 * time it returns. */
#define AIO_LIST(name, type)                                                                       \
	LWM2_EXPORT int name(int mode, type *const list[], int n, struct sigevent *sev)            \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t = NULL;                                                      \
		struct posix_span s;                                                               \
		int r;                                                                             \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return posix_no_real(), -1;                                                \
		for (int i = 0; i < n; i++) {                                                      \
			type *cb = list[i];                                                        \
			if (!cb || cb->aio_lio_opcode == LIO_NOP)                                  \
				continue;                                                          \
			if (posix_enter_fd(cb->aio_fildes)) {                                      \
				t = posix_thread();                                                \
				aio_remember(cb, cb->aio_lio_opcode == LIO_WRITE);                 \
			}                                                                          \
		}                                                                                  \
		if (!t)                                                                            \
			return real(mode, list, n, sev);                                           \
		s = posix_begin(t);                                                                \
		r = real(mode, list, n, sev);                                                      \
		posix_count_aio(t, posix_finish(s), 0, 0);                                         \
		return r;                                                                          \
	}
AIO_LIST(lio_listio, struct aiocb)
AIO_LIST(lio_listio64, struct aiocb64)
#undef AIO_LIST

/* Polling a request: a call and its time. */
#define AIO_POLL(name, type)                                                                       \
	LWM2_EXPORT int name(const type *cb)                                                       \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t;                                                             \
		struct posix_span s;                                                               \
		int r;                                                                             \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return ENOSYS;                                                             \
		t = posix_enter_fd(cb->aio_fildes);                                                \
		if (!t)                                                                            \
			return real(cb);                                                           \
		s = posix_begin(t);                                                                \
		r = real(cb);                                                                      \
		posix_count_aio(t, posix_finish(s), 0, 0);                                         \
		return r;                                                                          \
	}
AIO_POLL(aio_error, struct aiocb)
AIO_POLL(aio_error64, struct aiocb64)
#undef AIO_POLL

/* Collecting the result: the request's bytes count here, once. */
#define AIO_RETURN(name, type)                                                                     \
	LWM2_EXPORT ssize_t name(type *cb)                                                         \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t;                                                             \
		struct posix_span s;                                                               \
		ssize_t r;                                                                         \
		int dir;                                                                           \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return posix_no_real(), -1;                                                \
		t = posix_enter_fd(cb->aio_fildes);                                                \
		if (!t)                                                                            \
			return real(cb);                                                           \
		s = posix_begin(t);                                                                \
		r = real(cb);                                                                      \
		dir = aio_forget(cb);                                                              \
		posix_count_aio(t, posix_finish(s), dir == 1 ? posix_bytes(r) : 0,                 \
		                dir == 2 ? posix_bytes(r) : 0);                                    \
		return r;                                                                          \
	}
AIO_RETURN(aio_return, struct aiocb)
AIO_RETURN(aio_return64, struct aiocb64)
#undef AIO_RETURN

/* Waiting: a call and its time when any of the requests is on a file. */
#define AIO_SUSPEND(name, type)                                                                    \
	LWM2_EXPORT int name(const type *const list[], int n, const struct timespec *timeout)      \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t = NULL;                                                      \
		struct posix_span s;                                                               \
		int r;                                                                             \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return posix_no_real(), -1;                                                \
		for (int i = 0; i < n && !t; i++)                                                  \
			t = list[i] ? posix_enter_fd(list[i]->aio_fildes) : NULL;                  \
		if (!t)                                                                            \
			return real(list, n, timeout);                                             \
		s = posix_begin(t);                                                                \
		r = real(list, n, timeout);                                                        \
		posix_count_aio(t, posix_finish(s), 0, 0);                                         \
		return r;                                                                          \
	}
AIO_SUSPEND(aio_suspend, struct aiocb)
AIO_SUSPEND(aio_suspend64, struct aiocb64)
#undef AIO_SUSPEND

#define AIO_CANCEL(name, type)                                                                     \
	LWM2_EXPORT int name(int fd, type *cb)                                                     \
	{                                                                                          \
		name##_fn real = get_##name();                                                     \
		struct lwm2_thread *t;                                                             \
		struct posix_span s;                                                               \
		int r;                                                                             \
                                                                                                   \
		if (LWM2_UNLIKELY(!real))                                                          \
			return posix_no_real(), -1;                                                \
		t = posix_enter_fd(fd);                                                            \
		if (!t)                                                                            \
			return real(fd, cb);                                                       \
		s = posix_begin(t);                                                                \
		r = real(fd, cb);                                                                  \
		posix_count_aio(t, posix_finish(s), 0, 0);                                         \
		return r;                                                                          \
	}
AIO_CANCEL(aio_cancel, struct aiocb)
AIO_CANCEL(aio_cancel64, struct aiocb64)
#undef AIO_CANCEL

/*
 * libaio, whose headers are not needed to follow it: struct iocb has the
 * opcode (a short) at byte 16 and the descriptor (an int) at byte 20;
 * struct io_event is {data, obj, res, res2}, each 8 bytes (the layout of
 * the kernel's ABI on 64-bit targets).
 */
int io_submit(void *ctx, long nr, void **iocbs);
int io_getevents(void *ctx, long min_nr, long nr, void *events, struct timespec *timeout);
int io_uring_queue_init(unsigned entries, void *ring, unsigned flags);
int io_uring_queue_init_params(unsigned entries, void *ring, void *p);

enum { LIBAIO_PREAD = 0, LIBAIO_PWRITE = 1, LIBAIO_PREADV = 7, LIBAIO_PWRITEV = 8 };

struct libaio_event {
	void *data;
	void *obj;
	int64_t res, res2;
};

static inline int libaio_op(const void *iocb, int *fd)
{
	int16_t op;

	memcpy(&op, (const char *)iocb + 16, sizeof(op));
	memcpy(fd, (const char *)iocb + 20, sizeof(*fd));
	return op;
}

LWM2_EXPORT int io_submit(void *ctx, long nr, void **iocbs)
{
	io_submit_fn real = get_io_submit();
	struct lwm2_thread *t = NULL;
	struct posix_span s;
	int r, fd;

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	for (long i = 0; iocbs && i < nr && !t; i++)
		if (iocbs[i]) {
			libaio_op(iocbs[i], &fd);
			t = posix_enter_fd(fd);
		}
	if (!t)
		return real(ctx, nr, iocbs);
	s = posix_begin(t);
	r = real(ctx, nr, iocbs);
	posix_count_aio(t, posix_finish(s), 0, 0);
	return r;
}

LWM2_EXPORT int io_getevents(void *ctx, long min_nr, long nr, void *events,
                             struct timespec *timeout)
{
	io_getevents_fn real = get_io_getevents();
	struct lwm2_thread *t;
	struct posix_span s;
	uint64_t rd = 0, wr = 0;
	int r;

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	if (LWM2_UNLIKELY(!posix_on()))
		return real(ctx, min_nr, nr, events, timeout);
	t = posix_thread();
	s = posix_begin(t);
	r = real(ctx, min_nr, nr, events, timeout);
	for (int i = 0; i < r; i++) {
		const struct libaio_event *e = (const struct libaio_event *)events + i;
		int fd, op;

		if (!e->obj || e->res <= 0)
			continue;
		op = libaio_op(e->obj, &fd);
		if (!posix_fd_is_file(fd))
			continue;
		if (op == LIBAIO_PREAD || op == LIBAIO_PREADV)
			rd += (uint64_t)e->res;
		else if (op == LIBAIO_PWRITE || op == LIBAIO_PWRITEV)
			wr += (uint64_t)e->res;
	}
	/* Waiting on a context of sockets only is not file I/O. */
	if (rd || wr || r <= 0)
		posix_count_aio(t, posix_finish(s), rd, wr);
	else
		lwm2_earmark_leave(s.t, s.earmark);
	return r;
}

/* io_uring: only that it was set up. */
LWM2_EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
	io_uring_queue_init_fn real = get_io_uring_queue_init();

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	posix_flag(LWM2_F_IO_URING);
	return real(entries, ring, flags);
}

LWM2_EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *p)
{
	io_uring_queue_init_params_fn real = get_io_uring_queue_init_params();

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	posix_flag(LWM2_F_IO_URING);
	return real(entries, ring, p);
}

/*
 * syscall() carries io_uring_setup for programs without liburing (fio):
 * six argument words are passed on whatever the call takes, as the
 * kernel's calling convention allows.
 */
typedef long (*syscall_fn)(long, ...);
static _Atomic(syscall_fn) real_syscall;

/* Reading six words may go past what the caller passed on the stack: in
 * the caller's frame, harmless, but AddressSanitizer would stop there. */
__attribute__((no_sanitize("address"))) LWM2_EXPORT long syscall(long nr, ...)
{
	syscall_fn real = atomic_load_explicit(&real_syscall, memory_order_relaxed);
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
#ifdef SYS_io_uring_setup
	if (nr == SYS_io_uring_setup)
		posix_flag(LWM2_F_IO_URING);
#endif
	if (LWM2_UNLIKELY(!real)) {
		int saved = errno;

		real = (syscall_fn)lwm2_real("syscall");
		errno = saved;
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store_explicit(&real_syscall, real, memory_order_relaxed);
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * A file mapped shared and writable: its stores are unseen writes.  The
 * core maps its own record file this way, holding its lock, from several
 * paths: that file (its inode) is not flagged, and the flag is only noted
 * here and given to the core by the module's fini hook, which never runs
 * under the core's lock.
 */
static _Atomic uint32_t posix_flags_pending;

static inline void posix_mapped(int prot, int flags, int fd)
{
	struct stat st;

	if ((prot & PROT_WRITE) && (flags & MAP_TYPE) == MAP_SHARED && fd >= 0 &&
	    !(atomic_load_explicit(&posix_flags_pending, memory_order_relaxed) &
	      LWM2_F_MMAP_WRITE) &&
	    posix_on() && posix_fd_is_file(fd) && syscall(SYS_fstat, fd, &st) == 0 &&
	    (uint64_t)st.st_ino != lwm2_p.ino)
		atomic_fetch_or(&posix_flags_pending, LWM2_F_MMAP_WRITE);
}

static void posix_fini(void)
{
	uint32_t f = atomic_exchange(&posix_flags_pending, 0);

	if (f)
		posix_flag(f);
}

LWM2_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	mmap_fn real = get_mmap();

	if (LWM2_UNLIKELY(!real))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	posix_mapped(prot, flags, fd);
	return real(addr, len, prot, flags, fd, off);
}

LWM2_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	mmap64_fn real = get_mmap64();

	if (LWM2_UNLIKELY(!real))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	posix_mapped(prot, flags, fd);
	return real(addr, len, prot, flags, fd, off);
}
