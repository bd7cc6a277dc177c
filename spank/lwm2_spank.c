/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spank_lwm2.so: the entry points.  Each only picks the context's code;
 * what runs where, and as whom, is in srun.c, allocator.c and stepd.c.
 */
#include <slurm/spank.h>

#include "contexts.h"

SPANK_PLUGIN(lwm2, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
	case S_CTX_REMOTE:
	case S_CTX_ALLOCATOR:
		return lwm2_common_init(sp, ac, av);
	default:
		return 0;
	}
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_REMOTE:
		return lwm2_stepd_init_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return lwm2_allocator_init_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	return spank_context() == S_CTX_LOCAL ? lwm2_srun_user_init(sp) : 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	return spank_context() == S_CTX_REMOTE ? lwm2_stepd_task_init_privileged(sp) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	return spank_context() == S_CTX_REMOTE ? lwm2_stepd_task_init(sp) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	return spank_context() == S_CTX_REMOTE ? lwm2_stepd_task_exit(sp) : 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return lwm2_srun_exit(sp);
	case S_CTX_REMOTE:
		return lwm2_stepd_exit(sp);
	default:
		return 0;
	}
}
