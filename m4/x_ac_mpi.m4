# SPDX-License-Identifier: GPL-2.0-or-later
#
# X_AC_MPI: the MPI module never includes mpi.h and never links libmpi, so
# it is always built: one installed liblwm2 measures programs built with
# Open MPI or MPICH (preload/mpi_abi.h).  What is looked for here are the
# compiler wrappers the tests build MPI programs with: MPICC (Open MPI's
# by default), MPIFC and MPICH_CC.
AC_DEFUN([X_AC_MPI], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper for test programs])
  AC_ARG_VAR([MPIFC], [MPI Fortran compiler wrapper for test programs])
  AC_ARG_VAR([MPICH_CC], [MPICH's C compiler wrapper for test programs])
  AC_PATH_PROGS([MPICC], [mpicc.openmpi mpicc], [])
  AC_PATH_PROGS([MPIFC], [mpifort.openmpi mpif90.openmpi mpifort], [])
  AC_PATH_PROGS([MPICH_CC], [mpicc.mpich], [])
  AS_IF([test -n "$MPICC"], [lwm2_mpi_tests_summary="yes ($MPICC)"],
    [lwm2_mpi_tests_summary="no (install the Debian package libopenmpi-dev)"])
  AM_CONDITIONAL([HAVE_MPICC], [test -n "$MPICC"])
])
