# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_MUNGE: node records are signed by slurmstepd and checked by jobcomp
# with munge credentials.
AC_DEFUN([X_AC_MUNGE], [
  PKG_CHECK_MODULES([MUNGE], [munge], [],
    [AC_CHECK_HEADER([munge.h],
       [AC_CHECK_LIB([munge], [munge_encode], [MUNGE_LIBS="-lmunge"],
          [AC_MSG_ERROR([libmunge not found: install the Debian package libmunge-dev])])],
       [AC_MSG_ERROR([munge.h not found: install the Debian package libmunge-dev])])])
])
