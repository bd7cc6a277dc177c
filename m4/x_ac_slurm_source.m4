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
    ], [AC_MSG_ERROR([--with-slurm-source=$with_slurm_source: no configured Slurm tree there; run contrib/slurm-source.sh])])
  ])
  AC_SUBST([SLURM_SOURCE_CPPFLAGS])
  AM_CONDITIONAL([HAVE_SLURM_SOURCE], [test "x$have_slurm_source" = xyes])
  AS_IF([test "x$have_slurm_source" = xyes],
    [lwm2_jobcomp_summary="yes"],
    [lwm2_jobcomp_summary="no (needs --with-slurm-source; run contrib/slurm-source.sh)"])
])
