/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A launcher that closes what it inherited before it execs, run by
 * container.sh with the library preloaded as inside a container:
 * `closefds HOW FILE BYTES`.  A fork child closes every descriptor from 3
 * up by HOW (close: a walk over /proc/self/fd, as Python's subprocess
 * does where close_range fails; close_range; closefrom; cloexec:
 * close_range with CLOSE_RANGE_CLOEXEC), checks that what it closed looks
 * closed (F_GETFD fails with EBADF on every number it closed but those in
 * CLOSEFDS_KEPT, which a range passes by, and its next open gets the
 * lowest of them), then execs `closefds write FILE BYTES`,
 * which writes BYTES zero bytes to FILE.  Exit status 0, else 1 with the
 * reason on stderr.
 *
 * `closefds term DIR BYTES`: a parent that ends its children with SIGTERM
 * as they end on their own, as a pool does its workers at its exit.  Each
 * of TERM_KIDS children, one after the other, writes BYTES zero bytes to a
 * file of DIR, says so, and calls _exit(0); the parent sends it SIGTERM at
 * once or a few microseconds later (another delay for each child), so
 * that the signal comes before, during or after its final record is
 * written.  Prints how many exited and how many the signal ended.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC 4
#endif

#define TERM_KIDS 32

static int write_zeros(const char *file, long bytes)
{
	char buf[4096] = {0};
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return 1;
	for (long n; bytes > 0; bytes -= n) {
		n = bytes < (long)sizeof(buf) ? bytes : (long)sizeof(buf);
		if (write(fd, buf, (size_t)n) != n)
			return 1;
	}
	return close(fd) != 0;
}

/* The numbers from 3 up that are open, into fds (at most max). */
static int open_fds(int *fds, int max)
{
	int n = 0;

	for (int fd = 3; fd < 4096 && n < max; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			fds[n++] = fd;
	return n;
}

static int walk_and_close(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self;

	if (!d)
		return -1;
	self = dirfd(d);
	while ((e = readdir(d)))
		if (atoi(e->d_name) >= 3 && atoi(e->d_name) != self)
			close(atoi(e->d_name));
	return closedir(d);
}

/* A number a range may pass by: listed in CLOSEFDS_KEPT ("905 906"). */
static int kept(const char *how, int fd)
{
	const char *p = getenv("CLOSEFDS_KEPT");
	char *end;

	if (!strcmp(how, "close") || !p)
		return 0;
	for (long v; (v = strtol(p, &end, 10)), end != p; p = end)
		if (v == fd)
			return 1;
	return 0;
}

static int child(const char *how, char **argv)
{
	int before[64], n = open_fds(before, 64), fd;

	if (!strcmp(how, "close"))
		walk_and_close();
	else if (!strcmp(how, "close_range"))
		close_range(3, ~0u, 0);
	else if (!strcmp(how, "closefrom"))
		closefrom(3);
	else if (!strcmp(how, "cloexec"))
		close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
	for (int i = 0; i < n && strcmp(how, "cloexec"); i++)
		if (!kept(how, before[i]) && (fcntl(before[i], F_GETFD) != -1 || errno != EBADF)) {
			fprintf(stderr, "closefds %s: %d still looks open\n", how, before[i]);
			return 1;
		}
	fd = open("/dev/null", O_RDONLY);
	if (n > 0 && strcmp(how, "cloexec") && fd != 3) {
		fprintf(stderr, "closefds %s: the next open got %d, not 3\n", how, fd);
		return 1;
	}
	close(fd);
	execl("/proc/self/exe", "closefds", "write", argv[2], argv[3], (char *)NULL);
	fprintf(stderr, "closefds: exec: %s\n", strerror(errno));
	return 1;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Child i written and on its way out: the delay, then SIGTERM. */
static void end_child(pid_t pid, _Atomic int *written, int i)
{
	siginfo_t gone = {0};
	long long until;

	/* Not waiting forever for a child that died before it said so. */
	while (!atomic_load(written) &&
	       waitid(P_PID, (id_t)pid, &gone, WEXITED | WNOHANG | WNOWAIT) == 0 && !gone.si_pid)
		;
	until = now_ns() + (i % 16) * 2000;
	while (now_ns() < until)
		;
	kill(pid, SIGTERM);
}

static int term_kids(const char *dir, long bytes)
{
	_Atomic int *written = mmap(NULL, sizeof(*written) * TERM_KIDS, PROT_READ | PROT_WRITE,
	                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int exited = 0, ended = 0;

	if (written == MAP_FAILED)
		return 1;
	for (int i = 0; i < TERM_KIDS; i++) {
		char file[4096];
		int status;
		pid_t pid;

		snprintf(file, sizeof(file), "%s/f%d", dir, i);
		pid = fork();
		if (pid == 0) {
			int rc = write_zeros(file, bytes);

			atomic_store(&written[i], 1);
			_exit(rc);
		}
		if (pid < 0)
			return 1;
		end_child(pid, &written[i], i);
		if (waitpid(pid, &status, 0) != pid)
			return 1;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			exited++;
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM)
			ended++;
		else {
			fprintf(stderr, "closefds term: child %d ended with status %#x\n", i,
			        status);
			return 1;
		}
	}
	printf("exited %d ended by SIGTERM %d\n", exited, ended);
	return 0;
}

int main(int argc, char **argv)
{
	int status;
	pid_t pid;

	if (argc != 4) {
		fprintf(stderr, "usage: closefds close|close_range|closefrom|cloexec|write FILE "
		                "BYTES\n       closefds term DIR BYTES\n");
		return 2;
	}
	if (!strcmp(argv[1], "write"))
		return write_zeros(argv[2], atol(argv[3]));
	if (!strcmp(argv[1], "term"))
		return term_kids(argv[2], atol(argv[3]));
	pid = fork();
	if (pid == 0)
		_exit(child(argv[1], argv));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
