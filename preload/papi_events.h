/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Which hardware events the counter module measures: the roles the record
 * has slots for (hwc_*), the default candidate events per role, the
 * LWM2_EVENTS syntax that changes them, and the fitting of candidates onto
 * the platform.  Pure logic, no PAPI: the platform is a callback, so the
 * selection is unit-tested on known inputs (test/papi_events.c).
 *
 * LWM2_EVENTS is a comma-separated list of items:
 *   role=EV1|EV2   candidates for a role, tried in order (replaces defaults)
 *   role=          leave the role out (also role=none)
 *   EVENT          a PAPI preset with an obvious role (PAPI_TOT_CYC, ...)
 *   none | off     no hardware counters at all
 * Roles not named keep their default candidates.
 */
#ifndef LWM2_PAPI_EVENTS_H
#define LWM2_PAPI_EVENTS_H

#include <stdbool.h>
#include <stddef.h>

#include "hwc_roles.h"
#include "lwm2_record.h"

#define LWM2_HWC_NAME_LEN 64

struct lwm2_hwc_plan {
	bool off;                    /* "none": no counters at all */
	bool named[LWM2_HWC_NROLES]; /* candidates from LWM2_EVENTS, not defaults */
	unsigned ncand[LWM2_HWC_NROLES];
	char cand[LWM2_HWC_NROLES][LWM2_HWC_MAX_CAND][LWM2_HWC_NAME_LEN];
};

/* What the platform says about one candidate. */
enum lwm2_hwc_verdict {
	LWM2_HWC_ACCEPTED = 0, /* counted together with those accepted before */
	LWM2_HWC_ABSENT,       /* no such event here */
	LWM2_HWC_CONFLICT,     /* exists, but not together with the others */
};

/* Why a role ended without an event. */
enum lwm2_hwc_why {
	LWM2_HWC_WHY_CHOSEN = 0,
	LWM2_HWC_WHY_LEFT_OUT,  /* no candidates (LWM2_EVENTS left it out) */
	LWM2_HWC_WHY_NOT_ASKED, /* a role without defaults that nobody named */
	LWM2_HWC_WHY_ABSENT,    /* no candidate exists on the platform */
	LWM2_HWC_WHY_CONFLICT,  /* some exist but do not fit with the others */
};

struct lwm2_hwc_choice {
	int cand[LWM2_HWC_NROLES]; /* index into plan->cand, -1: none */
	enum lwm2_hwc_why why[LWM2_HWC_NROLES];
	unsigned nchosen;
};

typedef enum lwm2_hwc_verdict (*lwm2_hwc_try_fn)(void *ctx, enum lwm2_hwc_role role,
                                                 const char *event);

/* Role name as LWM2_EVENTS writes it ("cycles", ...); NULL if out of range. */
const char *lwm2_hwc_role_name(enum lwm2_hwc_role role);

/* The record counter a role fills. */
enum lwm2_counter lwm2_hwc_role_counter(enum lwm2_hwc_role role);

/* The defaults (no LWM2_EVENTS). */
void lwm2_hwc_plan_defaults(struct lwm2_hwc_plan *p);

/*
 * Parse spec (NULL or empty: the defaults) into p.  Returns 0, or -1 with
 * a short reason in err; p then holds the defaults, but the caller should
 * measure nothing: a user who mistyped the list wants to hear about it, not
 * get other counters silently.
 */
int lwm2_hwc_plan_parse(struct lwm2_hwc_plan *p, const char *spec, char *err, size_t errlen);

/*
 * True when every candidate of the plan is a hardware event: a PAPI preset
 * or one of the defaults (so true for the defaults and for a plan that
 * names no event).  Such a plan cannot count anything where the kernel has
 * no hardware events, and PAPI need not even be loaded to learn that.
 */
bool lwm2_hwc_plan_hardware_only(const struct lwm2_hwc_plan *p);

/* Fit the plan: per role in order, the first candidate try accepts. */
void lwm2_hwc_select(const struct lwm2_hwc_plan *p, lwm2_hwc_try_fn try_fn, void *ctx,
                     struct lwm2_hwc_choice *out);

/*
 * The reason the record gives when nothing was chosen (returns true and
 * fills buf), or false when at least one role is measured.
 */
bool lwm2_hwc_none_reason(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c, char *buf,
                          size_t len);

/*
 * Whether name is one of the kernel's generic software events as libpfm
 * names them (perf::TASK-CLOCK, perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES,
 * ... and their perf::PERF_COUNT_SW_* spellings); *config is then its
 * PERF_COUNT_SW_* number.  The kernel counts these itself, without a PMU.
 */
bool lwm2_hwc_software_event(const char *name, unsigned long long *config);

/*
 * When a role named in LWM2_EVENTS got none of its candidates because they
 * do not exist here, "event EV not available: why" (EV its first
 * candidate; "event EV and N more not available" when other named roles
 * lack theirs too) in buf, and true.  False when every named role is
 * measured or left out.
 */
bool lwm2_hwc_unavailable_text(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c,
                               const char *why, char *buf, size_t len);

/*
 * The record's hwc_events: "role=EVENT" for each role that got an event,
 * in the roles' order, separated by spaces ("cycles=PAPI_TOT_CYC
 * fp_ops=PAPI_FP_INS"), cut before an item that would not fit; "" when
 * no role is measured.  Returns the length.
 */
size_t lwm2_hwc_events_text(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c,
                            char *buf, size_t len);

/* A short list of the roles not measured and why ("fp_ops: not on this
 * platform; llc_misses: does not fit"), for debug output; "" if none. */
void lwm2_hwc_partial_text(const struct lwm2_hwc_choice *c, char *buf, size_t len);

#endif /* LWM2_PAPI_EVENTS_H */
