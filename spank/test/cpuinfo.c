/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The node's processor from /proc/cpuinfo and cpufreq, on fixture files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lwm2_spank.h"
#include "tap.h"

static char dir[] = "/tmp/lwm2-cpuinfo.XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w"))) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* Two sockets of 2 cores with 2 threads each (8 CPUs). */
static void two_sockets(FILE *f)
{
	for (int cpu = 0; cpu < 8; cpu++)
		fprintf(f,
		        "processor\t: %d\nmodel name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\n"
		        "physical id\t: %d\nsiblings\t: 4\ncpu cores\t: 2\ncpu MHz\t\t: %d.000\n\n",
		        cpu, cpu / 4, cpu < 4 ? 1000 : 3000);
}

int main(void)
{
	struct lwm2_cpu_info ci;
	char path[256], freq[256];
	FILE *f;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/cpuinfo", dir);
	if (!(f = fopen(path, "w")))
		return 1;
	two_sockets(f);
	fclose(f);

	is_int(lwm2_cpu_info_read(path, NULL, &ci), 0, "two sockets: read");
	is_str(ci.model, "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "the model name");
	is_int((int)ci.sockets, 2, "2 sockets (distinct physical ids)");
	is_int((int)ci.cores_per_socket, 2, "2 cores per socket");
	is_int((int)ci.threads_per_core, 2, "2 threads per core (siblings / cores)");
	ok(ci.mhz_nominal == 2400.0, "nominal clock from the model name: %.1f MHz", ci.mhz_nominal);
	ok(ci.mhz_measured == 2000.0, "measured clock: the CPUs' average, %.1f MHz",
	   ci.mhz_measured);

	/* cpufreq's base frequency wins over the name */
	snprintf(freq, sizeof(freq), "%s/cpufreq", dir);
	mkdir(freq, 0755);
	put("cpufreq/cpuinfo_max_freq", "3700000\n");
	is_int(lwm2_cpu_info_read(path, freq, &ci), 0, "with cpufreq: read");
	ok(ci.mhz_nominal == 3700.0, "no base_frequency: the highest, %.1f MHz", ci.mhz_nominal);
	put("cpufreq/base_frequency", "2400000\n");
	lwm2_cpu_info_read(path, freq, &ci);
	ok(ci.mhz_nominal == 2400.0, "base_frequency first: %.1f MHz", ci.mhz_nominal);

	/* A VM without physical ids, a model without a clock, no MHz lines
	 * (as on some architectures) */
	put("vm", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Processor\n\n"
	          "processor\t: 1\nmodel name\t: Intel(R) Xeon(R) Processor\n\n");
	snprintf(path, sizeof(path), "%s/vm", dir);
	is_int(lwm2_cpu_info_read(path, NULL, &ci), 0, "a VM: read");
	is_int((int)ci.sockets, 1, "a VM: one socket");
	is_int((int)ci.cores_per_socket, 2, "a VM: each CPU a core");
	is_int((int)ci.threads_per_core, 1, "a VM: one thread a core");
	ok(ci.mhz_nominal == 0 && ci.mhz_measured == 0, "a VM: no clock known, none made up");

	/* Nothing to read */
	put("empty", "");
	snprintf(path, sizeof(path), "%s/empty", dir);
	is_int(lwm2_cpu_info_read(path, NULL, &ci), -1, "no processor listed: -1");
	snprintf(path, sizeof(path), "%s/missing", dir);
	is_int(lwm2_cpu_info_read(path, NULL, &ci), -1, "no file: -1");

	/* This machine's own, as slurmstepd reads it */
	memset(&ci, 0, sizeof(ci));
	is_int(lwm2_cpu_info_read("/proc/cpuinfo", "/sys/devices/system/cpu/cpu0/cpufreq", &ci), 0,
	       "this machine's /proc/cpuinfo: read");
	ok(ci.sockets >= 1 && ci.cores_per_socket >= 1 && ci.threads_per_core >= 1 && ci.model[0],
	   "this machine: %s, %u x %u x %u", ci.model, ci.sockets, ci.cores_per_socket,
	   ci.threads_per_core);

	{
		char cmd[300];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("couldn't remove %s", dir);
	}
	return done_testing();
}
