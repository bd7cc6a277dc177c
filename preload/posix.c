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
 * One table
 * ---------
 * Every wrapped name is written once, in posix_gen.py's table, which
 * generates the real-function lists and the prototypes (posix_wrappers.h),
 * the regular wrappers (posix_wrappers.c, included at the end of this file
 * to use the helpers here) and this module's names in liblwm2.map.  What
 * is written by hand below (close, descriptor bookkeeping, the printf
 * family, freopen, fclose, libaio, syscall, mmap) is in the table as
 * "custom".  make check compares the committed files with the generator's
 * output and the library's exports with the wrappers.
 *
 * Real functions
 * --------------
 * Each real function is looked up once with lwm2_real and kept in an
 * atomic pointer, on its first call, so a short-lived process pays only
 * for the functions it calls (a trivial program calls none of the 78
 * descriptor functions all resolved at start before: 15,800 instructions
 * a start).  The descriptor functions are async-signal-safe and may run
 * in a signal handler before their first ordinary call: they are looked
 * up on first use only where lwm2_real answers from the loaded objects'
 * hash tables with memory reads alone (lwm2_real_signal_safe); else, and
 * under LWM2_DEBUG, the module's init resolves them all so a handler
 * never enters dlsym.  stdio functions (not async-signal-safe anyway) are
 * always resolved on first use.  Two threads resolving at once store the
 * same pointer.  Before resolution is possible (inside
 * dlsym itself) a descriptor function falls back to its raw system call; a
 * stdio function fails with ENOSYS.
 *
 * Cost
 * ----
 * Not a file, lwm2 off or light: one load of the real pointer, one of lwm2_on,
 * one of the descriptor's class byte, then a tail call.  A file: in
 * addition, the earmark store, two clock reads, three counter adds into
 * the thread's own buffer.  No lock, no allocation, no system call (but
 * one fstat the first time a descriptor is seen).  Measured with
 * posix_bench (AMD EPYC guest, one rdtsc 12 ns): +1.3..2.1 ns per 1-byte
 * write, read or fwrite on /dev/null, +19 ns per 1-byte write and
 * +18..27 ns per read on a file, +15 ns per 1-byte fwrite or fread on a
 * file; the two clock reads are most of it.  A counted call touches, in
 * data, the descriptor's class byte, lwm2_on, one line of posix_real (the
 * real function and the clock flag), the thread pointer and the line of
 * the thread's storage its counters and earmark are on; NAME_count keeps
 * only the start time and the earmark across the real call (three saved
 * registers).  Instructions added per call (callgrind, posix_call icount
 * through the wrapper and through libc's function in one preloaded
 * process): 66 per counted write, read, pwrite or pread, 70 per fwrite,
 * 72 per fread, 11 per call passed through (/dev/null).
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
#include <sys/vfs.h>
#include <unistd.h>

#include "core_int.h"
#include "lwm2_core.h"
#include "posix_fd.h"

/* The table of real functions and the prototypes the headers lack. */
#include "posix_wrappers.h"

#define POSIX_TYPEDEF(name, ret, params) typedef ret(*name##_fn) params;
POSIX_EAGER_REALS(POSIX_TYPEDEF)
POSIX_LAZY_REALS(POSIX_TYPEDEF)
#undef POSIX_TYPEDEF

/*
 * What every counted call reads, together: the clock flag and the real
 * functions, the most called first (posix_gen.py's HOT), so a
 * call whose memory went cold in the system call it made touches one
 * cache line here rather than one per variable.
 */
static struct {
	_Atomic int tsc; /* lwm2_clock_is_tsc, copied at init */
#define POSIX_MEMBER(name) _Atomic(name##_fn) name;
	POSIX_REALS_BY_USE(POSIX_MEMBER)
#undef POSIX_MEMBER
} posix_real LWM2_HOT_STATE __attribute__((aligned(LWM2_CACHELINE)));

#define POSIX_REAL(name, ret, params)                                                              \
	static __attribute__((noinline, cold)) name##_fn resolve_##name(void)                      \
	{                                                                                          \
		int saved = errno;                                                                 \
		name##_fn f = (name##_fn)lwm2_real(#name);                                         \
                                                                                                   \
		if (f)                                                                             \
			atomic_store_explicit(&posix_real.name, f, memory_order_relaxed);          \
		errno = saved;                                                                     \
		return f;                                                                          \
	}                                                                                          \
	static inline name##_fn get_##name(void)                                                   \
	{                                                                                          \
		name##_fn f = atomic_load_explicit(&posix_real.name, memory_order_relaxed);        \
                                                                                                   \
		return LWM2_LIKELY(f != NULL) ? f : resolve_##name();                              \
	}
POSIX_EAGER_REALS(POSIX_REAL)
POSIX_LAZY_REALS(POSIX_REAL)
#undef POSIX_REAL

static void posix_init(void)
{
	atomic_store_explicit(&posix_real.tsc, lwm2_clock_is_tsc, memory_order_relaxed);
	if (lwm2_real_signal_safe())
		return; /* each on its first call, from the hash tables */
#define POSIX_RESOLVE(name, ret, params) (void)get_##name();
	POSIX_EAGER_REALS(POSIX_RESOLVE)
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

/* Storage to count a call on fd into, or NULL to pass the call through. */
static inline struct lwm2_thread *posix_enter_fd(int fd)
{
	if (LWM2_UNLIKELY(!lwm2_counting()) || !posix_fd_is_file(fd))
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
	if (LWM2_UNLIKELY(!lwm2_counting()) || LWM2_UNLIKELY(!fp) ||
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
	if (LWM2_LIKELY(c == POSIX_FD_OTHER) || LWM2_UNLIKELY(!lwm2_counting()))
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

/*
 * The counted path of the read and write wrappers (NAME_count): the
 * thread's storage and the TSC, nothing else.  Only the earmark and the
 * start time live across the real call; the storage is looked up again
 * after it, so the wrapper saves few registers.  No storage yet, or no
 * TSC: the wrapper's full body takes the call instead.
 */
struct posix_fast {
	uint64_t start;
	uint32_t earmark;
};

static inline bool posix_fast_begin(struct posix_fast *f)
{
#if defined(__x86_64__) || defined(__i386__)
	struct lwm2_thread *t = lwm2_self;

	if (LWM2_UNLIKELY(t == NULL) ||
	    LWM2_UNLIKELY(!atomic_load_explicit(&posix_real.tsc, memory_order_relaxed)))
		return false;
	f->earmark = lwm2_earmark_enter(t, LWM2_EARMARK_io);
	f->start = __rdtsc();
	return true;
#else
	(void)f;
	return false;
#endif
}

static inline void posix_fast_end(struct posix_fast f, enum lwm2_counter calls,
                                  enum lwm2_counter bytes, enum lwm2_counter time, uint64_t nbytes)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t ticks = __rdtsc() - f.start;
	/* The same thread, so the same storage (a fork child keeps its
	 * parent's until the core gives it its own, then this is the new one). */
	struct lwm2_thread *t = lwm2_self;

	lwm2_earmark_leave(t, f.earmark);
	lwm2_count_call(t, calls, bytes, nbytes, time, ticks);
#else
	(void)f, (void)calls, (void)bytes, (void)time, (void)nbytes;
#endif
}

static inline void posix_fast_end_read(struct posix_fast f, uint64_t bytes)
{
	posix_fast_end(f, LWM2_C_posix_read_calls, LWM2_C_posix_read_bytes, LWM2_C_posix_read_ns,
	               bytes);
}

static inline void posix_fast_end_write(struct posix_fast f, uint64_t bytes)
{
	posix_fast_end(f, LWM2_C_posix_write_calls, LWM2_C_posix_write_bytes, LWM2_C_posix_write_ns,
	               bytes);
}

/*
 * Stream calls the stream's buffer serves alone: a write that fits in the
 * space left in a fully buffered stream's buffer, a read of bytes already
 * in it.  glibc makes no system call for them (_IO_new_file_xsputn,
 * _IO_file_xsgetn); they are counted, calls and bytes, but not timed and
 * not earmarked: two reads of the TSC cost more than such a call (a 1-byte
 * fwrite takes some 11 ns, bench/run.sh), and its time is a copy in memory.
 * Every call that may reach the kernel (a full buffer, a line-buffered or
 * unbuffered stream, a stream not yet set up) is timed as before.  The
 * buffer fields are the public struct _IO_FILE's; the flag values are
 * glibc's (libio.h), unchanged since it had them.  Read without the
 * stream's lock: a racing thread can only make a call timed or untimed.
 */
#define POSIX_IO_UNBUFFERED 0x0002
#define POSIX_IO_LINE_BUF   0x0200

static inline bool posix_buffered_write(FILE *fp, size_t size, size_t n)
{
#ifdef __GLIBC__
	size_t bytes;

	return !(fp->_flags & (POSIX_IO_UNBUFFERED | POSIX_IO_LINE_BUF)) &&
	       !__builtin_mul_overflow(size, n, &bytes) && fp->_IO_write_ptr &&
	       bytes <= (size_t)(fp->_IO_write_end - fp->_IO_write_ptr);
#else
	(void)fp, (void)size, (void)n;
	return false;
#endif
}

static inline bool posix_buffered_read(FILE *fp, size_t size, size_t n)
{
#ifdef __GLIBC__
	size_t bytes;

	return !__builtin_mul_overflow(size, n, &bytes) && fp->_IO_read_ptr &&
	       bytes <= (size_t)(fp->_IO_read_end - fp->_IO_read_ptr);
#else
	(void)fp, (void)size, (void)n;
	return false;
#endif
}

static inline void posix_count_buffered(struct lwm2_thread *t, enum lwm2_counter calls,
                                        enum lwm2_counter bytes, uint64_t nbytes)
{
	_Atomic uint64_t *b = lwm2_buffer(t);

	lwm2_add(b, calls, 1);
	lwm2_add(b, bytes, nbytes);
}

static inline void posix_count_buffered_read(struct lwm2_thread *t, uint64_t bytes)
{
	posix_count_buffered(t, LWM2_C_posix_read_calls, LWM2_C_posix_read_bytes, bytes);
}

static inline void posix_count_buffered_write(struct lwm2_thread *t, uint64_t bytes)
{
	posix_count_buffered(t, LWM2_C_posix_write_calls, LWM2_C_posix_write_bytes, bytes);
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
	if (LWM2_UNLIKELY(!lwm2_counting()))
		return NULL;
	*from_file = posix_fd_is_file(from);
	*to_file = posix_fd_is_file(to);
	return *from_file || *to_file ? posix_thread() : NULL;
}

/* ---- metadata on descriptors ------------------------------------------- */

static inline int posix_mode_arg(int flags, va_list ap)
{
	return posix_open_needs_mode(flags) ? va_arg(ap, int) : 0;
}

/* Shared tail of every open-like wrapper once the real call is known. */
static inline struct lwm2_thread *posix_enter_open(void)
{
	return LWM2_UNLIKELY(!lwm2_counting()) ? NULL : posix_thread();
}

static int posix_opened_untimed(int fd)
{
	/* Whatever this number was before, it is something new now. */
	posix_fd_set(fd, POSIX_FD_UNKNOWN);
	return fd;
}

LWM2_EXPORT int close(int fd)
{
	close_fn real = get_close();
	struct lwm2_thread *t = posix_enter_fd(fd);
	struct posix_span s;
	int r;

	if (LWM2_UNLIKELY(lwm2_keep_on))
		lwm2_keep_move_off(fd);
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
static int posix_fcntl(fcntl_fn real, int fd, int cmd, void *arg)
{
	int r =
	    LWM2_LIKELY(real != NULL) ? real(fd, cmd, arg) : (int)syscall(SYS_fcntl, fd, cmd, arg);

	return posix_fcntl_dups(cmd) ? posix_made(r) : r;
}

LWM2_EXPORT int fcntl(int fd, int cmd, ...)
{
	return posix_fcntl(get_fcntl(), fd, cmd, LWM2_WITH_VA(ap, cmd, va_arg(ap, void *)));
}

LWM2_EXPORT int fcntl64(int fd, int cmd, ...)
{
	return posix_fcntl(get_fcntl64(), fd, cmd, LWM2_WITH_VA(ap, cmd, va_arg(ap, void *)));
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

static int posix_close_range(close_range_fn real, unsigned first, unsigned last, int flags)
{
	return LWM2_LIKELY(real != NULL) ? real(first, last, flags)
	                                 : (int)syscall(SYS_close_range, first, last, flags);
}

/*
 * Inside a container, lwm2's descriptors within the range stay open and
 * keep their close-on-exec flag: the range is closed around them, piece
 * by piece with the same flags (a failure is the first piece's, before
 * anything was closed).  ours: what lwm2_keep_in_range found.
 */
static int posix_close_around(close_range_fn real, unsigned first, unsigned last, int flags,
                              const int *ours, int n)
{
	int r = 0;

	for (int i = 0; i < n && r == 0; i++) {
		if ((unsigned)ours[i] > first)
			r = posix_close_range(real, first, (unsigned)ours[i] - 1, flags);
		first = (unsigned)ours[i] + 1;
	}
	if (r == 0 && first <= last)
		r = posix_close_range(real, first, last, flags);
	return r;
}

LWM2_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	close_range_fn real = get_close_range();
	int ours[2], n, r;

	if (LWM2_UNLIKELY(lwm2_keep_on) && first <= last &&
	    (n = lwm2_keep_in_range(first, last, ours)) > 0)
		r = posix_close_around(real, first, last, flags, ours, n);
	else
		r = posix_close_range(real, first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		lwm2_posix_fd_forget_range(first, last);
	return r;
}

LWM2_EXPORT void closefrom(int lowfd)
{
	closefrom_fn real = get_closefrom();
	int ours[2], n, from = lowfd;

	if (LWM2_UNLIKELY(lwm2_keep_on) && lowfd >= 0 &&
	    (n = lwm2_keep_in_range((unsigned)lowfd, ~0u, ours)) > 0) {
		/* Below them piece by piece, above them closefrom's own way
		 * (its fallback where the kernel has no close_range). */
		(void)posix_close_around(get_close_range(), (unsigned)lowfd, (unsigned)ours[n - 1],
		                         0, ours, n);
		from = ours[n - 1] + 1;
	}
	if (LWM2_LIKELY(real != NULL))
		real(from);
	else
		(void)syscall(SYS_close_range, (unsigned)from, ~0u, 0);
	if (lowfd >= 0)
		lwm2_posix_fd_forget_range((unsigned)lowfd, ~0u);
}

/* ---- stdio reads ------------------------------------------------------- */

static inline uint64_t posix_line_bytes(const char *r)
{
	return r ? strlen(r) : 0;
}

static inline uint64_t posix_char_bytes(int r)
{
	return r != EOF ? 1 : 0;
}

/* ---- stdio writes ------------------------------------------------------ */

static inline uint64_t posix_puts_bytes(int r, const char *str, size_t extra)
{
	return r != EOF ? strlen(str) + extra : 0;
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
	return LWM2_WITH_VA(ap, fmt, posix_vfprintf(fp, false, 0, fmt, ap));
}

LWM2_EXPORT int vprintf(const char *fmt, va_list ap)
{
	return posix_vfprintf(stdout, false, 0, fmt, ap);
}

LWM2_EXPORT int printf(const char *fmt, ...)
{
	return LWM2_WITH_VA(ap, fmt, posix_vfprintf(stdout, false, 0, fmt, ap));
}

LWM2_EXPORT int __vfprintf_chk(FILE *fp, int flag, const char *fmt, va_list ap)
{
	return posix_vfprintf(fp, true, flag, fmt, ap);
}

LWM2_EXPORT int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...)
{
	return LWM2_WITH_VA(ap, fmt, posix_vfprintf(fp, true, flag, fmt, ap));
}

LWM2_EXPORT int __vprintf_chk(int flag, const char *fmt, va_list ap)
{
	return posix_vfprintf(stdout, true, flag, fmt, ap);
}

LWM2_EXPORT int __printf_chk(int flag, const char *fmt, ...)
{
	return LWM2_WITH_VA(ap, fmt, posix_vfprintf(stdout, true, flag, fmt, ap));
}

/* ---- stdio metadata ---------------------------------------------------- */

static inline int posix_fp_fd(FILE *fp)
{
	return fp ? posix_stream_fd(fp) : -1;
}

/* A stream opened while lwm2 is off: its descriptor is something new. */
static inline FILE *posix_made_stream(FILE *fp)
{
	if (fp)
		posix_made(posix_stream_fd(fp));
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

/* ---- asynchronous I/O --------------------------------------------------- */

/* Flags once per process: a lock in the core, taken at most once each. */
static _Atomic uint32_t posix_flags_set LWM2_HOT_STATE;

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

/*
 * libaio, whose headers are not needed to follow it: struct iocb has the
 * opcode (a short) at byte 16 and the descriptor (an int) at byte 20;
 * struct io_event is {data, obj, res, res2}, each 8 bytes (the layout of
 * the kernel's ABI on 64-bit targets).
 */

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
	if (LWM2_UNLIKELY(!lwm2_counting()))
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

/* io_uring: only that it was set up.  A setup the kernel refuses (io_uring
 * disabled by sysctl or a container's seccomp profile, a library probing
 * for it) leaves no ring to submit I/O through: no flag, no note. */
static int posix_uring_set_up(int r)
{
	if (r == 0)
		posix_flag(LWM2_F_IO_URING);
	return r;
}

LWM2_EXPORT int io_uring_queue_init(unsigned entries, void *ring, unsigned flags)
{
	io_uring_queue_init_fn real = get_io_uring_queue_init();

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	return posix_uring_set_up(real(entries, ring, flags));
}

LWM2_EXPORT int io_uring_queue_init_params(unsigned entries, void *ring, void *p)
{
	io_uring_queue_init_params_fn real = get_io_uring_queue_init_params();

	if (LWM2_UNLIKELY(!real))
		return -ENOSYS;
	return posix_uring_set_up(real(entries, ring, p));
}

/*
 * syscall() carries io_uring_setup for programs without liburing (fio):
 * six argument words are passed on whatever the call takes, as the
 * kernel's calling convention allows.
 */
typedef long (*syscall_fn)(long, ...);
static _Atomic(syscall_fn) real_syscall LWM2_HOT_STATE;

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
#ifdef SYS_io_uring_setup
	if (nr == SYS_io_uring_setup) {
		long r = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);

		if (r >= 0) {
			int saved = errno;

			posix_flag(LWM2_F_IO_URING);
			errno = saved;
		}
		return r;
	}
#endif
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/*
 * A file mapped shared and writable: its stores are unseen writes.  The
 * core maps its own record file this way, holding its lock, from several
 * paths: that file (its inode) is not flagged, and the flag is only noted
 * here and given to the core by the module's fini hook, which never runs
 * under the core's lock.
 */
static _Atomic uint32_t posix_flags_pending LWM2_HOT_STATE;

/*
 * Shared-memory IPC is no file written: every Open MPI job maps its
 * transport's segments (/dev/shm/vader_segment.*) and PMIx's and hwloc's
 * (in the session directory, /tmp/ompi.HOST.UID/ or prterun.*, on whatever
 * file system /tmp is), and a note that fires on every MPI job says
 * nothing.  Memory, not files: a segment under /dev/shm (shm_open), a
 * memfd, hugetlbfs, a file already unlinked (nobody reads it after), and
 * a path component that MPI runtimes give their segment directories.  A
 * file of the user's in a /tmp that is tmpfs still counts: it is a file.
 * Raw system calls only: mmap may be called from a signal handler.  Cold:
 * one fstatfs and one readlink per shared writable mapping of a file,
 * until the first real one is seen.
 */
#define LWM2_HUGETLBFS_MAGIC 0x958458f6

static bool ipc_component(const char *c, size_t n)
{
	/* Open MPI's session directory (ompi.HOST.UID), Open MPI 5's (PRRTE),
	 * PMIx's dstore and session directories, transports' segments */
	static const char *const prefixes[] = {
	    "ompi.",         "prterun.",   "pmix_dstor",     "pmix.",    "pmix-",
	    "vader_segment", "sm_segment", "mpich_shar_tmp", "hwloc.sm",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = strlen(prefixes[i]);

		if (n >= k && !memcmp(c, prefixes[i], k))
			return true;
	}
	return false;
}

static __attribute__((noinline, cold)) bool posix_ipc_mapping(int fd, const struct stat *st)
{
	static const char pre[] = "/proc/self/fd/";
	char link[sizeof(pre) + 20], path[512];
	struct statfs fs;
	long n;

	if (st->st_nlink == 0)
		return true;
	if (syscall(SYS_fstatfs, fd, &fs) == 0 && (unsigned long)fs.f_type == LWM2_HUGETLBFS_MAGIC)
		return true;
	memcpy(link, pre, sizeof(pre) - 1);
	link[sizeof(pre) - 1 + lwm2_put_decimal(link + sizeof(pre) - 1, (uint64_t)fd)] = '\0';
	n = syscall(SYS_readlinkat, AT_FDCWD, link, path, sizeof(path) - 1);
	if (n <= 0)
		return false; /* no /proc (a container): counted as a file */
	path[n] = '\0';
	if (!strncmp(path, "/dev/shm/", 9) || !strncmp(path, "/run/shm/", 9) ||
	    !strncmp(path, "/memfd:", 7))
		return true;
	for (long i = 0; i < n;) {
		long j = i;

		while (j < n && path[j] != '/')
			j++;
		if (j > i && ipc_component(path + i, (size_t)(j - i)))
			return true;
		i = j + 1;
	}
	return false;
}

static inline void posix_mapped(int prot, int flags, int fd)
{
	struct stat st;

	if ((prot & PROT_WRITE) && (flags & MAP_TYPE) == MAP_SHARED && fd >= 0 &&
	    !(atomic_load_explicit(&posix_flags_pending, memory_order_relaxed) &
	      LWM2_F_MMAP_WRITE) &&
	    lwm2_counting() && posix_fd_is_file(fd) && syscall(SYS_fstat, fd, &st) == 0 &&
	    (uint64_t)st.st_ino != lwm2_p.ino) {
		int saved = errno;
		bool ipc = posix_ipc_mapping(fd, &st);

		errno = saved;
		if (!ipc)
			atomic_fetch_or(&posix_flags_pending, LWM2_F_MMAP_WRITE);
	}
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

/* ---- the wrappers generated from posix_gen.py's table --------------------- */

/* They use the helpers above, which are static to this file. */
#include "posix_wrappers.c"
