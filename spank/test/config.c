/* SPDX-License-Identifier: GPL-2.0-or-later */
/* plugstack.conf argument parsing: every key, every kind of bad value. */
#include <string.h>

#include "lwm2_spank.h"
#include "tap.h"

struct row {
	const char *args[4]; /* NULL-terminated */
	int rc;
	const char *err_has; /* substring of the error (the key must be named) */
};

static const struct row rows[] = {
    {{NULL}, 0, NULL},
    {{"default=off", NULL}, 0, NULL},
    {{"default=print", "optout=no", NULL}, 0, NULL},
    {{"default=maybe", NULL}, -1, "default: 'maybe' is not one of on, off, print"},
    {{"optout=perhaps", NULL}, -1, "optout:"},
    {{"lib=relative/liblwm2.so", NULL}, -1, "lib: 'relative/liblwm2.so' is not an absolute"},
    {{"lib=/a:b/liblwm2.so", NULL}, -1, "lib:"},
    {{"basedir=/run/lwm2/", NULL}, 0, NULL},
    {{"spool=", NULL}, -1, "spool:"},
    {{"slice=0", NULL}, -1, "slice: 0 is out of range"},
    {{"slice=10s", NULL}, -1, "slice: '10s' is not a number"},
    {{"slice=-5", NULL}, -1, "slice:"},
    {{"slice=99999999999999999999999", NULL}, -1, "slice:"},
    {{"slice=30", NULL}, 0, NULL},
    {{"events=PAPI_TOT_CYC,PAPI_TOT_INS", NULL}, 0, NULL},
    {{"events=a;rm -rf", NULL}, -1, "events: character ';'"},
    {{"events=a,,b", NULL}, -1, "events:"},
    {{"print=srun", NULL}, 0, NULL},
    {{"print=batch,srun", NULL}, 0, NULL},
    {{"print=stdout", NULL}, -1, "print: 'stdout'"},
    {{"keep=yes", NULL}, 0, NULL},
    {{"sample_hz=0", NULL}, -1, "sample_hz: 0 is out of range"},
    {{"sample_hz=1", NULL}, 0, NULL},
    {{"sample_hz=1000000", NULL}, -1, "sample_hz:"},
    {{"cluster=my-cluster_1", NULL}, 0, NULL},
    {{"cluster=../etc", NULL}, -1, "cluster:"},
    {{"nosuchkey=1", NULL}, -1, "nosuchkey: unknown key"},
    {{"default", NULL}, -1, "argument 'default' is not key=value"},
    {{"=on", NULL}, -1, "is not key=value"},
    {{"slice=30", "bogus=1", NULL}, -1, "bogus: unknown key"},
};

int main(void)
{
	struct lwm2_config c, d;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char *av[4];
		int ac = 0, rc;
		char desc[256] = "";

		for (ac = 0; r->args[ac]; ac++) {
			av[ac] = (char *)r->args[ac];
			strncat(desc, r->args[ac], sizeof(desc) - strlen(desc) - 2);
			strcat(desc, " ");
		}
		lwm2_config_defaults(&c);
		err[0] = '\0';
		rc = lwm2_config_parse(&c, ac, av, err, sizeof(err));
		is_int(rc, r->rc, "parse [%s] returns %d", desc, r->rc);
		if (r->err_has &&
		    !ok(strstr(err, r->err_has) != NULL, "error names the key: %s", err))
			diag("  want a message holding \"%s\"", r->err_has);
		if (rc < 0) {
			lwm2_config_defaults(&d);
			ok(!memcmp(&c, &d, sizeof(c)), "a failed parse leaves the defaults");
		}
	}

	/* Values land where they belong. */
	{
		char *av[] = {
		    "default=print",          "optout=no",          "lib=/opt/lwm2/lib/liblwm2.so",
		    "basedir=/dev/shm/lwm2/", "spool=/shared/lwm2", "slice=15",
		    "events=PAPI_L1_DCM",     "print=batch",        "keep=yes",
		    "sample_hz=250",          "cluster=hopsa"};

		lwm2_config_defaults(&c);
		is_int(lwm2_config_parse(&c, 11, av, err, sizeof(err)), 0, "full argument list");
		is_int(c.mode, LWM2_MODE_PRINT, "default=print");
		is_int(c.optout, 0, "optout=no");
		is_str(c.lib, "/opt/lwm2/lib/liblwm2.so", "lib");
		is_str(c.basedir, "/dev/shm/lwm2", "basedir without its trailing slash");
		is_str(c.spool, "/shared/lwm2", "spool");
		is_int(c.slice, 15, "slice");
		is_str(c.events, "PAPI_L1_DCM", "events");
		is_int(c.print, LWM2_PRINT_BATCH, "print=batch");
		is_int(c.keep, 1, "keep=yes");
		is_int(c.sample_hz, 250, "sample_hz");
		is_str(c.cluster, "hopsa", "cluster");
	}

	/* Defaults. */
	lwm2_config_defaults(&c);
	is_int(c.mode, LWM2_MODE_ON, "default mode is on");
	is_int(c.optout, 1, "users may opt out by default");
	is_str(c.basedir, "/run/lwm2", "default basedir is root-only /run/lwm2");
	ok(strstr(c.lib, "/liblwm2.so") != NULL, "default lib is the installed liblwm2.so");
	is_int(c.sample_hz, -1, "sample rate left to the library");

	/* The user's option values share the parsers. */
	{
		enum lwm2_mode m;
		unsigned s;

		is_int(lwm2_parse_mode(NULL, &m, err, sizeof(err)), 0, "--lwm2 alone");
		is_int(m, LWM2_MODE_ON, "--lwm2 alone means on");
		is_int(lwm2_parse_mode("", &m, err, sizeof(err)), 0, "--lwm2 from sbatch's env");
		is_int(m, LWM2_MODE_ON, "empty means on");
		is_int(lwm2_parse_mode("Off", &m, err, sizeof(err)), -1, "modes are lower case");
		is_int(lwm2_parse_slice("3600", &s, err, sizeof(err)), 0, "an hour is a slice");
		is_int(lwm2_parse_slice("3601", &s, err, sizeof(err)), -1, "longer is not");
	}
	return done_testing();
}
