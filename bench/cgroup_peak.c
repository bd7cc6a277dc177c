/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the fit block's memory figure costs: slurmstepd reads the step's
 * and the job's cgroup memory peaks once per step and node, at step end
 * (spank/cgroup.c); no process pays anything for it.  Timed here on this
 * machine's own /proc/self/mountinfo with a cgroup v1 tree of the shape
 * Slurm makes (uid_U/job_J/step_S) mounted last, so that the lookup reads
 * what it reads in slurmstepd.
 *
 *   cgroup_peak DIR [N]   prints "cgroup_peak ns_per_call X step_bytes Y job_bytes Z"
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench_util.h"
/* the plugin's own reader, compiled in: it is part of spank_lwm2.so,
 * not of a library the bench could link */
#include "cgroup.c"

static int put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(int argc, char **argv)
{
	char p[4096], cg[4096], mi[4096], line[8192];
	long n = argc > 2 ? atol(argv[2]) : 20000;
	struct lwm2_cgroup_mem m;
	FILE *in, *out;
	double t0, t1;
	const char *dirs[] = {"memory", "memory/uid_0", "memory/uid_0/job_1",
	                      "memory/uid_0/job_1/step_0"};

	if (argc < 2 || n <= 0)
		return 2;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", argv[1], dirs[i]);
		if (mkdir(p, 0700) != 0)
			return 1;
	}
	snprintf(p, sizeof(p), "%s/memory/uid_0/job_1/memory.max_usage_in_bytes", argv[1]);
	put(p, "325255168\n");
	snprintf(p, sizeof(p), "%s/memory/uid_0/job_1/step_0/memory.max_usage_in_bytes", argv[1]);
	put(p, "318767104\n");
	snprintf(cg, sizeof(cg), "%s/cgroup", argv[1]);
	put(cg, "12:pids:/uid_0/job_1/step_0\n4:memory:/uid_0/job_1/step_0\n"
	        "1:name=systemd:/\n0::/\n");
	/* this machine's mounts, then the tree's */
	snprintf(mi, sizeof(mi), "%s/mountinfo", argv[1]);
	if (!(in = fopen("/proc/self/mountinfo", "r")) || !(out = fopen(mi, "w")))
		return 1;
	while (fgets(line, sizeof(line), in))
		fputs(line, out);
	fclose(in);
	fprintf(out, "999 1 0:99 / %s/memory rw,relatime - cgroup cgroup rw,memory\n", argv[1]);
	fclose(out);

	if (lwm2_cgroup_mem_peaks(cg, mi, &m) != 0)
		return 1;
	t0 = bench_now_ns();
	for (long i = 0; i < n; i++)
		lwm2_cgroup_mem_peaks(cg, mi, &m);
	t1 = bench_now_ns();
	printf("cgroup_peak ns_per_call %.0f step_bytes %llu job_bytes %llu\n",
	       (t1 - t0) / (double)n, (unsigned long long)m.step_bytes,
	       (unsigned long long)m.job_bytes);
	return 0;
}
