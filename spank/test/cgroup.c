/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The memory peaks of the step's and the job's cgroups from made-up
 * /proc/self/cgroup and /proc/self/mountinfo texts and cgroup trees: v1
 * (the private cluster's cgroup namespace, where the host's mount shows a
 * root of "/.." and a bind mount the namespace's root), v2, and the
 * processes Slurm does not confine. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lwm2_spank.h"
#include "tap.h"

static char top[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char p[PATH_MAX * 2], *s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	for (s = p + strlen(top) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	if ((f = fopen(p, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

static int peaks(const char *cg, const char *mi, struct lwm2_cgroup_mem *m)
{
	char a[PATH_MAX * 2], b[PATH_MAX * 2], text[1024];

	snprintf(text, sizeof(text), mi, top, top);
	put("cgroup", cg);
	put("mountinfo", text);
	snprintf(a, sizeof(a), "%s/cgroup", top);
	snprintf(b, sizeof(b), "%s/mountinfo", top);
	return lwm2_cgroup_mem_peaks(a, b, m);
}

int main(void)
{
	struct lwm2_cgroup_mem m;
	char cmd[PATH_MAX + 16];

	snprintf(top, sizeof(top), "%s/lwm2-cgroup-t.XXXXXX",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(top))
		return 1;

	/* v1 in a cgroup namespace: the host's mount ("/..") holds nothing,
	 * the bind mount over it is the namespace's root */
	put("v1/slurm_n1/uid_1000/job_7/memory.max_usage_in_bytes", "325042176\n");
	put("v1/slurm_n1/uid_1000/job_7/step_0/memory.max_usage_in_bytes", "318767104\n");
	ok(peaks("6:freezer:/slurm_n1/uid_1000/job_7/step_0\n"
	         "4:memory:/slurm_n1/uid_1000/job_7/step_0\n0::/\n",
	         "51 47 0:32 /.. /nowhere rw - cgroup cgroup rw,memory\n"
	         "63 51 0:32 / %s/v1 rw - cgroup cgroup rw,memory\n"
	         "64 47 0:33 / %s/other rw - cgroup cgroup rw,cpuset\n",
	         &m) == 0,
	   "v1: found");
	is_int(m.version, 1, "v1: version");
	is_int((long long)m.step_bytes, 318767104, "v1: the step's memory.max_usage_in_bytes");
	is_int((long long)m.job_bytes, 325042176, "v1: the job's");

	/* a mount whose root is a part of the path; controllers shared */
	put("v1b/uid_1000/job_7/step_batch/memory.max_usage_in_bytes", "4096\n");
	ok(peaks("4:cpu,memory:/slurm_n1/uid_1000/job_7/step_batch\n",
	         "63 51 0:32 /slurm_n1 %s/v1b rw - cgroup cgroup rw,cpu,memory\n"
	         "70 51 0:40 / %s/x rw - tmpfs tmpfs rw\n",
	         &m) == 0 &&
	       m.step_bytes == 4096,
	   "v1: a mount of part of the hierarchy, memory beside cpu");
	is_int((long long)m.job_bytes, 0, "v1: no job file there: 0");

	/* v2: slurmstepd in step_S/slurm */
	put("v2/sys/job_7/memory.peak", "1000000\n");
	put("v2/sys/job_7/step_0/memory.peak", "900000\n");
	ok(peaks("0::/sys/job_7/step_0/slurm\n", "30 1 0:26 / %s/v2 rw - cgroup2 cgroup2 rw\n%s\n",
	         &m) == 0,
	   "v2: found");
	is_int(m.version, 2, "v2: version");
	is_int((long long)m.step_bytes, 900000, "v2: the step's memory.peak");
	is_int((long long)m.job_bytes, 1000000, "v2: the job's");

	/* not in a step's cgroup: proctrack/linuxproc, or slurmd's own */
	ok(peaks("4:memory:/\n0::/\n", "63 51 0:32 / %s/v1 rw - cgroup cgroup rw,memory\n%s\n",
	         &m) < 0,
	   "not in a step's cgroup: none");
	ok(peaks("4:memory:/slurm_n1\n", "63 51 0:32 / %s/v1 rw - cgroup cgroup rw,memory\n%s\n",
	         &m) < 0,
	   "slurmd's cgroup: none");
	/* the memory controller mounted nowhere this process sees */
	ok(peaks("4:memory:/slurm_n1/uid_1000/job_7/step_0\n",
	         "51 47 0:32 /.. %s/v1 rw - cgroup cgroup rw,memory\n%s\n", &m) < 0,
	   "only a mount outside the namespace: none");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		diag("couldn't remove %s", top);
	return done_testing();
}
