/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Event roles, LWM2_EVENTS parsing and fitting (see papi_events.h).  Runs
 * once per process, in the constructor (parse) and in the heartbeat
 * (select): no allocation so it is also safe early in the constructor.
 */
#include "papi_events.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const enum lwm2_counter role_counters[LWM2_HWC_NROLES] = {
    [LWM2_HWC_CYCLES] = LWM2_C_hwc_cycles,
    [LWM2_HWC_INSTRUCTIONS] = LWM2_C_hwc_instructions,
    [LWM2_HWC_FP_OPS] = LWM2_C_hwc_fp_ops,
    [LWM2_HWC_L1D_MISSES] = LWM2_C_hwc_l1d_misses,
    [LWM2_HWC_L1D_ACCESSES] = LWM2_C_hwc_l1d_accesses,
    [LWM2_HWC_LLC_MISSES] = LWM2_C_hwc_llc_misses,
    [LWM2_HWC_INT_OPS] = LWM2_C_hwc_int_ops,
    [LWM2_HWC_LOADS] = LWM2_C_hwc_loads,
    [LWM2_HWC_STORES] = LWM2_C_hwc_stores,
    [LWM2_HWC_L2D_MISSES] = LWM2_C_hwc_l2d_misses,
    [LWM2_HWC_L2D_ACCESSES] = LWM2_C_hwc_l2d_accesses,
    [LWM2_HWC_TLB_MISSES] = LWM2_C_hwc_tlb_misses,
};

const char *lwm2_hwc_role_name(enum lwm2_hwc_role role)
{
	return (unsigned)role < LWM2_HWC_NROLES ? lwm2_hwc_role_names[role] : NULL;
}

enum lwm2_counter lwm2_hwc_role_counter(enum lwm2_hwc_role role)
{
	return role_counters[role];
}

void lwm2_hwc_plan_defaults(struct lwm2_hwc_plan *p)
{
	memset(p, 0, sizeof(*p));
	for (int r = 0; r < LWM2_HWC_NROLES; r++)
		for (int i = 0; i < LWM2_HWC_MAX_CAND && lwm2_hwc_default_events[r][i]; i++) {
			snprintf(p->cand[r][i], LWM2_HWC_NAME_LEN, "%s",
			         lwm2_hwc_default_events[r][i]);
			p->ncand[r] = (unsigned)i + 1;
		}
}

/* [s, e) without surrounding blanks. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t'))
		(*e)--;
}

static bool span_is(const char *s, const char *e, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(e - s) == n && strncasecmp(s, word, n) == 0;
}

static int role_by_name(const char *s, const char *e)
{
	/* The record's own names (hwc_cycles) are accepted too. */
	return lwm2_hwc_role_by_name(s, (size_t)(e - s));
}

static int role_of_preset(const char *s, const char *e)
{
	for (size_t i = 0; i < lwm2_hwc_npresets; i++)
		if (span_is(s, e, lwm2_hwc_presets[i].name))
			return (int)lwm2_hwc_presets[i].role;
	return -1;
}

static int add_cand(struct lwm2_hwc_plan *p, int role, const char *s, const char *e, char *err,
                    size_t errlen)
{
	size_t n = (size_t)(e - s);

	if (n == 0) {
		snprintf(err, errlen, "empty event name for %s", lwm2_hwc_role_names[role]);
		return -1;
	}
	if (n >= LWM2_HWC_NAME_LEN) {
		snprintf(err, errlen, "event name too long: %.20s...", s);
		return -1;
	}
	if (p->ncand[role] >= LWM2_HWC_MAX_CAND) {
		snprintf(err, errlen, "more than %d events for %s", LWM2_HWC_MAX_CAND,
		         lwm2_hwc_role_names[role]);
		return -1;
	}
	memcpy(p->cand[role][p->ncand[role]], s, n);
	p->cand[role][p->ncand[role]][n] = '\0';
	p->ncand[role]++;
	return 0;
}

static int parse_item(struct lwm2_hwc_plan *p, const char *s, const char *e, char *err,
                      size_t errlen)
{
	const char *eq = memchr(s, '=', (size_t)(e - s));
	const char *ks = s, *ke = eq ? eq : e;
	int role;

	trim(&ks, &ke);
	if (!eq) {
		role = role_of_preset(ks, ke);
		if (role < 0) {
			snprintf(err, errlen, "no role for %.*s: write role=%.*s",
			         (int)(ke - ks > 40 ? 40 : ke - ks), ks,
			         (int)(ke - ks > 40 ? 40 : ke - ks), ks);
			return -1;
		}
		/* A bare preset replaces the defaults of its role; a second
		 * one for the same role becomes an alternative. */
		if (!p->named[role]) {
			p->ncand[role] = 0;
			p->named[role] = true;
		}
		return add_cand(p, role, ks, ke, err, errlen);
	}
	role = role_by_name(ks, ke);
	if (role < 0) {
		snprintf(err, errlen, "unknown role %.*s", (int)(ke - ks > 40 ? 40 : ke - ks), ks);
		return -1;
	}
	if (p->named[role]) {
		snprintf(err, errlen, "%s named twice", lwm2_hwc_role_names[role]);
		return -1;
	}
	p->named[role] = true;
	p->ncand[role] = 0;

	const char *v = eq + 1, *ve = e;
	trim(&v, &ve);
	if (v == ve || span_is(v, ve, "none"))
		return 0;
	while (v <= ve) {
		const char *bar = memchr(v, '|', (size_t)(ve - v));
		const char *cs = v, *ce = bar ? bar : ve;

		trim(&cs, &ce);
		if (add_cand(p, role, cs, ce, err, errlen) < 0)
			return -1;
		if (!bar)
			break;
		v = bar + 1;
	}
	return 0;
}

int lwm2_hwc_plan_parse(struct lwm2_hwc_plan *p, const char *spec, char *err, size_t errlen)
{
	const char *s, *e;

	lwm2_hwc_plan_defaults(p);
	if (errlen)
		err[0] = '\0';
	if (!spec)
		return 0;
	s = spec;
	e = spec + strlen(spec);
	trim(&s, &e);
	if (s == e)
		return 0;
	if (span_is(s, e, "none") || span_is(s, e, "off") || span_is(s, e, "0")) {
		p->off = true;
		return 0;
	}
	while (s < e) {
		const char *comma = memchr(s, ',', (size_t)(e - s));
		const char *is = s, *ie = comma ? comma : e;

		trim(&is, &ie);
		if (is < ie && parse_item(p, is, ie, err, errlen) < 0) {
			lwm2_hwc_plan_defaults(p);
			return -1;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	return 0;
}

bool lwm2_hwc_plan_hardware_only(const struct lwm2_hwc_plan *p)
{
	for (int r = 0; r < LWM2_HWC_NROLES; r++)
		for (unsigned i = 0; i < p->ncand[r]; i++) {
			const char *ev = p->cand[r][i];
			bool known = strncmp(ev, "PAPI_", 5) == 0;

			/* The defaults of every role: a role may name another
			 * role's default (l1d_misses=perf::L1-DCACHE-LOADS). */
			for (int d = 0; d < LWM2_HWC_NROLES && !known; d++)
				for (int j = 0; j < LWM2_HWC_MAX_CAND &&
				                lwm2_hwc_default_events[d][j] && !known;
				     j++)
					known = strcmp(ev, lwm2_hwc_default_events[d][j]) == 0;
			if (!known)
				return false;
		}
	return true;
}

void lwm2_hwc_select(const struct lwm2_hwc_plan *p, lwm2_hwc_try_fn try_fn, void *ctx,
                     struct lwm2_hwc_choice *out)
{
	memset(out, 0, sizeof(*out));
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		bool conflict = false;

		out->cand[r] = -1;
		out->why[r] = p->ncand[r]                              ? LWM2_HWC_WHY_ABSENT
		              : r >= LWM2_HWC_NDEFAULT && !p->named[r] ? LWM2_HWC_WHY_NOT_ASKED
		                                                       : LWM2_HWC_WHY_LEFT_OUT;
		if (p->off)
			continue;
		for (unsigned i = 0; i < p->ncand[r]; i++) {
			enum lwm2_hwc_verdict v = try_fn(ctx, (enum lwm2_hwc_role)r, p->cand[r][i]);

			if (v == LWM2_HWC_ACCEPTED) {
				out->cand[r] = (int)i;
				out->why[r] = LWM2_HWC_WHY_CHOSEN;
				out->nchosen++;
				break;
			}
			if (v == LWM2_HWC_CONFLICT)
				conflict = true;
		}
		if (out->cand[r] < 0 && conflict)
			out->why[r] = LWM2_HWC_WHY_CONFLICT;
	}
}

bool lwm2_hwc_none_reason(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c, char *buf,
                          size_t len)
{
	bool any_absent = false, any_conflict = false;

	if (p->off) {
		snprintf(buf, len, "switched off (LWM2_EVENTS=none)");
		return true;
	}
	if (c->nchosen)
		return false;
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		any_absent |= c->why[r] == LWM2_HWC_WHY_ABSENT;
		any_conflict |= c->why[r] == LWM2_HWC_WHY_CONFLICT;
	}
	if (any_conflict)
		snprintf(buf, len, "the hardware counters are busy");
	else if (any_absent)
		snprintf(buf, len, "no hardware counters on this platform");
	else
		snprintf(buf, len, "no events selected (LWM2_EVENTS)");
	return true;
}

/* The kernel's software events (linux/perf_event.h, a stable ABI) under
 * libpfm's names; PERF_COUNT_SW_* numbers written out so that this file
 * stays free of kernel headers. */
static const struct {
	const char *name;
	unsigned long long config;
} sw_events[] = {
    {"CPU-CLOCK", 0},        {"TASK-CLOCK", 1},   {"PAGE-FAULTS", 2},      {"FAULTS", 2},
    {"CONTEXT-SWITCHES", 3}, {"CS", 3},           {"CPU-MIGRATIONS", 4},   {"MIGRATIONS", 4},
    {"MINOR-FAULTS", 5},     {"MAJOR-FAULTS", 6}, {"ALIGNMENT-FAULTS", 7}, {"EMULATION-FAULTS", 8},
};

static const char *const sw_perf_names[] = {
    "CPU_CLOCK",       "TASK_CLOCK",      "PAGE_FAULTS",      "CONTEXT_SWITCHES", "CPU_MIGRATIONS",
    "PAGE_FAULTS_MIN", "PAGE_FAULTS_MAJ", "ALIGNMENT_FAULTS", "EMULATION_FAULTS",
};

bool lwm2_hwc_software_event(const char *name, unsigned long long *config)
{
	if (strncasecmp(name, "perf::", 6) != 0)
		return false;
	name += 6;
	for (size_t i = 0; i < sizeof(sw_events) / sizeof(sw_events[0]); i++)
		if (strcasecmp(name, sw_events[i].name) == 0) {
			*config = sw_events[i].config;
			return true;
		}
	if (strncasecmp(name, "PERF_COUNT_SW_", 14) == 0)
		for (size_t i = 0; i < sizeof(sw_perf_names) / sizeof(sw_perf_names[0]); i++)
			if (strcasecmp(name + 14, sw_perf_names[i]) == 0) {
				*config = i;
				return true;
			}
	return false;
}

bool lwm2_hwc_unavailable_text(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c,
                               const char *why, char *buf, size_t len)
{
	const char *first = NULL;
	int more = 0;

	if (p->off)
		return false;
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		if (!p->named[r] || !p->ncand[r] || c->why[r] != LWM2_HWC_WHY_ABSENT)
			continue;
		if (first)
			more++;
		else
			first = p->cand[r][0];
	}
	if (!first)
		return false;
	if (more)
		snprintf(buf, len, "event %s and %d more not available: %s", first, more, why);
	else
		snprintf(buf, len, "event %s not available: %s", first, why);
	return true;
}

void lwm2_hwc_partial_text(const struct lwm2_hwc_choice *c, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	for (int r = 0; r < LWM2_HWC_NROLES && n < len; r++) {
		const char *why = c->why[r] == LWM2_HWC_WHY_ABSENT     ? "not on this platform"
		                  : c->why[r] == LWM2_HWC_WHY_CONFLICT ? "does not fit"
		                  : c->why[r] == LWM2_HWC_WHY_LEFT_OUT ? "left out"
		                                                       : NULL;
		int k;

		if (!why)
			continue;
		k = snprintf(buf + n, len - n, "%s%s: %s", n ? "; " : "", lwm2_hwc_role_names[r],
		             why);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}

size_t lwm2_hwc_events_text(const struct lwm2_hwc_plan *p, const struct lwm2_hwc_choice *c,
                            char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (int r = 0; r < LWM2_HWC_NROLES; r++) {
		int k = c->cand[r];
		int w;

		if (k < 0 || (unsigned)k >= p->ncand[r])
			continue;
		w = snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", lwm2_hwc_role_names[r],
		             p->cand[r][k]);
		if (w < 0 || (size_t)w >= len - n) {
			buf[n] = '\0'; /* a whole item or none */
			break;
		}
		n += (size_t)w;
	}
	return n;
}
