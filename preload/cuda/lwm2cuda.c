/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * liblwm2cuda.so: the CUDA module, loaded by the CUDA driver itself when
 * CUDA_INJECTION64_PATH names it (the SPANK plugin sets it).  The driver
 * loads it in cuInit and calls InitializeInjection, so a program that never
 * starts CUDA never loads this library nor CUPTI.
 *
 * - Time in CUDA calls: CUPTI callbacks on the runtime and driver APIs, at
 *   enter and exit of every call, in the calling thread; liblwm2 sets the
 *   CUDA earmark and counts the outermost call only (the runtime's own
 *   driver calls are inside it).  The cuInit that loads this library is
 *   already under way and CUPTI gives no exit for it (seen on an H200,
 *   driver 580: 100 ms of a driver program's cuInit, 220 ms of a runtime
 *   program's first call, none of it counted); it is counted from
 *   InitializeInjection to the next callback of the same thread, which
 *   comes right after cuInit returns (the runtime's own next driver call,
 *   or a driver program's next call).
 * - Transfers: CUPTI activity records (MEMCPY, MEMCPY2 for peer copies).
 *   The record carries the direction the hardware actually copied and the
 *   bytes, for every flavour (sync, async, 2D/3D, arrays, peer, batched,
 *   cudaMemcpyDefault through unified addressing), where the API arguments
 *   would need per-call decoding and pointer queries.
 * - Nothing links liblwm2: its entry points are looked up with dlsym, and
 *   without them (liblwm2 not preloaded) this library subscribes to
 *   nothing and costs nothing.
 */
#define _GNU_SOURCE
#include "cuda_bridge.h"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT    __attribute__((visibility("default")))
#define BUF_SIZE  (256u * 1024u)
#define BUF_ALIGN 8u

static struct {
	int (*version)(void);
	void (*loaded)(void (*)(void));
	void (*enter)(void);
	void (*leave)(void);
	void (*transfer)(enum lwm2_cuda_copy, uint64_t, uint64_t);
	void (*device)(enum lwm2_cuda_device);
} lw;

static CUpti_SubscriberHandle subscriber;
static _Atomic int active;
/* The cuInit in flight at InitializeInjection, counted as a CUDA call
 * until its thread's next callback. */
static _Atomic int init_open;
static pthread_t init_thread;

/* cudaGetDeviceCount / cuDeviceGetCount: the first thing a program asks. */
static void device_count_result(CUpti_CallbackDomain dom, CUpti_CallbackId id,
                                const CUpti_CallbackData *cb)
{
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
	    id == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020) {
		const cudaGetDeviceCount_v3020_params *p = cb->functionParams;
		int rc = *(const int *)cb->functionReturnValue;

		if (rc == 0 && p->count && *p->count > 0)
			lw.device(LWM2_CUDA_DEVICE_SEEN);
		else
			lw.device(LWM2_CUDA_DEVICE_NONE);
	} else if (dom == CUPTI_CB_DOMAIN_DRIVER_API &&
	           (id == CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount ||
	            id == CUPTI_DRIVER_TRACE_CBID_cuInit)) {
		CUresult rc = *(const CUresult *)cb->functionReturnValue;

		if (rc == CUDA_ERROR_NO_DEVICE)
			lw.device(LWM2_CUDA_DEVICE_NONE);
		else if (rc == CUDA_SUCCESS && id == CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount) {
			const cuDeviceGetCount_params *p = cb->functionParams;

			lw.device(p->count && *p->count > 0 ? LWM2_CUDA_DEVICE_SEEN
			                                    : LWM2_CUDA_DEVICE_NONE);
		}
	}
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain dom, CUpti_CallbackId id,
                                 const void *data)
{
	(void)userdata;
	if (!atomic_load_explicit(&active, memory_order_relaxed))
		return;
	if (__builtin_expect(atomic_load_explicit(&init_open, memory_order_acquire), 0) &&
	    pthread_equal(pthread_self(), init_thread)) {
		atomic_store_explicit(&init_open, 0, memory_order_relaxed);
		lw.leave();
	}
	if (dom == CUPTI_CB_DOMAIN_RESOURCE) {
		if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED)
			lw.device(LWM2_CUDA_DEVICE_SEEN);
		return;
	}
	const CUpti_CallbackData *cb = data;

	if (cb->callbackSite == CUPTI_API_ENTER) {
		lw.enter();
	} else {
		lw.leave();
		if ((dom == CUPTI_CB_DOMAIN_RUNTIME_API &&
		     id == CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceCount_v3020) ||
		    (dom == CUPTI_CB_DOMAIN_DRIVER_API &&
		     (id == CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount ||
		      id == CUPTI_DRIVER_TRACE_CBID_cuInit)))
			device_count_result(dom, id, cb);
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *p = NULL;

	if (posix_memalign(&p, BUF_ALIGN, BUF_SIZE) != 0)
		p = NULL;
	*buffer = p;
	*size = p ? BUF_SIZE : 0;
	*max_records = 0;
}

static enum lwm2_cuda_copy direction(uint8_t copy_kind)
{
	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return LWM2_CUDA_COPY_H2D;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return LWM2_CUDA_COPY_D2H;
	default:
		return LWM2_CUDA_COPY_OTHER;
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;

			lw.transfer(direction(m->copyKind), m->copyCount ? m->copyCount : 1,
			            m->bytes);
		} else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
			const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;

			lw.transfer(LWM2_CUDA_COPY_OTHER, 1, m->bytes);
		}
	}
	free(buffer);
}

/* At exit (liblwm2 calls it before its final write): the records of copies
 * still in CUPTI's buffers. */
static void flush_all(void)
{
	if (atomic_load(&active))
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static int resolve(void)
{
#define SYM(field, name) (*(void **)&lw.field = dlsym(RTLD_DEFAULT, name))
	SYM(version, "lwm2_cuda_bridge_version");
	SYM(loaded, "lwm2_cuda_loaded");
	SYM(enter, "lwm2_cuda_api_enter");
	SYM(leave, "lwm2_cuda_api_leave");
	SYM(transfer, "lwm2_cuda_transfer");
	SYM(device, "lwm2_cuda_device");
#undef SYM
	return lw.version && lw.version() == LWM2_CUDA_BRIDGE_VERSION && lw.loaded && lw.enter &&
	       lw.leave && lw.transfer && lw.device;
}

/*
 * Called by the CUDA driver during cuInit.  Returns nonzero (success) in
 * every case: a failure here must never fail the application's cuInit.
 */
EXPORT int InitializeInjection(void);
EXPORT int InitializeInjection(void)
{
	if (atomic_load(&active) || !resolve())
		return 1;
	if (cuptiSubscribe(&subscriber, on_callback, NULL) != CUPTI_SUCCESS)
		return 1;
	if (cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS ||
	    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS) {
		cuptiUnsubscribe(subscriber);
		return 1;
	}
	cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
	                    CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS) {
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
		/* CUPTI's own thread delivers full buffers; this bounds how
		 * late a transfer reaches its time slice. */
		cuptiActivityFlushPeriod(1000);
	}
	atomic_store(&active, 1);
	lw.loaded(flush_all);
	init_thread = pthread_self();
	lw.enter();
	atomic_store_explicit(&init_open, 1, memory_order_release);
	return 1;
}
