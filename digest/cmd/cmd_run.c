/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 run: measure one command outside Slurm.  The command runs with
 * liblwm2.so preloaded and a private record directory; when it ends, its
 * records (every process of the tree, forks and execs included) are merged
 * as one node and the digest goes to stderr, so the command's own stdout
 * stays untouched.  lwm2 exits as the command did.
 *
 * The command's environment is a measured step's, by the rule
 * spank_lwm2.so follows for srun --lwm2 (digest/util/stepenv.c): a program
 * runs the same under both.  Where nothing was measured, run_why.c says
 * why, as far as it can be established.
 */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"
#include "lwm2_keys.h"

#include "digest_internal.h"
#include "cmd_opt.h"
#include "lwm2_cmds.h"
#include "lwm2_env.h"
#include "numparse.h"
#include "run_why.h"
#include "stepenv.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef LWM2_LIBDIR
#define LWM2_LIBDIR "/usr/local/lib/lwm2"
#endif

static void log_stderr(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "%s\n", msg);
}

/* $LWM2_LIB, else next to this executable (build tree or installed
 * prefix), else the configured library directory. */
static int find_lib(char *out, size_t len)
{
	static const char *const rel[] = {
	    "/../preload/.libs/liblwm2.so",
	    "/../../preload/.libs/liblwm2.so",
	    "/../lib/lwm2/liblwm2.so",
	    "/../lib64/lwm2/liblwm2.so",
	};
	const char *env = getenv(LWM2_ENV_LIB);
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env) {
		char real[PATH_MAX];

		/* Absolute, as srun --lwm2 gives it: the command may change
		 * directory before it starts other programs. */
		snprintf(out, len, "%s", env);
		if (access(out, R_OK) != 0)
			return -1;
		if (realpath(env, real))
			snprintf(out, len, "%s", real);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char cand[PATH_MAX + 64];
			snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
			char real[PATH_MAX];
			if (access(cand, R_OK) == 0 && realpath(cand, real)) {
				snprintf(out, len, "%s", real);
				return 0;
			}
		}
	}
	snprintf(out, len, "%s/liblwm2.so", LWM2_LIBDIR);
	return access(out, R_OK);
}

static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (rmdir(path) != 0)
		lwm2_log_error("run: couldn't remove %s: %s", path, strerror(errno));
}

/*
 * In the command's process, before exec: the environment of a measured
 * step, as srun --lwm2 gives it (stepenv.h), and the descriptors its
 * processes need to be measured inside a container (without them they
 * still run).  Returns 0, or -1 having said why.
 */
static int step_env(const struct lwm2_step_env *e)
{
	char err[PATH_MAX + 128];

	if (lwm2_step_env_set(&lwm2_run_own_env, e, err, sizeof(err)) < 0) {
		lwm2_log_error("run: %s", err);
		return -1;
	}
	/* lwm2 run prints the digest itself, once for the command. */
	unsetenv(LWM2_ENV_PRINT);
	if (lwm2_step_env_fds(&lwm2_run_own_env, e->lib, e->dir, err, sizeof(err)) < 0)
		lwm2_log_warning("run: %s; processes in containers are not measured", err);
	return 0;
}

/* The name the kernel gave the process last (that of the file it ran),
 * read while it is a zombie, before it is reaped; "" where unknown. */
static void last_comm(pid_t pid, char *out, size_t len)
{
	char path[64];
	siginfo_t si;
	FILE *f;

	out[0] = '\0';
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0)
		if (errno != EINTR)
			return;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	else
		out[0] = '\0';
	fclose(f);
}

static const char *state_of(int status)
{
	if (WIFSIGNALED(status))
		return "SIGNALED";
	return WEXITSTATUS(status) == 0 ? "COMPLETED" : "FAILED";
}

struct run_opts {
	const char *slice, *keep, *json_out;
	bool quiet;
};

static const struct lwm2_optspec run_spec = {
    .cmd = "run",
    .usage = "Usage: lwm2 run [--slice S] [--keep DIR] [--json FILE] [--quiet] -- CMD "
             "[ARGS...]\n"
             "Run CMD with liblwm2.so preloaded, then print its digest on stderr\n"
             "and exit with CMD's status.\n",
    .footer = "liblwm2.so is taken from $LWM2_LIB, else found next to lwm2.\n"
              "CMD gets the environment srun --lwm2 gives a task; see lwm2(1).\n",
    .col = 19,
    .argsep = ' ',
    /* options end at the command, whose own options are its own */
    .in_order = true,
    .need = "command",
    .opts = (const struct lwm2_opt[]){
        {"slice", 's', "S", "time-slice length in seconds"},
        {"keep", 'k', "DIR", "keep the rank records in DIR"},
        {"json", 'j', "FILE", "also write the digest as JSON to FILE"},
        {"quiet", 'q', NULL, "do not print the digest"},
        {0},
    }};

/* --slice; the others are in run_store */
static int run_opt(void *ctx, int key, char *arg)
{
	struct run_opts *o = ctx;
	uint64_t v;

	(void)key;
	if (lwm2_parse_u64(arg, NULL, 1, 3600, &v) < 0)
		return lwm2_opt_error(
		    &run_spec, LWM2_OPT_USAGE,
		    "--slice takes seconds (1-3600, the range liblwm2.so accepts)");
	o->slice = arg;
	return 0;
}

/* The record directory: --keep's, made if need be, else a fresh one under
 * $TMPDIR.  Returns 0, or 1 having said why. */
static int record_dir(const char *keep, char *dir, size_t len)
{
	if (keep) {
		if (mkdir(keep, 0700) != 0 && errno != EEXIST) {
			lwm2_log_error("run: couldn't create %s: %s", keep, strerror(errno));
			return 1;
		}
		snprintf(dir, len, "%s", keep);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, len, "%s/lwm2-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			lwm2_log_error("run: couldn't create a record directory: %s",
			               strerror(errno));
			return 1;
		}
	}
	return 0;
}

/* How the command ran: its wait status, the errno of a command that never
 * started (0 where it did), the name it ran last, and when. */
struct run_end_info {
	int status, child_err;
	char comm[32];
	struct timespec t0, t1;
};

/* In the forked process: the step's environment, then the command; what
 * keeps it from starting goes to the parent through started[1]. */
__attribute__((noreturn)) static void run_child(const struct lwm2_step_env *env,
                                                const int started[2], char **cmd,
                                                const struct sigaction *oint,
                                                const struct sigaction *oquit)
{
	int child_err;

	sigaction(SIGINT, oint, NULL);
	sigaction(SIGQUIT, oquit, NULL);
	close(started[0]);
	if (step_env(env) < 0) {
		child_err = EINVAL;
		(void)!write(started[1], &child_err, sizeof(child_err));
		_exit(126);
	}
	execvp(cmd[0], cmd);
	child_err = errno;
	lwm2_log_error("run: couldn't run %s: %s", cmd[0], strerror(errno));
	(void)!write(started[1], &child_err, sizeof(child_err));
	_exit(child_err == ENOENT ? 127 : 126);
}

/* Runs the command to its end, into *r.  Returns 0, or 1 having said why
 * it could not start one. */
static int run_command(const struct lwm2_step_env *env, char **cmd, struct run_end_info *r)
{
	int started[2];
	ssize_t got;
	struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit;
	pid_t pid;

	/* Closed by a successful exec: what comes through it is the errno of
	 * a command that never started, which then needs no other reason. */
	if (pipe2(started, O_CLOEXEC) < 0) {
		lwm2_log_error("run: couldn't make a pipe: %s", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &r->t0);
	/* Like system(3): a ^C goes to the command, and we live to report. */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		lwm2_log_error("run: couldn't fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0)
		run_child(env, started, cmd, &oint, &oquit);
	close(started[1]);
	while ((got = read(started[0], &r->child_err, sizeof(r->child_err))) < 0 && errno == EINTR)
		;
	close(started[0]);
	if (got != (ssize_t)sizeof(r->child_err))
		r->child_err = 0;
	last_comm(pid, r->comm, sizeof(r->comm));
	while (waitpid(pid, &r->status, 0) < 0) {
		if (errno != EINTR) {
			lwm2_log_error("run: couldn't wait for %s: %s", cmd[0], strerror(errno));
			break;
		}
	}
	clock_gettime(CLOCK_REALTIME, &r->t1);
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	return 0;
}

/* The records in dir merged as one node (*node), and the digest of the
 * run as a one-node job; NULL where there is none. */
static json_object *run_digest(const char *dir, const char *host, const struct run_end_info *r,
                               json_object **node)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct lwm2_node_ident id = {.cluster = "", .node = host};
	struct lwm2_job_meta meta = {
	    .cluster = "local",
	    .nodes = host,
	    .node_count = 1,
	    .start = r->t0.tv_sec,
	    .end = r->t1.tv_sec,
	    .state = state_of(r->status),
	};
	/* Inside a Slurm allocation the cores asked for per task are
	 * known; outside, every core of the machine is not a request. */
	const char *cpt = getenv("SLURM_CPUS_PER_TASK");
	json_object *digest;
	uint64_t v;

	if (cpt && lwm2_parse_u64(cpt, NULL, 0, UINT32_MAX, &v) == 0)
		meta.cpus_per_task = (uint32_t)v;
	*node = dfd < 0 ? NULL : lwm2_node_merge(dfd, &id, log_stderr, NULL);
	digest = *node ? lwm2_job_digest_build(&meta, node, 1) : NULL;
	if (dfd >= 0)
		close(dfd);
	return digest;
}

/* The processes measured: those the image before them saw start
 * unmeasured (LWM2_KEY_UNMEASURED_PROCESSES) count among the digest's
 * processes, not among these. */
static int64_t measured_processes(json_object *digest)
{
	json_object *scope = ju_get(digest, LWM2_KEY_SCOPE, json_type_object);

	return ju_int_or(scope, LWM2_KEY_PROCESSES, 0) -
	       ju_int_or(scope, LWM2_KEY_UNMEASURED_PROCESSES, 0);
}

/* The digest on stderr (unless --quiet) and in --json's file; where
 * nothing was measured, why. */
static void run_report(json_object *digest, const struct run_opts *o, const char *dir, char **cmd,
                       const struct run_end_info *r, const struct lwm2_step_env *env)
{
	char why[PATH_MAX * 3];

	if (!digest) {
		lwm2_log_error("run: couldn't merge the records in %s: %s", dir, strerror(errno));
	} else if (!measured_processes(digest)) {
		/* A command that never started was said already. */
		if (!r->child_err) {
			struct lwm2_run_end end = {
			    .cmd = cmd[0], .status = r->status, .last_comm = r->comm};

			lwm2_run_why(&end, env, why, sizeof(why));
			lwm2_log_error("run: no records: %s was not measured: %s", cmd[0], why);
		}
	} else {
		if (!o->quiet) {
			fputc('\n', stderr);
			lwm2_digest_render(digest, stderr, NULL);
		}
		if (o->json_out) {
			FILE *f = fopen(o->json_out, "we");
			if (!f ||
			    fputs(json_object_to_json_string_ext(digest, JSON_C_TO_STRING_PLAIN),
			          f) == EOF ||
			    fputc('\n', f) == EOF || fclose(f) != 0)
				lwm2_log_error("run: couldn't write %s: %s", o->json_out,
				               strerror(errno));
		}
	}
}

/* lwm2's exit as the command's: its status, or its signal. */
static int exit_as(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		sigset_t set;
		/* Die the same way, so shells and schedulers see the signal. */
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* The options lwm2_opt_parse_store stores itself. */
static const struct lwm2_optstore run_store[] = {
    {'k', LWM2_OPT_ARG(struct run_opts, keep)},
    {'j', LWM2_OPT_ARG(struct run_opts, json_out)},
    {'q', LWM2_OPT_TRUE(struct run_opts, quiet)},
    {0},
};

int lwm2_cmd_run(int argc, char **argv)
{
	struct run_opts o = {0};
	char lib[PATH_MAX], dir[PATH_MAX], host[256] = "localhost";
	struct lwm2_step_env env = {0};
	struct run_end_info r = {0};
	json_object *node, *digest;
	int first = lwm2_opt_parse_store(&run_spec, run_store, argc, argv, run_opt, &o);

	if (first < 0)
		return lwm2_opt_status(first);
	if (find_lib(lib, sizeof(lib)) != 0) {
		lwm2_log_error("run: couldn't find liblwm2.so (tried %s): %s", lib,
		               strerror(errno));
		return 1;
	}
	if (record_dir(o.keep, dir, sizeof(dir)) != 0)
		return 1;
	env.lib = lib;
	env.dir = dir;
	env.slice = o.slice; /* else the library's default, or LWM2_SLICE set by hand */
	env.root_ppid = (long)getpid();
	gethostname(host, sizeof(host) - 1);
	if (run_command(&env, argv + first, &r) != 0)
		return 1;
	digest = run_digest(dir, host, &r, &node);
	run_report(digest, &o, dir, argv + first, &r, &env);
	json_object_put(digest);
	json_object_put(node);
	if (!o.keep)
		remove_dir(dir);
	fflush(NULL);
	return exit_as(r.status);
}
