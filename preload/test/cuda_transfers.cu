// SPDX-License-Identifier: GPL-2.0-or-later
// Known transfers for the CUDA module's GPU test: 3 host-to-device copies
// of 1 MiB (sync, async, cudaMemcpyDefault), 2 device-to-host copies of
// 512 KiB (sync, 2D), 1 device-to-device copy of 64 KiB.  cuda_run.sh
// checks the record holds exactly these counts and bytes.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                   \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(void)
{
	const size_t MiB = 1u << 20, half = MiB / 2, small = 64u << 10;
	char *h, *d, *d2;
	cudaStream_t s;

	CHECK(cudaMallocHost((void **)&h, MiB));
	CHECK(cudaMalloc((void **)&d, MiB));
	CHECK(cudaMalloc((void **)&d2, small));
	CHECK(cudaStreamCreate(&s));
	for (size_t i = 0; i < MiB; i++)
		h[i] = (char)i;

	CHECK(cudaMemcpy(d, h, MiB, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpyAsync(d, h, MiB, cudaMemcpyHostToDevice, s));
	CHECK(cudaStreamSynchronize(s));
	CHECK(cudaMemcpy(d, h, MiB, cudaMemcpyDefault));

	CHECK(cudaMemcpy(h, d, half, cudaMemcpyDeviceToHost));
	CHECK(cudaMemcpy2D(h, 1024, d, 1024, 1024, half / 1024, cudaMemcpyDeviceToHost));

	CHECK(cudaMemcpy(d2, d, small, cudaMemcpyDeviceToDevice));
	CHECK(cudaDeviceSynchronize());

	CHECK(cudaStreamDestroy(s));
	CHECK(cudaFree(d2));
	CHECK(cudaFree(d));
	CHECK(cudaFreeHost(h));
	printf("transfers done\n");
	return 0;
}
