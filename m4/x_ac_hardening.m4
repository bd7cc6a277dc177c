# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_HARDENING: the flags Debian's dpkg-buildflags and pyxis build plugins
# with, since spank_lwm2.so and jobcomp_lwm2.so run inside root daemons:
# -D_FORTIFY_SOURCE=2 (needs optimisation; skipped at -O0 and under the
# sanitizers, which replace the same checks), -fstack-protector-strong,
# -Wl,-z,relro -Wl,-z,now.  Each is used only where the compiler and linker
# accept it.  HARDEN_CFLAGS/HARDEN_LDFLAGS go to every library and program;
# HARDEN_PRELOAD_CFLAGS is the part the preload library's wrappers keep
# (measured with bench/posix_call: see README.md).  --disable-hardening
# leaves all of them empty.
AC_DEFUN([X_AC_HARDENING], [
  AC_ARG_ENABLE([hardening],
    [AS_HELP_STRING([--disable-hardening],
      [build without stack protector, fortify and full RELRO])],
    [], [enable_hardening=yes])
  HARDEN_CFLAGS=
  HARDEN_LDFLAGS=
  HARDEN_PRELOAD_CFLAGS=
  AS_IF([test "x$enable_hardening" != xno], [
    save_CFLAGS="$CFLAGS"
    AC_MSG_CHECKING([whether $CC accepts -fstack-protector-strong])
    CFLAGS="$save_CFLAGS -fstack-protector-strong -Werror"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[char buf[64];]], [[return buf[0];]])],
      [AC_MSG_RESULT([yes]); HARDEN_CFLAGS="-fstack-protector-strong"],
      [AC_MSG_RESULT([no])])
    AC_MSG_CHECKING([whether -D_FORTIFY_SOURCE=2 applies])
    AS_CASE([" $CPPFLAGS $CFLAGS $SANITIZE_CFLAGS "],
      [*_FORTIFY_SOURCE*], [AC_MSG_RESULT([already set])],
      [*-fsanitize=*], [AC_MSG_RESULT([no, sanitizers])],
      [
        CFLAGS="$save_CFLAGS -D_FORTIFY_SOURCE=2 -Werror"
        AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <string.h>
#if !defined(__OPTIMIZE__)
#error fortify needs optimisation
#endif]], [[char b[4]; memset(b, 0, sizeof(b)); return b[1];]])],
          [AC_MSG_RESULT([yes]); HARDEN_CFLAGS="$HARDEN_CFLAGS -D_FORTIFY_SOURCE=2"],
          [AC_MSG_RESULT([no, not optimising])])
      ])
    CFLAGS="$save_CFLAGS"
    save_LDFLAGS="$LDFLAGS"
    AC_MSG_CHECKING([whether the linker accepts -z relro -z now])
    LDFLAGS="$save_LDFLAGS -Wl,-z,relro -Wl,-z,now"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
      [AC_MSG_RESULT([yes]); HARDEN_LDFLAGS="-Wl,-z,relro -Wl,-z,now"],
      [AC_MSG_RESULT([no])])
    LDFLAGS="$save_LDFLAGS"
    HARDEN_PRELOAD_CFLAGS="$HARDEN_CFLAGS"
  ])
  AC_SUBST([HARDEN_CFLAGS])
  AC_SUBST([HARDEN_LDFLAGS])
  AC_SUBST([HARDEN_PRELOAD_CFLAGS])
  lwm2_hardening_summary="${HARDEN_CFLAGS:-none} ${HARDEN_LDFLAGS}"
])
