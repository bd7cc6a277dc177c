# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_SANITIZE: --enable-sanitizer=address,undefined or =thread builds the
# whole tree instrumented.  The preload library is then loaded next to the
# sanitizer runtime (tests set LD_PRELOAD accordingly).
AC_DEFUN([X_AC_SANITIZE], [
  AC_ARG_ENABLE([sanitizer],
    [AS_HELP_STRING([--enable-sanitizer=LIST],
      [build with -fsanitize=LIST (address,undefined or thread)])],
    [], [enable_sanitizer=no])
  SANITIZE_CFLAGS=""
  SANITIZE_LDFLAGS=""
  AS_CASE([$enable_sanitizer],
    [no], [],
    [*thread*address*|*address*thread*],
      [AC_MSG_ERROR([--enable-sanitizer: thread and address cannot be combined])],
    [SANITIZE_CFLAGS="-fsanitize=$enable_sanitizer -fno-omit-frame-pointer -g"
     SANITIZE_LDFLAGS="-fsanitize=$enable_sanitizer"
     save_CFLAGS="$CFLAGS"; CFLAGS="$CFLAGS $SANITIZE_CFLAGS"
     save_LDFLAGS="$LDFLAGS"; LDFLAGS="$LDFLAGS $SANITIZE_LDFLAGS"
     AC_LINK_IFELSE([AC_LANG_PROGRAM([], [return 0;])], [],
       [AC_MSG_ERROR([$CC cannot build with -fsanitize=$enable_sanitizer])])
     CFLAGS="$save_CFLAGS"; LDFLAGS="$save_LDFLAGS"])
  AC_SUBST([SANITIZE_CFLAGS])
  AC_SUBST([SANITIZE_LDFLAGS])
  AM_CONDITIONAL([SANITIZE], [test "x$enable_sanitizer" != xno])
  AM_CONDITIONAL([SANITIZE_THREAD], [echo "$enable_sanitizer" | grep -q thread])
  AC_SUBST([enable_sanitizer])
])

# X_AC_FUZZER: a libFuzzer target for the record reader, built when the
# compiler is clang with -fsanitize=fuzzer (Debian: libclang-rt-14-dev).
AC_DEFUN([X_AC_FUZZER], [
  save_CFLAGS="$CFLAGS"; CFLAGS="$CFLAGS -fsanitize=fuzzer"
  AC_MSG_CHECKING([whether $CC supports -fsanitize=fuzzer])
  AC_LINK_IFELSE([AC_LANG_SOURCE([[
    #include <stdint.h>
    #include <stddef.h>
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
    int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }
  ]])], [have_fuzzer=yes], [have_fuzzer=no])
  AC_MSG_RESULT([$have_fuzzer])
  CFLAGS="$save_CFLAGS"
  AM_CONDITIONAL([HAVE_FUZZER], [test "x$have_fuzzer" = xyes])
  AS_IF([test "x$have_fuzzer" = xyes],
    [lwm2_fuzzer_summary="yes"],
    [lwm2_fuzzer_summary="no (needs clang and libclang-rt-14-dev: CC=clang)"])
])
