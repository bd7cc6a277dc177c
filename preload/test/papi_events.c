/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LWM2_EVENTS parsing and the fitting of candidates on made-up platforms. */
#include "papi_events.h"
#include "tap.h"

#include <string.h>

/* A platform: which events exist and how many fit at once. */
struct fake {
	const char *const *exists;
	unsigned capacity, used;
	char tried[64][LWM2_HWC_NAME_LEN];
	unsigned ntried;
};

static enum lwm2_hwc_verdict fake_try(void *ctx, enum lwm2_hwc_role role, const char *ev)
{
	struct fake *f = ctx;

	(void)role;
	if (f->ntried < 64)
		snprintf(f->tried[f->ntried++], LWM2_HWC_NAME_LEN, "%s", ev);
	for (const char *const *e = f->exists; *e; e++)
		if (strcmp(*e, ev) == 0) {
			if (f->used >= f->capacity)
				return LWM2_HWC_CONFLICT;
			f->used++;
			return LWM2_HWC_ACCEPTED;
		}
	return LWM2_HWC_ABSENT;
}

static const char *chosen(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c, int r)
{
	return c->cand[r] >= 0 ? p->cand[r][c->cand[r]] : "-";
}

static void test_parse(void)
{
	struct lwm2_hwc_plan p;
	char err[80];

	ok(lwm2_hwc_plan_parse(&p, NULL, err, sizeof(err)) == 0 && !p.off, "unset: defaults");
	is_str(p.cand[LWM2_HWC_CYCLES][0], "PAPI_TOT_CYC", "default cycles is the preset");
	ok(p.ncand[LWM2_HWC_LLC_MISSES] == 3, "llc has three default candidates");

	ok(lwm2_hwc_plan_parse(&p, "  none ", err, sizeof(err)) == 0 && p.off, "none: off");
	ok(lwm2_hwc_plan_parse(&p, "OFF", err, sizeof(err)) == 0 && p.off, "OFF: off");

	ok(lwm2_hwc_plan_parse(&p, "cycles=perf::TASK-CLOCK", err, sizeof(err)) == 0,
	   "role=event parses");
	is_int(p.ncand[LWM2_HWC_CYCLES], 1, "role=event replaces the defaults");
	is_str(p.cand[LWM2_HWC_CYCLES][0], "perf::TASK-CLOCK", "the named event");
	is_int(p.ncand[LWM2_HWC_INSTRUCTIONS], 2, "other roles keep their defaults");
	is_int(p.ncand[LWM2_HWC_LOADS], 0, "a role without defaults has no candidates");

	ok(lwm2_hwc_plan_parse(&p, "loads=PAPI_LD_INS,PAPI_SR_INS,tlb_misses=perf::PAGE-FAULTS",
	                       err, sizeof(err)) == 0 &&
	       !strcmp(p.cand[LWM2_HWC_LOADS][0], "PAPI_LD_INS") &&
	       !strcmp(p.cand[LWM2_HWC_STORES][0], "PAPI_SR_INS") &&
	       !strcmp(p.cand[LWM2_HWC_TLB_MISSES][0], "perf::PAGE-FAULTS") &&
	       p.ncand[LWM2_HWC_CYCLES] == 2,
	   "the named roles: role=event, a bare preset of the role, the defaults kept: %s", err);

	ok(lwm2_hwc_plan_parse(&p, "llc_misses = PAPI_L2_TCM | X::Y ,fp_ops=, hwc_l1d_misses=none",
	                       err, sizeof(err)) == 0,
	   "alternatives, blanks, record names and dropped roles");
	is_int(p.ncand[LWM2_HWC_LLC_MISSES], 2, "two alternatives");
	is_str(p.cand[LWM2_HWC_LLC_MISSES][1], "X::Y", "second alternative trimmed");
	is_int(p.ncand[LWM2_HWC_FP_OPS], 0, "role= drops the role");
	is_int(p.ncand[LWM2_HWC_L1D_MISSES], 0, "role=none drops the role");

	ok(lwm2_hwc_plan_parse(&p, "PAPI_TOT_INS,PAPI_L2_TCM,PAPI_L3_TCM", err, sizeof(err)) == 0,
	   "bare presets");
	is_int(p.ncand[LWM2_HWC_INSTRUCTIONS], 1, "bare preset replaces the defaults");
	is_int(p.ncand[LWM2_HWC_LLC_MISSES], 2, "second bare preset of a role is an alternative");
	is_str(p.cand[LWM2_HWC_LLC_MISSES][0], "PAPI_L2_TCM", "in the order given");

	ok(lwm2_hwc_plan_parse(&p, "perf::CYCLES", err, sizeof(err)) == -1, "bare native rejected");
	ok(strstr(err, "role=") != NULL, "the reason tells how to write it: %s", err);
	ok(lwm2_hwc_plan_parse(&p, "bogus=PAPI_TOT_CYC", err, sizeof(err)) == -1 &&
	       strstr(err, "unknown role") != NULL,
	   "unknown role rejected: %s", err);
	ok(lwm2_hwc_plan_parse(&p, "cycles=A,cycles=B", err, sizeof(err)) == -1,
	   "a role named twice is rejected");
	ok(lwm2_hwc_plan_parse(&p, "cycles=A|", err, sizeof(err)) == -1, "empty alternative");
	ok(lwm2_hwc_plan_parse(&p, "cycles=A|B|C|D|E|F|G", err, sizeof(err)) == -1,
	   "too many alternatives");
	ok(p.ncand[LWM2_HWC_CYCLES] == 2 && !p.off, "after an error the plan is the defaults");
	ok(lwm2_hwc_plan_parse(&p, ",, ,", err, sizeof(err)) == 0 && !p.off, "empty items");
}

static void test_select(void)
{
	struct lwm2_hwc_plan p;
	struct lwm2_hwc_choice c;
	char why[LWM2_REASON_LEN], part[200];
	char err[80];

	/* An Intel-like platform with presets and 4 counters. */
	static const char *const intel[] = {
	    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_FP_OPS", "PAPI_L1_DCM",
	    "PAPI_L1_DCA",  "PAPI_L3_TCM",  NULL};
	struct fake f = {.exists = intel, .capacity = 4};

	lwm2_hwc_plan_defaults(&p);
	lwm2_hwc_select(&p, fake_try, &f, &c);
	is_int(c.nchosen, 4, "four fit");
	{
		char ev[LWM2_HWC_EVENTS_LEN], tiny[40];

		lwm2_hwc_events_text(&p, &c, ev, sizeof(ev));
		is_str(ev,
		       "cycles=PAPI_TOT_CYC instructions=PAPI_TOT_INS fp_ops=PAPI_FP_OPS "
		       "l1d_misses=PAPI_L1_DCM",
		       "the record's events: the one each role got, the roles without none");
		lwm2_hwc_events_text(&p, &c, tiny, sizeof(tiny));
		is_str(tiny, "cycles=PAPI_TOT_CYC", "cut before an item that does not fit");
	}
	is_str(chosen(&p, &c, LWM2_HWC_CYCLES), "PAPI_TOT_CYC", "cycles first");
	is_str(chosen(&p, &c, LWM2_HWC_FP_OPS), "PAPI_FP_OPS", "FP: falls back to PAPI_FP_OPS");
	is_str(chosen(&p, &c, LWM2_HWC_L1D_ACCESSES), "-", "L1 accesses do not fit");
	is_int(c.why[LWM2_HWC_L1D_ACCESSES], LWM2_HWC_WHY_CONFLICT, "and the reason is conflict");
	is_int(c.why[LWM2_HWC_LLC_MISSES], LWM2_HWC_WHY_CONFLICT, "LLC too");
	ok(!lwm2_hwc_none_reason(&p, &c, why, sizeof(why)), "partial is not 'none'");
	lwm2_hwc_partial_text(&c, part, sizeof(part));
	is_str(part, "l1d_accesses: does not fit; llc_misses: does not fit", "partial text");

	/* Kernel generic events only (no PAPI presets). */
	static const char *const generic[] = {"perf::CYCLES", "perf::INSTRUCTIONS",
	                                      "perf::LLC-LOAD-MISSES", NULL};
	struct fake g = {.exists = generic, .capacity = 6};

	lwm2_hwc_select(&p, fake_try, &g, &c);
	is_str(chosen(&p, &c, LWM2_HWC_CYCLES), "perf::CYCLES", "generic cycles");
	is_str(chosen(&p, &c, LWM2_HWC_LLC_MISSES), "perf::LLC-LOAD-MISSES",
	       "kernel LLC event before PAPI_L2_TCM");
	is_int(c.why[LWM2_HWC_FP_OPS], LWM2_HWC_WHY_ABSENT, "FP absent");
	is_str(g.tried[0], "PAPI_TOT_CYC", "presets are tried first");
	is_str(g.tried[1], "perf::CYCLES", "then the generic event");

	/* No counters at all (a VM). */
	static const char *const nothing[] = {NULL};
	struct fake n = {.exists = nothing, .capacity = 6};

	lwm2_hwc_select(&p, fake_try, &n, &c);
	is_int(c.nchosen, 0, "nothing chosen on a platform without counters");
	ok(lwm2_hwc_none_reason(&p, &c, why, sizeof(why)), "none reason given");
	is_str(why, "no hardware counters on this platform", "plain reason");

	/* Counters exist but someone holds them all. */
	struct fake busy = {.exists = intel, .capacity = 0};
	lwm2_hwc_select(&p, fake_try, &busy, &c);
	ok(lwm2_hwc_none_reason(&p, &c, why, sizeof(why)), "busy: none");
	is_str(why, "the hardware counters are busy", "busy reason");

	/* Off. */
	lwm2_hwc_plan_parse(&p, "none", err, sizeof(err));
	n.ntried = 0;
	lwm2_hwc_select(&p, fake_try, &n, &c);
	is_int(n.ntried, 0, "off: nothing is tried");
	ok(lwm2_hwc_none_reason(&p, &c, why, sizeof(why)) && strstr(why, "switched off"),
	   "off reason: %s", why);

	/* A software event in the cycles role, everything else left out. */
	static const char *const soft[] = {"perf::TASK-CLOCK", NULL};
	struct fake s = {.exists = soft, .capacity = 6};
	lwm2_hwc_plan_parse(&p,
	                    "cycles=perf::TASK-CLOCK,instructions=,fp_ops=,l1d_misses=,"
	                    "l1d_accesses=,llc_misses=",
	                    err, sizeof(err));
	lwm2_hwc_select(&p, fake_try, &s, &c);
	is_int(c.nchosen, 1, "one role chosen");
	is_int(s.ntried, 1, "left-out roles are not tried");
	is_int(c.why[LWM2_HWC_LLC_MISSES], LWM2_HWC_WHY_LEFT_OUT, "left out");
	{
		char ev[LWM2_HWC_EVENTS_LEN];

		lwm2_hwc_events_text(&p, &c, ev, sizeof(ev));
		is_str(ev, "cycles=perf::TASK-CLOCK", "the record says what filled the role");
	}
	{
		struct lwm2_hwc_choice none;
		char ev[8];

		for (int r = 0; r < LWM2_HWC_NROLES; r++)
			none.cand[r] = -1;
		is_int(lwm2_hwc_events_text(&p, &none, ev, sizeof(ev)), 0,
		       "no role measured: no events");
	}
	ok(lwm2_hwc_event_is_role(LWM2_HWC_LLC_MISSES, "PAPI_L2_TCM") &&
	       lwm2_hwc_event_is_role(LWM2_HWC_CYCLES, "perf::CYCLES") &&
	       !lwm2_hwc_event_is_role(LWM2_HWC_FP_OPS, "perf::TASK-CLOCK") &&
	       !lwm2_hwc_event_is_role(LWM2_HWC_CYCLES, "PAPI_TOT_INS"),
	   "what a role counts by its name: its defaults and presets, nothing else");
}

/* Which plans may skip loading PAPI where the kernel has no hardware events. */
static void test_hardware_only(void)
{
	struct lwm2_hwc_plan p;
	char err[80];

	lwm2_hwc_plan_parse(&p, NULL, err, sizeof(err));
	ok(lwm2_hwc_plan_hardware_only(&p), "the defaults are hardware only");
	lwm2_hwc_plan_parse(&p, "fp_ops=,llc_misses=PAPI_L2_TCM|perf::CYCLES", err, sizeof(err));
	ok(lwm2_hwc_plan_hardware_only(&p), "presets and default events are hardware only");
	lwm2_hwc_plan_parse(&p, "cycles=perf::TASK-CLOCK", err, sizeof(err));
	ok(!lwm2_hwc_plan_hardware_only(&p), "a software event is not");
	lwm2_hwc_plan_parse(&p, "llc_misses=PAPI_L3_TCM|amd64_fam17h::RETIRED_INSTRUCTIONS", err,
	                    sizeof(err));
	ok(!lwm2_hwc_plan_hardware_only(&p), "a native event is named: PAPI decides");
	lwm2_hwc_plan_parse(
	    &p, "cycles=,instructions=,fp_ops=,l1d_misses=,l1d_accesses=,llc_misses=", err,
	    sizeof(err));
	ok(lwm2_hwc_plan_hardware_only(&p), "no event at all needs no PAPI");
}

static void test_software(void)
{
	unsigned long long cfg = 99;

	ok(lwm2_hwc_software_event("perf::TASK-CLOCK", &cfg) && cfg == 1,
	   "task clock is software 1");
	ok(lwm2_hwc_software_event("perf::page-faults", &cfg) && cfg == 2, "page faults, any case");
	ok(lwm2_hwc_software_event("perf::CS", &cfg) && cfg == 3, "CS is context switches");
	ok(lwm2_hwc_software_event("perf::PERF_COUNT_SW_PAGE_FAULTS_MAJ", &cfg) && cfg == 6,
	   "libpfm's long name");
	ok(!lwm2_hwc_software_event("perf::CYCLES", &cfg), "cycles need a PMU");
	ok(!lwm2_hwc_software_event("TASK-CLOCK", &cfg), "only libpfm's perf:: names");
	ok(!lwm2_hwc_software_event("perf::TASK-CLOCK:u", &cfg), "no modifiers");
	ok(!lwm2_hwc_software_event("perf::PERF_COUNT_SW_DUMMY", &cfg), "dummy counts nothing");
}

static void test_unavailable(void)
{
	static const char *const none[] = {NULL};
	static const char *const clock[] = {"perf::TASK-CLOCK", NULL};
	struct fake f = {.exists = none, .capacity = 4};
	struct lwm2_hwc_plan p;
	struct lwm2_hwc_choice c;
	char err[80], buf[LWM2_REASON_LEN];
	const char *why = "PAPI perf_event component disabled (no PMU)";

	lwm2_hwc_plan_parse(&p, "cycles=perf::TASK-CLOCK|perf::CPU-CLOCK,instructions=", err,
	                    sizeof(err));
	lwm2_hwc_select(&p, fake_try, &f, &c);
	ok(lwm2_hwc_unavailable_text(&p, &c, why, buf, sizeof(buf)), "a named event is missing");
	is_str(buf,
	       "event perf::TASK-CLOCK not available: PAPI perf_event component disabled (no PMU)",
	       "the reason names it and says why");

	lwm2_hwc_plan_parse(&p, "cycles=PAPI_TOT_CYC,PAPI_TOT_INS,fp_ops=", err, sizeof(err));
	f = (struct fake){.exists = none, .capacity = 4};
	lwm2_hwc_select(&p, fake_try, &f, &c);
	lwm2_hwc_unavailable_text(&p, &c, "no such event on this node", buf, sizeof(buf));
	is_str(buf, "event PAPI_TOT_CYC and 1 more not available: no such event on this node",
	       "several: the first and how many more");

	lwm2_hwc_plan_parse(&p, NULL, err, sizeof(err));
	f = (struct fake){.exists = none, .capacity = 4};
	lwm2_hwc_select(&p, fake_try, &f, &c);
	ok(!lwm2_hwc_unavailable_text(&p, &c, why, buf, sizeof(buf)),
	   "the defaults are not named: the plain reason stays");

	lwm2_hwc_plan_parse(&p, "cycles=perf::TASK-CLOCK,instructions=", err, sizeof(err));
	f = (struct fake){.exists = clock, .capacity = 4};
	lwm2_hwc_select(&p, fake_try, &f, &c);
	ok(!lwm2_hwc_unavailable_text(&p, &c, why, buf, sizeof(buf)),
	   "every named role measured or left out: nothing to say");
}

int main(void)
{
	test_parse();
	test_select();
	test_hardware_only();
	test_software();
	test_unavailable();
	is_int(lwm2_hwc_role_counter(LWM2_HWC_FP_OPS), LWM2_C_hwc_fp_ops, "role to counter");
	is_str(lwm2_hwc_role_name(LWM2_HWC_L1D_ACCESSES), "l1d_accesses", "role name");
	ok(lwm2_hwc_role_name(LWM2_HWC_NROLES) == NULL, "out of range");
	return done_testing();
}
