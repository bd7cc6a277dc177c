# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_WARNINGS: -Wall -Wextra always; --enable-werror turns warnings into
# errors (CI uses it; a release tarball must build with any newer compiler).
AC_DEFUN([X_AC_WARNINGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors])],
    [], [enable_werror=no])
  WARNING_CFLAGS="-Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes -Wshadow"
  AS_IF([test "x$enable_werror" = xyes],
    [WARNING_CFLAGS="$WARNING_CFLAGS -Werror"])
  AC_SUBST([WARNING_CFLAGS])
])
