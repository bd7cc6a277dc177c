/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A measured step's environment, the one rule of spank_lwm2.so and
 * `lwm2 run`: what it sets, what it leaves, what it takes out again, on a
 * table of variables standing for the job's environment.
 */
#include "lwm2_env.h"
#include "stepenv.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NVARS 32

struct fake_env {
	char *name[NVARS], *val[NVARS];
	size_t get_max; /* a get of a longer value fails, as spank_getenv's does */
};

static int find(struct fake_env *f, const char *var)
{
	for (int i = 0; i < NVARS; i++)
		if (f->name[i] && !strcmp(f->name[i], var))
			return i;
	return -1;
}

static int f_get(void *ctx, const char *var, char *buf, size_t len)
{
	struct fake_env *f = ctx;
	int i = find(f, var);
	const char *v = i < 0 ? "" : f->val[i];

	if (strlen(v) >= len || (f->get_max && strlen(v) > f->get_max))
		return -1;
	strcpy(buf, v);
	return 0;
}

static void f_unset(void *ctx, const char *var)
{
	struct fake_env *f = ctx;
	int i = find(f, var);

	if (i >= 0) {
		free(f->name[i]);
		free(f->val[i]);
		f->name[i] = f->val[i] = NULL;
	}
}

static int f_set(void *ctx, const char *var, const char *val)
{
	struct fake_env *f = ctx;
	int i = find(f, var);

	for (int j = 0; i < 0 && j < NVARS; j++)
		if (!f->name[j])
			i = j;
	if (i < 0)
		return -1;
	free(f->name[i]);
	free(f->val[i]);
	f->name[i] = strdup(var);
	f->val[i] = strdup(val);
	return 0;
}

static const char *val(struct fake_env *f, const char *var)
{
	int i = find(f, var);

	return i < 0 ? "(unset)" : f->val[i];
}

static void reset(struct fake_env *f)
{
	for (int i = 0; i < NVARS; i++)
		f_unset(f, f->name[i] ? f->name[i] : "");
	f->get_max = 0;
}

/* srun --lwm2: every value given. */
static void set_and_clear(struct fake_env *f, struct lwm2_env_ops *ops, const char *lib,
                          const char *dir)
{
	char err[256];
	char out[128];
	struct lwm2_step_env e = {0};

	e = (struct lwm2_step_env){.lib = lib,
	                           .dir = dir,
	                           .slice = "60",
	                           .events = "",
	                           .sample_hz = "250",
	                           .job_id = "42",
	                           .step_id = "0",
	                           .root_ppid = 1234};
	f_set(f, "LD_PRELOAD", "/home/u/libmine.so");
	f_set(f, "ASAN_OPTIONS", "detect_leaks=0");
	f_set(f, LWM2_ENV_EVENTS, "PAPI_TOT_INS");
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0, "set: succeeds");
	snprintf(out, sizeof(out), "%s:/home/u/libmine.so", lib);
	is_str(val(f, "LD_PRELOAD"), out, "set: ours first, the user's entry kept");
	is_str(val(f, "ASAN_OPTIONS"), "detect_leaks=0:" LWM2_ASAN_OPT,
	       "set: ASan's link-order check off after the user's options");
	is_str(val(f, LWM2_ENV_MODE), "on", "set: " LWM2_ENV_MODE);
	is_str(val(f, LWM2_ENV_DIR), dir, "set: " LWM2_ENV_DIR);
	is_str(val(f, LWM2_ENV_SLICE), "60", "set: " LWM2_ENV_SLICE);
	is_str(val(f, LWM2_ENV_JOB_ID), "42", "set: " LWM2_ENV_JOB_ID);
	is_str(val(f, LWM2_ENV_STEP_ID), "0", "set: " LWM2_ENV_STEP_ID);
	is_str(val(f, LWM2_ENV_ROOT_PPID), "1234", "set: " LWM2_ENV_ROOT_PPID);
	is_str(val(f, LWM2_ENV_SAMPLE_HZ), "250", "set: " LWM2_ENV_SAMPLE_HZ);
	is_str(val(f, LWM2_ENV_EVENTS), "(unset)", "set: \"\" unsets an inherited value");
	is_str(val(f, "CUDA_INJECTION64_PATH"), "(unset)",
	       "set: no CUDA injection without liblwm2cuda.so beside the library");

	/* Set again (a measured batch shell's environment passed on). */
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0, "set twice: succeeds");
	is_str(val(f, "LD_PRELOAD"), out, "set twice: ours listed once");
	is_str(val(f, "ASAN_OPTIONS"), "detect_leaks=0:" LWM2_ASAN_OPT,
	       "set twice: the ASan option added once");

	/* Not measured: every trace out, the user's own back as it was. */
	lwm2_step_env_clear(ops, lib);
	is_str(val(f, "LD_PRELOAD"), "/home/u/libmine.so", "clear: the user's LD_PRELOAD");
	is_str(val(f, "ASAN_OPTIONS"), "detect_leaks=0", "clear: the user's ASAN_OPTIONS");
	is_str(val(f, LWM2_ENV_MODE), "(unset)", "clear: " LWM2_ENV_MODE);
	is_str(val(f, LWM2_ENV_DIR), "(unset)", "clear: " LWM2_ENV_DIR);
	is_str(val(f, LWM2_ENV_ROOT_PPID), "(unset)", "clear: " LWM2_ENV_ROOT_PPID);
}

/* lwm2 run: NULL leaves what the user set by hand. */
static void run_and_unreadable(struct fake_env *f, struct lwm2_env_ops *ops, const char *lib,
                               const char *dir, const char *cuda)
{
	char err[256];
	struct lwm2_step_env e = {0};
	int fd;

	reset(f);
	f_set(f, LWM2_ENV_EVENTS, "PAPI_TOT_INS");
	f_set(f, LWM2_ENV_SLICE, "5");
	f_set(f, "ASAN_OPTIONS", "verify_asan_link_order=1");
	fd = open(cuda, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	e = (struct lwm2_step_env){.lib = lib, .dir = dir, .root_ppid = 99};
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0, "run: succeeds");
	is_str(val(f, "LD_PRELOAD"), lib, "run: LD_PRELOAD is ours alone");
	is_str(val(f, LWM2_ENV_EVENTS), "PAPI_TOT_INS", "run: the user's events left");
	is_str(val(f, LWM2_ENV_SLICE), "5", "run: the user's slice left");
	is_str(val(f, LWM2_ENV_JOB_ID), "(unset)", "run: no job id made up");
	is_str(val(f, "ASAN_OPTIONS"), "verify_asan_link_order=1",
	       "run: the user's own link-order setting left");
	is_str(val(f, "CUDA_INJECTION64_PATH"), cuda, "run: liblwm2cuda.so beside the library");
	lwm2_step_env_clear(ops, lib);
	is_str(val(f, "CUDA_INJECTION64_PATH"), "(unset)", "clear: our CUDA injection out");
	is_str(val(f, "ASAN_OPTIONS"), "verify_asan_link_order=1",
	       "clear: the user's link-order setting stays");
	f_set(f, "CUDA_INJECTION64_PATH", "/site/libinject.so");
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0 &&
	       !strcmp(val(f, "CUDA_INJECTION64_PATH"), "/site/libinject.so"),
	   "run: a site's CUDA injection library stays");
	lwm2_step_env_clear(ops, lib);
	is_str(val(f, "CUDA_INJECTION64_PATH"), "/site/libinject.so",
	       "clear: a site's CUDA injection library stays");

	/* An LD_PRELOAD that cannot be read whole: nothing set. */
	reset(f);
	f_set(f, "LD_PRELOAD", "/a.so:/b.so");
	f->get_max = 4;
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) < 0 && strstr(err, "LD_PRELOAD"),
	   "unreadable LD_PRELOAD: fails, naming it (%s)", err);
	is_str(val(f, "LD_PRELOAD"), "/a.so:/b.so", "unreadable LD_PRELOAD: left as it was");
	is_str(val(f, LWM2_ENV_MODE), "(unset)", "unreadable LD_PRELOAD: nothing else set");
}

/* Light mode (liblwm2.so's cuda file exists by now): LWM2_MODE=light and
 * no CUDA injection of ours, whose callbacks light mode does without. */
static void light_mode(struct fake_env *f, struct lwm2_env_ops *ops, const char *lib,
                       const char *dir, const char *cuda)
{
	char err[256];
	struct lwm2_step_env e = {.mode = "light", .lib = lib, .dir = dir, .root_ppid = 99};

	reset(f);
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0, "light: succeeds");
	is_str(val(f, LWM2_ENV_MODE), "light", "light: " LWM2_ENV_MODE);
	is_str(val(f, "CUDA_INJECTION64_PATH"), "(unset)",
	       "light: no CUDA injection, liblwm2cuda.so beside the library or not");
	f_set(f, "CUDA_INJECTION64_PATH", cuda);
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0 &&
	       !strcmp(val(f, "CUDA_INJECTION64_PATH"), "(unset)"),
	   "light: our CUDA injection, inherited from a measured shell, taken out");
	f_set(f, "CUDA_INJECTION64_PATH", "/site/libinject.so");
	ok(lwm2_step_env_set(ops, &e, err, sizeof(err)) == 0 &&
	       !strcmp(val(f, "CUDA_INJECTION64_PATH"), "/site/libinject.so"),
	   "light: a site's CUDA injection library stays");
	lwm2_step_env_clear(ops, lib);
	is_str(val(f, LWM2_ENV_MODE), "(unset)", "light, clear: " LWM2_ENV_MODE);
}

/* ASan options, both ways. */
static void asan_options(void)
{
	char out[128];

	is_int(lwm2_asan_options_add(NULL, out, sizeof(out)), 0, "asan add to unset");
	is_str(out, LWM2_ASAN_OPT, "asan add to unset: the option alone");
	is_int(lwm2_asan_options_add("a=1", out, 8), -1, "asan add: too long fails");
	is_int(errno, ENAMETOOLONG, "asan add: with ENAMETOOLONG");
	is_int(lwm2_asan_options_remove("a=1:" LWM2_ASAN_OPT, out, sizeof(out)), 1,
	       "asan remove: ours taken off the end");
	is_str(out, "a=1", "asan remove: the user's options left");
	is_int(lwm2_asan_options_remove(LWM2_ASAN_OPT ":a=1", out, sizeof(out)), 0,
	       "asan remove: the user's own, not at the end, stays");
}

/* The descriptors for containers: set, or all three out. */
static void container_fds(struct fake_env *f, struct lwm2_env_ops *ops, const char *lib,
                          const char *dir)
{
	char err[256];

	reset(f);
	f_set(f, LWM2_ENV_DIR_FD, "3:1:1"); /* inherited from another step */
	ok(lwm2_step_env_fds(ops, lib, dir, err, sizeof(err)) == 0, "fds: set");
	ok(strcmp(val(f, LWM2_ENV_LIB_FD), "(unset)") && strcmp(val(f, LWM2_ENV_ROOT), "(unset)") &&
	       strcmp(val(f, LWM2_ENV_DIR_FD), "3:1:1"),
	   "fds: the three are this step's");
	ok(lwm2_step_env_fds(ops, lib, "/nonexistent/dir", err, sizeof(err)) < 0,
	   "fds: a missing directory fails (%s)", err);
	ok(!strcmp(val(f, LWM2_ENV_LIB_FD), "(unset)") &&
	       !strcmp(val(f, LWM2_ENV_DIR_FD), "(unset)") &&
	       !strcmp(val(f, LWM2_ENV_ROOT), "(unset)"),
	   "fds: none of another step's left");
}

/* A task that a plugin before lwm2's moved into a container (pyxis
 * joins its namespaces in task_init). */
static void enter_root(struct fake_env *f, struct lwm2_env_ops *ops, const char *lib,
                       const char *dir)
{
	char err[256];
	char out[128];

	char root[64], moved[80], want[128];
	int libfd;

	reset(f);
	ok(lwm2_step_env_fds(ops, lib, dir, err, sizeof(err)) == 0, "enter: descriptors");
	snprintf(root, sizeof(root), "%s", val(f, LWM2_ENV_ROOT));
	libfd = atoi(val(f, LWM2_ENV_LIB_FD));
	snprintf(out, sizeof(out), "%s:/home/u/libmine.so", lib);
	f_set(f, "LD_PRELOAD", out);
	is_int(lwm2_step_env_enter_root(ops, lib, "pyxis:img", err, sizeof(err)), 0,
	       "enter: the step's root, the library there: 0");
	is_str(val(f, "LD_PRELOAD"), out, "enter: the step's root: LD_PRELOAD as it was");
	is_str(val(f, LWM2_ENV_CONTAINER), "(unset)", "enter: the step's root: no container");

	f_set(f, LWM2_ENV_ROOT, "1:1"); /* "/" is another root now */
	is_int(lwm2_step_env_enter_root(ops, lib, "pyxis:img", err, sizeof(err)), 1,
	       "enter: another root: 1");
	is_str(val(f, "LD_PRELOAD"), out, "enter: the library at its path there: kept");
	is_str(val(f, LWM2_ENV_CONTAINER), "pyxis:img", "enter: the container named");

	snprintf(moved, sizeof(moved), "%s.moved", lib);
	ok(rename(lib, moved) == 0, "enter: the library's path leads nowhere");
	f_set(f, LWM2_ENV_CONTAINER, "x:y");
	is_int(lwm2_step_env_enter_root(ops, lib, "pyxis:img", err, sizeof(err)), 1,
	       "enter: another root, no library at the path: 1");
	snprintf(want, sizeof(want), "/proc/self/fd/%d:/home/u/libmine.so", libfd);
	is_str(val(f, "LD_PRELOAD"), want, "enter: the descriptor stands in");
	is_str(val(f, LWM2_ENV_CONTAINER), "x:y", "enter: a container named already stays");

	f_set(f, "LD_PRELOAD", out);
	f_unset(f, LWM2_ENV_LIB_FD);
	lwm2_step_env_enter_root(ops, lib, "pyxis:img", err, sizeof(err));
	is_str(val(f, "LD_PRELOAD"), "/home/u/libmine.so",
	       "enter: no descriptor: ours out, the user's kept");
	f_set(f, "LD_PRELOAD", lib);
	f_set(f, LWM2_ENV_ROOT, root);
	is_int(lwm2_step_env_enter_root(ops, lib, "pyxis:img", err, sizeof(err)), 0,
	       "enter: the step's root, the library gone: 0");
	is_str(val(f, "LD_PRELOAD"), "(unset)", "enter: ours alone taken out: unset");
	ok(rename(moved, lib) == 0, "enter: the library back");
}

int main(void)
{
	char dir[] = "/tmp/lwm2-stepenv-XXXXXX";
	char lib[64];
	char cuda[64];
	struct fake_env f = {0};
	struct lwm2_env_ops ops = {f_get, f_set, f_unset, &f};
	int fd;

	if (!mkdtemp(dir))
		return 99;
	snprintf(lib, sizeof(lib), "%s/liblwm2.so", dir);
	snprintf(cuda, sizeof(cuda), "%s/liblwm2cuda.so", dir);
	fd = open(lib, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return 99;
	close(fd);

	set_and_clear(&f, &ops, lib, dir);
	run_and_unreadable(&f, &ops, lib, dir, cuda);
	light_mode(&f, &ops, lib, dir, cuda);
	asan_options();
	container_fds(&f, &ops, lib, dir);
	enter_root(&f, &ops, lib, dir);

	reset(&f);
	unlink(cuda);
	unlink(lib);
	rmdir(dir);
	return done_testing();
}
