/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A private munged for the unit tests that sign and verify node records:
 * its own key (0400), socket, pid, log and seed files in a scratch
 * directory, started by whoever runs the tests, so that no test depends on
 * root or on the machine's munged.  The tests run in a child process and
 * the daemon is stopped when the child ends, whether it passed, failed or
 * crashed.  Header only, like tap.h.
 */
#ifndef LWM2_MUNGED_H
#define LWM2_MUNGED_H

#include <errno.h>
#include <munge.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"

/* True when a credential made on socket decodes there. */
static inline bool tap_munge_works(const char *socket)
{
	munge_ctx_t ctx = munge_ctx_create();
	char *cred = NULL;
	bool works = false;

	if (!ctx)
		return false;
	if (munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) == EMUNGE_SUCCESS &&
	    munge_encode(&cred, ctx, "x", 1) == EMUNGE_SUCCESS) {
		void *p = NULL;
		int l;
		works = munge_decode(cred, ctx, &p, &l, NULL, NULL) == EMUNGE_SUCCESS;
		free(p);
	}
	free(cred);
	munge_ctx_destroy(ctx);
	return works;
}

static inline pid_t tap_munged_pid(const char *dir)
{
	char path[512];
	FILE *f;
	int pid = -1;

	snprintf(path, sizeof(path), "%s/munged.pid", dir);
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%d", &pid) != 1)
			pid = -1;
		fclose(f);
	}
	return pid;
}

/* SIGTERM, then SIGKILL if it is still there after 5 s. */
static inline void tap_munged_stop(const char *dir)
{
	pid_t pid = tap_munged_pid(dir);
	char cmd[600];

	if (pid > 1 && kill(pid, SIGTERM) == 0) {
		for (int i = 0; i < 100 && kill(pid, 0) == 0; i++)
			usleep(50000);
		if (kill(pid, 0) == 0)
			kill(pid, SIGKILL);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("couldn't remove %s", dir);
}

/*
 * Starts munged in dir and returns its socket in sock, or NULL with the
 * reason in why.  munged insists that its key is its own user's and not
 * readable by others, and that its directories are not writable by others.
 */
static inline const char *tap_munged_start(const char *dir, char *sock, size_t socklen, char *why,
                                           size_t whylen)
{
	char cmd[2400];

	if (system("command -v munged >/dev/null 2>&1") != 0) {
		snprintf(why, whylen, "munged is not installed (contrib/install-deps.sh)");
		return NULL;
	}
	snprintf(sock, socklen, "%s/munge.socket", dir);
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && { mungekey --create --keyfile=munge.key 2>/dev/null || "
	         "dd if=/dev/urandom bs=1 count=1024 of=munge.key 2>/dev/null; } && "
	         "chmod 0400 munge.key && munged --key-file=munge.key --socket='%s' "
	         "--pid-file=munged.pid --log-file=munged.log --seed-file=munged.seed "
	         ">munged.out 2>&1",
	         dir, sock);
	if (system(cmd) != 0) {
		char out[700], line[300] = "";
		FILE *f;

		snprintf(out, sizeof(out), "%s/munged.out", dir);
		if ((f = fopen(out, "r"))) {
			if (!fgets(line, sizeof(line), f))
				line[0] = '\0';
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
		snprintf(why, whylen, "a private munged did not start: %s", line);
		return NULL;
	}
	/* munged has daemonized with its socket bound; this is a formality
	 * that bounds the wait to 5 s on a loaded machine. */
	for (int i = 0; i < 100; i++) {
		if (tap_munge_works(sock))
			return sock;
		usleep(50000);
	}
	snprintf(why, whylen, "a private munged started but does not answer on %s", sock);
	return NULL;
}

/*
 * Runs body(socket) in a child against a private munged and returns the
 * exit status for main, after stopping munged.  Where munged cannot run
 * the whole test is skipped with the reason.
 */
static inline int tap_with_private_munged(int (*body)(const char *socket))
{
	char dir[] = "/tmp/lwm2-munged-XXXXXX", sock[300], why[400] = "";
	int st = 0;
	pid_t pid;

	if (!mkdtemp(dir)) {
		printf("1..0 # SKIP no scratch directory for munged: %s\n", strerror(errno));
		return 0;
	}
	/* 0755: the tests run as root also connect as another uid. */
	chmod(dir, 0755);
	if (!tap_munged_start(dir, sock, sizeof(sock), why, sizeof(why))) {
		tap_munged_stop(dir);
		printf("1..0 # SKIP %s\n", why);
		return 0;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(body(sock));
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	tap_munged_stop(dir);
	if (pid < 0) {
		printf("Bail out! fork: %s\n", strerror(errno));
		return 1;
	}
	if (WIFSIGNALED(st)) {
		printf("Bail out! the test was killed by signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

#endif /* LWM2_MUNGED_H */
