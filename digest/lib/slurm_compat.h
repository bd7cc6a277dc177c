/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Slurm's list types under the names newer Slurm gives them (list_t,
 * list_itr_t; 24.11 has no others), for Slurm versions that only have List
 * and ListIterator (22.05).  configure defines HAVE_LIST_T and
 * HAVE_LIST_ITR_T where slurm.h has them.
 */
#ifndef LWM2_SLURM_COMPAT_H
#define LWM2_SLURM_COMPAT_H

#include <slurm/slurm.h>

#ifndef HAVE_LIST_T
typedef struct xlist list_t;
#endif
#ifndef HAVE_LIST_ITR_T
typedef struct listIterator list_itr_t;
#endif

#endif
