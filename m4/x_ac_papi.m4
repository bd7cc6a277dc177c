# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_PAPI: hardware counters for CPI, FP fraction, L1 hit ratio and
# last-level misses.  liblwm2 loads libpapi with dlopen at run time, so only
# the header is needed to build; without it the counter module is left out.
AC_DEFUN([X_AC_PAPI], [
  AC_ARG_WITH([papi], [AS_HELP_STRING([--without-papi], [leave out the hardware-counter module])],
    [], [with_papi=check])
  have_papi=no
  AS_IF([test "x$with_papi" != xno], [
    PKG_CHECK_MODULES([PAPI], [papi], [have_papi=yes],
      [AC_CHECK_HEADER([papi.h], [have_papi=yes; PAPI_LIBS="-lpapi"], [])])
    AS_IF([test "x$have_papi" = xno && test "x$with_papi" = xyes],
      [AC_MSG_ERROR([PAPI not found: install the Debian package libpapi-dev])])
  ])
  AS_IF([test "x$have_papi" = xyes],
    [lwm2_papi_summary=yes],
    [lwm2_papi_summary="no (install the Debian package libpapi-dev)"])
  AM_CONDITIONAL([HAVE_PAPI], [test "x$have_papi" = xyes])
])
