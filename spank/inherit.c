/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The allocation's --lwm2* options as the commands inside it see them.
 *
 * sbatch and salloc pass an accepted option on to the job's environment
 * as SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_<option>; every srun, sbatch or
 * salloc started inside the allocation reads those variables before its
 * own command line (spank_process_env_options) and hands the variable's
 * own string, getenv's pointer, to the option callback.  An option given
 * without a value reaches them as the text "(null)": the commands build
 * the variable with xstrcat(value) and value NULL (Slurm 22.05 and 24.11
 * alike), and srun forwards that text to slurmstepd as the step's value.
 * No Slurm here: the unit test links this file alone.
 */
#include <stdio.h>
#include <string.h>

#include "lwm2_spank.h"

/* What Slurm writes for an option given without a value. */
#define SLURM_NO_VALUE_TEXT "(null)"

int lwm2_option_env_name(const char *opt, char *buf, size_t len)
{
	int n = snprintf(buf, len, "SLURM_SPANK__SLURM_SPANK_OPTION_%s_%s", LWM2_SPANK_PREFIX, opt);
	size_t i, from = sizeof("SLURM_SPANK__SLURM_SPANK_OPTION_") - 1;

	if (n < 0 || (size_t)n >= len)
		return -1;
	/* Slurm's _canonical_char: whatever is not a letter or a digit. */
	for (i = from; buf[i]; i++) {
		char c = buf[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			buf[i] = '_';
	}
	return 0;
}

enum lwm2_opt_origin lwm2_option_origin(int remote, const char *arg, const char *env_value)
{
	if (remote)
		return LWM2_OPT_STEP;
	/* The same string, not an equal one: a value typed on the command
	 * line lives in argv, never in the environment block. */
	if (arg && arg == env_value)
		return LWM2_OPT_INHERITED;
	return LWM2_OPT_TYPED;
}

const char *lwm2_option_value(const char *arg, enum lwm2_opt_origin origin)
{
	/* Typed by a user, "(null)" is a value like any other (and refused);
	 * passed on by Slurm, it is the bare option. */
	if (arg && origin != LWM2_OPT_TYPED && !strcmp(arg, SLURM_NO_VALUE_TEXT))
		return NULL;
	return arg;
}
