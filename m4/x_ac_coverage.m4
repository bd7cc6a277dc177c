# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_COVERAGE: --enable-coverage builds the whole tree with gcov
# instrumentation, and `make coverage` runs the unit tests and reports line
# coverage per part (lcov).  -Og, not -O0: the hardening flags'
# _FORTIFY_SOURCE needs an optimizing build, and -Og keeps lines apart.
AC_DEFUN([X_AC_COVERAGE], [
  AC_ARG_ENABLE([coverage],
    [AS_HELP_STRING([--enable-coverage],
      [build with gcov instrumentation for `make coverage' (needs lcov)])],
    [], [enable_coverage=no])
  AS_IF([test "x$enable_coverage" != xno], [
    AC_PATH_PROG([LCOV], [lcov])
    AC_PATH_PROG([GENHTML], [genhtml])
    AS_IF([test -z "$LCOV" || test -z "$GENHTML"],
      [AC_MSG_ERROR([--enable-coverage needs lcov: install the Debian package lcov])])
    save_CFLAGS="$CFLAGS"; CFLAGS="$CFLAGS --coverage"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [return 0;])], [],
      [AC_MSG_ERROR([$CC cannot build with --coverage])])
    CFLAGS="$save_CFLAGS -Og -g --coverage"
    LDFLAGS="$LDFLAGS --coverage"
    lwm2_coverage_summary="yes (make coverage)"
  ], [lwm2_coverage_summary=no])
  AM_CONDITIONAL([COVERAGE], [test "x$enable_coverage" != xno])
])
