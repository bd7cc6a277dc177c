/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The CUDA module's side in liblwm2.so: what the injection library calls
 * (see cuda_bridge.h), and at exit the verdict on a process that used CUDA
 * but never reached a device.
 *
 * Transfers arrive as CUPTI activity records on CUPTI's own thread, which
 * must not become a measured thread and must not write another thread's
 * counters.  They are added to process-wide atomics here and moved into a
 * measured thread's counters by that thread itself: when it leaves its
 * next CUDA call (one relaxed load when nothing is pending) and at exit.
 */
#define _GNU_SOURCE
#include "cuda_bridge.h"
#include "lwm2_core.h"

#include <link.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

static _Atomic uint64_t pend_count[LWM2_CUDA_NCOPY] LWM2_HOT_STATE,
    pend_bytes[LWM2_CUDA_NCOPY] LWM2_HOT_STATE;
static _Atomic int pending LWM2_HOT_STATE;
static _Atomic int device_state LWM2_HOT_STATE; /* enum lwm2_cuda_device, 0: nothing heard */
static _Atomic int injected LWM2_HOT_STATE;
static _Atomic int runtime_set LWM2_HOT_STATE;
static void (*_Atomic flush_fn)(void) LWM2_HOT_STATE;

/* Per thread: nesting depth of CUDA calls, and the outermost call's start. */
static __thread struct {
	uint32_t depth;
	uint32_t prev;
	uint64_t t0;
	bool counting;
} cu __attribute__((tls_model("initial-exec")));

static const enum lwm2_counter copy_count[LWM2_CUDA_NCOPY] = {
    LWM2_C_cuda_h2d_count, LWM2_C_cuda_d2h_count, LWM2_C_cuda_other_copy_count};
static const enum lwm2_counter copy_bytes[LWM2_CUDA_NCOPY] = {
    LWM2_C_cuda_h2d_bytes, LWM2_C_cuda_d2h_bytes, LWM2_C_cuda_other_copy_bytes};

static void mark_runtime(void)
{
	if (!atomic_exchange(&runtime_set, 1))
		lwm2_set_runtime(LWM2_RT_CUDA);
}

static void drain(struct lwm2_thread *t)
{
	if (!atomic_exchange_explicit(&pending, 0, memory_order_acquire))
		return;
	for (int k = 0; k < LWM2_CUDA_NCOPY; k++) {
		uint64_t n = atomic_exchange(&pend_count[k], 0);
		uint64_t b = atomic_exchange(&pend_bytes[k], 0);

		if (n)
			lwm2_count(t, copy_count[k], n);
		if (b)
			lwm2_count(t, copy_bytes[k], b);
	}
}

LWM2_EXPORT int lwm2_cuda_bridge_version(void)
{
	return LWM2_CUDA_BRIDGE_VERSION;
}

LWM2_EXPORT void lwm2_cuda_loaded(void (*flush)(void))
{
	atomic_store(&flush_fn, flush);
	atomic_store(&injected, 1);
}

LWM2_EXPORT void lwm2_cuda_api_enter(void)
{
	if (cu.depth++ == 0) {
		struct lwm2_thread *t = lwm2_enter();

		cu.counting = t != NULL;
		if (t) {
			cu.prev = lwm2_earmark_enter(t, LWM2_EARMARK_cuda);
			cu.t0 = lwm2_ticks();
		}
	}
}

LWM2_EXPORT void lwm2_cuda_api_leave(void)
{
	struct lwm2_thread *t;

	if (cu.depth == 0 || --cu.depth != 0 || !cu.counting)
		return;
	cu.counting = false;
	t = lwm2_self;
	if (!t)
		return;
	lwm2_count_call(t, LWM2_C_cuda_calls, LWM2_C_cuda_ns, 0, LWM2_C_cuda_ns,
	                lwm2_ticks() - cu.t0);
	lwm2_earmark_leave(t, cu.prev);
	if (LWM2_UNLIKELY(atomic_load_explicit(&pending, memory_order_relaxed)))
		drain(t);
	if (LWM2_UNLIKELY(!atomic_load_explicit(&runtime_set, memory_order_relaxed)))
		mark_runtime();
}

LWM2_EXPORT void lwm2_cuda_transfer(enum lwm2_cuda_copy kind, uint64_t count, uint64_t bytes)
{
	if ((unsigned)kind >= LWM2_CUDA_NCOPY)
		kind = LWM2_CUDA_COPY_OTHER;
	atomic_fetch_add(&pend_count[kind], count);
	atomic_fetch_add(&pend_bytes[kind], bytes);
	atomic_store_explicit(&pending, 1, memory_order_release);
}

LWM2_EXPORT void lwm2_cuda_device(enum lwm2_cuda_device what)
{
	/* Once a device was seen, a later error (e.g. an invalid device
	 * number) does not make it "no device". */
	if (what == LWM2_CUDA_DEVICE_SEEN)
		atomic_store(&device_state, LWM2_CUDA_DEVICE_SEEN);
	else {
		int none = 0;
		atomic_compare_exchange_strong(&device_state, &none, (int)what);
	}
}

/* Which CUDA libraries the process has mapped: no system call, no file. */
struct cuda_libs {
	bool runtime, driver;
};

static int find_libs(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct cuda_libs *l = arg;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libcudart.so", 12) == 0)
		l->runtime = true;
	else if (strncmp(base, "libcuda.so", 10) == 0)
		l->driver = true;
	return 0;
}

static void cuda_fini(void)
{
	void (*flush)(void) = atomic_load(&flush_fn);
	struct lwm2_thread *t;
	struct cuda_libs libs = {false, false};
	int dev;

	if (flush)
		flush();
	t = lwm2_self;
	if (t)
		drain(t);

	dev = atomic_load(&device_state);
	if (dev == LWM2_CUDA_DEVICE_SEEN)
		return;
	if (!atomic_load(&injected) && dev == 0) {
		/* The driver never loaded us: look whether CUDA was used at
		 * all (dynamic libcudart, or the driver itself).  Not for an
		 * image bound for the step summary, which keeps no runtimes
		 * and no reasons (should the summary refuse it after all, its
		 * record file goes without this note). */
		if (lwm2_goes_to_summary())
			return;
		dl_iterate_phdr(find_libs, &libs);
		if (!libs.runtime && !libs.driver)
			return;
		mark_runtime();
		if (!libs.driver)
			lwm2_group_missing(LWM2_G_CUDA, "no CUDA device (no driver)");
		else
			lwm2_group_missing(LWM2_G_CUDA, "CUDA not measured (injection not loaded)");
		return;
	}
	mark_runtime();
	/* Loaded but neither verdict: CUDA started and did no device work. */
	if (dev == LWM2_CUDA_DEVICE_NONE)
		lwm2_group_missing(LWM2_G_CUDA, "no CUDA device");
}

/* In the child of fork the parent's pending transfers are not ours; CUDA
 * itself does not survive fork. */
static void cuda_fork_child(void)
{
	for (int k = 0; k < LWM2_CUDA_NCOPY; k++) {
		atomic_store(&pend_count[k], 0);
		atomic_store(&pend_bytes[k], 0);
	}
	atomic_store(&pending, 0);
	cu.depth = 0;
	cu.counting = false;
}

LWM2_HIDDEN const struct lwm2_module lwm2_module_cuda = {
    .name = "cuda",
    .fini = cuda_fini,
    .fork_child = cuda_fork_child,
};
