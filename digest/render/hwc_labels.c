/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The labels of the hardware counter metrics, by the events that were
 * counted (lwm2_render.h).  A role ("fp_ops") is a slot: LWM2_EVENTS, or a
 * processor without the usual event, can put another event there, and a
 * label that then said "floating-point" would say something that was not
 * counted.  Signal-safe: no allocation, no stdio (the one-process digest
 * is printed at exit, maybe after a fatal signal).
 */
#include "hwc_roles.h"
#include "lwm2_render.h"

#include <string.h>

/* The roles a metric is computed from, the numerator's and the
 * denominator's (-1: none), and its label where an event is not what its
 * role usually counts: N and D stand for the numerator's and the
 * denominator's events, or for den_usual where the denominator's is the
 * usual one. */
struct role_use {
	int metric, num, den, num2; /* num2: a second numerator (M), -1: none */
	const char *form, *den_usual;
};

static const struct role_use uses[] = {
    {LWM2_M_cpi, LWM2_HWC_CYCLES, LWM2_HWC_INSTRUCTIONS, -1, "N per D", "instruction"},
    {LWM2_M_fp_fraction, LWM2_HWC_FP_OPS, LWM2_HWC_INSTRUCTIONS, -1, "N among D",
     "all instructions"},
    {LWM2_M_fp_rate, LWM2_HWC_FP_OPS, -1, -1, "N per second", NULL},
    {LWM2_M_l1_hit_ratio, LWM2_HWC_L1D_MISSES, LWM2_HWC_L1D_ACCESSES, -1, "1 - N / D", NULL},
    {LWM2_M_llc_miss_freq, LWM2_HWC_LLC_MISSES, -1, -1, "N per second", NULL},
    {LWM2_M_int_fraction, LWM2_HWC_INT_OPS, LWM2_HWC_INSTRUCTIONS, -1, "N among D",
     "all instructions"},
    {LWM2_M_mem_fraction, LWM2_HWC_LOADS, LWM2_HWC_INSTRUCTIONS, LWM2_HWC_STORES, "N and M among D",
     "all instructions"},
    {LWM2_M_l2_hit_ratio, LWM2_HWC_L2D_MISSES, LWM2_HWC_L2D_ACCESSES, -1, "1 - N / D", NULL},
    {LWM2_M_tlb_miss_freq, LWM2_HWC_TLB_MISSES, -1, -1, "N per second", NULL},
};

static const struct role_use *use_of(int m)
{
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++)
		if (uses[i].metric == m)
			return &uses[i];
	return NULL;
}

bool lwm2_hwc_events_next(const char **p, const char **role, size_t *rl, const char **ev,
                          size_t *el)
{
	while (*p && **p) {
		const char *s = *p, *end = strchr(s, ' '), *eq;

		if (!end)
			end = s + strlen(s);
		*p = *end ? end + 1 : end;
		eq = memchr(s, '=', (size_t)(end - s));
		if (!eq)
			continue;
		*role = s;
		*rl = (size_t)(eq - s);
		*ev = eq + 1;
		*el = (size_t)(end - eq - 1);
		return true;
	}
	return false;
}

bool lwm2_hwc_events_find(const char *events, const char *role, const char **at, size_t *len)
{
	size_t want = strlen(role), rl, el;
	const char *r, *ev;

	while (lwm2_hwc_events_next(&events, &r, &rl, &ev, &el))
		if (rl == want && !memcmp(r, role, rl) && el > 0) {
			*at = ev;
			*len = el;
			return true;
		}
	return false;
}

int lwm2_metric_roles(int m, int roles[3])
{
	const struct role_use *u = use_of(m);
	int n = 0;

	if (!u)
		return 0;
	roles[n++] = u->num;
	if (u->den >= 0)
		roles[n++] = u->den;
	if (u->num2 >= 0)
		roles[n++] = u->num2;
	return n;
}

/* Whether every alternative of the event text [at, at+len) ("A|B") is
 * what role counts by its name. */
static bool all_of_role(enum lwm2_hwc_role role, const char *at, size_t len)
{
	char one[80];

	for (const char *p = at, *end = at + len; p < end;) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		size_t n = (size_t)((bar ? bar : end) - p);

		if (n >= sizeof(one))
			return false;
		memcpy(one, p, n);
		one[n] = '\0';
		if (!lwm2_hwc_event_is_role(role, one))
			return false;
		p = bar ? bar + 1 : end;
	}
	return len > 0;
}

/* Whether the event text is exactly name. */
static bool is(const char *at, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(at, name, len);
}

struct label {
	char *buf;
	size_t len, n;
};

static void add(struct label *l, const char *s, size_t n)
{
	for (size_t i = 0; i < n && l->n + 1 < l->len; i++)
		l->buf[l->n++] = s[i];
	l->buf[l->n] = '\0';
}

static void adds(struct label *l, const char *s)
{
	add(l, s, strlen(s));
}

bool lwm2_metric_on_request(int m)
{
	const struct role_use *u = use_of(m);

	return u && (u->num >= LWM2_HWC_NDEFAULT || u->num2 >= LWM2_HWC_NDEFAULT);
}

/* The floating-point role's two presets say what they count: operations
 * (a vector instruction counts its lanes) or instructions. */
static const char *fp_label(int m, const char *at, size_t len)
{
	bool ops = is(at, len, "PAPI_FP_OPS"), ins = is(at, len, "PAPI_FP_INS");

	if (m == LWM2_M_fp_fraction)
		return ops   ? "Floating-point operations among all instructions"
		       : ins ? "Floating-point instructions among all instructions"
		             : NULL;
	return ops   ? "Floating-point operations per second (FLOP rate)"
	       : ins ? "Floating-point instructions per second"
	             : NULL;
}

const char *lwm2_metric_label(const char *events, int m, char *buf, size_t len)
{
	struct label l = {buf, len, 0};
	const struct role_use *u = use_of(m);
	const char *na = NULL, *da = NULL, *ma = NULL;
	size_t nl = 0, dl = 0, ml = 0;
	bool num_known, den_known, num2_known;

	if (!len)
		return "";
	buf[0] = '\0';
	if (m < 0 || m >= LWM2_NMETRICS)
		return buf;
	if (!u || !events || !*events) {
		adds(&l, lwm2_metric_labels[m]);
		return buf;
	}
	num_known = lwm2_hwc_events_find(events, lwm2_hwc_role_names[u->num], &na, &nl);
	den_known =
	    u->den >= 0 && lwm2_hwc_events_find(events, lwm2_hwc_role_names[u->den], &da, &dl);
	num2_known =
	    u->num2 >= 0 && lwm2_hwc_events_find(events, lwm2_hwc_role_names[u->num2], &ma, &ml);
	if (u->num == LWM2_HWC_FP_OPS && num_known && fp_label(m, na, nl) &&
	    (u->den < 0 || !den_known || all_of_role(u->den, da, dl))) {
		adds(&l, fp_label(m, na, nl));
		return buf;
	}
	if ((!num_known || (u->num != LWM2_HWC_FP_OPS && all_of_role(u->num, na, nl))) &&
	    (u->num2 < 0 || !num2_known || all_of_role(u->num2, ma, ml)) &&
	    (u->den < 0 || !den_known || all_of_role(u->den, da, dl))) {
		adds(&l, lwm2_metric_labels[m]);
		return buf;
	}
	/* An event the role does not usually count: the label names the
	 * events. */
	for (const char *f = u->form; *f; f++) {
		if (*f == 'N' && num_known)
			add(&l, na, nl);
		else if (*f == 'N')
			adds(&l, lwm2_hwc_role_names[u->num]);
		else if (*f == 'M' && num2_known)
			add(&l, ma, ml);
		else if (*f == 'M')
			adds(&l, lwm2_hwc_role_names[u->num2]);
		else if (*f == 'D' && den_known && !(u->den_usual && all_of_role(u->den, da, dl)))
			add(&l, da, dl);
		else if (*f == 'D')
			adds(&l, u->den_usual ? u->den_usual : lwm2_hwc_role_names[u->den]);
		else
			add(&l, f, 1);
	}
	return buf;
}
