# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_PYTHON3: several tests read the lwm2 command's JSON output with
# python3 (and preload/mpi_gen.py generates the MPI wrappers, whose output
# is committed).  Not needed to build: without it those tests skip, saying
# so, and configure says it here.
AC_DEFUN([X_AC_PYTHON3], [
  AC_ARG_VAR([PYTHON3], [python3 interpreter for the tests])
  AC_PATH_PROG([PYTHON3], [python3])
  AS_IF([test -n "$PYTHON3"], [lwm2_python3_summary="yes ($PYTHON3)"],
    [lwm2_python3_summary="no: tests that read JSON skip (install the Debian package python3)"
     AC_MSG_WARN([python3 not found: the tests that read JSON output will skip])])
  AM_CONDITIONAL([HAVE_PYTHON3], [test -n "$PYTHON3"])
])
