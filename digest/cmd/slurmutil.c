/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "slurmutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>

#include "log.h"
#include "logscan.h"

#ifdef HAVE_SLURM_PARSE_TIME
/* Exported by libslurm (sacct's parser) but not declared in slurm.h;
 * configure checks that the symbol is there.  It returns 0 for what it
 * cannot read, after printing why. */
extern time_t slurm_parse_time(char *time_str, int past);
#endif

int lwm2_time_arg(const char *s, int64_t *out)
{
	if (lwm2_parse_time(s, out) == 0)
		return 0;
#ifdef HAVE_SLURM_PARSE_TIME
	{
		char *copy = strdup(s);
		time_t t;

		if (!copy)
			return -1;
		t = slurm_parse_time(copy, 1);
		free(copy);
		if (t > 0) {
			*out = (int64_t)t;
			return 0;
		}
	}
#endif
	return -1;
}

/* The configuration slurm_init read, in libslurm's exported global of the
 * public type slurm_conf_t: the command links the libslurm it was
 * compiled against, so the layout is the one in slurm.h.  The global is
 * not declared there; configure checks that it links. */
#ifdef HAVE_SLURM_CONF_GLOBAL
extern slurm_conf_t slurm_conf;
#endif

char *lwm2_slurm_cluster_name(void)
{
	char *name = NULL;

	slurm_init(NULL);
#ifdef HAVE_SLURM_CONF_GLOBAL
	if (slurm_conf.cluster_name && *slurm_conf.cluster_name)
		name = strdup(slurm_conf.cluster_name);
#else
	{
		/* Without the global: the controller's copy, one RPC. */
		slurm_conf_t *c = NULL;

		if (slurm_load_ctl_conf((time_t)0, &c) == 0 && c) {
			if (c->cluster_name && *c->cluster_name)
				name = strdup(c->cluster_name);
			slurm_free_ctl_conf(c);
		}
	}
#endif
	return name;
}

int lwm2_cmd_time_opt(const char *cmd, const char *arg, int64_t *out)
{
	if (lwm2_time_arg(arg, out) == 0)
		return 0;
	lwm2_log_error("%s: couldn't parse time \"%s\"", cmd, arg);
	return -1;
}
