/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allocation's options inside it: the variable's name, where a value
 * came from, and what each form of --lwm2 means from each origin. */
#include <stdlib.h>
#include <string.h>

#include "lwm2_spank.h"
#include "tap.h"

/* What --lwm2's value means: a mode, or refused (-1). */
struct mode_row {
	enum lwm2_opt_origin origin;
	const char *arg;
	int mode;
};

static const struct mode_row mode_rows[] = {
    /* typed: --lwm2 alone comes as NULL; "(null)" is a user's text */
    {LWM2_OPT_TYPED, NULL, LWM2_MODE_ON},
    {LWM2_OPT_TYPED, "on", LWM2_MODE_ON},
    {LWM2_OPT_TYPED, "off", LWM2_MODE_OFF},
    {LWM2_OPT_TYPED, "print", LWM2_MODE_PRINT},
    {LWM2_OPT_TYPED, "light", LWM2_MODE_LIGHT},
    {LWM2_OPT_TYPED, "(null)", -1},
    {LWM2_OPT_TYPED, "bogus", -1},
    /* inherited: what sbatch --lwm2 and salloc --lwm2 leave in the job */
    {LWM2_OPT_INHERITED, "(null)", LWM2_MODE_ON},
    {LWM2_OPT_INHERITED, "", LWM2_MODE_ON},
    {LWM2_OPT_INHERITED, "on", LWM2_MODE_ON},
    {LWM2_OPT_INHERITED, "off", LWM2_MODE_OFF},
    {LWM2_OPT_INHERITED, "print", LWM2_MODE_PRINT},
    {LWM2_OPT_INHERITED, "light", LWM2_MODE_LIGHT},
    {LWM2_OPT_INHERITED, "(NULL)", -1},
    {LWM2_OPT_INHERITED, "bogus", -1},
    /* in slurmstepd: srun forwards what it read, "(null)" too */
    {LWM2_OPT_STEP, NULL, LWM2_MODE_ON},
    {LWM2_OPT_STEP, "(null)", LWM2_MODE_ON},
    {LWM2_OPT_STEP, "print", LWM2_MODE_PRINT},
    {LWM2_OPT_STEP, "(null)x", -1},
};

static const char *const origin_names[] = {"typed", "inherited", "step"};

int main(void)
{
	char buf[128], small[40], err[256];
	size_t i;

	ok(lwm2_option_env_name("lwm2", buf, sizeof(buf)) == 0 &&
	       !strcmp(buf, "SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_lwm2"),
	   "env name of --lwm2: %s", buf);
	ok(lwm2_option_env_name("lwm2-slice", buf, sizeof(buf)) == 0 &&
	       !strcmp(buf, "SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_lwm2_slice"),
	   "env name of --lwm2-slice: '-' becomes '_' (%s)", buf);
	ok(lwm2_option_env_name("lwm2.x+y", buf, sizeof(buf)) == 0 &&
	       !strcmp(buf, "SLURM_SPANK__SLURM_SPANK_OPTION_lwm2_lwm2_x_y"),
	   "env name: every character but letters and digits becomes '_' (%s)", buf);
	ok(lwm2_option_env_name("lwm2-events", small, sizeof(small)) < 0,
	   "env name: a buffer too short is an error, not a cut name");

	/* Origin: the environment's own string, not an equal one. */
	{
		char env_block[] = "print", argv_block[] = "print";

		ok(lwm2_option_origin(0, env_block, env_block) == LWM2_OPT_INHERITED,
		   "origin: the environment's string is inherited");
		ok(lwm2_option_origin(0, argv_block, env_block) == LWM2_OPT_TYPED,
		   "origin: an equal string from the command line is typed");
		ok(lwm2_option_origin(0, NULL, env_block) == LWM2_OPT_TYPED,
		   "origin: --lwm2 without a value on the command line is typed");
		ok(lwm2_option_origin(0, argv_block, NULL) == LWM2_OPT_TYPED,
		   "origin: no variable set: typed");
		ok(lwm2_option_origin(1, env_block, env_block) == LWM2_OPT_STEP,
		   "origin: in slurmstepd always the step's");
	}

	for (i = 0; i < sizeof(mode_rows) / sizeof(mode_rows[0]); i++) {
		const struct mode_row *r = &mode_rows[i];
		enum lwm2_mode mode = LWM2_MODE_UNSET;
		int rc =
		    lwm2_parse_mode(lwm2_option_value(r->arg, r->origin), &mode, err, sizeof(err));

		if (r->mode < 0)
			ok(rc < 0 && strstr(err, "is not one of on, off, light, print"),
			   "%s --lwm2=%s: refused (%s)", origin_names[r->origin],
			   r->arg ? r->arg : "<none>", rc < 0 ? err : "accepted");
		else
			ok(rc == 0 && (int)mode == r->mode, "%s --lwm2%s%s: %s",
			   origin_names[r->origin], r->arg ? "=" : "", r->arg ? r->arg : "",
			   lwm2_mode_name((enum lwm2_mode)r->mode));
	}

	/* Only the bare form is passed on as "(null)": other options keep it. */
	{
		unsigned slice = 0;

		ok(lwm2_parse_slice(lwm2_option_value("(null)", LWM2_OPT_INHERITED), &slice, err,
		                    sizeof(err)) < 0,
		   "inherited --lwm2-slice=(null) (an option that needs a value) is refused");
	}
	return done_testing();
}
