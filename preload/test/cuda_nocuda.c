/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program without CUDA: reports whether CUPTI or the CUDA driver were
 * loaded into it (they must not be, even with CUDA_INJECTION64_PATH set). */
#include <stdio.h>
#include <string.h>

int main(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int cupti = 0, cuda = 0, inj = 0;

	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		cupti |= strstr(line, "libcupti") != NULL;
		cuda |= strstr(line, "libcuda.so") != NULL;
		inj |= strstr(line, "liblwm2cuda") != NULL;
	}
	fclose(f);
	printf("libcupti %d libcuda %d liblwm2cuda %d\n", cupti, cuda, inj);
	return 0;
}
