/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole writes through short writes, atomic replacement, and the bounded
 * reader's refusals (cap, directory, symlink, FIFO), each with its errno
 * and message.
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "fileio.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/lwm2-fileio.XXXXXX";

static void on_alarm(int sig)
{
	(void)sig;
}

static void put(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")) || fputs(text, f) == EOF || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* A slow reader on a small pipe and a timer interrupting the writer
 * without SA_RESTART: write(2) returns early (short counts, EINTR), and
 * every byte must still arrive, in order. */
static void test_short_writes(void)
{
	const size_t len = 1 << 20;
	unsigned char *buf = malloc(len);
	struct sigaction sa = {.sa_handler = on_alarm};
	struct itimerval it = {{0, 500}, {0, 500}}, off = {{0, 0}, {0, 0}};
	int p[2], status = 0, rc;
	pid_t pid;

	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 + i / 251);
	if (!buf || pipe(p) != 0)
		exit(2);
	(void)fcntl(p[1], F_SETPIPE_SZ, 4096);
	if ((pid = fork()) == 0) {
		unsigned char in[777];
		size_t got = 0;
		ssize_t n;

		close(p[1]);
		while ((n = read(p[0], in, sizeof(in))) > 0 || (n < 0 && errno == EINTR)) {
			for (ssize_t i = 0; i < n; i++, got++)
				if (in[i] != (unsigned char)(got * 7 + got / 251))
					_exit(3);
			if (n > 0 && got % 65536 < (size_t)n)
				usleep(1000);
		}
		_exit(got == len ? 0 : 4);
	}
	close(p[0]);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	rc = lwm2_write_all(p[1], buf, len);
	setitimer(ITIMER_REAL, &off, NULL);
	close(p[1]);
	waitpid(pid, &status, 0);
	ok(rc == 0, "write_all: 1 MiB through a 4 KiB pipe under a 0.5 ms timer");
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "write_all: the reader got every byte in order (status %d)", status);
	free(buf);
}

static void test_write_errors(void)
{
	int p[2], fd;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(p) != 0)
		exit(2);
	close(p[0]);
	errno = 0;
	ok(lwm2_write_all(p[1], "x", 1) == -1 && errno == EPIPE,
	   "write_all: a pipe without reader is EPIPE");
	close(p[1]);
	fd = open("/dev/null", O_RDONLY);
	errno = 0;
	ok(lwm2_write_all(fd, "x", 1) == -1 && errno == EBADF,
	   "write_all: a descriptor open for reading is EBADF");
	close(fd);
	ok(lwm2_write_all(-1, "", 0) == 0, "write_all: nothing to write is no error");
}

static void test_atomic(void)
{
	char path[PATH_MAX], err[256] = "", *text;
	struct iovec iov[3] = {{"one ", 4}, {"two", 3}, {"\n", 1}};
	struct stat st;
	size_t len = 0;
	int dfd;

	snprintf(path, sizeof(path), "%s/state", dir);
	ok(lwm2_atomic_write(path, iov, 3, 0600, err, sizeof(err)) == 0, "atomic: written (%s)",
	   err);
	text = lwm2_read_file_at(AT_FDCWD, path, 100, &len, err, sizeof(err));
	is_str(text, "one two\n", "atomic: the pieces in order");
	free(text);
	text = NULL; /* freed again below when the next write fails */
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "atomic: mode 0600");
	snprintf(path, sizeof(path), "%s/.state.tmp", dir);
	ok(access(path, F_OK) != 0, "atomic: no temporary file left");

	snprintf(path, sizeof(path), "%s/state", dir);
	ok(lwm2_atomic_write(path, iov + 1, 1, 0600, err, sizeof(err)) == 0 &&
	       (text = lwm2_read_file_at(AT_FDCWD, path, 100, &len, err, sizeof(err))) &&
	       strcmp(text, "two") == 0,
	   "atomic: an existing file is replaced, not appended to");
	free(text);

	snprintf(path, sizeof(path), "%s/missing/state", dir);
	errno = 0;
	ok(lwm2_atomic_write(path, iov, 3, 0600, err, sizeof(err)) == -1 && errno == ENOENT &&
	       strstr(err, "missing"),
	   "atomic: a missing directory is ENOENT, named (%s)", err);

	/* a directory in the way: the rename fails, the temporary goes */
	snprintf(path, sizeof(path), "%s/adir", dir);
	if (mkdir(path, 0700) != 0)
		exit(2);
	errno = 0;
	ok(lwm2_atomic_write(path, iov, 3, 0600, err, sizeof(err)) == -1 && errno == EISDIR &&
	       strstr(err, "couldn't rename"),
	   "atomic: a directory at the name is EISDIR at the rename (%s)", err);
	snprintf(path, sizeof(path), "%s/.adir.tmp", dir);
	ok(access(path, F_OK) != 0, "atomic: the temporary file removed after a failure");

	/* links planted at the temporary name (a step directory is the
	 * user's): replaced, never written through */
	put("victim", "keep");
	snprintf(path, sizeof(path), "%s/.planted.tmp", dir);
	if (symlink("victim", path) != 0)
		exit(2);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	err[0] = '\0';
	ok(lwm2_atomic_write_at(dfd, "planted", NULL, iov, 3, 0600, err, sizeof(err)) == 0,
	   "atomic: written over a symlink at the temporary name (%s)", err);
	text = lwm2_read_file_at(dfd, "victim", 100, &len, err, sizeof(err));
	is_str(text, "keep", "atomic: the symlink's target is untouched");
	free(text);
	if (linkat(dfd, "victim", dfd, ".hard.tmp", 0) != 0)
		exit(2);
	err[0] = '\0';
	ok(lwm2_atomic_write_at(dfd, "hard", NULL, iov, 3, 0600, err, sizeof(err)) == 0,
	   "atomic: written over a hard link at the temporary name (%s)", err);
	text = lwm2_read_file_at(dfd, "victim", 100, &len, err, sizeof(err));
	is_str(text, "keep", "atomic: the hard link's target is neither truncated nor written");
	free(text);
	text = lwm2_read_file_at(dfd, "hard", 100, &len, err, sizeof(err));
	is_str(text, "one two\n", "atomic: the new file holds the write");
	free(text);
	ok(lwm2_atomic_write_at(dfd, "named", "named.part", iov, 1, 0644, err, sizeof(err)) == 0 &&
	       faccessat(dfd, "named", F_OK, 0) == 0 && faccessat(dfd, "named.part", F_OK, 0) != 0,
	   "atomic: under a temporary name of the caller's");
	close(dfd);

	ok(lwm2_fsync_dir(dir) == 0, "fsync_dir: a directory");
	errno = 0;
	snprintf(path, sizeof(path), "%s/victim", dir);
	ok(lwm2_fsync_dir(path) == -1 && errno == ENOTDIR, "fsync_dir: a file is ENOTDIR");
}

static void test_read(void)
{
	char path[PATH_MAX], err[256] = "", *text;
	size_t len = 99;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), p[2];

	put("ten", "0123456789");
	put("empty", "");
	text = lwm2_read_file_at(dfd, "ten", 10, &len, err, sizeof(err));
	ok(text && len == 10 && !strcmp(text, "0123456789"), "read: a file of exactly the cap");
	free(text);
	errno = 0;
	text = lwm2_read_file_at(dfd, "ten", 9, &len, err, sizeof(err));
	ok(!text && errno == EFBIG && !strcmp(err, "10 bytes, more than the limit 9"),
	   "read: one byte over the cap is EFBIG (%s)", err);
	text = lwm2_read_file_at(dfd, "empty", 10, &len, err, sizeof(err));
	ok(text && len == 0 && !*text, "read: an empty file is an empty string");
	free(text);
	errno = 0;
	text = lwm2_read_file_at(dfd, ".", 1000, &len, err, sizeof(err));
	ok(!text && errno == EINVAL && !strcmp(err, "not a regular file"),
	   "read: a directory is EINVAL, not a regular file (%s)", err);
	if (symlinkat("ten", dfd, "link") != 0 || mkfifoat(dfd, "fifo", 0600) != 0)
		exit(2);
	errno = 0;
	text = lwm2_read_file_at(dfd, "link", 1000, &len, err, sizeof(err));
	ok(!text && errno == ELOOP && !strncmp(err, "open: ", 6),
	   "read: a symlink is not followed (%s)", err);
	errno = 0;
	text = lwm2_read_file_at(dfd, "fifo", 1000, &len, err, sizeof(err));
	ok(!text && errno == EINVAL, "read: a FIFO without writer is refused, not waited on");
	errno = 0;
	text = lwm2_read_file_at(dfd, "none", 1000, &len, err, sizeof(err));
	ok(!text && errno == ENOENT, "read: a missing file is ENOENT");
	snprintf(path, sizeof(path), "%s/ten", dir);
	text = lwm2_read_file_at(AT_FDCWD, path, 100, &len, err, sizeof(err));
	is_str(text, "0123456789", "read: a path with AT_FDCWD");
	free(text);
	close(dfd);

	/* a pipe has no size to check first: the cap holds while reading */
	if (pipe(p) != 0)
		exit(2);
	if (write(p[1], "abcdefgh", 8) != 8)
		exit(2);
	close(p[1]);
	errno = 0;
	text = lwm2_read_fd(p[0], 7, &len, err, sizeof(err));
	ok(!text && errno == EFBIG && !strcmp(err, "larger than 7 bytes"),
	   "read_fd: a pipe over the cap is EFBIG (%s)", err);
	close(p[0]);
	if (pipe(p) != 0)
		exit(2);
	if (write(p[1], "abcdefgh", 8) != 8)
		exit(2);
	close(p[1]);
	text = lwm2_read_fd(p[0], 8, &len, err, sizeof(err));
	ok(text && len == 8 && !strcmp(text, "abcdefgh"), "read_fd: a pipe of exactly the cap");
	free(text);
	close(p[0]);
	errno = 0;
	text = lwm2_read_fd(-1, 8, &len, err, sizeof(err));
	ok(!text && errno == EBADF, "read_fd: a bad descriptor is EBADF (%s)", err);
}

int main(void)
{
	char cmd[PATH_MAX + 16];

	if (!mkdtemp(dir))
		return 2;
	test_short_writes();
	test_write_errors();
	test_atomic();
	test_read();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("couldn't remove %s", dir);
	return done_testing();
}
