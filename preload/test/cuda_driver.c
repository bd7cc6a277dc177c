/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A program of the CUDA driver API alone: cuInit (during which the driver
 * loads liblwm2cuda.so), a device, its primary context, an allocation.
 * It times each of its CUDA calls and prints their number ("own_calls")
 * and their summed wall time ("own_cuda_ns"), the reference for lwm2's
 * count and time in CUDA, cuInit's own time included.
 */
#include <cuda.h>
#include <stdio.h>
#include <time.h>

static long long own_ns;
static int own_calls;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

#define TIMED(call)                                                                                \
	do {                                                                                       \
		long long t0_ = now_ns();                                                          \
		CUresult rc_ = (call);                                                             \
		own_ns += now_ns() - t0_;                                                          \
		own_calls++;                                                                       \
		if (rc_ != CUDA_SUCCESS) {                                                         \
			printf("%s: error %d\n", #call, (int)rc_);                                 \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;

	TIMED(cuInit(0));
	TIMED(cuDeviceGet(&dev, 0));
	TIMED(cuDevicePrimaryCtxRetain(&ctx, dev));
	TIMED(cuCtxSetCurrent(ctx));
	TIMED(cuMemAlloc(&p, 1 << 20));
	TIMED(cuMemFree(p));
	TIMED(cuDevicePrimaryCtxRelease(dev));
	printf("own_calls %d\nown_cuda_ns %lld\n", own_calls, own_ns);
	return 0;
}
