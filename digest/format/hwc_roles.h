/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hardware counter roles: the slots of the rank record the counter
 * module fills (hwc_*), their names, the events each is counted with by
 * default, and the PAPI presets whose role is plain.  One table for the
 * library, which fits the events (preload/papi_events.c), and for the
 * digest, which labels a role by the event the record says filled it
 * (render/hwc_labels.c): a label never names what a role usually counts
 * when something else was counted there.
 */
#ifndef LWM2_HWC_ROLES_H
#define LWM2_HWC_ROLES_H

#include <stdbool.h>
#include <stddef.h>

/* In the order candidates are fitted: CPI needs the first two together.
 * The six with default events first; the roles after LWM2_HWC_NDEFAULT
 * have none and are counted only where the site or the user names an
 * event for them (LWM2_EVENTS, Events= of lwm2.conf, --lwm2-events), as
 * TOPAS let a site count integer operations, loads or stores instead:
 * a processor has few counters, and the six take them first. */
enum lwm2_hwc_role {
	LWM2_HWC_CYCLES,
	LWM2_HWC_INSTRUCTIONS,
	LWM2_HWC_FP_OPS,
	LWM2_HWC_L1D_MISSES,
	LWM2_HWC_L1D_ACCESSES,
	LWM2_HWC_LLC_MISSES,
	LWM2_HWC_NDEFAULT,
	LWM2_HWC_INT_OPS = LWM2_HWC_NDEFAULT,
	LWM2_HWC_LOADS,
	LWM2_HWC_STORES,
	LWM2_HWC_L2D_MISSES,
	LWM2_HWC_L2D_ACCESSES,
	LWM2_HWC_TLB_MISSES,
	LWM2_HWC_NROLES
};

#define LWM2_HWC_MAX_CAND 6

/* The role's name as LWM2_EVENTS and the record's hwc_events write it
 * ("cycles", "fp_ops", ...). */
extern const char *const lwm2_hwc_role_names[LWM2_HWC_NROLES];

/* The default candidates of each role, in the order they are tried: PAPI
 * presets first, then the kernel's generic events; NULL ends a list. */
extern const char *const lwm2_hwc_default_events[LWM2_HWC_NROLES][LWM2_HWC_MAX_CAND];

/* Presets whose role is plain, so LWM2_EVENTS may name them bare. */
struct lwm2_hwc_preset {
	const char *name;
	enum lwm2_hwc_role role;
};
extern const struct lwm2_hwc_preset lwm2_hwc_presets[];
extern const size_t lwm2_hwc_npresets;

/* The role named by the n bytes at s (a record's "hwc_" prefix taken
 * too), or -1. */
int lwm2_hwc_role_by_name(const char *s, size_t n);

/* Whether event is what role counts by its name: one of its defaults or
 * a preset of that role (PAPI_L2_TCM for llc_misses); false for any other
 * event a user put there. */
bool lwm2_hwc_event_is_role(enum lwm2_hwc_role role, const char *event);

#endif /* LWM2_HWC_ROLES_H */
