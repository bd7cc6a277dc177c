/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * I/O programs whose digest lines are known (digest/test/truth.sh):
 *   truth_io fsync FILE    64 writes of 64 KiB, each followed by fsync
 *   truth_io mmap FILE     maps FILE shared and writable, stores 1 MiB
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	int fd;

	if (argc < 3)
		return 2;
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	if (!strcmp(argv[1], "fsync")) {
		for (int i = 0; i < 64; i++) {
			memset(buf, i, sizeof buf);
			if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf || fsync(fd) != 0)
				return 1;
		}
	} else if (!strcmp(argv[1], "mmap")) {
		char *p;

		if (ftruncate(fd, 1 << 20) != 0)
			return 1;
		p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			return 1;
		memset(p, 7, 1 << 20);
		munmap(p, 1 << 20);
	}
	return close(fd) == 0 ? 0 : 1;
}
