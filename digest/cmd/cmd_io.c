/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input and output that several lwm2 subcommands share (see cmd_io.h). */
#include "config.h"

#include "cmd_io.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whole file, at most max bytes, NUL-terminated; "-" is stdin.  Opened
 * O_NONBLOCK so that a FIFO without writer does not hang the open. */
char *lwm2_cmd_slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *buf;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	buf = lwm2_read_fd(fd, max, len, err, errlen);
	if (fd)
		close(fd);
	return buf;
}

int lwm2_cmd_push_arg(char ***v, size_t *n, char *arg)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -1;
	*v = nv;
	nv[(*n)++] = arg;
	return 0;
}

int lwm2_cmd_print_json(json_object *o, bool pretty)
{
	const char *s = json_object_to_json_string_ext(
	    o, pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);

	if (!s || puts(s) == EOF)
		return -1;
	return 0;
}
