# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_CURL: export of digests to a time-series engine (InfluxDB line
# protocol over HTTP, gzip-compressed) through libcurl and zlib.  Optional:
# without them jobcomp/lwm2 and `lwm2 export` build, and export can only
# print the lines (`lwm2 export --dry-run`); ExportURL is then refused.
AC_DEFUN([X_AC_CURL], [
  AC_ARG_WITH([curl],
    [AS_HELP_STRING([--without-curl],
      [build without export over HTTP (libcurl) @<:@default: check@:>@])],
    [], [with_curl=check])
  lwm2_export_summary="no (install the Debian packages libcurl4-openssl-dev and zlib1g-dev)"
  AS_IF([test "x$with_curl" != xno], [
    PKG_CHECK_MODULES([CURL], [libcurl >= 7.85.0 zlib],
      [AC_DEFINE([HAVE_LIBCURL], [1], [Define to 1 to export digests over HTTP with libcurl])
       lwm2_export_summary=yes],
      [AS_IF([test "x$with_curl" = xyes],
         [AC_MSG_ERROR([libcurl >= 7.85 or zlib not found: install the Debian packages libcurl4-openssl-dev and zlib1g-dev])])])
  ], [lwm2_export_summary="no (--without-curl)"])
])
