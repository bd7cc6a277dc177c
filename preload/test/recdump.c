/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test helper: print the newest valid record of a rank record file as
 * "key value" lines, for the shell tests to check with grep and awk.
 * Exit status 1 when the file holds no valid record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>

#include "lwm2_record.h"

int main(int argc, char **argv)
{
	struct lwm2_rank_record *r;
	char err[256];
	uint64_t total = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: recdump FILE\n");
		return 2;
	}
	if (lwm2_record_read_file(AT_FDCWD, argv[1], &r, err, sizeof(err)) != 0) {
		fprintf(stderr, "recdump: %s: %s\n", argv[1], err);
		return 1;
	}
	printf("pid %d\nppid %d\nexecutable %s\nhostname %s\n", r->pid, r->ppid, r->executable,
	       r->hostname);
	printf("job_id %llu\nstep_id %u\ntask_id %d\n", (unsigned long long)r->job_id, r->step_id,
	       r->task_id);
	printf("flags %u\nincomplete %d\npartial %d\nexec %d\nfork_child %d\nsignaled %d\n"
	       "sampling_off %d\ncoarsened %d\n",
	       r->flags, !!(r->flags & LWM2_F_INCOMPLETE), !!(r->flags & LWM2_F_PARTIAL),
	       !!(r->flags & LWM2_F_EXEC), !!(r->flags & LWM2_F_FORK_CHILD),
	       !!(r->flags & LWM2_F_SIGNALED), !!(r->flags & LWM2_F_SAMPLING_OFF),
	       !!(r->flags & LWM2_F_COARSENED));
	printf("exit_status %d\nterm_signal %d\n", r->exit_status, r->term_signal);
	printf("mpi_rank %d\nmpi_size %d\n", r->mpi_rank, r->mpi_size);
	printf("start_ns %lld\nend_ns %lld\nwall_ms %lld\n", (long long)r->start_ns,
	       (long long)r->end_ns, (long long)(r->end_ns - r->start_ns) / 1000000);
	printf("utime_us %llu\nstime_us %llu\ncpu_us %llu\nmaxrss_kb %llu\n",
	       (unsigned long long)r->utime_us, (unsigned long long)r->stime_us,
	       (unsigned long long)(r->utime_us + r->stime_us), (unsigned long long)r->maxrss_kb);
	printf("clock_source %u\nclock_cost_ps %u\n", r->clock_source, r->clock_cost_ps);
	printf("threads_total %u\nthreads_max %u\nsample_period_us %u\nsample_signal %d\n",
	       r->threads_total, r->threads_max, r->sample_period_us, r->sample_signal);
	for (int e = 0; e < LWM2_NEARMARKS; e++) {
		printf("samples_%s %llu\n", lwm2_earmark_names[e],
		       (unsigned long long)r->samples[e]);
		total += r->samples[e];
	}
	printf("samples_total %llu\nsamples_main %llu\n", (unsigned long long)total,
	       (unsigned long long)r->samples_main);
	printf("slice_length_s %u\nnslices %u\nfirst_slice %llu\ngeneration %llu\n",
	       r->slice_length_s, r->nslices, (unsigned long long)r->first_slice,
	       (unsigned long long)r->generation);
	printf("runtimes %u\nmissing %u\n", r->runtimes, r->missing);
	printf("language %u\nidentity_flags %u\n", r->language, r->identity_flags);
	printf("container_runtime %s\ncontainer_image %s\n", r->container_runtime,
	       r->container_image);
	printf("view_queries %u\nview_ns %llu\n", r->view_queries, (unsigned long long)r->view_ns);
	/* a region's name has no spaces in the tests that read it */
	printf("regions_n %u\nregions_folded %u\nregions_other_calls %llu\nregions_other_ns %llu\n",
	       r->regions_n, r->regions_folded, (unsigned long long)r->regions_other_calls,
	       (unsigned long long)r->regions_other_ns);
	for (uint32_t i = 0; i < r->regions_n; i++)
		printf("region %s %llu %llu\n", r->regions[i].name,
		       (unsigned long long)r->regions[i].calls,
		       (unsigned long long)r->regions[i].ns);
	printf("threads_n %u\nthreads_folded %u\nthreads_other_cpu_ns %llu\n", r->threads_n,
	       r->threads_folded, (unsigned long long)r->threads_other_cpu_ns);
	/* thread TID FLAGS CPU_NS SAMPLES... COUNTERS... */
	for (uint32_t i = 0; i < r->threads_n; i++) {
		const struct lwm2_thread_entry *t = &r->threads[i];

		printf("thread %d %u %llu", t->tid, t->flags, (unsigned long long)t->cpu_ns);
		for (int e = 0; e < LWM2_NEARMARKS; e++)
			printf(" %llu", (unsigned long long)t->samples[e]);
		for (int c = 0; c < LWM2_THREAD_NCOUNTERS; c++)
			printf(" %llu", (unsigned long long)t->counters[c]);
		printf("\n");
	}
	for (int g = 0; g < LWM2_NGROUPS; g++)
		if (r->missing & (1u << g))
			printf("missing_%s %s\n", lwm2_group_names[g], r->missing_reason[g]);
	for (int c = 0; c < LWM2_NCOUNTERS; c++)
		printf("%s %llu\n", lwm2_counter_names[c], (unsigned long long)r->counters[c]);
	free(r);
	return 0;
}
