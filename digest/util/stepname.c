/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's names of its special steps (see stepname.h). */
#include "stepname.h"

#include <inttypes.h>
#include <stdio.h>

const char *lwm2_step_name(int64_t id, char *buf, size_t len)
{
	switch (id) {
	case LWM2_STEP_BATCH:
		return "batch";
	case LWM2_STEP_EXTERN:
		return "extern";
	case LWM2_STEP_INTERACTIVE:
		return "interactive";
	default:
		snprintf(buf, len, "%" PRId64, id);
		return buf;
	}
}
