/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's special step ids by name, any other id as its number. */
#include "stepname.h"
#include "tap.h"

int main(void)
{
	char b[32];

	is_str(lwm2_step_name(0xfffffffbLL, b, sizeof(b)), "batch", "the batch script's step");
	is_str(lwm2_step_name(0xfffffffcLL, b, sizeof(b)), "extern", "the extern container");
	is_str(lwm2_step_name(0xfffffffaLL, b, sizeof(b)), "interactive", "the interactive step");
	is_str(lwm2_step_name(7, b, sizeof(b)), "7", "an ordinary step is its number");
	ok(lwm2_step_name(7, b, sizeof(b)) == b, "written into the caller's buffer");
	is_str(lwm2_step_name(0xfffffffdLL, b, sizeof(b)), "4294967293",
	       "an id Slurm does not name is a number too");
	return done_testing();
}
