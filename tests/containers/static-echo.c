/* SPDX-License-Identifier: GPL-2.0-or-later
 *
 * lwm2-static-echo FILE BYTES: writes BYTES zero bytes to FILE in blocks
 * of 4096 and prints one line saying so.  Linked statically
 * (tests/containers/image.sh puts it into the test images at
 * /usr/local/bin/lwm2-static-echo): the dynamic loader never runs for it,
 * so LD_PRELOAD cannot reach it, and its output must be the same with
 * lwm2 on and off.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char block[4096];
	long want, done = 0;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: lwm2-static-echo FILE BYTES\n");
		return 2;
	}
	want = strtol(argv[2], NULL, 10);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	memset(block, 0, sizeof block);
	while (done < want) {
		size_t n = want - done < (long)sizeof block ? (size_t)(want - done) : sizeof block;
		ssize_t w = write(fd, block, n);

		if (w <= 0) {
			perror("write");
			return 1;
		}
		done += w;
	}
	if (close(fd) != 0) {
		perror("close");
		return 1;
	}
	printf("lwm2-static-echo: wrote %ld bytes to %s\n", done, argv[1]);
	return 0;
}
