/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hardware counter roles' table (hwc_roles.h).  No allocation, no
 * stdio: the library reads it in its constructor. */
#include "hwc_roles.h"

#include <string.h>
#include <strings.h>

const char *const lwm2_hwc_role_names[LWM2_HWC_NROLES] = {
    [LWM2_HWC_CYCLES] = "cycles",
    [LWM2_HWC_INSTRUCTIONS] = "instructions",
    [LWM2_HWC_FP_OPS] = "fp_ops",
    [LWM2_HWC_L1D_MISSES] = "l1d_misses",
    [LWM2_HWC_L1D_ACCESSES] = "l1d_accesses",
    [LWM2_HWC_LLC_MISSES] = "llc_misses",
    [LWM2_HWC_INT_OPS] = "int_ops",
    [LWM2_HWC_LOADS] = "loads",
    [LWM2_HWC_STORES] = "stores",
    [LWM2_HWC_L2D_MISSES] = "l2d_misses",
    [LWM2_HWC_L2D_ACCESSES] = "l2d_accesses",
    [LWM2_HWC_TLB_MISSES] = "tlb_misses",
};

/*
 * PAPI presets first (portable names, PAPI maps them per CPU), then the
 * kernel's generic events for CPUs PAPI has no preset table for.  The
 * last level is L3 where there is one; PAPI_L2_TCM comes after the kernel's
 * own LLC event because on a CPU with an L3 it is not the last level.
 */
const char *const lwm2_hwc_default_events[LWM2_HWC_NROLES][LWM2_HWC_MAX_CAND] = {
    [LWM2_HWC_CYCLES] = {"PAPI_TOT_CYC", "perf::CYCLES"},
    [LWM2_HWC_INSTRUCTIONS] = {"PAPI_TOT_INS", "perf::INSTRUCTIONS"},
    [LWM2_HWC_FP_OPS] = {"PAPI_FP_INS", "PAPI_FP_OPS"},
    [LWM2_HWC_L1D_MISSES] = {"PAPI_L1_DCM", "perf::L1-DCACHE-LOAD-MISSES"},
    [LWM2_HWC_L1D_ACCESSES] = {"PAPI_L1_DCA", "perf::L1-DCACHE-LOADS"},
    [LWM2_HWC_LLC_MISSES] = {"PAPI_L3_TCM", "perf::LLC-LOAD-MISSES", "PAPI_L2_TCM"},
};

const struct lwm2_hwc_preset lwm2_hwc_presets[] = {
    {"PAPI_TOT_CYC", LWM2_HWC_CYCLES},       {"PAPI_REF_CYC", LWM2_HWC_CYCLES},
    {"PAPI_TOT_INS", LWM2_HWC_INSTRUCTIONS}, {"PAPI_FP_INS", LWM2_HWC_FP_OPS},
    {"PAPI_FP_OPS", LWM2_HWC_FP_OPS},        {"PAPI_VEC_INS", LWM2_HWC_FP_OPS},
    {"PAPI_L1_DCM", LWM2_HWC_L1D_MISSES},    {"PAPI_L1_DCA", LWM2_HWC_L1D_ACCESSES},
    {"PAPI_L3_TCM", LWM2_HWC_LLC_MISSES},    {"PAPI_L2_TCM", LWM2_HWC_LLC_MISSES},
    {"PAPI_L3_DCM", LWM2_HWC_LLC_MISSES},    {"PAPI_L2_DCM", LWM2_HWC_LLC_MISSES},
    {"PAPI_INT_INS", LWM2_HWC_INT_OPS},      {"PAPI_LD_INS", LWM2_HWC_LOADS},
    {"PAPI_SR_INS", LWM2_HWC_STORES},        {"PAPI_L2_DCA", LWM2_HWC_L2D_ACCESSES},
    {"PAPI_TLB_DM", LWM2_HWC_TLB_MISSES},
};
/* What a role counts by name beside its presets: the kernel's generic
 * events and PAPI's other spellings (a bare one of these names no role:
 * PAPI_L2_DCM already says llc_misses). */
static const struct lwm2_hwc_preset also_of_role[] = {
    {"PAPI_L2_DCM", LWM2_HWC_L2D_MISSES},
    {"PAPI_L2_TCM", LWM2_HWC_L2D_MISSES},
    {"PAPI_L2_TCA", LWM2_HWC_L2D_ACCESSES},
    {"perf::L1-DCACHE-LOADS", LWM2_HWC_LOADS},
    {"perf::DTLB-LOAD-MISSES", LWM2_HWC_TLB_MISSES},
};
const size_t lwm2_hwc_npresets = sizeof(lwm2_hwc_presets) / sizeof(lwm2_hwc_presets[0]);

int lwm2_hwc_role_by_name(const char *s, size_t n)
{
	if (n > 4 && strncmp(s, "hwc_", 4) == 0) {
		s += 4;
		n -= 4;
	}
	for (int r = 0; r < LWM2_HWC_NROLES; r++)
		if (strlen(lwm2_hwc_role_names[r]) == n &&
		    strncasecmp(s, lwm2_hwc_role_names[r], n) == 0)
			return r;
	return -1;
}

bool lwm2_hwc_event_is_role(enum lwm2_hwc_role role, const char *event)
{
	if ((unsigned)role >= LWM2_HWC_NROLES || !event)
		return false;
	for (int i = 0; i < LWM2_HWC_MAX_CAND && lwm2_hwc_default_events[role][i]; i++)
		if (!strcmp(event, lwm2_hwc_default_events[role][i]))
			return true;
	for (size_t i = 0; i < lwm2_hwc_npresets; i++)
		if (lwm2_hwc_presets[i].role == role && !strcmp(event, lwm2_hwc_presets[i].name))
			return true;
	for (size_t i = 0; i < sizeof(also_of_role) / sizeof(also_of_role[0]); i++)
		if (also_of_role[i].role == role && !strcmp(event, also_of_role[i].name))
			return true;
	return false;
}
