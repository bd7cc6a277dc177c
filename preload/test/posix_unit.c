/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The POSIX module over a stand-in core (posix_core_stub.c): every wrapper
 * family, exact counts read straight from the thread's storage.  The same
 * behaviour through the real liblwm2.so and its rank record is checked by
 * posix_preload.t.
 */
#define _GNU_SOURCE
/* Call the stdio functions themselves, not the inline bodies glibc's
 * headers give optimised builds (fputc_unlocked, small fread_unlocked):
 * those are compiled into the application and no library can see them. */
#define __NO_INLINE__ 1
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "posix_core_stub.h"
#include "tap.h"

extern const struct lwm2_module lwm2_module_posix;

ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp);
int __fprintf_chk(FILE *fp, int flag, const char *fmt, ...);

enum { RC, RB, RN, WC, WB, WN, MC, MN, NSNAP };

struct snap {
	uint64_t v[NSNAP];
};

static struct snap snap(void)
{
	struct snap s;

	for (int i = 0; i < NSNAP; i++)
		s.v[i] = stub_counter((enum lwm2_counter)(LWM2_C_posix_read_calls + i));
	return s;
}

/* The change since before must be exactly these calls and bytes; time
 * must have grown where calls were counted and not elsewhere. */
static void expect(const char *what, struct snap before, uint64_t rc, uint64_t rb, uint64_t wc,
                   uint64_t wb, uint64_t mc)
{
	struct snap now = snap();
	uint64_t d[NSNAP];
	int good;

	for (int i = 0; i < NSNAP; i++)
		d[i] = now.v[i] - before.v[i];
	good = d[RC] == rc && d[RB] == rb && d[WC] == wc && d[WB] == wb && d[MC] == mc &&
	       (rc ? 1 : d[RN] == 0) && (wc ? 1 : d[WN] == 0) && (mc ? 1 : d[MN] == 0);
	if (!ok(good, "%s", what))
		diag("  got read %llu/%lluB/%lluns write %llu/%lluB/%lluns meta %llu/%lluns; "
		     "want read %llu/%lluB write %llu/%lluB meta %llu",
		     (unsigned long long)d[RC], (unsigned long long)d[RB],
		     (unsigned long long)d[RN], (unsigned long long)d[WC],
		     (unsigned long long)d[WB], (unsigned long long)d[WN],
		     (unsigned long long)d[MC], (unsigned long long)d[MN], (unsigned long long)rc,
		     (unsigned long long)rb, (unsigned long long)wc, (unsigned long long)wb,
		     (unsigned long long)mc);
}

static char dir[] = "/tmp/lwm2-posix-unit.XXXXXX";

static char *path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static void test_fd_data(void)
{
	struct snap s;
	char buf[64];
	struct iovec iov[2] = {{buf, 3}, {buf + 3, 4}};
	int fd = open(path("data"), O_RDWR | O_CREAT | O_TRUNC, 0600);

	memset(buf, 'x', sizeof buf);
	s = snap();
	for (int i = 0; i < 10; i++)
		if (write(fd, buf, 7) != 7)
			break;
	expect("10 writes of 7 bytes: 10 calls, 70 bytes", s, 0, 0, 10, 70, 0);
	s.v[WN] = snap().v[WN] - s.v[WN];
	ok(s.v[WN] > 0, "write time counted (%llu ticks)", (unsigned long long)s.v[WN]);

	lseek(fd, 0, SEEK_SET);
	s = snap();
	for (int i = 0; i < 10; i++)
		if (read(fd, buf, 7) != 7)
			break;
	expect("10 reads of 7 bytes: 10 calls, 70 bytes", s, 10, 70, 0, 0, 0);

	s = snap();
	(void)read(fd, buf, 7);
	expect("read at end of file: one call, no bytes", s, 1, 0, 0, 0, 0);

	s = snap();
	(void)pwrite(fd, buf, 5, 100);
	(void)pwrite64(fd, buf, 5, 200);
	(void)pread(fd, buf, 5, 100);
	(void)pread64(fd, buf, 5, 200);
	(void)pread(fd, buf, 50, 190);
	expect("pwrite/pwrite64 5+5, pread/pread64 5+5 and a short 15", s, 3, 25, 2, 10, 0);

	s = snap();
	(void)writev(fd, iov, 2);
	(void)pwritev(fd, iov, 2, 300);
	(void)pwritev2(fd, iov, 2, 400, 0);
	(void)pwritev64(fd, iov, 2, 500);
	(void)preadv(fd, iov, 2, 300);
	(void)preadv2(fd, iov, 2, 400, 0);
	(void)preadv64(fd, iov, 2, 500);
	(void)readv(fd, iov, 2);
	expect("vector calls: 4 writes and 4 reads of 3+4 bytes", s, 4, 28, 4, 28, 0);

	s = snap();
	(void)__read_chk(fd, buf, 4, sizeof buf);
	(void)pread(fd, buf, 4, 0);
	expect("fortified read: counted like read", s, 2, 8, 0, 0, 0);
	close(fd);
}

static void test_not_files(void)
{
	struct snap s;
	char buf[8] = "abcdefg";
	int null = open("/dev/null", O_WRONLY);
	int zero = open("/dev/zero", O_RDONLY);
	int p[2], sp[2];

	if (pipe(p) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	s = snap();
	for (int i = 0; i < 5; i++) {
		(void)write(null, buf, 7);
		(void)read(zero, buf, 7);
		(void)write(p[1], buf, 7);
		(void)read(p[0], buf, 7);
		(void)write(sp[0], buf, 7);
		(void)read(sp[1], buf, 7);
	}
	(void)lseek(null, 0, SEEK_SET);
	(void)fsync(p[1]);
	close(null);
	close(zero);
	close(p[0]);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
	expect("/dev/null, /dev/zero, pipe, socketpair: nothing counted", s, 0, 0, 0, 0, 0);

	/* Regular files to fstat, but kernel interfaces, not file I/O. */
	s = snap();
	for (int i = 0; i < 3; i++) {
		const char *path =
		    i ? "/sys/kernel/mm/transparent_hugepage/enabled" : "/proc/self/status";
		int fd = open(path, O_RDONLY);
		char page[256];

		if (fd < 0)
			continue;
		(void)read(fd, page, sizeof(page));
		close(fd);
	}
	expect("/proc and /sys files: nothing counted", s, 0, 0, 0, 0, 0);
}

static void test_copy(void)
{
	struct snap s;
	char buf[100];
	int a = open(path("copy-a"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	int b = open(path("copy-b"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	int sp[2];
	off_t off = 0;

	memset(buf, 'c', sizeof buf);
	if (write(a, buf, sizeof buf) != (ssize_t)sizeof buf ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
		abort();
	lseek(a, 0, SEEK_SET);
	s = snap();
	(void)copy_file_range(a, NULL, b, NULL, 100, 0);
	expect("copy_file_range of 100 bytes file to file: a read and a write of 100", s, 1, 100, 1,
	       100, 0);
	s = snap();
	(void)sendfile(sp[0], a, &off, 60);
	expect("sendfile of 60 bytes file to socket: a read of 60", s, 1, 60, 0, 0, 0);
	close(a);
	close(b);
	close(sp[0]);
	close(sp[1]);
}

static void test_meta(void)
{
	struct snap s;
	int fd, e;

	s = snap();
	fd = open(path("meta"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	(void)lseek(fd, 10, SEEK_SET);
	(void)lseek64(fd, 0, SEEK_CUR);
	{
		uint64_t sc = stub_counter(LWM2_C_posix_sync_calls);

		(void)fsync(fd);
		(void)fdatasync(fd);
		is_int((int)(stub_counter(LWM2_C_posix_sync_calls) - sc), 2,
		       "fsync and fdatasync also count as sync calls");
	}
	close(fd);
	fd = openat(AT_FDCWD, path("meta"), O_RDONLY);
	close(fd);
	fd = creat(path("meta2"), 0600);
	close(fd);
	expect("open, 2 lseek, fsync, fdatasync, close, openat, close, creat, close: 10 meta", s, 0,
	       0, 0, 0, 10);

	s = snap();
	errno = 0;
	fd = open(path("missing"), O_RDONLY);
	e = errno;
	expect("failed open counts one meta call", s, 0, 0, 0, 0, 1);
	ok(fd == -1 && e == ENOENT, "failed open: -1, ENOENT as from libc");
}

static void test_errors(void)
{
	struct snap s;
	char buf[8];
	int fd = open(path("err"), O_RDWR | O_CREAT, 0600);
	ssize_t r;
	int e;

	close(fd);
	s = snap();
	errno = 0;
	r = read(fd, buf, sizeof buf);
	e = errno;
	expect("read on a closed descriptor: not a file, not counted", s, 0, 0, 0, 0, 0);
	ok(r == -1 && e == EBADF, "read on a closed descriptor: -1, EBADF");

	fd = open(path("err"), O_RDONLY);
	s = snap();
	errno = 0;
	r = write(fd, "x", 1);
	e = errno;
	expect("write on a read-only file: one call, no bytes", s, 0, 0, 1, 0, 0);
	ok(r == -1 && e == EBADF, "write on a read-only file: -1, EBADF");

	errno = 1234;
	r = read(fd, buf, 0);
	ok(r == 0 && errno == 1234, "successful call leaves errno alone");
	ok(stub_earmark() == LWM2_EARMARK_compute, "earmark restored after the call");
	close(fd);
}

static void test_reuse(void)
{
	struct snap s;
	int fd, p[2], q[2];

	/* A file's number reused by a pipe. */
	fd = open(path("reuse"), O_WRONLY | O_CREAT, 0600);
	(void)write(fd, "a", 1);
	close(fd);
	if (pipe(p) != 0)
		abort();
	s = snap();
	(void)write(p[1], "a", 1);
	(void)write(p[0] == fd ? p[0] : p[1], "a", 1);
	expect("file number reused by pipe: not counted", s, 0, 0, 0, 0, 0);
	ok(p[0] == fd || p[1] == fd, "the pipe did reuse the number (%d: %d,%d)", fd, p[0], p[1]);
	close(p[0]);
	close(p[1]);

	/* Reused by a pipe made behind our back: the close reset the class. */
	fd = open(path("reuse"), O_WRONLY, 0600);
	(void)write(fd, "a", 1);
	close(fd);
	if (syscall(SYS_pipe2, q, 0) != 0)
		abort();
	s = snap();
	(void)write(q[1], "a", 1);
	expect("file number reused by an unseen pipe: classified anew, not counted", s, 0, 0, 0, 0,
	       0);
	close(q[0]);
	close(q[1]);

	/* dup2 of a pipe over a file. */
	fd = open(path("reuse"), O_WRONLY, 0600);
	(void)write(fd, "a", 1);
	if (pipe(p) != 0)
		abort();
	dup2(p[1], fd);
	s = snap();
	(void)write(fd, "a", 1);
	expect("dup2 of a pipe over a file: not counted", s, 0, 0, 0, 0, 0);
	close(fd);
	close(p[0]);
	close(p[1]);

	/* A file opened behind our back is found lazily. */
	fd = (int)syscall(SYS_openat, AT_FDCWD, path("reuse"), O_WRONLY);
	s = snap();
	(void)write(fd, "abc", 3);
	expect("file opened unseen: counted on first use", s, 0, 0, 1, 3, 0);
	s = snap();
	fd = dup(fd);
	(void)write(fd, "abc", 3);
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	(void)write(fd, "abc", 3);
	expect("dup and fcntl(F_DUPFD_CLOEXEC) of a file: counted", s, 0, 0, 2, 6, 0);
	ok(fd >= 100, "fcntl(F_DUPFD_CLOEXEC, 100) passed its argument through (%d)", fd);
	closefrom(3);
}

static void test_high_fd(void)
{
	struct rlimit rl;
	struct snap s;
	int fd, hi = 66000;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_max <= (rlim_t)hi) {
		skip("RLIMIT_NOFILE hard limit below %d", hi + 1);
		return;
	}
	rl.rlim_cur = (rlim_t)hi + 1;
	setrlimit(RLIMIT_NOFILE, &rl);
	fd = open(path("high"), O_WRONLY | O_CREAT, 0600);
	s = snap();
	if (dup2(fd, hi) != hi) {
		skip("dup2 to %d failed", hi);
		close(fd);
		return;
	}
	(void)write(hi, "abcd", 4);
	close(hi);
	close(fd);
	expect("descriptor above the table: write and close counted", s, 0, 0, 1, 4, 2);
}

static void test_stdio(void)
{
	struct snap s;
	char buf[64], *line = NULL;
	size_t cap = 0;
	FILE *fp;

	s = snap();
	fp = fopen(path("stdio"), "w+");
	expect("fopen of a file: one meta call", s, 0, 0, 0, 0, 1);

	s = snap();
	for (int i = 0; i < 10; i++)
		(void)fwrite("abcdef", 2, 3, fp);
	expect("10 fwrite of 3 items of 2 bytes: 10 calls, 60 bytes", s, 0, 0, 10, 60, 0);

	s = snap();
	(void)fputs("hello\n", fp);
	(void)fputc('a', fp);
	(void)putc('b', fp);
	(void)fputc_unlocked('c', fp);
	(void)fwrite_unlocked("de", 1, 2, fp);
	(void)fputs_unlocked("fg\n", fp);
	(void)fprintf(fp, "%d-%s\n", 42, "xy");
	(void)__fprintf_chk(fp, 1, "%s\n", "abc");
	expect("fputs 6, fputc/putc/fputc_unlocked 1 each, fwrite_unlocked 2, fputs_unlocked 3, "
	       "fprintf 6, __fprintf_chk 4",
	       s, 0, 0, 8, 24, 0);

	s = snap();
	(void)fflush(fp);
	(void)fseek(fp, 0, SEEK_SET);
	expect("fflush and fseek: two meta calls", s, 0, 0, 0, 0, 2);

	s = snap();
	(void)fread(buf, 2, 3, fp);
	(void)fread_unlocked(buf, 1, 4, fp);
	(void)__fread_chk(buf, sizeof buf, 1, 50, fp);
	expect("fread 3x2, fread_unlocked 4, __fread_chk 50", s, 3, 60, 0, 0, 0);

	(void)fseeko(fp, 60, SEEK_SET);
	s = snap();
	(void)fgets(buf, sizeof buf, fp);
	(void)fgetc(fp);
	(void)getc(fp);
	(void)getline(&line, &cap, fp);
	(void)getdelim(&line, &cap, '\n', fp);
	expect("fgets 6, fgetc 1, getc 1, getline 6, getdelim 6", s, 5, 20, 0, 0, 0);
	(void)fseeko(fp, 60, SEEK_SET);
	s = snap();
	(void)__getdelim(&line, &cap, '\n', fp);
	(void)fgets_unlocked(buf, sizeof buf, fp);
	(void)fgetc_unlocked(fp);
	(void)getc_unlocked(fp);
	expect("__getdelim 6, fgets_unlocked 8, fgetc_unlocked 1, getc_unlocked 1", s, 4, 16, 0, 0,
	       0);
	(void)fseeko(fp, 60 + 6 + 1 + 1 + 6 + 6, SEEK_SET);

	s = snap();
	while (fgetc(fp) != EOF)
		;
	expect("fgetc to end: 4 chars and one EOF call", s, 5, 4, 0, 0, 0);

	s = snap();
	fclose(fp);
	expect("fclose: one meta call", s, 0, 0, 0, 0, 1);
	free(line);

	s = snap();
	fp = fopen("/dev/null", "w");
	(void)fwrite("abc", 1, 3, fp);
	(void)fprintf(fp, "%s", "abc");
	(void)fflush(fp);
	fclose(fp);
	fp = fmemopen(buf, sizeof buf, "w");
	(void)fwrite("abc", 1, 3, fp);
	fclose(fp);
	expect("stdio on /dev/null and on memory: nothing counted", s, 0, 0, 0, 0, 0);

	s = snap();
	fp = fopen(path("missing/x"), "r");
	expect("failed fopen: one meta call", s, 0, 0, 0, 0, 1);
	ok(fp == NULL && errno == ENOENT, "failed fopen: NULL, ENOENT");
}

/* How much the counter `which` (RN, WN) grew since before. */
static uint64_t grown(struct snap before, int which)
{
	return snap().v[which] - before.v[which];
}

/*
 * stdio calls the stream's buffer serves alone are counted and not timed;
 * every call that may reach the kernel is timed: one larger than the
 * buffer's room, the first on a stream whose buffer is not set up, any on
 * an unbuffered or line-buffered stream.
 */
static void test_stdio_buffer(void)
{
	static char big[3 * BUFSIZ];
	char buf[16];
	struct snap s;
	FILE *fp = fopen(path("stdio-buffer"), "w+"), *nb, *lb;

	if (!fp) {
		ok(0, "fopen for the buffer cases: %s", strerror(errno));
		return;
	}
	s = snap();
	(void)fwrite("a", 1, 1, fp);
	expect("the first fwrite of a stream: one call, 1 byte", s, 0, 0, 1, 1, 0);
	ok(grown(s, WN) > 0, "the first fwrite (the buffer is set up) is timed");

	s = snap();
	for (int i = 0; i < 100; i++)
		(void)fwrite("abcdef", 2, 3, fp);
	expect("100 fwrite into the stream's buffer: 100 calls, 600 bytes", s, 0, 0, 100, 600, 0);
	ok(grown(s, WN) == 0, "fwrite calls the buffer serves alone are not timed");

	s = snap();
	(void)fwrite(big, 1, sizeof big, fp);
	expect("an fwrite larger than the buffer's room: one call, all its bytes", s, 0, 0, 1,
	       sizeof big, 0);
	ok(grown(s, WN) > 0, "an fwrite larger than the buffer's room is timed");

	(void)fseek(fp, 0, SEEK_SET);
	s = snap();
	(void)fread(buf, 1, 1, fp);
	expect("the first fread after a seek: one call, 1 byte", s, 1, 1, 0, 0, 0);
	ok(grown(s, RN) > 0, "the first fread after a seek (the buffer is filled) is timed");
	s = snap();
	for (int i = 0; i < 10; i++)
		(void)fread(buf, 2, 5, fp);
	expect("10 fread from the stream's buffer: 10 calls, 100 bytes", s, 10, 100, 0, 0, 0);
	ok(grown(s, RN) == 0, "fread calls the buffer serves alone are not timed");
	fclose(fp);

	nb = fopen(path("stdio-unbuffered"), "w");
	lb = fopen(path("stdio-line"), "w");
	if (!nb || !lb) {
		ok(0, "fopen for the unbuffered cases: %s", strerror(errno));
		return;
	}
	setvbuf(nb, NULL, _IONBF, 0);
	setvbuf(lb, NULL, _IOLBF, BUFSIZ);
	(void)fwrite("x", 1, 1, nb);
	(void)fwrite("x", 1, 1, lb);
	s = snap();
	(void)fwrite("ab", 1, 2, nb);
	expect("fwrite on an unbuffered stream: one call, 2 bytes", s, 0, 0, 1, 2, 0);
	ok(grown(s, WN) > 0, "fwrite on an unbuffered stream is timed");
	s = snap();
	(void)fwrite("ab", 1, 2, lb);
	expect("fwrite on a line-buffered stream: one call, 2 bytes", s, 0, 0, 1, 2, 0);
	ok(grown(s, WN) > 0, "fwrite on a line-buffered stream is timed");
	fclose(nb);
	fclose(lb);
}

static void test_off(void)
{
	struct snap s;
	int fd = open(path("off"), O_WRONLY | O_CREAT, 0600);

	atomic_store(&lwm2_on, 0);
	s = snap();
	(void)write(fd, "abc", 3);
	(void)fsync(fd);
	atomic_store(&lwm2_on, 1);
	expect("lwm2 off: nothing counted", s, 0, 0, 0, 0, 0);

	s = snap();
	(void)write(fd, "abc", 3);
	stub_flip();
	(void)write(fd, "abc", 3);
	close(fd);
	expect("counts in both buffers across a buffer switch", s, 0, 0, 2, 6, 1);
}

/* POSIX aio: bytes when the result is collected, in the aio counters;
 * none of it in the synchronous read and write counters. */
static void test_aio(void)
{
	static char buf[8192];
	struct aiocb cb, l1, l2;
	struct aiocb *list[2] = {&l1, &l2};
	const struct aiocb *wait[1] = {&cb};
	uint64_t w0 = stub_counter(LWM2_C_posix_aio_write_bytes);
	uint64_t r0 = stub_counter(LWM2_C_posix_aio_read_bytes);
	uint64_t c0 = stub_counter(LWM2_C_posix_aio_calls);
	struct snap s = snap();
	int fd = open(path("aio"), O_RDWR | O_CREAT | O_TRUNC, 0600);

	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_buf = buf;
	cb.aio_nbytes = 4096;
	ok(aio_write(&cb) == 0, "aio_write submitted");
	while (aio_error(&cb) == EINPROGRESS)
		(void)aio_suspend(wait, 1, NULL);
	is_int((int)aio_return(&cb), 4096, "aio_write: 4096 bytes");
	is_int((int)(stub_counter(LWM2_C_posix_aio_write_bytes) - w0), 4096,
	       "aio_write's bytes counted at aio_return");
	cb.aio_nbytes = 1000;
	cb.aio_offset = 100;
	ok(aio_read(&cb) == 0, "aio_read submitted");
	while (aio_error(&cb) == EINPROGRESS)
		(void)aio_suspend(wait, 1, NULL);
	is_int((int)aio_return(&cb), 1000, "aio_read: 1000 bytes");
	(void)aio_return(&cb);
	is_int((int)(stub_counter(LWM2_C_posix_aio_read_bytes) - r0), 1000,
	       "aio_read's bytes counted once, a second aio_return adds none");
	memset(&l1, 0, sizeof(l1));
	l1.aio_fildes = fd;
	l1.aio_buf = buf;
	l1.aio_nbytes = 100;
	l1.aio_lio_opcode = LIO_WRITE;
	l2 = l1;
	l2.aio_offset = 5000;
	l2.aio_nbytes = 300;
	ok(lio_listio(LIO_WAIT, list, 2, NULL) == 0, "lio_listio of two writes");
	is_int((int)(aio_return(&l1) + aio_return(&l2)), 400, "lio_listio: 400 bytes");
	is_int((int)(stub_counter(LWM2_C_posix_aio_write_bytes) - w0), 4496,
	       "lio_listio's writes counted");
	ok(stub_counter(LWM2_C_posix_aio_calls) - c0 >= 9 && stub_counter(LWM2_C_posix_aio_ns) > 0,
	   "aio calls and their time counted");
	close(fd);
	expect("aio: open and close only in the synchronous counters", s, 0, 0, 0, 0, 2);
}

/* io_uring set up, files mapped for writing: flags, nothing counted. */
/* Map FD shared and writable, store into it; the flag must stay unset. */
static void map_ipc(int fd, const char *what)
{
	void *p;

	if (fd < 0) {
		/* no /dev/shm in some build containers, no memfd before Linux 3.17 */
		skip("%s: cannot be made here (errno %d)", what, errno);
		return;
	}
	ok(ftruncate(fd, 4096) == 0, "%s: made", what);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ok(p != MAP_FAILED, "%s: mapped", what);
	if (p != MAP_FAILED) {
		memset(p, 1, 4096);
		munmap(p, 4096);
	}
	lwm2_module_posix.fini();
	ok(!(stub_flags & LWM2_F_MMAP_WRITE), "%s: shared memory, not a file written", what);
	close(fd);
}

/* What MPI runtimes map for their shared-memory transports. */
static void test_ipc_mappings(void)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "/lwm2-unit-%d", (int)getpid());
	/* unlinked only after: an unlinked file is memory for another reason */
	map_ipc(shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600), "shm_open (/dev/shm)");
	shm_unlink(name);
	map_ipc(memfd_create("lwm2-unit", 0), "memfd_create");
	ok(mkdir(path("ompi.host.0"), 0700) == 0 && mkdir(path("ompi.host.0/pid.1"), 0700) == 0,
	   "an Open MPI session directory");
	map_ipc(open(path("ompi.host.0/pid.1/hwloc.sm"), O_RDWR | O_CREAT, 0600),
	        "a segment in Open MPI's session directory");
	unlink(path("ompi.host.0/pid.1/hwloc.sm"));
	rmdir(path("ompi.host.0/pid.1"));
	rmdir(path("ompi.host.0"));
	fd = open(path("scratch"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	unlink(path("scratch"));
	map_ipc(fd, "a file unlinked before it is mapped");
}

static void test_flags(void)
{
	int fd = open(path("map"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	void *p;

	ok(ftruncate(fd, 4096) == 0, "map file sized");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ok(p != MAP_FAILED && !(stub_flags & LWM2_F_MMAP_WRITE),
	   "a private writable mapping is no write to the file");
	munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	ok(p != MAP_FAILED && !(stub_flags & LWM2_F_MMAP_WRITE), "a read-only shared mapping");
	munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ok(p != MAP_FAILED && !(stub_flags & LWM2_F_MMAP_WRITE),
	   "a shared writable mapping of a file: noted, not yet given to the core");
	lwm2_module_posix.fini();
	ok(stub_flags & LWM2_F_MMAP_WRITE, "the module's fini sets mmap_write");
	munmap(p, 4096);
	close(fd);
	ok(!(stub_flags & LWM2_F_IO_URING), "no io_uring yet");
	errno = 0;
	/* entries 0 is refused by the kernel: the call is seen all the same */
	ok(syscall(SYS_io_uring_setup, 0, NULL) == -1 && errno != 0,
	   "io_uring_setup through syscall() still reaches the kernel (errno %d)", errno);
	ok(!(stub_flags & LWM2_F_IO_URING),
	   "an io_uring_setup the kernel refuses: no ring, no flag");
	{
		/* struct io_uring_params, zeroed: 120 bytes in every kernel so far */
		long params[32] = {0};
		long ring = syscall(SYS_io_uring_setup, 2, params);

		if (ring < 0) {
			skip("the kernel refuses io_uring here (errno %d)", errno);
		} else {
			ok(stub_flags & LWM2_F_IO_URING, "an io_uring set up: flagged");
			close((int)ring);
		}
	}
	ok(syscall(SYS_getpid) == getpid(), "syscall() passes other calls through");
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
		/* As the core does: the clock first, then the module's init, so the
		 * wrappers' counted path (which times with the TSC only) is the one
		 * these tests run. */
#if defined(__x86_64__) || defined(__i386__)
	lwm2_clock_is_tsc = 1;
#endif
	lwm2_module_posix.init();
	test_fd_data();
	test_not_files();
	test_copy();
	test_meta();
	test_errors();
	test_reuse();
	test_high_fd();
	test_stdio();
	test_stdio_buffer();
	test_off();
	test_aio();
	test_ipc_mappings();
	test_flags();
	{
		char cmd[300];

		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("could not remove %s", dir);
	}
	return done_testing();
}
