/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The node's processor, as slurmstepd puts it into each node record at
 * step end: the model, sockets, cores per socket and threads per core from
 * /proc/cpuinfo, the nominal clock from cpufreq (base_frequency, else the
 * highest frequency) or the model name's "@ 2.40GHz", and the clock the
 * kernel reports for the CPUs at that moment, averaged ("cpu MHz").  A
 * site breaks its workload down by processor from these (lwm2 stats --by
 * cpu).  No Slurm here: the unit test reads fixture files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwm2_spank.h"

/* The value of a "key<TAB>: value" line of /proc/cpuinfo, or NULL. */
static const char *field(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || (line[n] != '\t' && line[n] != ' ' && line[n] != ':'))
		return NULL;
	line = strchr(line + n, ':');
	if (!line)
		return NULL;
	line++;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

/* A frequency in kHz from a one-number sysfs file, as MHz; 0 if none. */
static double khz_file(const char *dir, const char *name)
{
	char path[512];
	unsigned long long khz = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "re")))
		return 0;
	if (fscanf(f, "%llu", &khz) != 1)
		khz = 0;
	fclose(f);
	return (double)khz / 1000.0;
}

/* "... @ 2.40GHz" at the end of a model name: MHz, or 0. */
static double model_mhz(const char *model)
{
	const char *at = strrchr(model, '@');
	double v;
	char unit[8] = "";

	if (!at || sscanf(at + 1, " %lf%7s", &v, unit) != 2 || v <= 0)
		return 0;
	if (!strcmp(unit, "GHz"))
		return v * 1000.0;
	if (!strcmp(unit, "MHz"))
		return v;
	return 0;
}

int lwm2_cpu_info_read(const char *cpuinfo, const char *cpufreq_dir, struct lwm2_cpu_info *out)
{
	char line[1024];
	long ids[LWM2_CPU_SOCKETS_MAX];
	size_t nids = 0;
	unsigned long cpus = 0, cores = 0, siblings = 0;
	double mhz_sum = 0;
	unsigned long mhz_n = 0;
	FILE *f;

	memset(out, 0, sizeof(*out));
	if (!(f = fopen(cpuinfo, "re")))
		return -1;
	while (fgets(line, sizeof(line), f)) {
		const char *v;

		line[strcspn(line, "\n")] = '\0';
		if (field(line, "processor")) {
			cpus++;
		} else if ((v = field(line, "model name")) && !out->model[0]) {
			snprintf(out->model, sizeof(out->model), "%s", v);
		} else if ((v = field(line, "physical id"))) {
			long id = strtol(v, NULL, 10);
			size_t i;

			for (i = 0; i < nids && ids[i] != id; i++)
				;
			if (i == nids && nids < LWM2_CPU_SOCKETS_MAX)
				ids[nids++] = id;
		} else if ((v = field(line, "cpu cores"))) {
			cores = strtoul(v, NULL, 10);
		} else if ((v = field(line, "siblings"))) {
			siblings = strtoul(v, NULL, 10);
		} else if ((v = field(line, "cpu MHz"))) {
			double mhz = strtod(v, NULL);

			if (mhz > 0) {
				mhz_sum += mhz;
				mhz_n++;
			}
		}
	}
	fclose(f);
	if (!cpus)
		return -1;
	/* Without "physical id" (some architectures, some VMs): one socket
	 * of every CPU, each its own core. */
	out->sockets = nids ? (unsigned)nids : 1;
	out->cores_per_socket = cores ? (unsigned)cores : (unsigned)(cpus / out->sockets);
	out->threads_per_core = cores && siblings >= cores ? (unsigned)(siblings / cores) : 1u;
	out->mhz_measured = mhz_n ? mhz_sum / (double)mhz_n : 0;
	out->mhz_nominal = cpufreq_dir ? khz_file(cpufreq_dir, "base_frequency") : 0;
	if (out->mhz_nominal <= 0 && cpufreq_dir)
		out->mhz_nominal = khz_file(cpufreq_dir, "cpuinfo_max_freq");
	if (out->mhz_nominal <= 0)
		out->mhz_nominal = model_mhz(out->model);
	if (!out->model[0])
		snprintf(out->model, sizeof(out->model), "unknown");
	return 0;
}
