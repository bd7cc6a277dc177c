! SPDX-License-Identifier: GPL-2.0-or-later
! Test helper for test/view.sh: the Fortran module lwm2_view, with MPI.
! Prints "measured 0|1 ranks N compute_min X compute_max Y calls C".
program view_fprog
  use mpi
  use lwm2_view
  implicit none
  type(lwm2_view_t) :: v
  real(8) :: mine(2), vmin, vmean, vmax, vsd, x
  real(8), allocatable :: all(:, :)
  integer :: ierr, me, np, rc, i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  allocate (all(2, np))
  all = 0
  rc = lwm2_view_init(v, [LWM2_COMPUTE_TIME, LWM2_MPI_CALLS], LWM2_SCOPE_SINCE_LAST)
  rc = lwm2_view_self(v, mine)
  x = 0
  do i = 1, 50000000 * (me + 1)
     x = x + 1d-9
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  rc = lwm2_view_self(v, mine)
  call lwm2_view_begin()
  call MPI_Allgather(mine, 2, MPI_DOUBLE_PRECISION, all, 2, MPI_DOUBLE_PRECISION, &
       MPI_COMM_WORLD, ierr)
  call lwm2_view_end()
  call lwm2_view_stats(all, 1, vmin, vmean, vmax, vsd)
  if (me == 0) then
     write (*, '(a,i0,a,i0,a,f10.6,a,f10.6,a,f4.0,a,f12.3)') 'measured ', &
          merge(1, 0, rc == LWM2_OK), ' ranks ', np, ' compute_min ', vmin, &
          ' compute_max ', vmax, ' calls ', all(2, 1), ' sink ', x
  end if
  call MPI_Finalize(ierr)
end program view_fprog
