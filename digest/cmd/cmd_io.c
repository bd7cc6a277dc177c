/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input and output that several lwm2 subcommands share (see cmd_io.h). */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include "cmd_io.h"
#include "errmsg.h"
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
		lwm2_errprintf(0, err, errlen, "%s", strerror(errno));
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

pid_t lwm2_cmd_fork_pipe(int *rfd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		return 0;
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

bool lwm2_cmd_ran_within(int64_t from, int64_t to, int64_t start, int64_t end)
{
	if (from && end && end < from)
		return false;
	if (to && start && start > to)
		return false;
	if (to && !start && end > to)
		return false;
	return true;
}

int lwm2_cmd_print_json(json_object *o, bool pretty)
{
	const char *s = json_object_to_json_string_ext(
	    o, pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED : JSON_C_TO_STRING_PLAIN);

	if (!s || puts(s) == EOF)
		return -1;
	return 0;
}
