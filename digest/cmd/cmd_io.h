/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Input and output that several lwm2 subcommands share. */
#ifndef LWM2_CMD_IO_H
#define LWM2_CMD_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

/* The whole file at path ("-": stdin), at most max bytes, NUL-terminated,
 * its length in *len; or NULL with the reason in err. */
char *lwm2_cmd_slurp(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* arg appended to the array *v of *n (grown; arg itself is not copied:
 * options are argv's strings).  0, or -1 when out of memory. */
int lwm2_cmd_push_arg(char ***v, size_t *n, char *arg);

/* A child whose standard output is a pipe: its pid in the parent, which
 * reads the pipe at *rfd; 0 in the child; -1 when no pipe or no child. */
pid_t lwm2_cmd_fork_pipe(int *rfd);

/* Whether a job of start and end (0: not known) ran, or ended, inside
 * [from, to] of -S and -E (0: open). */
bool lwm2_cmd_ran_within(int64_t from, int64_t to, int64_t start, int64_t end);

/* o as one line of JSON on stdout (indented with pretty); 0, or -1. */
int lwm2_cmd_print_json(json_object *o, bool pretty);

#endif /* LWM2_CMD_IO_H */
