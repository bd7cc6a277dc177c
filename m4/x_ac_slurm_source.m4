# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_SLURM_SOURCE: the jobcomp glue includes slurmctld's internal headers,
# which exist only in a configured Slurm source tree of exactly the installed
# version (contrib/slurm-source.sh makes one).  Without it jobcomp is skipped.
AC_DEFUN([X_AC_SLURM_SOURCE], [
  AC_ARG_WITH([slurm-source],
    [AS_HELP_STRING([--with-slurm-source=SRC@<:@:BUILD@:>@],
      [configured Slurm source tree of the installed version, for jobcomp/lwm2
       (BUILD holds its config.h; default: SRC)])],
    [], [with_slurm_source=no])
  have_slurm_source=no
  AS_IF([test "x$with_slurm_source" != xno], [
    slurm_src=`echo "$with_slurm_source" | cut -d: -f1`
    slurm_build=`echo "$with_slurm_source" | cut -s -d: -f2`
    test -n "$slurm_build" || slurm_build="$slurm_src"
    AC_MSG_CHECKING([for slurmctld.h and config.h in $with_slurm_source])
    AS_IF([test -r "$slurm_src/src/slurmctld/slurmctld.h" && test -r "$slurm_build/config.h"],
      [have_slurm_source=yes], [])
    AC_MSG_RESULT([$have_slurm_source])
    AS_IF([test "x$have_slurm_source" = xyes], [
      src_version=`sed -n 's/^#define SLURM_VERSION_NUMBER *//p' "$slurm_build/slurm/slurm_version.h" 2>/dev/null`
      AS_IF([test -n "$src_version" && test $((src_version)) -ne $((slurm_version_number))],
        [AC_MSG_ERROR([--with-slurm-source: version $src_version differs from the installed Slurm ($slurm_version_number); jobcomp plugins must match exactly])])
      SLURM_SOURCE_CPPFLAGS="-DHAVE_CONFIG_H -I$slurm_build -I$slurm_src -I$slurm_build/slurm -I$slurm_src/slurm"
      X_AC_SLURM_SOURCE_API
    ], [AC_MSG_ERROR([--with-slurm-source=$with_slurm_source: no configured Slurm tree there; run contrib/slurm-source.sh])])
  ])
  AC_SUBST([SLURM_SOURCE_CPPFLAGS])
  AM_CONDITIONAL([HAVE_SLURM_SOURCE], [test "x$have_slurm_source" = xyes])
  AS_IF([test "x$have_slurm_source" = xyes],
    [lwm2_jobcomp_summary="yes"],
    [lwm2_jobcomp_summary="no (needs --with-slurm-source; run contrib/slurm-source.sh)"])
])

# X_AC_SLURM_SOURCE_API: what differs between the Slurm trees the glue
# builds against (22.05 and 24.11), as -D flags on SLURM_SOURCE_CPPFLAGS:
# the glue gets Slurm's config.h, not lwm2's.
#  LWM2_SLURM_INTERFACES   the plugin interface headers are in
#                          src/interfaces/ (jobcomp.h, accounting_storage.h)
#                          rather than src/common/slurm_*.h
#  LWM2_JOBCOMP_SET_LOCATION_VOID
#                          jobcomp_p_set_location takes no argument (the
#                          location is in slurm_conf.job_comp_loc)
#  HAVE_LIST_T, HAVE_LIST_ITR_T  as X_AC_SLURM found them
AC_DEFUN([X_AC_SLURM_SOURCE_API], [
  AC_MSG_CHECKING([where Slurm's jobcomp interface header is])
  AS_IF([test -r "$slurm_src/src/interfaces/jobcomp.h" &&
         test -r "$slurm_src/src/interfaces/accounting_storage.h"],
    [AC_MSG_RESULT([src/interfaces/])
     SLURM_SOURCE_CPPFLAGS="$SLURM_SOURCE_CPPFLAGS -DLWM2_SLURM_INTERFACES=1"
     jobcomp_header=src/interfaces/jobcomp.h],
    [test -r "$slurm_src/src/common/slurm_jobcomp.h"],
    [AC_MSG_RESULT([src/common/])
     jobcomp_header=src/common/slurm_jobcomp.h],
    [AC_MSG_ERROR([--with-slurm-source: no jobcomp interface header in $slurm_src])])
  AS_IF([test "x$ac_cv_type_list_t" = xyes],
    [SLURM_SOURCE_CPPFLAGS="$SLURM_SOURCE_CPPFLAGS -DHAVE_LIST_T=1"])
  AS_IF([test "x$ac_cv_type_list_itr_t" = xyes],
    [SLURM_SOURCE_CPPFLAGS="$SLURM_SOURCE_CPPFLAGS -DHAVE_LIST_ITR_T=1"])
  AC_MSG_CHECKING([whether jobcomp_p_set_location takes no argument])
  save_CPPFLAGS="$CPPFLAGS"
  # Slurm's config.h, not the confdefs of this configure run.
  CPPFLAGS="$SLURM_SOURCE_CPPFLAGS"
  AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
#include "slurm/slurm.h"
#include "$jobcomp_header"
_Static_assert(__builtin_types_compatible_p(__typeof__(jobcomp_g_set_location), int(void)),
               "set_location takes the location");
]])],
    [AC_MSG_RESULT([yes])
     SLURM_SOURCE_CPPFLAGS="$SLURM_SOURCE_CPPFLAGS -DLWM2_JOBCOMP_SET_LOCATION_VOID=1"],
    [AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
#include "slurm/slurm.h"
#include "$jobcomp_header"
_Static_assert(__builtin_types_compatible_p(__typeof__(jobcomp_g_set_location), int(char *)),
               "set_location takes no argument");
]])],
       [AC_MSG_RESULT([no, it takes the location])],
       [AC_MSG_RESULT([unknown])
        AC_MSG_ERROR([--with-slurm-source: $jobcomp_header does not compile here, or declares a jobcomp_g_set_location this glue does not know; see config.log])])])
  CPPFLAGS="$save_CPPFLAGS"
])
