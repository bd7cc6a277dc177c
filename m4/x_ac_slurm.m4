# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_SLURM: the public Slurm headers (spank.h, slurmdb.h) and libslurm.
# The SPANK plugin and the lwm2 command's accounting reader need them.
AC_DEFUN([X_AC_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=PREFIX], [Slurm installation prefix @<:@/usr@:>@])],
    [SLURM_CPPFLAGS="-I$withval/include"; SLURM_LDFLAGS="-L$withval/lib"], [])
  save_CPPFLAGS="$CPPFLAGS"; CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  save_LDFLAGS="$LDFLAGS"; LDFLAGS="$LDFLAGS $SLURM_LDFLAGS"
  AC_CHECK_HEADERS([slurm/spank.h slurm/slurmdb.h], [],
    [AC_MSG_ERROR([Slurm headers not found: install the Debian package libslurm-dev])])
  AC_CHECK_LIB([slurm], [slurmdb_connection_get], [SLURM_LIBS="-lslurm"],
    [AC_MSG_ERROR([libslurm not found: install the Debian package libslurm-dev])])
  AC_MSG_CHECKING([Slurm version])
  AC_COMPUTE_INT([slurm_version_number], [SLURM_VERSION_NUMBER],
    [#include <slurm/slurm_version.h>], [slurm_version_number=0])
  SLURM_VERSION_STRING=`printf '%d.%02d.%d' $((slurm_version_number >> 16)) \
    $(((slurm_version_number >> 8) & 255)) $((slurm_version_number & 255))`
  AC_MSG_RESULT([$SLURM_VERSION_STRING])
  CPPFLAGS="$save_CPPFLAGS"; LDFLAGS="$save_LDFLAGS"
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_LDFLAGS])
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_VERSION_STRING])
  lwm2_spank_summary="yes (Slurm $SLURM_VERSION_STRING)"
])
