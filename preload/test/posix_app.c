/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program with known I/O, run by posix_preload.t with and without
 * liblwm2.so: `posix_app SCENARIO DIR`.  Each scenario's exact counts are
 * in posix_preload.c.  What it prints must not depend on the library.
 * Built twice: plainly and with -D_FORTIFY_SOURCE=2 (posix_app_fortify),
 * which turns read, fread, fgets and fprintf into their __*_chk forms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const char *dir;

static char *path(const char *name)
{
	static __thread char buf[4096];

	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* w 10/70, meta 2 */
static int s_write(void)
{
	int fd = open(path("w"), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	for (int i = 0; i < 10; i++)
		if (write(fd, "1234567", 7) != 7)
			return 1;
	return close(fd);
}

/* w 5/15, meta 2: the process's first writes are a signal handler's, so
 * the wrapper looks up the real write inside the handler */
static int handler_fd = -1;
static volatile sig_atomic_t handler_bad;

static void on_usr1(int sig)
{
	(void)sig;
	if (write(handler_fd, "abc", 3) != 3)
		handler_bad = 1;
}

static int s_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	handler_fd = open(path("h"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (handler_fd < 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	for (int i = 0; i < 5; i++)
		if (raise(SIGUSR1) != 0)
			return 1;
	return handler_bad || close(handler_fd) != 0;
}

/* w 1/70, r 11/70, meta 3 */
static int s_read(void)
{
	char buf[70];
	int fd = open(path("r"), O_RDWR | O_CREAT | O_TRUNC, 0600);

	memset(buf, 'r', sizeof buf);
	if (write(fd, buf, 70) != 70 || lseek(fd, 0, SEEK_SET) != 0)
		return 1;
	for (int i = 0; i < 11; i++)
		if (read(fd, buf, 7) != (i < 10 ? 7 : 0))
			return 1;
	return close(fd);
}

/* w 4/5+5+7+7=24, r 4/24, meta 4 (open, fsync, fdatasync, close) */
static int s_vector(void)
{
	char a[8] = "abcdefg", b[8];
	struct iovec w[2] = {{a, 3}, {a + 3, 4}}, r[2] = {{b, 3}, {b + 3, 4}};
	int fd = open(path("v"), O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (pwrite(fd, a, 5, 0) != 5 || pwritev(fd, w, 2, 5) != 7 || pwrite64(fd, a, 5, 12) != 5 ||
	    pwritev2(fd, w, 2, 17, 0) != 7)
		return 1;
	if (pread(fd, b, 5, 0) != 5 || preadv(fd, r, 2, 5) != 7 || pread64(fd, b, 5, 12) != 5 ||
	    preadv2(fd, r, 2, 17, 0) != 7)
		return 1;
	if (fsync(fd) != 0 || fdatasync(fd) != 0)
		return 1;
	return close(fd);
}

/* fopen, fflush, fseek, fclose: meta 4; writes 8 calls: fwrite 10x3x2...
 * see posix_preload.c for the sums. */
static int s_stdio(void)
{
	char buf[256], *line = NULL;
	size_t cap = 0;
	FILE *fp = fopen(path("s"), "w+");

	if (!fp)
		return 1;
	for (int i = 0; i < 10; i++)
		fwrite("abcdef", 2, 3, fp); /* 10 calls, 60 B */
	fputs("hello\n", fp);               /* 6 */
	fputc('a', fp);                     /* 1 */
	putc('b', fp);                      /* 1 */
	fprintf(fp, "%d-%s\n", 42, "xy");   /* 6 */
	fflush(fp);
	fseek(fp, 0, SEEK_SET);
	if (fread(buf, 6, 10, fp) != 10) /* 1 call, 60 B */
		return 1;
	if (!fgets(buf, sizeof buf, fp)) /* 6 */
		return 1;
	fgetc(fp);                         /* 1 */
	getc(fp);                          /* 1 */
	if (getline(&line, &cap, fp) != 6) /* 6 */
		return 1;
	if (fgetc(fp) != EOF) /* 1 call, 0 B */
		return 1;
	free(line);
	printf("%s", buf);
	return fclose(fp);
}

/* Nothing counted: /dev/null, pipe, socketpair, stdout (a pipe). */
static int s_notfile(void)
{
	int null = open("/dev/null", O_WRONLY), p[2], sp[2];
	char c;
	FILE *fp = fopen("/dev/null", "w");

	if (null < 0 || !fp || pipe(p) || socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return 1;
	for (int i = 0; i < 100; i++) {
		if (write(null, "x", 1) != 1 || write(p[1], "x", 1) != 1 ||
		    read(p[0], &c, 1) != 1 || write(sp[0], "x", 1) != 1 || read(sp[1], &c, 1) != 1)
			return 1;
		fputc('x', fp);
	}
	fclose(fp);
	printf("to stdout\n");
	fflush(stdout);
	if (write(1, "raw\n", 4) != 4)
		return 1;
	close(null);
	close(p[0]);
	close(p[1]);
	close(sp[0]);
	close(sp[1]);
	return 0;
}

/* w 1/1, meta 2: the write to the pipe that took the file's number is not
 * counted. */
static int s_reuse(void)
{
	int fd = open(path("u"), O_WRONLY | O_CREAT | O_TRUNC, 0600), p[2];

	if (write(fd, "x", 1) != 1 || close(fd) != 0 || pipe(p) != 0)
		return 1;
	if (p[0] != fd && p[1] != fd)
		return 2;
	if (write(p[1], "x", 1) != 1)
		return 1;
	printf("reused %d\n", fd);
	return 0;
}

/* meta 2 (open, close); the failing read on the closed descriptor is not a
 * file call.  Prints the errno values, which must match without lwm2. */
static int s_errno(void)
{
	int fd = open(path("e"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	char c;
	ssize_t r;

	close(fd);
	errno = 0;
	r = read(fd, &c, 1);
	printf("read closed: %zd %s\n", r, strerrorname_np(errno));
	errno = 0;
	r = write(-1, &c, 1);
	printf("write -1: %zd %s\n", r, strerrorname_np(errno));
	errno = 0;
	printf("open missing: %d %s\n", open(path("missing/x"), O_RDONLY), strerrorname_np(errno));
	return 0;
}

/* 4 threads x 100 writes of 10 bytes; meta 8. */
static void *writer(void *arg)
{
	char name[32];
	int fd;

	snprintf(name, sizeof name, "t%ld", (long)(intptr_t)arg);
	fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 100; i++)
		if (write(fd, "0123456789", 10) != 10)
			break;
	close(fd);
	return NULL;
}

static int s_threads(void)
{
	pthread_t t[4];

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, writer, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/* 4 threads, each 200 times: open a file, write 3 bytes, close; make a
 * pipe (likely on a number a file just had), write to it, close it.
 * Descriptor numbers pass between files and pipes across threads all the
 * time; the counts must still be exact: w 800/2400, meta 1600. */
static void *churner(void *arg)
{
	char name[32];
	int p[2];

	snprintf(name, sizeof name, "c%ld", (long)(intptr_t)arg);
	for (int i = 0; i < 200; i++) {
		int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || write(fd, "abc", 3) != 3 || close(fd) != 0 || pipe(p) != 0 ||
		    write(p[1], "x", 1) != 1 || close(p[0]) != 0 || close(p[1]) != 0)
			return (void *)1;
	}
	return NULL;
}

static int s_churn(void)
{
	pthread_t t[4];
	void *r;
	int bad = 0;

	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churner, (void *)i);
	for (int i = 0; i < 4; i++)
		bad |= pthread_join(t[i], &r) != 0 || r != NULL;
	return bad;
}

/* What cp does: w 2/2000, r 1/1000, meta 5 (2 open, lseek, 2 close). */
static int s_copy(void)
{
	static char buf[1000];
	int a = open(path("ca"), O_RDWR | O_CREAT | O_TRUNC, 0600);
	int b = open(path("cb"), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (write(a, buf, sizeof buf) != (ssize_t)sizeof buf || lseek(a, 0, SEEK_SET) != 0 ||
	    copy_file_range(a, NULL, b, NULL, sizeof buf, 0) != (ssize_t)sizeof buf)
		return 1;
	return close(a) | close(b);
}

/* stdout is whatever the runner made it: printf 6, puts 4, putchar 1,
 * fputs 2, write 4: 5 calls, 17 bytes when it is a file. */
static int s_stdout(void)
{
	printf("%s\n", "hello");
	puts("abc");
	putchar('x');
	fputs("y\n", stdout);
	fflush(stdout);
	return write(1, "123\n", 4) == 4 ? 0 : 1;
}

/* Writes for about 0.3 s, then computes for about as long; prints the
 * write phase's wall time in ns for the runner to compare. */
static int s_share(void)
{
	static char buf[65536];
	int fd = open(path("share"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	double t0 = now(), t1, t2;
	volatile double x = 1.0;
	long n = 0;

	memset(buf, 's', sizeof buf);
	do {
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			return 1;
		if (++n % 256 == 0 && lseek(fd, 0, SEEK_SET) != 0)
			return 1;
	} while (now() - t0 < 0.3);
	t1 = now();
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 1e-9;
	} while (now() - t1 < 0.3);
	t2 = now();
	close(fd);
	printf("writes %ld io_ns %.0f compute_ns %.0f\n", n, (t1 - t0) * 1e9, (t2 - t1) * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} s[] = {
	    {"write", s_write},     {"read", s_read},       {"vector", s_vector},
	    {"stdio", s_stdio},     {"notfile", s_notfile}, {"reuse", s_reuse},
	    {"errno", s_errno},     {"threads", s_threads}, {"stdout", s_stdout},
	    {"share", s_share},     {"churn", s_churn},     {"copy", s_copy},
	    {"handler", s_handler},
	};

	if (argc != 3)
		return 64;
	dir = argv[2];
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		if (strcmp(argv[1], s[i].name) == 0)
			return s[i].fn();
	return 64;
}
