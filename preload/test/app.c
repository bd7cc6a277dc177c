/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The application the core tests run under LD_PRELOAD: one scenario per
 * first argument.  It knows nothing of lwm2; test/core.sh reads the
 * records it leaves behind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burn ms of this thread's CPU time. */
static void spin(long ms)
{
	double end = cpu_s() + (double)ms / 1000.0;
	volatile double x = 1.0;

	while (cpu_s() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 1.0000001 + 1e-9;
}

static void *spinner(void *arg)
{
	spin((long)(intptr_t)arg);
	return NULL;
}

static _Atomic int detached_done;

static void *detached(void *arg)
{
	(void)arg;
	atomic_fetch_add(&detached_done, 1);
	return NULL;
}

static void *blocked(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static volatile sig_atomic_t prof_hits, own_hits, term_hits;

static void on_prof(int sig)
{
	(void)sig;
	prof_hits++;
}

static void on_own(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	own_hits++;
}

static void on_term(int sig)
{
	static const char msg[] = "app: got TERM\n";

	(void)sig;
	term_hits++;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		term_hits++; /* nothing to do about it in a handler */
	exit(3);
}

static void on_segv(int sig)
{
	(void)sig;
	_exit(9);
}

static void at_exit_print(void)
{
	printf("app: atexit handler ran\n");
}

/* quick_exit flushes no stdio buffer */
static void at_quick_exit_write(void)
{
	static const char msg[] = "app: at_quick_exit handler ran\n";

	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(99);
}

static int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	long ms = argc > 3 ? strtol(argv[3], NULL, 10) : 0;

	if (strcmp(mode, "busy") == 0) { /* busy N MS: N threads (main included) burn MS each */
		pthread_t th[64];

		for (long i = 1; i < n && i < 64; i++)
			pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)ms);
		spin(ms);
		for (long i = 1; i < n && i < 64; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) { /* threads N: created and joined */
		for (long i = 0; i < n; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, spinner, (void *)0) != 0)
				return 1;
			pthread_join(t, NULL);
		}
		printf("threads %ld\n", n);
		return 0;
	}
	if (strcmp(mode, "rss") == 0) { /* 1000 threads, then 4 busy at once: peak RSS in KiB */
		pthread_t th[4];
		struct rusage ru;

		for (int i = 0; i < 1000; i++) {
			pthread_t t;

			pthread_create(&t, NULL, spinner, (void *)0);
			pthread_join(t, NULL);
		}
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)ms);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		getrusage(RUSAGE_SELF, &ru);
		printf("%ld\n", ru.ru_maxrss);
		return 0;
	}
	if (strcmp(mode, "detached") == 0) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		for (long i = 0; i < n; i++) {
			pthread_t t;

			pthread_create(&t, &a, detached, NULL);
		}
		while (atomic_load(&detached_done) < n)
			usleep(1000);
		usleep(20000); /* let the last ones pass their end */
		printf("detached %d\n", atomic_load(&detached_done));
		return 0;
	}
	if (strcmp(mode, "neverexit") == 0) {
		pthread_t t1, t2;

		pthread_create(&t1, NULL, blocked, NULL);
		pthread_create(&t2, NULL, spinner, (void *)(intptr_t)100000);
		spin(100);
		printf("leaving threads behind\n");
		return 0;
	}
	if (strcmp(mode, "sigprof") == 0) { /* its own profiler */
		struct itimerval it = {{0, 1000}, {0, 1000}};

		signal(SIGPROF, on_prof);
		setitimer(ITIMER_PROF, &it, NULL);
		spin(300);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_PROF, &it, NULL);
		/* 300 ms of CPU at the kernel's tick: dozens on a quiet machine,
		 * fewer where a loaded host's ticks fall elsewhere; none if lwm2
		 * took the signal or blocked it */
		printf("sigprof %d\n", prof_hits > 5);
		return 0;
	}
	if (strcmp(mode, "ownsig") == 0) { /* a handler for the signal lwm2 samples with */
		struct sigaction sa;
		int sig = SIGRTMIN + 7;

		spin(100);
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_own;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(sig, &sa, NULL) != 0)
			return 1;
		spin(200); /* no stray sample may reach the handler */
		raise(sig);
		printf("own %d\n", own_hits);
		return own_hits == 1 ? 0 : 1;
	}
	if (strcmp(mode, "resetsigs") == 0) { /* reset every signal, as some daemons do */
		struct sigaction old;
		int sig = SIGRTMIN + 7;

		for (int i = 1; i < NSIG; i++)
			if (i != SIGKILL && i != SIGSTOP)
				signal(i, SIG_DFL);
		spin(ms);
		if (sigaction(sig, NULL, &old) != 0)
			return 1;
		printf("reset %s\n", old.sa_handler == SIG_DFL ? "SIG_DFL" : "other");
		return 0;
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid;

		spin(ms);
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			spin(ms);
			exit(0);
		}
		return wait_child(pid);
	}
	if (strcmp(mode, "workexec") == 0 && argc > 2) { /* workexec FILE: child reads, execs cat */
		pid_t pid = fork();

		if (pid == 0) {
			char buf[4096];
			int fd = open(argv[2], O_RDONLY);

			while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
				;
			execl("/bin/cat", "cat", argv[2], (char *)NULL);
			_exit(127);
		}
		return wait_child(pid);
	}
	if (strcmp(mode, "exec") == 0) { /* exec FOO MS: burn MS, exec self as `busy 1 MS` */
		char msbuf[32];

		spin(ms);
		snprintf(msbuf, sizeof(msbuf), "%ld", ms);
		execl("/proc/self/exe", argv[0], "busy", "1", msbuf, (char *)NULL);
		return 127;
	}
	if (strcmp(mode, "mtfork") == 0 || strcmp(mode, "mtexec") == 0) { /* with 3 busy threads */
		pthread_t th[3];
		pid_t pid;

		for (int i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)(10 * ms));
		spin(ms);
		if (mode[2] == 'e') {
			execl("/proc/self/exe", argv[0], "busy", "1", "50", (char *)NULL);
			return 127;
		}
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			spin(ms);
			exit(0);
		}
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		return wait_child(pid);
	}
	if (strcmp(mode, "execfail") == 0) {
		spin(ms);
		execl("/nonexistent/lwm2-test", "x", (char *)NULL);
		spin(ms);
		printf("exec failed: %d\n", errno == ENOENT);
		return 0;
	}
	if (strcmp(mode, "spawn") == 0) {
		pid_t pid;
		char *args[] = {"true", NULL};

		spin(ms);
		if (posix_spawnp(&pid, "true", NULL, NULL, args, environ) != 0)
			return 1;
		return wait_child(pid);
	}
	if (strcmp(mode, "vfork") == 0) {
		pid_t pid;

		spin(ms);
		pid = vfork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (wait_child(pid) != 0)
			return 1;
		pid = vfork();
		if (pid == 0)
			_exit(4); /* a vfork child that ends without exec */
		return wait_child(pid) == 4 ? 0 : 1;
	}
	if (strcmp(mode, "_exit") == 0) {
		spin(ms);
		_exit((int)n);
	}
	if (strcmp(mode, "quick_exit") == 0) {
		at_quick_exit(at_quick_exit_write);
		spin(ms);
		quick_exit((int)n);
	}
	if (strcmp(mode, "abort") == 0) {
		spin(ms);
		abort();
	}
	if (strcmp(mode, "segv") == 0) { /* segv 0: default; segv 1: own handler, _exit(9) */
		if (n)
			signal(SIGSEGV, on_segv);
		spin(ms);
		{
			volatile int *volatile bad = NULL;

			*bad = 1;
		}
		return 0;
	}
	if (strcmp(mode, "term") == 0) { /* term 0|1: wait for SIGTERM, own handler if 1 */
		if (n)
			signal(SIGTERM, on_term);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (strcmp(mode, "sigwait") == 0 || strcmp(mode, "sigfd") == 0) {
		/* sigwait N MS: every signal blocked in the main thread and N - 1
		 * more, MS of CPU each, then the pending signals read as a
		 * signal-driven daemon would: it must find none. */
		sigset_t all;
		struct timespec zero = {0, 0};
		pthread_t th[16];
		siginfo_t si;
		int got = 0;

		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		for (long i = 1; i < n && i < 16; i++)
			pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)ms);
		spin(ms);
		for (long i = 1; i < n && i < 16; i++)
			pthread_join(th[i], NULL);
		if (strcmp(mode, "sigfd") == 0) {
			struct signalfd_siginfo fs;
			int fd = signalfd(-1, &all, SFD_NONBLOCK);

			while (fd >= 0 && read(fd, &fs, sizeof(fs)) == (ssize_t)sizeof(fs)) {
				printf("signal %u code %d\n", fs.ssi_signo, fs.ssi_code);
				got++;
			}
		} else {
			int sig;

			while ((sig = sigtimedwait(&all, &si, &zero)) > 0) {
				printf("signal %d code %d\n", sig, si.si_code);
				got++;
			}
		}
		printf("signals %d\n", got);
		return got ? 3 : 0;
	}
	if (strcmp(mode, "sleep") == 0) {
		printf("ready\n");
		fflush(stdout);
		spin(ms);
		for (;;)
			pause();
	}
	if (strcmp(mode, "output") == 0) {
		atexit(at_exit_print);
		printf("app: stdout line\n");
		fprintf(stderr, "app: stderr line\n");
		for (int i = 0; i < 1000; i++)
			printf("%d%c", i, i % 20 == 19 ? '\n' : ' ');
		return 5;
	}
	if (strcmp(mode, "setpreload") == 0) { /* children without the library */
		pid_t pid;
		char *args[] = {"sh", "-c", "echo \"child LD_PRELOAD=[$LD_PRELOAD]\"", NULL};

		setenv("LD_PRELOAD", "", 1);
		if (posix_spawnp(&pid, "sh", NULL, NULL, args, environ) != 0)
			return 1;
		return wait_child(pid);
	}
	if (strcmp(mode, "unshare") == 0) { /* needs a single-threaded caller */
		int rc;

		spin(ms);
		rc = unshare(CLONE_NEWUSER);
		printf("unshare %s\n", rc == 0 ? "ok" : strerror(errno));
		spin(ms);
		return 0;
	}
	fprintf(stderr, "usage: app MODE [N [MS]]\n");
	return 2;
}
