/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The application the core tests run under LD_PRELOAD: one scenario per
 * first argument.  It knows nothing of lwm2; test/core.sh reads the
 * records it leaves behind.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
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
#include <sys/syscall.h>
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

/* busy N MS: N threads (main included) burn MS each */
static int mode_busy(const char *mode, char **argv, long n, long ms)
{
	pthread_t th[64];

	for (long i = 1; i < n && i < 64; i++)
		pthread_create(&th[i], NULL, spinner, (void *)(intptr_t)ms);
	spin(ms);
	for (long i = 1; i < n && i < 64; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* threads N: created and joined */
static int mode_threads(const char *mode, char **argv, long n, long ms)
{
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, spinner, (void *)0) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	printf("threads %ld\n", n);
	return 0;
}

/* 1000 threads, then 4 busy at once: peak RSS in KiB */
static int mode_rss(const char *mode, char **argv, long n, long ms)
{
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

static int mode_detached(const char *mode, char **argv, long n, long ms)
{
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

static int mode_neverexit(const char *mode, char **argv, long n, long ms)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, blocked, NULL);
	pthread_create(&t2, NULL, spinner, (void *)(intptr_t)100000);
	spin(100);
	printf("leaving threads behind\n");
	return 0;
}

/* its own profiler */
static int mode_sigprof(const char *mode, char **argv, long n, long ms)
{
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

/* a handler for the signal lwm2 samples with */
static int mode_ownsig(const char *mode, char **argv, long n, long ms)
{
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

/* reset every signal, as some daemons do */
static int mode_resetsigs(const char *mode, char **argv, long n, long ms)
{
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

static int mode_fork(const char *mode, char **argv, long n, long ms)
{
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

/* workexec FILE: child reads, execs cat */
static int mode_workexec(const char *mode, char **argv, long n, long ms)
{
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

/* exec FOO MS: burn MS, exec self as `busy 1 MS` */
static int mode_exec(const char *mode, char **argv, long n, long ms)
{
	char msbuf[32];

	spin(ms);
	snprintf(msbuf, sizeof(msbuf), "%ld", ms);
	execl("/proc/self/exe", argv[0], "busy", "1", msbuf, (char *)NULL);
	return 127;
}

/* with 3 busy threads */
static int mode_mtfork_mtexec(const char *mode, char **argv, long n, long ms)
{
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

static int mode_execfail(const char *mode, char **argv, long n, long ms)
{
	spin(ms);
	execl("/nonexistent/lwm2-test", "x", (char *)NULL);
	spin(ms);
	printf("exec failed: %d\n", errno == ENOENT);
	return 0;
}

static int mode_spawn(const char *mode, char **argv, long n, long ms)
{
	pid_t pid;
	char *args[] = {"true", NULL};

	spin(ms);
	if (posix_spawnp(&pid, "true", NULL, NULL, args, environ) != 0)
		return 1;
	return wait_child(pid);
}

/* vfork on purpose: the library in a vfork child is what this mode tests.
 * clang's analyzer calls every vfork insecure (security.insecureAPI.vfork):
 * it analyses fork here instead. */
#ifdef __clang_analyzer__
#define vfork fork
#endif
static int mode_vfork(const char *mode, char **argv, long n, long ms)
{
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
#undef vfork

/* rawclone N: N copies of the process made by the clone system call
 * (fork without its handlers, as bubblewrap starts its sandbox), each of
 * which forks and waits, while another thread asks the library for the
 * view of all threads over and over (it takes the library's lock for a
 * walk over 32 idle threads, and no lock of libc's: a copy made while a
 * thread held one of those, malloc's say, would wait in libc's own fork
 * whatever the library does).  A copy whose fork has not returned after
 * 5 s (it takes milliseconds) is killed, and the copies stop there; the
 * counts are printed.  The copies start once every thread has started (the
 * idle ones about to block in their read): a thread starting frees what
 * its creator handed it (the library's trampoline) and so holds malloc's
 * lock a moment, and a copy made then waits in libc's fork as above. */
static _Atomic int churn_stop, churn_started, idle_ready;
typedef int (*view_read_fn)(double *, int, int);

static void *churn(void *arg)
{
	view_read_fn view_read = (view_read_fn)arg;
	double v[4];

	atomic_store(&churn_started, 1);
	while (!atomic_load(&churn_stop))
		view_read(v, 4, 8 /* LWM2_VIEW_OP_ALL_THREADS */);
	return NULL;
}

/* an idle thread the library knows (its read is measured) */
static void *idle_reader(void *arg)
{
	char c;

	atomic_fetch_add(&idle_ready, 1);
	return read((int)(intptr_t)arg, &c, 1) < 0 ? arg : NULL;
}

static int mode_rawclone(const char *mode, char **argv, long n, long ms)
{
	pthread_t th, idle[32];
	long hung = 0, failed = 0;
	void *view_read = dlsym(RTLD_DEFAULT, "lwm2_view_read_self");
	int fds[2];

	if (!view_read) {
		printf("rawclone: lwm2_view_read_self not found (not preloaded)\n");
		return 2;
	}
	if (pipe(fds) != 0) {
		printf("rawclone: pipe: %s\n", strerror(errno));
		return 2;
	}
	for (int i = 0; i < 32; i++)
		pthread_create(&idle[i], NULL, idle_reader, (void *)(intptr_t)fds[0]);
	while (atomic_load(&idle_ready) < 32)
		usleep(1000);
	usleep(50000); /* from the count to the read: the library's wrapper */
	pthread_create(&th, NULL, churn, view_read);
	while (!atomic_load(&churn_started))
		usleep(1000);
	for (long i = 0; i < n; i++) {
		pid_t pid =
		    (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, 0UL);
		int st = 0, waited = 0;

		if (pid == 0) {
			pid_t kid = fork();

			if (kid == 0)
				_exit(0);
			_exit(kid > 0 && waitpid(kid, &st, 0) == kid ? 0 : 1);
		}
		if (pid < 0) {
			failed++;
			continue;
		}
		while (waitpid(pid, &st, WNOHANG) == 0 && waited < 5000) {
			usleep(1000);
			waited++;
		}
		if (waited >= 5000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fprintf(stderr, "rawclone: copy %ld of %ld hung\n", i + 1, n);
			hung++;
			break;
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			failed++;
		}
	}
	atomic_store(&churn_stop, 1);
	pthread_join(th, NULL);
	close(fds[1]);
	for (int i = 0; i < 32; i++)
		pthread_join(idle[i], NULL);
	printf("rawclone %ld hung %ld failed %ld\n", n, hung, failed);
	return hung || failed;
}

static int mode_exit_at_once(const char *mode, char **argv, long n, long ms)
{
	spin(ms);
	_exit((int)n);
}

static int mode_quick_exit(const char *mode, char **argv, long n, long ms)
{
	at_quick_exit(at_quick_exit_write);
	spin(ms);
	quick_exit((int)n);
}

static int mode_abort(const char *mode, char **argv, long n, long ms)
{
	spin(ms);
	abort();
}

/* segv 0: default; segv 1: own handler, _exit(9) */
static int mode_segv(const char *mode, char **argv, long n, long ms)
{
	if (n)
		signal(SIGSEGV, on_segv);
	spin(ms);
	/* the write through NULL is what this mode is for; clang's analyzer,
	 * which would report it, does not see it */
#ifndef __clang_analyzer__
	{
		volatile int *volatile bad = NULL;

		*bad = 1;
	}
#endif
	return 0;
}

/* term 0|1: wait for SIGTERM, own handler if 1 */
static int mode_term(const char *mode, char **argv, long n, long ms)
{
	if (n)
		signal(SIGTERM, on_term);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0; /* not reached */
}

static int mode_sigwait_sigfd(const char *mode, char **argv, long n, long ms)
{
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

static int mode_sleep(const char *mode, char **argv, long n, long ms)
{
	printf("ready\n");
	fflush(stdout);
	spin(ms);
	for (;;)
		pause();
	return 0; /* not reached */
}

static int mode_output(const char *mode, char **argv, long n, long ms)
{
	atexit(at_exit_print);
	printf("app: stdout line\n");
	fprintf(stderr, "app: stderr line\n");
	for (int i = 0; i < 1000; i++)
		printf("%d%c", i, i % 20 == 19 ? '\n' : ' ');
	return 5;
}

/* children without the library */
static int mode_setpreload(const char *mode, char **argv, long n, long ms)
{
	pid_t pid;
	char *args[] = {"sh", "-c", "echo \"child LD_PRELOAD=[$LD_PRELOAD]\"", NULL};

	setenv("LD_PRELOAD", "", 1);
	if (posix_spawnp(&pid, "sh", NULL, NULL, args, environ) != 0)
		return 1;
	return wait_child(pid);
}

/* needs a single-threaded caller */
static int mode_unshare(const char *mode, char **argv, long n, long ms)
{
	int rc;

	spin(ms);
	rc = unshare(CLONE_NEWUSER);
	printf("unshare %s\n", rc == 0 ? "ok" : strerror(errno));
	spin(ms);
	return 0;
}

/* The modes by name; a mode that needs an operand names the least argc. */
static const struct {
	const char *name;
	int (*run)(const char *mode, char **argv, long n, long ms);
	int min_argc;
} modes[] = {
    {"busy", mode_busy, 0},
    {"threads", mode_threads, 0},
    {"rss", mode_rss, 0},
    {"detached", mode_detached, 0},
    {"neverexit", mode_neverexit, 0},
    {"sigprof", mode_sigprof, 0},
    {"ownsig", mode_ownsig, 0},
    {"resetsigs", mode_resetsigs, 0},
    {"fork", mode_fork, 0},
    {"workexec", mode_workexec, 3},
    {"exec", mode_exec, 0},
    {"mtfork", mode_mtfork_mtexec, 0},
    {"mtexec", mode_mtfork_mtexec, 0},
    {"execfail", mode_execfail, 0},
    {"spawn", mode_spawn, 0},
    {"vfork", mode_vfork, 0},
    {"rawclone", mode_rawclone, 0},
    {"_exit", mode_exit_at_once, 0},
    {"quick_exit", mode_quick_exit, 0},
    {"abort", mode_abort, 0},
    {"segv", mode_segv, 0},
    {"term", mode_term, 0},
    {"sigwait", mode_sigwait_sigfd, 0},
    {"sigfd", mode_sigwait_sigfd, 0},
    {"sleep", mode_sleep, 0},
    {"output", mode_output, 0},
    {"setpreload", mode_setpreload, 0},
    {"unshare", mode_unshare, 0},
};

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	long ms = argc > 3 ? strtol(argv[3], NULL, 10) : 0;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(mode, modes[i].name) == 0 && argc >= modes[i].min_argc)
			return modes[i].run(mode, argv, n, ms);
	fprintf(stderr, "usage: app MODE [N [MS]]\n");
	return 2;
}
