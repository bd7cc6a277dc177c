/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the environment tells a process at its start, and what it passes
 * on to its children.  Read once, by the constructor (core.c), before
 * anything is measured.
 *
 * The environment (set by the SPANK plugin, or by hand):
 *   LWM2_MODE        on (default), off (fully inert), print (on, and print)
 *   LWM2_DIR         node-local step directory for rank records; without
 *                    it ${TMPDIR:-/tmp}/lwm2-<uid> (mode 0700), or no file
 *                    at all when the digest is printed
 *   LWM2_PRINT=1     print a one-process digest to stderr at the end
 *   LWM2_SLICE       slice length in s, 1..3600, default 60
 *   LWM2_SLICE_MS    for tests only: slice length in ms (the record then
 *                    shows 1 s slices without a meaningful position)
 *   LWM2_MAX_SLICES  slices kept before coarsening, 2..4096, default 256
 *   LWM2_PARENT      set by the library to "PID.M" in each measured
 *                    process (M: it had a measured parent); its children
 *                    and later images read it: a measured parent means
 *                    the heartbeat may start lazily and a short process
 *                    may go to the step summary (see parent_measured)
 *   LWM2_ROOT_PPID   the pid of the tasks' parent (set by the SPANK plugin
 *                    and `lwm2 run`): a process whose parent it is is a
 *                    task and always keeps a record of its own
 *   LWM2_SHORT_MS    images that end sooner go to the step's summary of
 *                    short processes instead of a record file each,
 *                    0..3600000, default 1000; 0: a record for every image
 *                    (the summary keeps their slices: see summary.c)
 *   LWM2_SAMPLE_HZ   CPU-time sampling rate per thread, 1..10000, default 100
 *   LWM2_SIGNAL      sampling signal, SIGRTMIN..SIGRTMAX, default SIGRTMIN+7
 *   LWM2_DEBUG=1     diagnostics on stderr (otherwise silent)
 *   LWM2_JOB_ID, LWM2_STEP_ID (else SLURM_JOB_ID, SLURM_STEP_ID),
 *   SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURMD_NODENAME
 * Invalid values fall back to the default (said so under LWM2_DEBUG).
 */
#include "core_int.h"
#include "lwm2_env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/*
 * The start's view of the environment.  One pass over environ keeps the
 * entries the start reads (LWM2_*, SLURM*, TMPDIR), and each of its reads
 * looks among those alone: getenv compared every variable again for each
 * of the start's twenty reads (callgrind, a command of a script: 9,160 of
 * the 78,626 instructions lwm2 adds to a process).  The view holds from
 * lwm2_env_start_scan to lwm2_env_start_done, before the start's own
 * putenv; any other read is getenv's, of the environment as the program
 * has it then.  getenv's answer either way: the first entry of the name.
 */
#define START_ENV_MAX 256
static const char *start_env[START_ENV_MAX];
static unsigned start_env_n;
static bool start_env_on;

static bool start_env_kept(const char *s)
{
	return (s[0] == 'L' && strncmp(s, "LWM2_", 5) == 0) ||
	       (s[0] == 'S' && strncmp(s, "SLURM", 5) == 0) ||
	       (s[0] == 'T' && strncmp(s, "TMPDIR", 6) == 0);
}

void lwm2_env_start_scan(void)
{
	start_env_n = 0;
	start_env_on = false;
	for (char **e = environ; e && *e; e++)
		if (start_env_kept(*e)) {
			if (start_env_n == START_ENV_MAX)
				return; /* more than that: getenv answers */
			start_env[start_env_n++] = *e;
		}
	start_env_on = true;
}

void lwm2_env_start_done(void)
{
	start_env_on = false;
}

const char *lwm2_getenv(const char *name)
{
	size_t n;

	if (!start_env_on || !start_env_kept(name))
		return getenv(name);
	n = strlen(name);
	for (unsigned i = 0; i < start_env_n; i++)
		if (strncmp(start_env[i], name, n) == 0 && start_env[i][n] == '=')
			return start_env[i] + n + 1;
	return NULL;
}

/* An integer from the environment within [lo, hi]; def when unset or
 * invalid (said so under LWM2_DEBUG). */
static unsigned long long env_num(const char *name, unsigned long long def, unsigned long long lo,
                                  unsigned long long hi)
{
	const char *s = lwm2_getenv(name);
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		lwm2_debug(
		    "lwm2: start: couldn't use %s=%s: not a number in %llu..%llu, using %llu", name,
		    s, lo, hi, def);
		return def;
	}
	return v;
}

static const char *env2(const char *a, const char *b)
{
	const char *s = lwm2_getenv(a);

	return s && *s ? s : lwm2_getenv(b);
}

static uint32_t parse_step(const char *s)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0xfffffffeu; /* unknown (Slurm's NO_VAL) */
	if (strcmp(s, "batch") == 0)
		return 0xfffffffbu;
	if (strcmp(s, "extern") == 0)
		return 0xfffffffcu;
	if (strcmp(s, "interactive") == 0)
		return 0xfffffffau;
	v = strtoul(s, &end, 10);
	return *end ? 0xfffffffeu : (uint32_t)v;
}

static int32_t env_int(const char *name)
{
	const char *s = lwm2_getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > INT32_MAX ? -1 : (int32_t)v;
}

void lwm2_env_config(const char *mode)
{
	unsigned long long slice_ms;
	const char *print = lwm2_getenv(LWM2_ENV_PRINT), *dir = lwm2_getenv(LWM2_ENV_DIR);

	lwm2_p.print = (mode && strcmp(mode, "print") == 0) || (print && strcmp(print, "0") != 0);
	if (dir && *dir) {
		lwm2_copy_str(lwm2_p.dir, sizeof(lwm2_p.dir), dir);
		lwm2_p.have_dir = true;
	} else {
		const char *tmp = lwm2_getenv("TMPDIR");

		snprintf(lwm2_p.dir, sizeof(lwm2_p.dir), "%s/lwm2-%u",
		         tmp && *tmp == '/' ? tmp : "/tmp", (unsigned)getuid());
	}
	slice_ms = env_num(LWM2_ENV_SLICE, 60, 1, 3600) * 1000;
	/* LWM2_SLICE_MS is for tests only (slices shorter than a second); the
	 * record then shows 1 s slices without a meaningful position. */
	slice_ms = env_num(LWM2_ENV_SLICE_MS, slice_ms, 1, 3600000);
	lwm2_p.slice_ms = slice_ms;
	lwm2_p.max_slices = (uint32_t)env_num(LWM2_ENV_MAX_SLICES, LWM2_MAX_SLICES_DEFAULT, 2,
	                                      LWM2_MAX_SLICES_LIMIT);
	lwm2_p.sample_hz = (uint32_t)env_num(LWM2_ENV_SAMPLE_HZ, 100, 1, 10000);
	lwm2_p.short_ns = env_num(LWM2_ENV_SHORT_MS, LWM2_SHORT_MS_DEFAULT, 0, 3600000) * 1000000u;
	lwm2_p.sample_sig =
	    (int)env_num(LWM2_ENV_SIGNAL, (unsigned long long)(SIGRTMIN + 7),
	                 (unsigned long long)SIGRTMIN, (unsigned long long)SIGRTMAX);
}

void lwm2_env_identity(const char *exe)
{
	struct lwm2_rank_record *r = lwm2_p.img;
	const char *s;
	struct utsname u;

	s = env2(LWM2_ENV_JOB_ID, "SLURM_JOB_ID");
	r->job_id = s ? strtoull(s, NULL, 10) : 0;
	r->step_id = parse_step(env2(LWM2_ENV_STEP_ID, "SLURM_STEP_ID"));
	r->task_id = env_int("SLURM_PROCID");
	r->local_task_id = env_int("SLURM_LOCALID");
	r->node_id = env_int("SLURM_NODEID");
	r->mpi_rank = -1;
	r->mpi_size = 0;
	r->mpi_thread_provided = -1;
	r->pid = (int32_t)lwm2_p.pid;
	r->ppid = (int32_t)getppid();
	lwm2_p.root = env_int(LWM2_ENV_ROOT_PPID) == r->ppid;
	s = lwm2_getenv("SLURMD_NODENAME");
	if ((!s || !*s) && uname(&u) == 0)
		s = u.nodename;
	lwm2_copy_str(r->hostname, sizeof(r->hostname), s);
	lwm2_copy_str(r->executable, sizeof(r->executable), exe);
	lwm2_identity_container(r);
	r->start_ns = (int64_t)lwm2_p.start_ns;
	r->term_signal = 0;
}

/*
 * Whether a measured process started this one.  LWM2_PARENT is "PID.M",
 * set by every measured image: PID its process, M whether that process had
 * a measured parent.  Another process's PID: an ancestor is measured (the
 * parent, or a shell whose subshell forked this one: a shell passes its
 * own copy of the variable on).  This process's own PID: an earlier image
 * of it was measured (a command run through env, nice or a script's
 * exec), and it is what that image was.  Unset: the first of its tree.
 */
bool lwm2_env_parent_measured(void)
{
	const char *s = lwm2_getenv(LWM2_ENV_PARENT);
	char *end;
	long v;

	if (!s || !*s)
		return false;
	v = strtol(s, &end, 10);
	if (end == s || v <= 0)
		return false;
	if (v != (long)lwm2_p.pid)
		return true;
	return end[0] == '.' && end[1] == '1';
}

/* The parent variable, NAME=PID.M, for this process's children and later
 * images. */
void lwm2_env_set_parent(bool measured_parent)
{
	static const char name[] = LWM2_ENV_PARENT "=";
	static char buf[sizeof(LWM2_ENV_PARENT) + 16];
	size_t at = sizeof(name) - 1;

	memcpy(buf, name, at);
	at += lwm2_put_decimal(buf + at, lwm2_p.pid > 0 ? (uint64_t)lwm2_p.pid : 0);
	buf[at++] = '.';
	buf[at++] = measured_parent ? '1' : '0';
	buf[at] = '\0';
	/* putenv of a static string: where the variable exists already (every
	 * child of a measured process) it is replaced in place, no malloc. */
	putenv(buf);
}
