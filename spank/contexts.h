/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The entry points of each context, called by the dispatch in
 * lwm2_spank.c.  Each returns what the SPANK callback returns.
 */
#ifndef LWM2_SPANK_CONTEXTS_H
#define LWM2_SPANK_CONTEXTS_H

#include <slurm/slurm.h>
#include <slurm/spank.h>
#include <stddef.h>
#include <stdint.h>

/* options.c: every context that has options (local, remote, allocator). */
int lwm2_common_init(spank_t sp, int ac, char **av);
int lwm2_options_register(spank_t sp);

/* srun.c: local context (srun), as the user. */
int lwm2_srun_user_init(spank_t sp);
int lwm2_srun_exit(spank_t sp);

/* allocator.c: sbatch and salloc, as the user. */
int lwm2_allocator_init_post_opt(spank_t sp);

/* stepd.c: remote context (slurmstepd). */
int lwm2_stepd_init_post_opt(spank_t sp);
int lwm2_stepd_task_init_privileged(spank_t sp);
int lwm2_stepd_task_init(spank_t sp);
int lwm2_stepd_task_exit(spank_t sp);
int lwm2_stepd_exit(spank_t sp);

#endif /* LWM2_SPANK_CONTEXTS_H */
