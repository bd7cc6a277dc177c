/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The memory peaks of the step's and the job's cgroups, read by
 * slurmstepd at step end (after the last local task, before Slurm removes
 * the step's cgroup).  Slurm's task/cgroup puts slurmstepd itself in the
 * step's memory cgroup (cgroup v1: .../uid_U/job_J/step_S; v2:
 * .../job_J/step_S/slurm), so /proc/self/cgroup names it, and
 * /proc/self/mountinfo where it is mounted.  v1: memory.max_usage_in_bytes;
 * v2: memory.peak (Linux 5.19 and later).  Both count what the kernel
 * charged to the cgroup: every process of the step at once, slurmstepd's
 * own few MB and the page cache the step's files filled included, which
 * is what ConstrainRAMSpace holds the job to.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_spank.h"

/* The memory cgroup of this process: its path in the hierarchy and the
 * hierarchy's version (1 or 2), from a /proc/PID/cgroup text. */
static int own_cgroup(const char *cgfile, char *path, size_t len, int *version)
{
	char line[PATH_MAX + 64];
	FILE *f = fopen(cgfile, "re");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p, *tok, *save = NULL;

		if (!ctl || !(p = strchr(++ctl, ':')))
			continue;
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		if (!*ctl) {
			/* v2: used only where no v1 hierarchy has memory */
			if (!found && strlen(p) < len) {
				snprintf(path, len, "%s", p);
				*version = 2;
				found = 2;
			}
			continue;
		}
		for (tok = strtok_r(ctl, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, "memory") && strlen(p) < len) {
				snprintf(path, len, "%s", p);
				*version = 1;
				found = 1;
			}
	}
	fclose(f);
	return found ? 0 : -1;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else
			*d++ = *s;
	}
	*d = '\0';
}

/* Where the cgroup at path is in the file system: the last (topmost)
 * mount of the hierarchy whose root holds it.  A mount of a hierarchy
 * outside this process's cgroup namespace shows a root of "/.." and holds
 * nothing. */
static int cgroup_dir(const char *mountinfo, const char *path, int version, char *dir, size_t len)
{
	char line[2 * PATH_MAX];
	FILE *f = fopen(mountinfo, "re");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *f4[5], *save = NULL, *sep = strstr(line, " - "), *fstype, *opts, *tok;
		int i;
		size_t rl;

		if (!sep)
			continue;
		*sep = '\0';
		fstype = strtok_r(sep + 3, " \n", &save);
		(void)strtok_r(NULL, " \n", &save); /* source */
		opts = strtok_r(NULL, " \n", &save);
		if (!fstype || !opts)
			continue;
		if (version == 2 ? strcmp(fstype, "cgroup2") != 0 : strcmp(fstype, "cgroup") != 0)
			continue;
		if (version == 1) {
			bool mem = false;

			for (tok = strtok_r(opts, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save))
				mem = mem || !strcmp(tok, "memory");
			if (!mem)
				continue;
		}
		save = NULL;
		for (i = 0; i < 5 && (f4[i] = strtok_r(i ? NULL : line, " ", &save)); i++)
			;
		if (i < 5)
			continue;
		unescape(f4[3]);
		unescape(f4[4]);
		rl = strlen(f4[3]);
		if (!strcmp(f4[3], "/"))
			rl = 0;
		else if (strncmp(path, f4[3], rl) != 0 || (path[rl] && path[rl] != '/'))
			continue;
		if (snprintf(dir, len, "%s%s", f4[4], path + rl) < (int)len)
			found = 0;
	}
	fclose(f);
	return found;
}

static int read_u64(const char *dir, const char *file, uint64_t *v)
{
	char p[PATH_MAX], buf[32];
	FILE *f;
	int ok;

	if (snprintf(p, sizeof(p), "%s/%s", dir, file) >= (int)sizeof(p) || !(f = fopen(p, "re")))
		return -1;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%" SCNu64, v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Cut the last component off dir; 0 when it starts with prefix. */
static int up(char *dir, const char *prefix)
{
	char *s = strrchr(dir, '/');

	if (!s || s == dir)
		return -1;
	*s = '\0';
	s = strrchr(dir, '/');
	return s && !strncmp(s + 1, prefix, strlen(prefix)) ? 0 : -1;
}

int lwm2_cgroup_mem_peaks(const char *cgfile, const char *mountinfo, struct lwm2_cgroup_mem *m)
{
	char path[PATH_MAX], dir[PATH_MAX], *base;
	const char *peak;

	memset(m, 0, sizeof(*m));
	if (own_cgroup(cgfile, path, sizeof(path), &m->version) < 0 ||
	    cgroup_dir(mountinfo, path, m->version, dir, sizeof(dir)) < 0)
		return -1;
	base = strrchr(dir, '/');
	/* v2: slurmstepd in step_S/slurm, the tasks in step_S/user */
	if (m->version == 2 && base && !strcmp(base, "/slurm"))
		*base = '\0', base = strrchr(dir, '/');
	if (!base || strncmp(base + 1, "step_", 5) != 0) {
		errno = ENOENT; /* not in a step's cgroup: Slurm does not confine */
		return -1;
	}
	peak = m->version == 2 ? "memory.peak" : "memory.max_usage_in_bytes";
	if (read_u64(dir, peak, &m->step_bytes) < 0)
		return -1;
	if (up(dir, "job_") == 0 && read_u64(dir, peak, &m->job_bytes) == 0)
		return 0;
	m->job_bytes = 0;
	return 0;
}
