# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_SLURM: the public Slurm headers (spank.h, slurmdb.h) and libslurm.
# The SPANK plugin and the lwm2 command's accounting reader need them.
AC_DEFUN([X_AC_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=PREFIX], [Slurm installation prefix @<:@/usr@:>@])],
    [SLURM_CPPFLAGS="-I$withval/include"
     # lib64 where the Slurm RPMs put libslurm, lib for a default install
     slurm_libdir="$withval/lib"
     AS_IF([test -e "$withval/lib64/libslurm.so"], [slurm_libdir="$withval/lib64"])
     # a Slurm outside the linker's default path is found at run time too
     SLURM_LDFLAGS="-L$slurm_libdir -Wl,-rpath,$slurm_libdir"], [])
  save_CPPFLAGS="$CPPFLAGS"; CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  save_LDFLAGS="$LDFLAGS"; LDFLAGS="$LDFLAGS $SLURM_LDFLAGS"
  AC_CHECK_HEADERS([slurm/spank.h slurm/slurmdb.h], [],
    [AC_MSG_ERROR([Slurm headers not found: install the Debian package libslurm-dev])])
  save_LIBS="$LIBS"
  AC_CHECK_LIB([slurm], [slurmdb_connection_get], [SLURM_LIBS="-lslurm"; LIBS="-lslurm $LIBS"],
    [AC_MSG_ERROR([libslurm not found: install the Debian package libslurm-dev])])
  AC_MSG_CHECKING([Slurm version])
  AC_COMPUTE_INT([slurm_version_number], [SLURM_VERSION_NUMBER],
    [#include <slurm/slurm_version.h>], [slurm_version_number=0])
  SLURM_VERSION_STRING=`printf '%d.%02d.%d' $((slurm_version_number >> 16)) \
    $(((slurm_version_number >> 8) & 255)) $((slurm_version_number & 255))`
  AC_MSG_RESULT([$SLURM_VERSION_STRING])
  # 24.11 names Slurm's list types list_t and list_itr_t and has no List
  # and ListIterator any more; 22.05 has only those: digest/util/slurm_compat.h.
  # (Incomplete types: AC_CHECK_TYPES's sizeof test cannot see them.)
  AC_CACHE_CHECK([for list_t], [ac_cv_type_list_t],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <slurm/slurm.h>]],
      [[list_t *l = 0; return l != 0;]])],
      [ac_cv_type_list_t=yes], [ac_cv_type_list_t=no])])
  AS_IF([test "x$ac_cv_type_list_t" = xyes],
    [AC_DEFINE([HAVE_LIST_T], [1], [slurm.h has list_t])])
  AC_CACHE_CHECK([for list_itr_t], [ac_cv_type_list_itr_t],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <slurm/slurm.h>]],
      [[list_itr_t *i = 0; return i != 0;]])],
      [ac_cv_type_list_itr_t=yes], [ac_cv_type_list_itr_t=no])])
  AS_IF([test "x$ac_cv_type_list_itr_t" = xyes],
    [AC_DEFINE([HAVE_LIST_ITR_T], [1], [slurm.h has list_itr_t])])
  # Public helpers libslurm exports without declaring them in slurm.h.
  AC_CHECK_FUNCS([slurm_parse_time])
  # The configuration slurm_init reads, in libslurm's exported global of
  # the public type slurm_conf_t (digest/cmd/slurmutil.c).
  AC_MSG_CHECKING([for libslurm's slurm_conf])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <slurm/slurm.h>
extern slurm_conf_t slurm_conf;]], [[return slurm_conf.cluster_name != 0;]])],
    [AC_MSG_RESULT([yes])
     AC_DEFINE([HAVE_SLURM_CONF_GLOBAL], [1], [libslurm exports slurm_conf])],
    [AC_MSG_RESULT([no])])
  LIBS="$save_LIBS"
  CPPFLAGS="$save_CPPFLAGS"; LDFLAGS="$save_LDFLAGS"
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_LDFLAGS])
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_VERSION_STRING])
  lwm2_spank_summary="yes (Slurm $SLURM_VERSION_STRING)"
])
