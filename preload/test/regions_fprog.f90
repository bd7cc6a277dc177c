! SPDX-License-Identifier: GPL-2.0-or-later
!
! The Fortran module's named regions (test/regions.sh): 5 calls of a
! region of about 20 ms each, then "measured M SECONDS CALLS OWN" with M 1
! where lwm2 measured them and OWN the seconds the program measured.
program regions_fprog
  use lwm2_view
  use, intrinsic :: iso_c_binding, only: c_double
  implicit none
  integer :: i, rc, measured
  integer(8) :: t0, t, t1, rate
  real(c_double) :: seconds, calls, own

  measured = 1
  own = 0
  do i = 1, 5
     call system_clock(t0, rate)
     if (lwm2_region_begin('step') /= LWM2_OK) measured = 0
     do
        call system_clock(t)
        if (real(t - t0, c_double) / real(rate, c_double) >= 0.02d0) exit
     end do
     rc = lwm2_region_end()
     call system_clock(t1)
     own = own + real(t1 - t0, c_double) / real(rate, c_double)
  end do
  rc = lwm2_region_self('step', seconds, calls)
  if (rc /= LWM2_OK) measured = 0
  print '(a, i0, 1x, f0.6, 1x, i0, 1x, f0.6)', 'measured ', measured, seconds, nint(calls), own
end program regions_fprog
