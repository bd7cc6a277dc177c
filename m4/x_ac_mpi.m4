# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_MPI: the MPI module never links libmpi.  It is compiled once per MPI
# ABI family (Open MPI and MPICH headers) and picks one at run time, so one
# installed liblwm2 measures programs built with either.  MPICC is the
# compiler wrapper used to build test programs (Open MPI's by default).
AC_DEFUN([X_AC_MPI], [
  AC_ARG_WITH([ompi-include],
    [AS_HELP_STRING([--with-ompi-include=DIR], [Open MPI's mpi.h directory])],
    [], [with_ompi_include=`pkg-config --variable=includedir ompi-c 2>/dev/null`])
  AC_ARG_WITH([mpich-include],
    [AS_HELP_STRING([--with-mpich-include=DIR], [MPICH's mpi.h directory])],
    [], [with_mpich_include=`pkg-config --variable=includedir mpich 2>/dev/null`])
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper for test programs])
  AC_ARG_VAR([MPIFC], [MPI Fortran compiler wrapper for test programs])
  AC_ARG_VAR([MPICH_CC], [MPICH's C compiler wrapper for test programs])
  AC_PATH_PROGS([MPICC], [mpicc.openmpi mpicc], [])
  AC_PATH_PROGS([MPIFC], [mpifort.openmpi mpif90.openmpi mpifort], [])
  AC_PATH_PROGS([MPICH_CC], [mpicc.mpich], [])
  have_ompi=no; have_mpich=no
  AS_IF([test -n "$with_ompi_include" && test -r "$with_ompi_include/mpi.h"], [have_ompi=yes])
  AS_IF([test -n "$with_mpich_include" && test -r "$with_mpich_include/mpi.h"], [have_mpich=yes])
  OMPI_CPPFLAGS="-I$with_ompi_include"
  MPICH_CPPFLAGS="-I$with_mpich_include"
  AC_SUBST([OMPI_CPPFLAGS])
  AC_SUBST([MPICH_CPPFLAGS])
  AS_IF([test "x$have_ompi" = xyes], [lwm2_mpi_ompi_summary="yes ($with_ompi_include)"],
    [lwm2_mpi_ompi_summary="no (install the Debian package libopenmpi-dev)"])
  AS_IF([test "x$have_mpich" = xyes], [lwm2_mpi_mpich_summary="yes ($with_mpich_include)"],
    [lwm2_mpi_mpich_summary="no (install the Debian package libmpich-dev)"])
  AS_IF([test "x$have_ompi" = xno && test "x$have_mpich" = xno],
    [AC_MSG_WARN([no MPI headers found: the MPI module is not built])])
  AM_CONDITIONAL([HAVE_OMPI], [test "x$have_ompi" = xyes])
  AM_CONDITIONAL([HAVE_MPICH], [test "x$have_mpich" = xyes])
  AM_CONDITIONAL([HAVE_MPICC], [test -n "$MPICC"])
  AM_CONDITIONAL([HAVE_MPIFC], [test -n "$MPIFC"])
  AM_CONDITIONAL([HAVE_MPICH_CC], [test -n "$MPICH_CC"])
  AS_IF([test "x$have_ompi" = xyes], [AC_DEFINE([HAVE_MPI_OMPI], [1], [MPI module for the Open MPI ABI])])
  AS_IF([test "x$have_mpich" = xyes], [AC_DEFINE([HAVE_MPI_MPICH], [1], [MPI module for the MPICH ABI])])
])
