/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2-closekids FILE: four children, each of which closes what it
 * inherited in its own way before it execs /bin/dd, which writes 1 MiB of
 * zeros to FILE.N: a close() of every number over /proc/self/fd (as
 * Python's subprocess and multiprocessing do), close_range(3, ~0U, 0),
 * closefrom(3), and nothing.
 *
 * lwm2-closekids --spawn FILE: the four dd started by posix_spawn instead
 * (glibc's child execs without the exec functions lwm2 wraps): plain,
 * posix_spawnp through PATH, posix_spawn with a file action that closes a
 * descriptor of the program's own, and posix_spawnp with one that closes
 * every descriptor from 3 up (posix_spawn_file_actions_addclosefrom_np,
 * which glibc carries out with a raw close_range in the child).
 *
 * Launchers of the kind lwm2 keeps its step's descriptors through inside a
 * container (t-containers.sh); built on the host and run in an image of
 * the same glibc (2.34 or later: close_range and closefrom through libc,
 * as applications call them).  Prints one line when all four
 * wrote; exit status 0, else 1.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIDS 4

extern char **environ;

static void close_by_walk(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (atoi(e->d_name) >= 3 && atoi(e->d_name) != dirfd(d))
			close(atoi(e->d_name));
	closedir(d);
}

static void child(int k, const char *file)
{
	char of[4096];

	if (k == 0)
		close_by_walk();
	else if (k == 1)
		close_range(3, ~0U, 0);
	else if (k == 2)
		closefrom(3);
	snprintf(of, sizeof(of), "of=%s.%d", file, k);
	execl("/bin/dd", "dd", "if=/dev/zero", of, "bs=65536", "count=16", "status=none",
	      (char *)NULL);
	perror("lwm2-closekids: exec /bin/dd");
	_exit(1);
}

/* spawned(k, file): child k started by posix_spawn; 0 when it started. */
static int spawned(int k, const char *file)
{
	char of[4096];
	char *argv[] = {"dd", "if=/dev/zero", of, "bs=65536", "count=16", "status=none", NULL};
	posix_spawn_file_actions_t fa;
	int own, r;
	pid_t pid;

	snprintf(of, sizeof(of), "of=%s.%d", file, k);
	if (k == 0)
		return posix_spawn(&pid, "/bin/dd", NULL, NULL, argv, environ);
	if (k == 1)
		return posix_spawnp(&pid, "dd", NULL, NULL, argv, environ);
	posix_spawn_file_actions_init(&fa);
	own = open("/dev/null", O_RDONLY);
	if (k == 2)
		posix_spawn_file_actions_addclose(&fa, own);
	else
		posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	r = k == 2 ? posix_spawn(&pid, "/bin/dd", &fa, NULL, argv, environ)
	           : posix_spawnp(&pid, "dd", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(own);
	return r;
}

int main(int argc, char **argv)
{
	int failed = 0, spawn = argc == 3 && strcmp(argv[1], "--spawn") == 0;
	const char *file = argv[argc - 1];

	if (argc != 2 && !spawn) {
		fprintf(stderr, "usage: lwm2-closekids [--spawn] FILE\n");
		return 2;
	}
	for (int k = 0; k < KIDS; k++) {
		if (spawn) {
			if (spawned(k, file) != 0)
				return 1;
			continue;
		}
		pid_t pid = fork();

		if (pid == 0)
			child(k, file);
		if (pid < 0)
			return 1;
	}
	for (int k = 0; k < KIDS; k++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	if (failed)
		return 1;
	printf("lwm2-closekids: %d children wrote 1048576 bytes each\n", KIDS);
	return 0;
}
