/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program without MPI: under liblwm2 no MPI library may be mapped. */
#include <stdio.h>
#include <string.h>

int main(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return 2;
	while (fgets(line, sizeof line, f))
		if (strstr(line, "libmpi") || strstr(line, "libmpich") ||
		    strstr(line, "libopen-pal"))
			found = 1, fputs(line, stderr);
	fclose(f);
	printf(found ? "libmpi mapped" : "no MPI library mapped");
	return found;
}
