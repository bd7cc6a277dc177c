// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every kind of copy the CUDA module must count, each done a known number
// of times, and the totals it expects printed at the end, so cuda_run.sh
// compares lwm2's record with what the program itself did:
//   host to device: pageable, pinned, pinned async, cudaMemcpyDefault, 3D
//   device to host: pageable, 2D, pinned async
//   device to device: sync and async
//   not copies: a memset, a managed allocation prefetched to the device
//   and back (unified-memory migration, reported apart)
//   and THREADS host threads each doing its own copies on its own stream.
// It also sums its own wall time inside CUDA calls ("own_cuda_ns"), the
// reference for lwm2's time in CUDA.
//
//   cuda_kinds [THREADS]
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long own_ns;
static pthread_mutex_t own_lock = PTHREAD_MUTEX_INITIALIZER;

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

// Times the call into own_ns; on error prints and exits 1.
#define CHECK(x)                                                                           \
	do {                                                                               \
		long long t0_ = now_ns();                                                  \
		cudaError_t e_ = (x);                                                      \
		long long d_ = now_ns() - t0_;                                             \
		pthread_mutex_lock(&own_lock);                                             \
		own_ns += d_;                                                              \
		pthread_mutex_unlock(&own_lock);                                           \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));           \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

struct tally {
	unsigned long long h2d_count, h2d_bytes, d2h_count, d2h_bytes, other_count, other_bytes;
};
static struct tally expect;

static void add(unsigned long long *count, unsigned long long *bytes, size_t n)
{
	pthread_mutex_lock(&own_lock);
	*count += 1;
	*bytes += n;
	pthread_mutex_unlock(&own_lock);
}

enum { PER_THREAD_COPIES = 8, PER_THREAD_BYTES = 64 << 10 };

static void *worker(void *arg)
{
	char *h, *d;
	cudaStream_t s;

	(void)arg;
	CHECK(cudaMallocHost((void **)&h, PER_THREAD_BYTES));
	CHECK(cudaMalloc((void **)&d, PER_THREAD_BYTES));
	CHECK(cudaStreamCreate(&s));
	memset(h, 7, PER_THREAD_BYTES);
	for (int i = 0; i < PER_THREAD_COPIES; i++) {
		CHECK(cudaMemcpyAsync(d, h, PER_THREAD_BYTES, cudaMemcpyHostToDevice, s));
		add(&expect.h2d_count, &expect.h2d_bytes, PER_THREAD_BYTES);
		CHECK(cudaMemcpyAsync(h, d, PER_THREAD_BYTES, cudaMemcpyDeviceToHost, s));
		add(&expect.d2h_count, &expect.d2h_bytes, PER_THREAD_BYTES);
	}
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(d));
	CHECK(cudaFreeHost(h));
	return NULL;
}

int main(int argc, char **argv)
{
	const size_t MiB = 1 << 20, half = MiB / 2, quarter = MiB / 4, small = 64 << 10;
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	char *pageable, *pinned, *d, *d2, *managed;
	cudaStream_t s;
	int dev = 0, concurrent = 0;

	if (threads < 0 || threads > 64) {
		fprintf(stderr, "usage: cuda_kinds [THREADS 0..64]\n");
		return 2;
	}
	pageable = (char *)malloc(MiB);
	if (!pageable)
		return 1;
	memset(pageable, 1, MiB);
	CHECK(cudaMallocHost((void **)&pinned, MiB));
	memset(pinned, 2, MiB);
	CHECK(cudaMalloc((void **)&d, MiB));
	CHECK(cudaMalloc((void **)&d2, MiB));
	CHECK(cudaStreamCreate(&s));

	// host to device
	CHECK(cudaMemcpy(d, pageable, MiB, cudaMemcpyHostToDevice));
	add(&expect.h2d_count, &expect.h2d_bytes, MiB);
	CHECK(cudaMemcpy(d, pinned, MiB, cudaMemcpyHostToDevice));
	add(&expect.h2d_count, &expect.h2d_bytes, MiB);
	CHECK(cudaMemcpyAsync(d, pinned, MiB, cudaMemcpyHostToDevice, s));
	add(&expect.h2d_count, &expect.h2d_bytes, MiB);
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(d, pinned, MiB, cudaMemcpyDefault));
	add(&expect.h2d_count, &expect.h2d_bytes, MiB);
	{
		cudaMemcpy3DParms p;
		memset(&p, 0, sizeof(p));
		p.srcPtr = make_cudaPitchedPtr(pinned, 256, 256, 16);
		p.dstPtr = make_cudaPitchedPtr(d, 256, 256, 16);
		p.extent = make_cudaExtent(256, 16, 16);
		p.kind = cudaMemcpyHostToDevice;
		CHECK(cudaMemcpy3D(&p));
		add(&expect.h2d_count, &expect.h2d_bytes, 256 * 16 * 16);
	}

	// device to host
	CHECK(cudaMemcpy(pageable, d, half, cudaMemcpyDeviceToHost));
	add(&expect.d2h_count, &expect.d2h_bytes, half);
	CHECK(cudaMemcpy2D(pinned, 1024, d, 1024, 1024, half / 1024, cudaMemcpyDeviceToHost));
	add(&expect.d2h_count, &expect.d2h_bytes, half);
	CHECK(cudaMemcpyAsync(pinned, d, quarter, cudaMemcpyDeviceToHost, s));
	add(&expect.d2h_count, &expect.d2h_bytes, quarter);
	CHECK(cudaStreamSynchronize(s));

	// device to device
	CHECK(cudaMemcpy(d2, d, small, cudaMemcpyDeviceToDevice));
	add(&expect.other_count, &expect.other_bytes, small);
	CHECK(cudaMemcpyAsync(d2, d, small / 2, cudaMemcpyDeviceToDevice, s));
	add(&expect.other_count, &expect.other_bytes, small / 2);
	CHECK(cudaStreamSynchronize(s));

	// not copies
	CHECK(cudaMemset(d, 0, MiB));
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
	CHECK(cudaMallocManaged((void **)&managed, MiB));
	memset(managed, 3, MiB);
	if (concurrent) {
		cudaMemLocation to_dev = {cudaMemLocationTypeDevice, dev};
		cudaMemLocation to_host = {cudaMemLocationTypeHost, 0};
		CHECK(cudaMemPrefetchAsync(managed, MiB, to_dev, 0, s));
		CHECK(cudaMemPrefetchAsync(managed, MiB, to_host, 0, s));
		CHECK(cudaStreamSynchronize(s));
	}
	CHECK(cudaDeviceSynchronize());

	// threads, each on its own stream
	pthread_t tid[64];
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, worker, NULL) != 0) {
			fprintf(stderr, "cuda_kinds: cannot start thread %d\n", t);
			return 1;
		}
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);

	CHECK(cudaFree(managed));
	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(d2));
	CHECK(cudaFree(d));
	CHECK(cudaFreeHost(pinned));
	free(pageable);
	printf("expect cuda_h2d_count %llu\n", expect.h2d_count);
	printf("expect cuda_h2d_bytes %llu\n", expect.h2d_bytes);
	printf("expect cuda_d2h_count %llu\n", expect.d2h_count);
	printf("expect cuda_d2h_bytes %llu\n", expect.d2h_bytes);
	printf("expect cuda_other_copy_count %llu\n", expect.other_count);
	printf("expect cuda_other_copy_bytes %llu\n", expect.other_bytes);
	printf("managed_prefetch %s\n", concurrent ? "2 x 1048576 B" : "not supported");
	printf("own_cuda_ns %lld\n", own_ns);
	return 0;
}
