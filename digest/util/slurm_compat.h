/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's list types under the names newer Slurm gives them (list_t,
 * list_itr_t; 24.11 has no others), for Slurm versions that only have List
 * and ListIterator (22.05).  configure defines HAVE_LIST_T and
 * HAVE_LIST_ITR_T where slurm.h has them.  And what libslurm leaves to
 * its callers, once for them all.
 */
#ifndef LWM2_SLURM_COMPAT_H
#define LWM2_SLURM_COMPAT_H

#include <stdint.h>

#include <slurm/slurm.h>

#ifndef HAVE_LIST_T
typedef struct xlist list_t;
#endif
#ifndef HAVE_LIST_ITR_T
typedef struct listIterator list_itr_t;
#endif

/* sacct's name of a base job state (slurm.h's enum job_states; libslurm
 * does not declare its job_state_string), "UNKNOWN" beyond them. */
static inline const char *lwm2_slurm_state_name(uint32_t base)
{
	static const char *const names[] = {
	    [JOB_PENDING] = "PENDING",     [JOB_RUNNING] = "RUNNING",
	    [JOB_SUSPENDED] = "SUSPENDED", [JOB_COMPLETE] = "COMPLETED",
	    [JOB_CANCELLED] = "CANCELLED", [JOB_FAILED] = "FAILED",
	    [JOB_TIMEOUT] = "TIMEOUT",     [JOB_NODE_FAIL] = "NODE_FAIL",
	    [JOB_PREEMPTED] = "PREEMPTED", [JOB_BOOT_FAIL] = "BOOT_FAIL",
	    [JOB_DEADLINE] = "DEADLINE",   [JOB_OOM] = "OUT_OF_MEMORY",
	};

	return base < sizeof(names) / sizeof(names[0]) && names[base] ? names[base] : "UNKNOWN";
}

#endif
