/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Allocator context: sbatch and salloc, as the user.  The option callbacks
 * have already refused invalid values (which stops the submission); what
 * was accepted travels to the job as SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_*
 * and reaches the batch step and every srun inside the job.  salloc's own
 * command runs outside any step and is not measured; the steps it starts
 * are.
 */
#include "contexts.h"
#include "lwm2_spank.h"

int lwm2_allocator_init_post_opt(spank_t sp)
{
	if (lwm2_conf_ok && lwm2_opts.mode == LWM2_MODE_PRINT &&
	    !(lwm2_conf.print & (LWM2_PRINT_SRUN | LWM2_PRINT_BATCH)))
		slurm_info("lwm2: --lwm2=print: this site prints no digests (print=none); the "
		           "job is measured");
	return 0;
}
