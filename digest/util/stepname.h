/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's names of its special steps, for messages and reports. */
#ifndef LWM2_STEPNAME_H
#define LWM2_STEPNAME_H

#include <stddef.h>
#include <stdint.h>

/* Slurm's step ids for the batch script, the extern container and the
 * interactive step (slurm.h's SLURM_BATCH_SCRIPT and the like, which a
 * part built without Slurm's headers cannot name). */
#define LWM2_STEP_BATCH       0xfffffffbLL
#define LWM2_STEP_EXTERN      0xfffffffcLL
#define LWM2_STEP_INTERACTIVE 0xfffffffaLL

/* "batch", "extern", "interactive", or the number written into buf. */
const char *lwm2_step_name(int64_t id, char *buf, size_t len);

#endif /* LWM2_STEPNAME_H */
