/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The entry points liblwm2.so offers the CUDA injection library
 * (liblwm2cuda.so).  The injection library does not link liblwm2: it finds
 * these with dlsym(RTLD_DEFAULT, ...), so that without liblwm2 in the
 * process it does nothing at all.  Bump LWM2_CUDA_BRIDGE_VERSION when a
 * signature changes; the injection library checks it.
 */
#ifndef LWM2_CUDA_BRIDGE_H
#define LWM2_CUDA_BRIDGE_H

#include <stdint.h>

#define LWM2_CUDA_BRIDGE_VERSION 1

enum lwm2_cuda_copy {
	LWM2_CUDA_COPY_H2D = 0,
	LWM2_CUDA_COPY_D2H,
	LWM2_CUDA_COPY_OTHER,
	LWM2_CUDA_NCOPY
};

enum lwm2_cuda_device {
	LWM2_CUDA_DEVICE_SEEN = 1, /* a context was created or devices were counted */
	LWM2_CUDA_DEVICE_NONE = 2, /* the driver reported no usable device */
};

/* Returns LWM2_CUDA_BRIDGE_VERSION. */
int lwm2_cuda_bridge_version(void);
/* The injection library is in place; flush (may be NULL) delivers pending
 * transfer records at exit. */
void lwm2_cuda_loaded(void (*flush)(void));
/* Around every CUDA API call, in the calling thread (nested calls, e.g. the
 * driver calls the runtime makes, count once, as the outermost). */
void lwm2_cuda_api_enter(void);
void lwm2_cuda_api_leave(void);
/* One completed transfer; from any thread (CUPTI's buffer thread). */
void lwm2_cuda_transfer(enum lwm2_cuda_copy kind, uint64_t count, uint64_t bytes);
void lwm2_cuda_device(enum lwm2_cuda_device what);

#endif /* LWM2_CUDA_BRIDGE_H */
