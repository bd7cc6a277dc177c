# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_CUDA: the CUDA module is a separate small library loaded by the CUDA
# driver through CUDA_INJECTION64_PATH, so programs without CUDA never load
# CUPTI.  Optional: --with-cuda=DIR (default /usr/local/cuda when present).
AC_DEFUN([X_AC_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit with CUPTI @<:@/usr/local/cuda if present@:>@])],
    [], [with_cuda=check])
  have_cupti=no
  AS_IF([test "x$with_cuda" = xcheck], [AS_IF([test -d /usr/local/cuda], [with_cuda=/usr/local/cuda], [with_cuda=no])])
  AS_IF([test "x$with_cuda" != xno], [
    CUDA_CPPFLAGS="-I$with_cuda/include -I$with_cuda/extras/CUPTI/include"
    CUPTI_LDFLAGS="-L$with_cuda/lib64 -L$with_cuda/extras/CUPTI/lib64 -Wl,-rpath,$with_cuda/lib64"
    save_CPPFLAGS="$CPPFLAGS"; CPPFLAGS="$CPPFLAGS $CUDA_CPPFLAGS"
    save_LDFLAGS="$LDFLAGS"; LDFLAGS="$LDFLAGS $CUPTI_LDFLAGS"
    AC_CHECK_HEADER([cupti.h],
      [AC_CHECK_LIB([cupti], [cuptiSubscribe], [have_cupti=yes; CUPTI_LIBS="-lcupti"], [])], [])
    CPPFLAGS="$save_CPPFLAGS"; LDFLAGS="$save_LDFLAGS"
    AS_IF([test "x$have_cupti" = xno], [AC_MSG_ERROR([--with-cuda=$with_cuda: cupti.h or libcupti not found there])])
  ])
  CUDA_DIR="$with_cuda"
  AC_SUBST([CUDA_DIR])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUPTI_LDFLAGS])
  AC_SUBST([CUPTI_LIBS])
  AM_CONDITIONAL([HAVE_CUPTI], [test "x$have_cupti" = xyes])
  AS_IF([test "x$have_cupti" = xyes],
    [lwm2_cuda_summary="yes ($with_cuda)"],
    [lwm2_cuda_summary="no (no CUDA toolkit with CUPTI; --with-cuda=DIR)"])
])
