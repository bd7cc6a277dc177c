/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the lwm2 command takes from libslurm rather than doing by hand:
 * sacct's time syntax and the ClusterName of slurm.conf.
 */
#ifndef LWM2_SLURMUTIL_H
#define LWM2_SLURMUTIL_H

#include <stdint.h>

/* TIME of -S/-E: lwm2's forms (lwm2_parse_time: now, now-N[smhd],
 * YYYY-MM-DD[THH:MM[:SS]], @EPOCH) and, where libslurm exports its
 * parser, everything sacct takes (HH:MM, MM/DD[/YY], today, midnight,
 * now-3days, ...), times of day in the past as sacct reads them.  0, or -1
 * with nothing stored. */
int lwm2_time_arg(const char *s, int64_t *out);

/* lwm2_time_arg for -S/-E of `lwm2 <cmd>`, saying on stderr what it could
 * not read.  0, or -1. */
int lwm2_cmd_time_opt(const char *cmd, const char *arg, int64_t *out);

/* ClusterName as libslurm reads slurm.conf ($SLURM_CONF, Include files,
 * configless clusters), malloc'd; NULL when there is none.  Calls
 * slurm_init. */
char *lwm2_slurm_cluster_name(void);

#endif
