/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lwm2 run: why a command left no record, said only where the cause is
 * established (by the program's file, by its own loader, by how it ended),
 * never guessed.
 */
#ifndef LWM2_RUN_WHY_H
#define LWM2_RUN_WHY_H

#include <stdbool.h>
#include <stddef.h>

struct lwm2_env_ops;
struct lwm2_step_env;

struct lwm2_run_end {
	const char *cmd;       /* as given: argv[0] of the command */
	int status;            /* waitpid's */
	const char *last_comm; /* the process's name when it ended, "" unknown */
};

/* This process's own environment, which exec passes on. */
extern const struct lwm2_env_ops lwm2_run_own_env;

/*
 * The file execvp(3) runs for cmd: cmd itself where it has a '/', else the
 * first executable regular file of that name along PATH.  0, or -1.
 */
int lwm2_run_resolve(const char *cmd, char *out, size_t outlen);

/*
 * Why nothing of the command was measured, into why (one sentence, no
 * trailing newline); the reason found, or what was checked and held.
 * env is what the command ran with: the loader is asked with it.
 */
void lwm2_run_why(const struct lwm2_run_end *end, const struct lwm2_step_env *env, char *why,
                  size_t len);

#endif /* LWM2_RUN_WHY_H */
