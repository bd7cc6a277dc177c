/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's compressed host lists ("n[01-03,7],gpu2", "r[1-2]-n[1-2]") as
 * the node names they stand for, without libslurm: the central database
 * keeps a row per node of a job from the list in the job's log line.
 */
#ifndef LWM2_HOSTLIST_H
#define LWM2_HOSTLIST_H

#include <stddef.h>

/* Each name of list to fn (0: go on; else it is returned), at most max
 * names (the rest are left out).  0, fn's value, or -1 with errno
 * EINVAL for a list that is not one (an unclosed bracket, a range
 * backwards or not of numbers). */
int lwm2_hostlist_each(const char *list, size_t max, int (*fn)(void *arg, const char *name),
                       void *arg);

#endif /* LWM2_HOSTLIST_H */
