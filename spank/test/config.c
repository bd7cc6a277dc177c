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
    {{"default=light", NULL}, 0, NULL},
    {{"default=maybe", NULL}, -1, "default: 'maybe' is not one of on, off, light, print"},
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
    /* the site's rules of who is measured */
    {{"off.partition=debug,interactive", "on.account=chem", NULL}, 0, NULL},
    {{"off.user=alice.b,svc@ad", "on.qos=long", NULL}, 0, NULL},
    {{"off.nodes=n[1-4,7],gpu01", NULL}, 0, NULL},
    {{"on.nodes=n1", NULL}, -1, "on.nodes: unknown key"},
    {{"off.group=x", NULL}, -1, "off.group: unknown key"},
    {{"off.user=", NULL}, -1, "off.user: the list is empty"},
    {{"off.user=a,,b", NULL}, -1, "off.user: 'a,,b' has an empty name"},
    {{"on.account=chem,", NULL}, -1, "on.account:"},
    {{"off.account=a b", NULL}, -1, "off.account: character ' '"},
    {{"off.partition=x;id", NULL}, -1, "off.partition: character ';'"},
    {{"off.nodes=n1 n2", NULL}, -1, "off.nodes: character ' '"},
    {{"on.user=bob,carol", "off.user=dave,carol", NULL},
     -1,
     "on.user: 'carol' is also in off.user"},
    /* the default rank subset */
    {{"ranks=0,5-7,last", NULL}, 0, NULL},
    {{"ranks=first,last", NULL}, 0, NULL},
    {{"ranks=random:4", NULL}, 0, NULL},
    {{"ranks=random:0", NULL}, -1, "ranks: 'random:0': random:N wants N from 1"},
    {{"ranks=random:x", NULL}, -1, "ranks:"},
    {{"ranks=7-5", NULL}, -1, "ranks: '7-5' is not a rank, a range A-B, first or last"},
    {{"ranks=0,", NULL}, -1, "ranks: '0,' ends with a comma"},
    {{"ranks=0,,1", NULL}, -1, "ranks: '' is not a rank"},
    {{"ranks=-1", NULL}, -1, "ranks: '-1' is not a rank"},
    {{"ranks=4294967295", NULL}, -1, "ranks:"},
    {{"ranks=", NULL}, -1, "ranks: the rank subset is empty"},
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

	/* Which rule decides: the most specific scope that names the job. */
	{
		static const struct {
			const char *args[4];
			const char *user, *account, *qos, *partition;
			enum lwm2_mode mode;
			const char *why;
		} pol[] = {
		    {{NULL}, "u", "a", "q", "p", LWM2_MODE_ON, "default=on"},
		    {{"default=off", NULL}, "u", "a", "q", "p", LWM2_MODE_OFF, "default=off"},
		    {{"off.partition=p", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_OFF,
		     "off.partition=p"},
		    {{"off.partition=p", "on.account=a", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_ON,
		     "on.account=a"},
		    {{"off.partition=p", "on.account=a", NULL},
		     "u",
		     "b",
		     "q",
		     "p",
		     LWM2_MODE_OFF,
		     "off.partition=p"},
		    {{"on.account=a", "off.user=u", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_OFF,
		     "off.user=u"},
		    {{"default=off", "on.qos=q", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_ON,
		     "on.qos=q"},
		    {{"default=print", "on.qos=q", "off.partition=p", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_PRINT,
		     "on.qos=q"},
		    /* on.SCOPE measures as default= measures */
		    {{"default=light", "on.qos=q", "off.partition=p", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_LIGHT,
		     "on.qos=q"},
		    {{"default=light", "off.partition=p", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_OFF,
		     "off.partition=p"},
		    {{"default=light", NULL}, "u", "a", "q", "p", LWM2_MODE_LIGHT, "default=light"},
		    {{"off.account=ab", NULL}, "u", "a", "q", "p", LWM2_MODE_ON, "default=on"},
		    {{"off.account=a", NULL}, "u", "abc", "q", "p", LWM2_MODE_ON, "default=on"},
		    {{"off.account=x,a,y", NULL},
		     "u",
		     "a",
		     "q",
		     "p",
		     LWM2_MODE_OFF,
		     "off.account=a"},
		    /* a job the environment names nothing: the default */
		    {{"off.account=a", "off.partition=p", NULL},
		     "u",
		     "",
		     NULL,
		     NULL,
		     LWM2_MODE_ON,
		     "default=on"},
		};

		for (i = 0; i < sizeof(pol) / sizeof(pol[0]); i++) {
			char *av[4], why[128] = "";
			int ac;
			struct lwm2_job_names j = {{0}};

			for (ac = 0; pol[i].args[ac]; ac++)
				av[ac] = (char *)pol[i].args[ac];
			lwm2_config_defaults(&c);
			if (lwm2_config_parse(&c, ac, av, err, sizeof(err)) < 0) {
				ok(0, "policy row %zu parses: %s", i, err);
				continue;
			}
			j.name[LWM2_POLICY_USER] = pol[i].user;
			j.name[LWM2_POLICY_ACCOUNT] = pol[i].account;
			j.name[LWM2_POLICY_QOS] = pol[i].qos;
			j.name[LWM2_POLICY_PARTITION] = pol[i].partition;
			is_int(lwm2_policy_mode(&c, &j, why, sizeof(why)), pol[i].mode,
			       "policy row %zu: mode %s", i, lwm2_mode_name(pol[i].mode));
			is_str(why, pol[i].why, "policy row %zu: the rule that decided", i);
		}
		lwm2_config_defaults(&c);
		is_int(lwm2_policy_mode(&c, NULL, NULL, 0), LWM2_MODE_ON,
		       "no job names, no why: the default");
	}

	/* Which ranks a subset measures. */
	{
		const uint32_t node[] = {7, 0, 5, 15, 6, 3};
		bool sel[6];
		size_t n = sizeof(node) / sizeof(node[0]), got, total = 0;
		char picked[64] = "";

		got = lwm2_ranks_select("", 16, 1, node, n, sel);
		is_int((int)got, 6, "no subset: every task measured");
		got = lwm2_ranks_select("0,5-6,last", 16, 1, node, n, sel);
		for (i = 0; i < n; i++)
			if (sel[i])
				snprintf(picked + strlen(picked), sizeof(picked) - strlen(picked),
				         "%u ", node[i]);
		is_int((int)got, 4, "0,5-6,last: four of this node's tasks");
		is_str(picked, "0 5 15 6 ", "0,5-6,last: ranks 0, 5, 6 and the last (15)");
		got = lwm2_ranks_select("first,last", 1, 1, (const uint32_t[]){0}, 1, sel);
		is_int((int)got, 1, "first,last of a one-task step: the one task, once");
		/* random:N over a step spread on four nodes: N in all, the same
		 * draw on each node (the seed is the job and step) */
		for (uint32_t nodeid = 0; nodeid < 4; nodeid++) {
			uint32_t ranks[4];
			bool s4[4];

			for (uint32_t k = 0; k < 4; k++)
				ranks[k] = nodeid * 4 + k;
			total += lwm2_ranks_select("random:5", 16, 42, ranks, 4, s4);
		}
		is_int((int)total, 5, "random:5 over 16 ranks on 4 nodes: 5 measured in all");
		total = 0;
		for (uint32_t r = 0; r < 16; r++) {
			bool a, b;

			lwm2_ranks_select("random:5", 16, 42, &r, 1, &a);
			lwm2_ranks_select("random:5", 16, 43, &r, 1, &b);
			total += a != b;
		}
		ok(total > 0, "another job or step draws other ranks (%zu of 16 differ)", total);
		got = lwm2_ranks_select("random:99", 16, 42, node, n, sel);
		is_int((int)got, 6, "random:N beyond the step's tasks: every task");
	}

	/* The user's option values share the parsers. */
	{
		enum lwm2_mode m;
		unsigned s;

		is_int(lwm2_parse_mode(NULL, &m, err, sizeof(err)), 0, "--lwm2 alone");
		is_int(m, LWM2_MODE_ON, "--lwm2 alone means on");
		is_int(lwm2_parse_mode("", &m, err, sizeof(err)), 0, "--lwm2 from sbatch's env");
		is_int(m, LWM2_MODE_ON, "empty means on");
		is_int(lwm2_parse_mode("Off", &m, err, sizeof(err)), -1, "modes are lower case");
		is_int(lwm2_parse_mode("light", &m, err, sizeof(err)), 0, "--lwm2=light");
		is_str(lwm2_mode_name(m), "light", "light is named light");
		is_int(lwm2_parse_slice("3600", &s, err, sizeof(err)), 0, "an hour is a slice");
		is_int(lwm2_parse_slice("3601", &s, err, sizeof(err)), -1, "longer is not");
	}
	return done_testing();
}
