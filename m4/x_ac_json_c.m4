# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_JSON_C: json-c writes and parses node records and job digests.
AC_DEFUN([X_AC_JSON_C], [
  PKG_CHECK_MODULES([JSON_C], [json-c >= 0.13], [],
    [AC_MSG_ERROR([json-c not found: install the Debian package libjson-c-dev])])
])
