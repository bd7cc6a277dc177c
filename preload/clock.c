/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The wrapper clock.  An invariant TSC (CPUID 0x80000007 EDX bit 8: the
 * bit behind the kernel's constant_tsc and nonstop_tsc) is read with one
 * rdtsc; its rate is measured against CLOCK_MONOTONIC between the start of
 * the process and each fold, so no calibration loop costs start-up time and
 * the precision grows with the run (two back-to-back reads carry some 50 ns
 * of jitter: 0.05 % after 0.1 ms).  Elsewhere the tick is the vDSO's
 * CLOCK_MONOTONIC in ns.  The wall clock of the record's times
 * (lwm2_now_ns) is CLOCK_REALTIME in ns.
 */
#include "core_int.h"

#include "config.h"
#include "cpu_features.h"

#include <time.h>

int lwm2_clock_is_tsc;

static uint64_t tsc0, mono0;
/* ns per tick as a 32.32 fixed point number, so the conversion needs no
 * floating point in a signal handler. */
static _Atomic uint64_t ns_per_tick_fp = (uint64_t)1 << 32;
static uint32_t cost_ps;

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t lwm2_now_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

void lwm2_clock_init(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* cpu_features.h: glibc's copy of CPUID where glibc has one. */
	if (lwm2_cpu_invariant_tsc()) {
		lwm2_clock_is_tsc = 1;
		mono0 = mono_ns();
		tsc0 = __rdtsc();
	}
#endif
}

/* Under the lock. */
void lwm2_clock_recalibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t m, t;

	if (!lwm2_clock_is_tsc)
		return;
	m = mono_ns();
	t = __rdtsc();
	if (t <= tsc0 || m <= mono0 + 1000)
		return; /* too short to tell; keep the last rate */
	/* (m - mono0) / (t - tsc0) in 32.32; unsigned __int128 keeps it exact. */
	atomic_store_explicit(&ns_per_tick_fp,
	                      (uint64_t)(((unsigned __int128)(m - mono0) << 32) / (t - tsc0)),
	                      memory_order_relaxed);
	if (atomic_load_explicit(&ns_per_tick_fp, memory_order_relaxed) == 0)
		atomic_store_explicit(&ns_per_tick_fp, 1, memory_order_relaxed);
#endif
}

uint64_t lwm2_ticks_to_ns(uint64_t ticks)
{
	uint64_t f = atomic_load_explicit(&ns_per_tick_fp, memory_order_relaxed);

	if (!lwm2_clock_is_tsc)
		return ticks;
	return (uint64_t)(((unsigned __int128)ticks * f) >> 32);
}

/* The same from the rate measured now, stored nowhere: for a reader that
 * holds no lock (view.c), before or between the folds' calibrations. */
uint64_t lwm2_ticks_to_ns_fresh(uint64_t ticks)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t m, t;

	if (!lwm2_clock_is_tsc)
		return ticks;
	m = mono_ns();
	t = __rdtsc();
	if (t > tsc0 && m > mono0 + 1000)
		return (uint64_t)(((unsigned __int128)ticks * (m - mono0)) / (t - tsc0));
#endif
	return lwm2_ticks_to_ns(ticks);
}

/* Cost of one read, measured once over a short burst (about 1 us). */
void lwm2_clock_describe(uint32_t *source, uint32_t *cost)
{
	if (!cost_ps) {
		enum { N = 64 };
		uint64_t a = lwm2_ticks(), b;
		volatile uint64_t sink = 0;

		for (int i = 0; i < N; i++)
			sink += lwm2_ticks();
		b = lwm2_ticks();
		(void)sink;
		cost_ps = (uint32_t)(lwm2_ticks_to_ns(b - a) * 1000 / (N + 1));
		if (!cost_ps)
			cost_ps = 1;
	}
	*source = lwm2_clock_is_tsc ? LWM2_CLOCK_TSC : LWM2_CLOCK_MONOTONIC;
	*cost = cost_ps;
}
