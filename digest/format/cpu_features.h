/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The two CPU features lwm2 asks about on x86: SSE 4.2 (the crc32
 * instruction for the record checksum) and an invariant TSC (the wrapper
 * clock).  glibc 2.33 and later keep a copy of CPUID that
 * <sys/platform/x86.h> reads without executing the instruction, which traps
 * to the hypervisor in a virtual machine and costs tens of microseconds.
 * Older glibc (RHEL/Rocky 8 have 2.28) lacks the header: there the
 * instruction runs once and the answer is kept.  The include needs
 * config.h's HAVE_SYS_PLATFORM_X86_H.
 */
#ifndef LWM2_CPU_FEATURES_H
#define LWM2_CPU_FEATURES_H

#include <stdbool.h>

#if defined(__x86_64__) || defined(__i386__)
#define LWM2_X86 1
#include <cpuid.h>
#ifdef HAVE_SYS_PLATFORM_X86_H
#include <sys/platform/x86.h>
#endif

/* Straight from CPUID, for glibc without the header (and for the test
 * that compares both answers). */
static inline bool lwm2_cpuid_sse42(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2);
}

static inline bool lwm2_cpuid_invariant_tsc(void)
{
	unsigned a, b, c, d;

	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}

/* Asked on every checksum, also inside signal handlers: a relaxed atomic
 * cache (0 unknown, 1 no, 2 yes) that concurrent first callers may fill
 * twice with the same answer. */
static inline bool lwm2_cpu_sse42(void)
{
#ifdef HAVE_SYS_PLATFORM_X86_H
	return CPU_FEATURE_ACTIVE(SSE4_2);
#else
	static int known;
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (!k) {
		k = lwm2_cpuid_sse42() ? 2 : 1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == 2;
#endif
}

/* Asked once per process. */
static inline bool lwm2_cpu_invariant_tsc(void)
{
#ifdef HAVE_SYS_PLATFORM_X86_H
	return CPU_FEATURE_PRESENT(INVARIANT_TSC);
#else
	return lwm2_cpuid_invariant_tsc();
#endif
}
#endif /* x86 */

#endif
