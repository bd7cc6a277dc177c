// SPDX-License-Identifier: GPL-2.0-or-later
// A CUDA program on a machine that may have no GPU: it asks for devices
// and reports what it got.  Under lwm2 it must print and exit the same.
#include <cuda_runtime.h>
#include <stdio.h>

int main(void)
{
	int n = -1;
	cudaError_t e = cudaGetDeviceCount(&n);

	printf("cudaGetDeviceCount: %s, %d devices\n", cudaGetErrorName(e), e == cudaSuccess ? n : 0);
	return e == cudaSuccess ? 0 : 3;
}
