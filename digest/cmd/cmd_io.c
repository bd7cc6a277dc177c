/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input and output that several lwm2 subcommands share (see cmd_io.h). */
#include "config.h"

#include "cmd_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whole file, at most max bytes, NUL-terminated; "-" is stdin. */
char *lwm2_cmd_slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t cap = 65536, n = 0;
	char *buf = NULL;

	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return NULL;
	}
	for (;;) {
		ssize_t r;
		if (n + 1 >= cap || !buf) {
			char *nb;
			if (buf)
				cap *= 2;
			if (cap > max + 2)
				cap = max + 2;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s", strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			snprintf(err, errlen, "larger than %zu bytes", max);
			goto fail;
		}
	}
	if (fd)
		close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	if (fd)
		close(fd);
	free(buf);
	return NULL;
}

int lwm2_cmd_print_json(json_object *o, bool pretty)
{
	const char *s = json_object_to_json_string_ext(
	    o, pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);

	if (!s || puts(s) == EOF)
		return -1;
	return 0;
}
