/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The module table.  References are weak so that the library links and
 * runs while a module is not built (no MPI headers, no PAPI, no CUPTI) or
 * not written yet: a missing module's address is NULL and it is skipped.
 */
#include "core_int.h"

extern const struct lwm2_module lwm2_module_posix __attribute__((weak));
extern const struct lwm2_module lwm2_module_mpi __attribute__((weak));
extern const struct lwm2_module lwm2_module_papi __attribute__((weak));
extern const struct lwm2_module lwm2_module_cuda __attribute__((weak));

const struct lwm2_module *const lwm2_module_table[LWM2_NMODULES] = {
    &lwm2_module_posix,
    &lwm2_module_mpi,
    &lwm2_module_papi,
    &lwm2_module_cuda,
};
