/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Remote context: slurmstepd, one process per step and node, as root.
 *
 *   init_post_opt  make <basedir>/<job>.<step>.<node> (0700, the job's
 *                  user), put liblwm2.so and the LWM2_* variables into the
 *                  job environment, or take every trace of them out when
 *                  the step is not measured
 *   task_init      as the user, in the task child: open the descriptors
 *                  a container's processes reach the step through; (batch
 *                  step, print mode) note where the script's stdout goes
 *   task_exit      after the last local task: merge the rank records into
 *                  the node record and write it, signed, into the spool.
 *                  srun's last exit message waits for this callback, and
 *                  slurm_spank_exit is waited for by nobody (SLURM-NOTES)
 *   exit           remove the step directory
 *
 * Nothing here may fail or stall the step: every error is logged and the
 * job goes on, unmeasured if need be.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contexts.h"
#include "fileio.h"
#include "fsutil.h"
#include "lwm2_digest.h"
#include "lwm2_env.h"
#include "lwm2_keys.h"
#include "lwm2_spank.h"
#include "stepname.h"

/* A batch digest is built from at most this many node records: beyond,
 * reading them would hold up the end of the job for too long. */
#define LWM2_BATCH_PRINT_MAX_RECORDS 2048
#define LWM2_STDOUT_NOTE             ".stdout"

/* What the merge at step end reads of a step directory, whatever a user
 * put there: the bounds that keep slurmstepd (root) within about a second
 * and 64 MiB at the end of a step.  A real step stays far below them:
 * 4096 processes on one node, 128 MiB of records (a record of the most
 * slices the library keeps is 2.6 MB). */
#define LWM2_STEP_MAX_RECORDS 4096
#define LWM2_STEP_MAX_BYTES   (128ull << 20)
#define LWM2_STEP_MAX_MS      500

static struct {
	bool active; /* this step is measured */
	bool merged;
	bool print_srun;  /* leave a user-readable node record for srun */
	bool print_batch; /* append the job digest to the batch output */
	uint32_t job_id, step_id;
	uid_t uid;
	gid_t gid;
	uint32_t local_tasks, exited;
	bool *task_measured;       /* by local task id; NULL: every task */
	uint32_t unmeasured_tasks; /* left out by the rank subset */
	int basefd, dirfd;
	char name[NAME_MAX + 1]; /* of the step directory below basedir */
	char dir[PATH_MAX];
	char node[64];
	char cluster[LWM2_CLUSTER_MAX];
} st = {.basefd = -1, .dirfd = -1};

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* The job environment through SPANK, for the rule stepenv.c holds. */
static int job_getenv(void *ctx, const char *var, char *buf, size_t len)
{
	spank_err_t e = spank_getenv(ctx, var, buf, (int)len);

	if (e == ESPANK_SUCCESS)
		return 0;
	buf[0] = '\0';
	return e == ESPANK_ENV_NOEXIST ? 0 : -1;
}

static int job_setenv(void *ctx, const char *var, const char *val)
{
	spank_err_t e = spank_setenv(ctx, var, val, 1);

	if (e != ESPANK_SUCCESS) {
		slurm_error("lwm2: couldn't set %s in the job environment: %s", var,
		            spank_strerror(e));
		return -1;
	}
	return 0;
}

static void job_unsetenv(void *ctx, const char *var)
{
	spank_unsetenv(ctx, var);
}

static struct lwm2_env_ops job_env(spank_t sp)
{
	return (struct lwm2_env_ops){job_getenv, job_setenv, job_unsetenv, sp};
}

/*
 * A step that is not measured carries no trace: the batch shell (when the
 * batch step was measured) passes LD_PRELOAD and LWM2_* on to srun and from
 * there to this step, so they are taken out here.
 */
static void scrub_env(spank_t sp)
{
	struct lwm2_env_ops ops = job_env(sp);

	lwm2_step_env_clear(&ops, lwm2_conf.lib);
}

static int inject_env(spank_t sp, enum lwm2_mode mode)
{
	struct lwm2_env_ops ops = job_env(sp);
	const char *events = lwm2_opts.events[0] ? lwm2_opts.events : lwm2_conf.events;
	char slice[16], hz[16], job[16], step[16], err[PATH_MAX + 128];
	struct lwm2_step_env e = {
	    /* print is the starter's business: the library measures as on */
	    .mode = mode == LWM2_MODE_LIGHT ? lwm2_mode_name(mode) : "on",
	    .lib = lwm2_conf.lib,
	    .dir = st.dir,
	    .slice = slice,
	    .events = events, /* "" unsets an inherited one */
	    .sample_hz = "",
	    .job_id = job,
	    .step_id = step,
	    .root_ppid = (long)getpid(),
	};

	snprintf(slice, sizeof(slice), "%u", lwm2_opts.slice ? lwm2_opts.slice : lwm2_conf.slice);
	snprintf(job, sizeof(job), "%u", st.job_id);
	snprintf(step, sizeof(step), "%u", st.step_id);
	if (lwm2_conf.sample_hz >= 0) {
		snprintf(hz, sizeof(hz), "%d", lwm2_conf.sample_hz);
		e.sample_hz = hz;
	}
	if (lwm2_step_env_set(&ops, &e, err, sizeof(err)) < 0) {
		slurm_error("lwm2: step start: %s", err);
		return -1;
	}
	return 0;
}

/*
 * Step directories left behind by a slurmstepd that was killed (its exit
 * callback never ran): each live step holds a lock on its directory, so an
 * unlocked one belongs to a step that has ended.  Called with the base
 * directory locked, so no step between mkdir and lock is taken for one.
 */
static void clean_stale(void)
{
	struct dirent *de;
	DIR *d;
	int fd;

	if (lwm2_conf.keep)
		return; /* kept on purpose */
	fd = openat(st.basefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		int sfd;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, st.name))
			continue;
		sfd =
		    openat(st.basefd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sfd < 0)
			continue;
		if (flock(sfd, LOCK_EX | LOCK_NB) == 0) {
			slurm_info("lwm2: step start: removing %s/%s, left by a step that ended",
			           lwm2_conf.basedir, de->d_name);
			if (lwm2_rmtree_at(st.basefd, de->d_name, 0) < 0)
				slurm_error("lwm2: step start: couldn't remove %s/%s: %s",
				            lwm2_conf.basedir, de->d_name, strerror(errno));
		}
		close(sfd);
	}
	closedir(d);
}

/*
 * The step directory: base directory root's and closed to writes by
 * others (so no user can plant anything at the step's name), step
 * directory made fresh, then handed to the user.  Something already at
 * the name is the remainder of an earlier run of the same step id (a
 * requeued job, keep=yes): its records are not this run's, so it goes.
 */
static int make_step_dir(void)
{
	char err[PATH_MAX + 128], sname[16];
	struct stat sb;
	int fd;

	st.basefd = lwm2_open_root_dir(AT_FDCWD, lwm2_conf.basedir, 0711, err, sizeof(err));
	if (st.basefd < 0) {
		slurm_error("lwm2: step start: couldn't use base directory: %s", err);
		return -1;
	}
	if (snprintf(st.name, sizeof(st.name), "%u.%s.%s", st.job_id,
	             lwm2_step_name(st.step_id, sname, sizeof(sname)),
	             st.node) >= (int)sizeof(st.name) ||
	    snprintf(st.dir, sizeof(st.dir), "%s/%s", lwm2_conf.basedir, st.name) >=
	        (int)sizeof(st.dir)) {
		slurm_error("lwm2: step start: couldn't name the step directory: too long");
		return -1;
	}
	/* Released when this function returns, after the step directory is
	 * locked as this step's. */
	if (flock(st.basefd, LOCK_EX) == 0)
		clean_stale();
	if (fstatat(st.basefd, st.name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(sb.st_mode))
			slurm_error(
			    "lwm2: step start: %s exists and is not a directory; removing it",
			    st.dir);
		if (lwm2_rmtree_at(st.basefd, st.name, 0) < 0) {
			slurm_error("lwm2: step start: couldn't remove the old %s: %s", st.dir,
			            strerror(errno));
			flock(st.basefd, LOCK_UN);
			return -1;
		}
	}
	if (mkdirat(st.basefd, st.name, 0700) < 0) {
		slurm_error("lwm2: step start: couldn't create %s: %s", st.dir, strerror(errno));
		flock(st.basefd, LOCK_UN);
		return -1;
	}
	fd = openat(st.basefd, st.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || fchown(fd, st.uid, st.gid) < 0 ||
	    fchmod(fd, 0700) < 0) {
		slurm_error("lwm2: step start: couldn't hand %s to uid %u: %s", st.dir,
		            (unsigned)st.uid, strerror(errno));
		if (fd >= 0)
			close(fd);
		lwm2_rmtree_at(st.basefd, st.name, 0);
		flock(st.basefd, LOCK_UN);
		return -1;
	}
	flock(st.basefd, LOCK_UN);
	st.dirfd = fd;
	return 0;
}

/* A step that starts measured leaves a marker in the spool: should its
 * node record never come (slurmstepd killed, node lost), jobcomp/lwm2 can
 * say so instead of taking the job for one that was not measured. */
static void mark_start(void)
{
	struct lwm2_node_ident id = {
	    .cluster = st.cluster, .job_id = st.job_id, .step_id = st.step_id, .node = st.node};
	char err[512];

	if (lwm2_node_mark(lwm2_conf.spool, &id, 0, err, sizeof(err)) < 0)
		slurm_debug("lwm2: step start: %s", err);
}

static int get_u32(spank_t sp, spank_item_t item, uint32_t *v, const char *what)
{
	spank_err_t e = spank_get_item(sp, item, v);

	if (e != ESPANK_SUCCESS) {
		slurm_error("lwm2: step start: couldn't get the %s: %s", what, spank_strerror(e));
		return -1;
	}
	return 0;
}

/*
 * off.nodes=: this node is never measured, whatever the job or the user
 * asks (a node whose counters another tool owns, one kept apart for
 * benchmarks).  Slurm's own hostlist parser reads the list; a list it
 * cannot read measures nothing here, as any plugstack error does.
 */
static bool node_excluded(const char *node, char *why, size_t whylen)
{
	/* hostlist_t is a pointer in 22.05, a struct in 24.11 */
	__typeof__(slurm_hostlist_create(NULL)) hl;
	bool found;

	if (!lwm2_conf.nodes_off[0])
		return false;
	if (!(hl = slurm_hostlist_create(lwm2_conf.nodes_off))) {
		slurm_error("lwm2: step start: off.nodes=%s is not a node list; nothing is "
		            "measured on %s",
		            lwm2_conf.nodes_off, node);
		snprintf(why, whylen, "off.nodes= is not a node list");
		return true;
	}
	found = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	if (found)
		snprintf(why, whylen, "off.nodes holds %s", node);
	return found;
}

/*
 * The rank subset (--lwm2-ranks, plugstack ranks=) of a step: which local
 * tasks are measured, decided here once for all of them.  The batch
 * script is no rank: it is always measured.  A subset that cannot be
 * applied (the global ids unknown) measures every task, as without one.
 */
static void choose_ranks(spank_t sp)
{
	const char *rule = lwm2_opts.ranks[0] ? lwm2_opts.ranks : lwm2_conf.ranks;
	uint32_t ntasks = 0, *ranks;
	size_t chosen;

	if (!*rule || st.step_id == SLURM_BATCH_SCRIPT || !st.local_tasks)
		return;
	ranks = calloc(st.local_tasks, sizeof(*ranks));
	st.task_measured = calloc(st.local_tasks, sizeof(*st.task_measured));
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS || !ranks ||
	    !st.task_measured) {
		free(ranks);
		free(st.task_measured);
		st.task_measured = NULL;
		slurm_error("lwm2: step start: job %u step %u: couldn't apply the rank subset %s; "
		            "every task is measured",
		            st.job_id, st.step_id, rule);
		return;
	}
	for (uint32_t i = 0; i < st.local_tasks; i++)
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &ranks[i]) != ESPANK_SUCCESS) {
			slurm_error("lwm2: step start: job %u step %u: no global id of task %u; "
			            "every task is measured",
			            st.job_id, st.step_id, i);
			free(ranks);
			free(st.task_measured);
			st.task_measured = NULL;
			return;
		}
	chosen = lwm2_ranks_select(rule, ntasks, (uint64_t)st.job_id << 32 | st.step_id, ranks,
	                           st.local_tasks, st.task_measured);
	free(ranks);
	st.unmeasured_tasks = st.local_tasks - (uint32_t)chosen;
	slurm_debug("lwm2: step start: job %u step %u: rank subset %s measures %zu of the %u "
	            "tasks here",
	            st.job_id, st.step_id, rule, chosen, st.local_tasks);
}

/* Whether this task (in task_init) is left out by the rank subset. */
static bool task_left_out(spank_t sp)
{
	uint32_t id;

	return st.task_measured && spank_get_item(sp, S_TASK_ID, &id) == ESPANK_SUCCESS &&
	       id < st.local_tasks && !st.task_measured[id];
}

int lwm2_stepd_init_post_opt(spank_t sp)
{
	char env_cluster[LWM2_CLUSTER_MAX] = "", why[LWM2_POLICY_LIST_MAX + 64];
	struct lwm2_job_names_buf names;
	const char *node;
	enum lwm2_mode mode;

	if (!lwm2_conf_ok)
		return 0;
	if (get_u32(sp, S_JOB_ID, &st.job_id, "job id") < 0 ||
	    get_u32(sp, S_JOB_STEPID, &st.step_id, "step id") < 0 ||
	    get_u32(sp, S_JOB_LOCAL_TASK_COUNT, &st.local_tasks, "local task count") < 0 ||
	    spank_get_item(sp, S_JOB_UID, &st.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &st.gid) != ESPANK_SUCCESS)
		return 0;

	/* The extern step holds the allocation and adopted ssh sessions
	 * (pam_slurm_adopt): nothing there is the user's application, and it
	 * ends after jobcomp has read the spool. */
	if (st.step_id == SLURM_EXTERN_CONT)
		return 0;

	node = getenv("SLURMD_NODENAME"); /* slurmstepd sets it for itself */
	if (!node || !*node || strlen(node) >= sizeof(st.node) || strchr(node, '/')) {
		if (gethostname(st.node, sizeof(st.node)) < 0)
			snprintf(st.node, sizeof(st.node), "unknown");
		st.node[sizeof(st.node) - 1] = '\0';
	} else
		snprintf(st.node, sizeof(st.node), "%s", node);

	lwm2_job_names_of(st.uid, job_getenv, sp, &names);
	mode = lwm2_effective_mode(&names.names, why, sizeof(why));
	if (lwm2_opts.refused_optout)
		slurm_info("lwm2: step start: job %u asked for --lwm2=off; the site measures every "
		           "job (optout=no)",
		           st.job_id);
	if (mode != LWM2_MODE_OFF && node_excluded(st.node, why, sizeof(why)))
		mode = LWM2_MODE_OFF;
	if (mode == LWM2_MODE_OFF) {
		slurm_debug("lwm2: step start: job %u step %u not measured (%s)", st.job_id,
		            st.step_id, why);
		scrub_env(sp);
		return 0;
	}
	job_getenv(sp, "SLURM_CLUSTER_NAME", env_cluster, sizeof(env_cluster));
	snprintf(st.cluster, sizeof(st.cluster), "%s", lwm2_cluster_name(env_cluster));

	if (make_step_dir() < 0 || inject_env(sp, mode) < 0) {
		/* Measured halfway is not measured: leave no trace. */
		scrub_env(sp);
		if (st.dirfd >= 0) {
			close(st.dirfd);
			st.dirfd = -1;
			lwm2_rmtree_at(st.basefd, st.name, 0);
		}
		return 0;
	}
	st.active = true;
	choose_ranks(sp);
	if (mode == LWM2_MODE_PRINT) {
		if (st.step_id == SLURM_BATCH_SCRIPT)
			st.print_batch = lwm2_conf.print & LWM2_PRINT_BATCH;
		else
			st.print_srun = lwm2_conf.print & LWM2_PRINT_SRUN;
	}
	slurm_debug("lwm2: step start: job %u step %u measured (%s) in %s (%u local tasks)",
	            st.job_id, st.step_id, lwm2_mode_name(mode), st.dir, st.local_tasks);
	mark_start();
	return 0;
}

/*
 * In the batch script's task, as the user, before exec: its stdout is the
 * job's output file, whose name the step does not otherwise expose.  The
 * note is the user's file in the user's directory; it is only ever opened
 * with the user's identity, so writing something else into it gains
 * nothing.
 */
/*
 * In each task, as the user, before exec: the descriptors through which
 * the task's processes reach liblwm2.so and the step directory from
 * inside a container (stepenv.h).  Opened here, in the task, so that they
 * are the user's own and cost no process anything.  Without them a
 * container's processes are not measured; the task runs all the same.
 */
static int export_step_fds(spank_t sp, bool quiet)
{
	struct lwm2_env_ops ops = job_env(sp);
	char err[256];

	if (lwm2_step_env_fds(&ops, lwm2_conf.lib, st.dir, err, sizeof(err)) == 0)
		return 0;
	if (!quiet)
		slurm_error("lwm2: task start: %s; processes in containers are not measured", err);
	return -1;
}

/*
 * In each task, as root, before any plugin's task_init: the descriptors
 * are opened here, in the step's own root, where they still can be
 * whatever a plugin before this one in plugstack.conf does in its
 * task_init (pyxis joins the container's namespaces there).  Where root
 * may not open them (a root-squashed basedir), task_init tries again as
 * the user.
 */
int lwm2_stepd_task_init_privileged(spank_t sp)
{
	if (st.active && !task_left_out(sp))
		export_step_fds(sp, true);
	return 0;
}

/* A container that a plugin before this one started the task in: pyxis's
 * image (its --container-image, which SPANK finds by name among the
 * step's options, or PYXIS_CONTAINER_IMAGE), as RUNTIME:IMAGE. */
static void container_name(spank_t sp, char *out, size_t len)
{
	struct spank_option image = {.name = "container-image", .has_arg = 1};
	char env[PATH_MAX];
	char *value = NULL;

	if (spank_option_getopt(sp, &image, &value) != ESPANK_SUCCESS || !value) {
		value = NULL;
		if (spank_getenv(sp, "PYXIS_CONTAINER_IMAGE", env, sizeof(env)) == ESPANK_SUCCESS)
			value = env;
	}
	snprintf(out, len, "pyxis:%s", value ? value : "");
}

int lwm2_stepd_task_init(spank_t sp)
{
	char path[PATH_MAX], err[256], name[PATH_MAX + 16];
	struct lwm2_env_ops ops = job_env(sp);
	ssize_t n;

	if (!st.active)
		return 0;
	if (task_left_out(sp)) {
		/* as a step that is not measured: no trace in this task */
		scrub_env(sp);
		return 0;
	}
	if (spank_getenv(sp, LWM2_ENV_LIB_FD, path, sizeof(path)) != ESPANK_SUCCESS)
		export_step_fds(sp, false);
	/* Last before exec: a plugin before this one may have moved the task
	 * into a container, whose loader must not be handed a library that
	 * is not there. */
	container_name(sp, name, sizeof(name));
	if (lwm2_step_env_enter_root(&ops, lwm2_conf.lib, name, err, sizeof(err)) < 0)
		slurm_error("lwm2: task start: %s", err);
	if (!st.print_batch)
		return 0;
	n = readlink("/proc/self/fd/1", path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return 0;
	if (lwm2_atomic_write_at(st.dirfd, LWM2_STDOUT_NOTE, NULL, &(struct iovec){path, (size_t)n},
	                         1, 0600, err, sizeof(err)) < 0)
		slurm_error("lwm2: task start: couldn't note the output file: %s", err);
	return 0;
}

static void log_skipped(void *arg, const char *msg)
{
	const char *dir = arg;

	/* msg is a whole "lwm2: merge: couldn't ..." line already. */
	slurm_error("%s (step directory %s)", msg, dir);
}

/*
 * A POSIX access ACL (the system.posix_acl_access format) that lets the
 * owner (root) and uid read the file and nobody else do anything.
 */
static int acl_read_for(int fd, uid_t uid)
{
	struct {
		uint16_t tag, perm;
		uint32_t id;
	} __attribute__((packed)) e[5] = {
	    {0x01, 4, UINT32_MAX},    /* ACL_USER_OBJ: root, read */
	    {0x02, 4, (uint32_t)uid}, /* ACL_USER: the job's user, read */
	    {0x04, 0, UINT32_MAX},    /* ACL_GROUP_OBJ */
	    {0x10, 4, UINT32_MAX},    /* ACL_MASK */
	    {0x20, 0, UINT32_MAX},    /* ACL_OTHER */
	};
	unsigned char buf[4 + sizeof(e)];
	uint32_t version = 2;

	memcpy(buf, &version, 4);
	memcpy(buf + 4, e, sizeof(e));
	return fsetxattr(fd, "system.posix_acl_access", buf, sizeof(buf), 0);
}

/*
 * The copy of this node record that srun --lwm2=print reads:
 * <spool>/print/<job>/<step>.<node>.json.  Directories and file are
 * root's: nothing in the shared spool is writable by a user, who could
 * otherwise fill it and make every job's node records fail.  The job's
 * user alone may read the file, through an ACL.
 */
static void write_print_copy(int spoolfd, json_object *node)
{
	char err[PATH_MAX + 128], jname[16], fname[NAME_MAX + 1], tmp[NAME_MAX + 1], sname[16];
	const char *text;
	int pfd, jfd, fd;

	pfd = lwm2_open_root_dir(spoolfd, "print", 0711, err, sizeof(err));
	if (pfd < 0) {
		slurm_error("lwm2: step end: couldn't use the print directory: %s", err);
		return;
	}
	snprintf(jname, sizeof(jname), "%u", st.job_id);
	jfd = lwm2_open_root_dir(pfd, jname, 0755, err, sizeof(err));
	close(pfd);
	if (jfd < 0) {
		slurm_error("lwm2: step end: couldn't use print/%s: %s", jname, err);
		return;
	}
	snprintf(fname, sizeof(fname), "%s.%s.json",
	         lwm2_step_name(st.step_id, sname, sizeof(sname)), st.node);
	if (snprintf(tmp, sizeof(tmp), ".%.240s.tmp", fname) >= (int)sizeof(tmp)) {
		close(jfd);
		return;
	}
	text = json_object_to_json_string_ext(node, JSON_C_TO_STRING_PLAIN);
	unlinkat(jfd, tmp, 0);
	fd = openat(jfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
	if (fd < 0 || !text || acl_read_for(fd, st.uid) < 0 ||
	    lwm2_write_all(fd, text, strlen(text)) < 0) {
		slurm_error("lwm2: step end: couldn't write print/%s/%s readable by uid %u: %s "
		            "(the spool needs POSIX ACLs for print mode)",
		            jname, fname, (unsigned)st.uid, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlinkat(jfd, tmp, 0);
		close(jfd);
		return;
	}
	if (close(fd) < 0 || renameat(jfd, tmp, jfd, fname) < 0) {
		slurm_error("lwm2: step end: couldn't write print/%s/%s: %s", jname, fname,
		            strerror(errno));
		unlinkat(jfd, tmp, 0);
	}
	close(jfd);
}

/* The batch task's output file, as lwm2_stepd_task_init noted it: an
 * absolute path of fewer than len bytes. */
static bool read_stdout_note(char *path, size_t len)
{
	size_t n = 0;
	char *text = lwm2_read_file_at(st.dirfd, LWM2_STDOUT_NOTE, len - 1, &n, NULL, 0);
	bool ok = text && n > 0 && text[0] == '/';

	if (ok) {
		memcpy(path, text, n);
		path[n] = '\0';
	}
	free(text);
	return ok;
}

/* Sorted names make the digest the same whatever order readdir gives. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The batch step ends after every step of the job on every node: what the
 * spool holds for the job is the job.  Read it as root (only root can),
 * render it, and append it to the output file with the user's identity.
 */
static void print_batch_digest(int spoolfd)
{
	char path[PATH_MAX], jname[16], err[256];
	char **names = NULL;
	json_object **nodes = NULL;
	json_object *digest = NULL;
	struct lwm2_job_meta meta = {0};
	struct lwm2_verify_opts vo = {0};
	struct lwm2_render_opts ro = {0};
	size_t n = 0, nn = 0, i, tlen = 0;
	char *text = NULL;
	struct dirent *de;
	struct stat sb;
	FILE *mf;
	DIR *d;
	int jfd, ofd;

	if (!read_stdout_note(path, sizeof(path)))
		return;
	snprintf(jname, sizeof(jname), "%u", st.job_id);
	jfd = openat(spoolfd, jname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (jfd < 0 || !(d = fdopendir(jfd))) {
		slurm_error("lwm2: batch end: couldn't open the spool of job %s: %s", jname,
		            strerror(errno));
		if (jfd >= 0)
			close(jfd);
		return;
	}
	names = calloc(LWM2_BATCH_PRINT_MAX_RECORDS, sizeof(*names));
	while (names && (de = readdir(d)) && n < LWM2_BATCH_PRINT_MAX_RECORDS) {
		size_t l = strlen(de->d_name);

		if (l > 9 && !strcmp(de->d_name + l - 9, ".lwm2node") && de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	}
	if (!names || !(nodes = calloc(n ? n : 1, sizeof(*nodes))))
		goto out;
	qsort(names, n, sizeof(*names), cmp_str);
	vo.uid = 0;
	vo.cluster = st.cluster;
	for (i = 0; i < n; i++) {
		if (!names[i])
			continue;
		nodes[nn] =
		    lwm2_node_read_verified(dirfd(d), names[i], st.job_id, &vo, err, sizeof(err));
		if (nodes[nn])
			nn++;
		else
			slurm_error("lwm2: batch end: couldn't read node record %s: %s", names[i],
			            err);
	}
	meta.cluster = st.cluster;
	meta.job_id = st.job_id;
	digest = lwm2_job_digest_build(&meta, nodes, nn);
	if (!digest || !(mf = open_memstream(&text, &tlen))) {
		slurm_error("lwm2: batch end: couldn't build the job digest: %s", strerror(errno));
		goto out;
	}
	fputs("\n", mf);
	lwm2_digest_render(digest, mf, &ro);
	if (fclose(mf) != 0 || !text)
		goto out;

	if (lwm2_fs_become(st.uid, st.gid) < 0) {
		slurm_error("lwm2: batch end: couldn't take the identity of uid %u",
		            (unsigned)st.uid);
		goto out;
	}
	ofd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (ofd < 0)
		slurm_error("lwm2: batch end: couldn't open %s: %s", path, strerror(errno));
	else {
		if (fstat(ofd, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    lwm2_write_all(ofd, text, tlen) < 0)
			slurm_error("lwm2: batch end: couldn't append the digest to %s: %s", path,
			            strerror(errno));
		close(ofd);
	}
	lwm2_fs_restore();
out:
	closedir(d);
	for (i = 0; i < nn; i++)
		json_object_put(nodes[i]);
	for (i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(nodes);
	if (digest)
		json_object_put(digest);
	free(text);
}

/*
 * Where Slurm confines the step in cgroups, their memory peaks go into the
 * node record: read here, after the last local task and before Slurm
 * removes the step's cgroup; the job's cgroup peak so far covers every
 * step of the job that ran on this node before this one ended (lwm2(1),
 * "Fit").  Nothing where the step is in no cgroup of Slurm's.
 */
static void add_cgroup_peaks(json_object *node)
{
	struct lwm2_cgroup_mem cg;
	json_object *o;

	if (lwm2_cgroup_mem_peaks("/proc/self/cgroup", "/proc/self/mountinfo", &cg) < 0) {
		slurm_debug("lwm2: step end: no memory cgroup of the step: %s", strerror(errno));
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, LWM2_KEY_CG_VERSION, json_object_new_int(cg.version));
	json_object_object_add(o, LWM2_KEY_STEP_MEM_PEAK_KB,
	                       json_object_new_int64((int64_t)(cg.step_bytes / 1024)));
	if (cg.job_bytes)
		json_object_object_add(o, LWM2_KEY_JOB_MEM_PEAK_KB,
		                       json_object_new_int64((int64_t)(cg.job_bytes / 1024)));
	json_object_object_add(node, LWM2_KEY_CGROUP, o);
}

/* The node's processor into the node record (the digest groups the
 * job's nodes by it). */
static void add_cpu_info(json_object *node)
{
	struct lwm2_cpu_info ci;
	json_object *o;

	if (lwm2_cpu_info_read("/proc/cpuinfo", "/sys/devices/system/cpu/cpu0/cpufreq", &ci) < 0) {
		slurm_debug("lwm2: step end: couldn't read the processor from /proc/cpuinfo");
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, LWM2_KEY_MODEL, json_object_new_string(ci.model));
	json_object_object_add(o, LWM2_KEY_SOCKETS, json_object_new_int64(ci.sockets));
	json_object_object_add(o, LWM2_KEY_CORES_PER_SOCKET,
	                       json_object_new_int64(ci.cores_per_socket));
	json_object_object_add(o, LWM2_KEY_THREADS_PER_CORE,
	                       json_object_new_int64(ci.threads_per_core));
	if (ci.mhz_nominal > 0)
		json_object_object_add(o, LWM2_KEY_MHZ_NOMINAL,
		                       json_object_new_double(ci.mhz_nominal));
	if (ci.mhz_measured > 0)
		json_object_object_add(o, LWM2_KEY_MHZ_MEASURED,
		                       json_object_new_double(ci.mhz_measured));
	json_object_object_add(node, LWM2_KEY_CPU, o);
}

static void step_end(const char *phase)
{
	struct lwm2_node_ident id = {0};
	struct lwm2_merge_limits lim = {
	    .check_owner = true,
	    .owner = st.uid,
	    .max_bytes = LWM2_STEP_MAX_BYTES,
	    .max_records = LWM2_STEP_MAX_RECORDS,
	    .max_ms = LWM2_STEP_MAX_MS,
	};
	struct timespec t0;
	char err[512];
	json_object *node;
	int spoolfd;

	st.merged = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	id.cluster = st.cluster;
	id.job_id = st.job_id;
	id.step_id = st.step_id;
	id.node = st.node;
	id.expected_tasks = st.local_tasks - st.unmeasured_tasks;
	id.unmeasured_tasks = st.unmeasured_tasks;

	node = lwm2_node_merge_limited(st.dirfd, &id, &lim, log_skipped, st.dir);
	if (!node) {
		slurm_error("lwm2: %s: couldn't merge the rank records in %s: %s", phase, st.dir,
		            strerror(errno));
		return;
	}
	add_cgroup_peaks(node);
	add_cpu_info(node);
	if (lwm2_node_write_signed(lwm2_conf.spool, &id, node, err, sizeof(err)) < 0) {
		int e = errno;

		slurm_error("lwm2: %s: couldn't write the node record of job %u into %s: %s", phase,
		            st.job_id, lwm2_conf.spool, err);
		/* tells jobcomp/lwm2 why the record is missing */
		lwm2_node_mark(lwm2_conf.spool, &id, e ? e : EIO, err, sizeof(err));
	} else if (st.print_srun || st.print_batch) {
		spoolfd = open(lwm2_conf.spool, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (spoolfd < 0)
			slurm_error("lwm2: %s: couldn't open %s: %s", phase, lwm2_conf.spool,
			            strerror(errno));
		else {
			if (st.print_srun)
				write_print_copy(spoolfd, node);
			if (st.print_batch)
				print_batch_digest(spoolfd);
			close(spoolfd);
		}
	}
	json_object_put(node);
	slurm_info("lwm2: %s: job %u step %u node record done in %.1f ms", phase, st.job_id,
	           st.step_id, ms_since(&t0));
}

int lwm2_stepd_task_exit(spank_t sp)
{
	if (!st.active || st.merged)
		return 0;
	if (++st.exited < st.local_tasks)
		return 0;
	step_end("step end");
	return 0;
}

int lwm2_stepd_exit(spank_t sp)
{
	if (!st.active)
		return 0;
	/* Tasks that never started or were never reaped: late, but the
	 * node record still reaches the spool for whoever reads it later. */
	if (!st.merged)
		step_end("step exit");
	if (st.dirfd >= 0)
		close(st.dirfd);
	st.dirfd = -1;
	if (!lwm2_conf.keep && lwm2_rmtree_at(st.basefd, st.name, 0) < 0)
		slurm_error("lwm2: step exit: couldn't remove %s: %s", st.dir, strerror(errno));
	close(st.basefd);
	st.basefd = -1;
	st.active = false;
	return 0;
}
