! SPDX-License-Identifier: GPL-2.0-or-later
!
! lwm2_view: the Fortran interface of lwm2.h (lwm2_view(3)).  Compile it
! with the program (mpif90 -c lwm2_view.f90); it needs no MPI and links
! nothing: liblwm2.so's reader is found at run time with dlsym, and without
! lwm2 every call returns LWM2_NOT_MEASURED.
!
!   type(lwm2_view_t) :: v
!   real(8) :: mine(2), all(2, nranks)
!   rc = lwm2_view_init(v, [LWM2_COMPUTE_TIME, LWM2_MPI_TIME], LWM2_SCOPE_SINCE_LAST)
!   rc = lwm2_view_self(v, mine)
!   call lwm2_view_begin()           ! the view's own collective, kept apart
!   call MPI_Allgather(mine, 2, MPI_DOUBLE_PRECISION, all, 2, ...)
!   call lwm2_view_end()
!   call lwm2_view_stats(all, 1, vmin, vmean, vmax, vstddev)
!
!   rc = lwm2_region_begin('solver')  ! a named region, ended by
!   rc = lwm2_region_end()            ! the innermost's end
!   rc = lwm2_region_self('solver', seconds, calls)
!
! Metric numbers are those of lwm2.h (0-based); values are in seconds or
! counts.
module lwm2_view
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: LWM2_OK = 0, LWM2_NOT_MEASURED = 1, &
       LWM2_ERR_ARG = -1, LWM2_ERR_MPI = -2
  integer, parameter, public :: LWM2_WALL_TIME = 0, LWM2_COMPUTE_TIME = 1, &
       LWM2_MPI_TIME = 2, LWM2_IO_TIME = 3, LWM2_IO_READ_BYTES = 4, &
       LWM2_IO_WRITE_BYTES = 5, LWM2_MPI_BYTES = 6, LWM2_MPI_CALLS = 7, &
       LWM2_IO_CALLS = 8, LWM2_CPU_TIME = 9, LWM2_HWC_CYCLES = 10, &
       LWM2_HWC_INSTRUCTIONS = 11, LWM2_HWC_FP_OPS = 12, &
       LWM2_HWC_LLC_MISSES = 13, LWM2_MPI_INIT_TIME = 14, LWM2_VIEW_TIME = 15, &
       LWM2_VIEW_NMETRICS = 16
  integer, parameter, public :: LWM2_SCOPE_RUN = 0, LWM2_SCOPE_SINCE_LAST = 1, &
       LWM2_SCOPE_WINDOW = 2
  integer, parameter, public :: LWM2_THREAD_SELF = 0, LWM2_THREADS_ALL = 1
  integer, parameter, public :: LWM2_VIEW_WINDOW_MAX = 16
  integer, parameter :: OP_ALL_THREADS = 8, OP_HWC_NOW = 16

  type, public :: lwm2_view_t
     integer :: nmetrics = 0
     integer :: metrics(LWM2_VIEW_NMETRICS) = 0
     integer :: scope = LWM2_SCOPE_RUN
     logical :: have_last = .false.
     real(c_double) :: last(LWM2_VIEW_NMETRICS) = 0
     integer :: threads = LWM2_THREAD_SELF
     integer :: window = 0
     integer :: nhist = 0, hist_next = 0
     real(c_double) :: hist(LWM2_VIEW_NMETRICS, LWM2_VIEW_WINDOW_MAX) = 0
  end type lwm2_view_t

  public :: lwm2_view_available, lwm2_view_init, lwm2_view_self, &
       lwm2_view_set_threads, lwm2_view_set_window, &
       lwm2_view_begin, lwm2_view_end, lwm2_view_stats, &
       lwm2_region_begin, lwm2_region_end, lwm2_region_self

  interface
     function c_dlsym(handle, name) bind(C, name='dlsym') result(p)
       import :: c_ptr, c_char, c_funptr
       type(c_ptr), value :: handle
       character(kind=c_char), dimension(*) :: name
       type(c_funptr) :: p
     end function c_dlsym
  end interface

  abstract interface
     function read_fn(out, n, op) bind(C) result(r)
       import :: c_double, c_int
       real(c_double), dimension(*) :: out
       integer(c_int), value :: n, op
       integer(c_int) :: r
     end function read_fn
  end interface

  abstract interface
     function region_enter_fn(name) bind(C) result(r)
       import :: c_char, c_int
       character(kind=c_char), dimension(*) :: name
       integer(c_int) :: r
     end function region_enter_fn
     function region_leave_fn() bind(C) result(r)
       import :: c_int
       integer(c_int) :: r
     end function region_leave_fn
     function region_read_fn(name, out, n) bind(C) result(r)
       import :: c_char, c_double, c_int
       character(kind=c_char), dimension(*) :: name
       real(c_double), dimension(*) :: out
       integer(c_int), value :: n
       integer(c_int) :: r
     end function region_read_fn
  end interface

  procedure(read_fn), pointer, save :: reader => null()
  logical, save :: looked = .false.
  procedure(region_enter_fn), pointer, save :: region_enter => null()
  procedure(region_leave_fn), pointer, save :: region_leave => null()
  procedure(region_read_fn), pointer, save :: region_read => null()
  logical, save :: region_looked = .false.

contains

  ! RTLD_DEFAULT is the null handle in glibc.
  logical function have_reader()
    type(c_funptr) :: p
    if (.not. looked) then
       p = c_dlsym(c_null_ptr, 'lwm2_view_read_self' // c_null_char)
       if (c_associated(p)) call c_f_procpointer(p, reader)
       looked = .true.
    end if
    have_reader = associated(reader)
  end function have_reader

  integer function lwm2_view_available()
    real(c_double) :: d(1)
    lwm2_view_available = LWM2_NOT_MEASURED
    if (have_reader()) then
       if (reader(d, 0_c_int, 0_c_int) >= 0) lwm2_view_available = LWM2_OK
    end if
  end function lwm2_view_available

  integer function lwm2_view_init(v, metrics, scope)
    type(lwm2_view_t), intent(out) :: v
    integer, intent(in) :: metrics(:), scope
    lwm2_view_init = LWM2_ERR_ARG
    if (size(metrics) < 1 .or. size(metrics) > LWM2_VIEW_NMETRICS) return
    if (any(metrics < 0) .or. any(metrics >= LWM2_VIEW_NMETRICS)) return
    if (scope /= LWM2_SCOPE_RUN .and. scope /= LWM2_SCOPE_SINCE_LAST) return
    v%nmetrics = size(metrics)
    v%metrics(1:v%nmetrics) = metrics
    v%scope = scope
    lwm2_view_init = LWM2_OK
  end function lwm2_view_init

  ! Whose counters the next queries read: the calling thread's or every
  ! thread's of the process (lwm2.h's lwm2_view_set_threads).
  integer function lwm2_view_set_threads(v, threads)
    type(lwm2_view_t), intent(inout) :: v
    integer, intent(in) :: threads
    lwm2_view_set_threads = LWM2_ERR_ARG
    if (threads /= LWM2_THREAD_SELF .and. threads /= LWM2_THREADS_ALL) return
    v%threads = threads
    lwm2_view_set_threads = LWM2_OK
  end function lwm2_view_set_threads

  ! A window of the last k queries (lwm2.h's lwm2_view_set_window).
  integer function lwm2_view_set_window(v, k)
    type(lwm2_view_t), intent(inout) :: v
    integer, intent(in) :: k
    lwm2_view_set_window = LWM2_ERR_ARG
    if (k < 1 .or. k > LWM2_VIEW_WINDOW_MAX) return
    v%scope = LWM2_SCOPE_WINDOW
    v%window = k
    v%nhist = 0
    v%hist_next = 0
    lwm2_view_set_window = LWM2_OK
  end function lwm2_view_set_window

  ! The calling rank's own values (v%nmetrics of them); a since-last view
  ! moves its mark, a window its ring of the last queries.
  integer function lwm2_view_self(v, vals)
    type(lwm2_view_t), intent(inout) :: v
    real(c_double), intent(out) :: vals(:)
    real(c_double) :: all(LWM2_VIEW_NMETRICS), base(LWM2_VIEW_NMETRICS)
    integer :: i, m, op
    logical :: have_base
    vals = 0
    lwm2_view_self = LWM2_ERR_ARG
    if (v%nmetrics < 1 .or. size(vals) < v%nmetrics) return
    lwm2_view_self = LWM2_NOT_MEASURED
    if (.not. have_reader()) return
    op = 0
    if (v%threads == LWM2_THREADS_ALL) op = op + OP_ALL_THREADS
    if (any(v%metrics(1:v%nmetrics) >= LWM2_HWC_CYCLES .and. &
         v%metrics(1:v%nmetrics) <= LWM2_HWC_LLC_MISSES)) op = op + OP_HWC_NOW
    if (reader(all, int(LWM2_VIEW_NMETRICS, c_int), int(op, c_int)) < LWM2_VIEW_NMETRICS) return
    have_base = .false.
    if (v%scope == LWM2_SCOPE_SINCE_LAST .and. v%have_last) then
       base = v%last
       have_base = .true.
    else if (v%scope == LWM2_SCOPE_WINDOW .and. v%window >= 1 .and. v%nhist >= v%window) then
       base = v%hist(:, modulo(v%hist_next - v%window, LWM2_VIEW_WINDOW_MAX) + 1)
       have_base = .true.
    end if
    do i = 1, v%nmetrics
       m = v%metrics(i) + 1
       vals(i) = all(m)
       if (have_base) vals(i) = all(m) - base(m)
    end do
    v%last = all
    v%have_last = .true.
    if (v%scope == LWM2_SCOPE_WINDOW) then
       v%hist(:, v%hist_next + 1) = all
       v%hist_next = modulo(v%hist_next + 1, LWM2_VIEW_WINDOW_MAX)
       if (v%nhist < LWM2_VIEW_WINDOW_MAX) v%nhist = v%nhist + 1
    end if
    lwm2_view_self = LWM2_OK
  end function lwm2_view_self

  ! Bracket the program's own collective of a query: its counters are
  ! kept apart from the values later reads return.
  subroutine lwm2_view_begin()
    real(c_double) :: d(1)
    integer(c_int) :: r
    if (have_reader()) r = reader(d, 0_c_int, 1_c_int)
  end subroutine lwm2_view_begin

  subroutine lwm2_view_end()
    real(c_double) :: d(1)
    integer(c_int) :: r
    if (have_reader()) r = reader(d, 0_c_int, 2_c_int)
  end subroutine lwm2_view_end

  ! min/mean/max/stddev of row k of gathered values vals(nmetrics, nranks).
  subroutine lwm2_view_stats(vals, k, vmin, vmean, vmax, vstddev)
    real(c_double), intent(in) :: vals(:, :)
    integer, intent(in) :: k
    real(c_double), intent(out) :: vmin, vmean, vmax, vstddev
    vmin = minval(vals(k, :))
    vmax = maxval(vals(k, :))
    vmean = sum(vals(k, :)) / size(vals, 2)
    vstddev = sqrt(sum((vals(k, :) - vmean)**2) / size(vals, 2))
  end subroutine lwm2_view_stats

  ! The named regions' functions, looked up once.
  logical function have_regions()
    type(c_funptr) :: p
    if (.not. region_looked) then
       p = c_dlsym(c_null_ptr, 'lwm2_region_enter' // c_null_char)
       if (c_associated(p)) call c_f_procpointer(p, region_enter)
       p = c_dlsym(c_null_ptr, 'lwm2_region_leave' // c_null_char)
       if (c_associated(p)) call c_f_procpointer(p, region_leave)
       p = c_dlsym(c_null_ptr, 'lwm2_region_read' // c_null_char)
       if (c_associated(p)) call c_f_procpointer(p, region_read)
       region_looked = .true.
    end if
    have_regions = associated(region_enter) .and. associated(region_leave) &
         .and. associated(region_read)
  end function have_regions

  ! A named region begins (trailing blanks of name are not part of it).
  integer function lwm2_region_begin(name)
    character(len=*), intent(in) :: name
    lwm2_region_begin = LWM2_ERR_ARG
    if (len_trim(name) == 0) return
    lwm2_region_begin = LWM2_NOT_MEASURED
    if (have_regions()) lwm2_region_begin = region_enter(trim(name) // c_null_char)
  end function lwm2_region_begin

  ! The calling thread's innermost open region ends.
  integer function lwm2_region_end()
    lwm2_region_end = LWM2_NOT_MEASURED
    if (have_regions()) lwm2_region_end = region_leave()
  end function lwm2_region_end

  ! The process's time (seconds, all threads) and calls of a region so far.
  integer function lwm2_region_self(name, seconds, calls)
    character(len=*), intent(in) :: name
    real(c_double), intent(out) :: seconds, calls
    real(c_double) :: out(2)
    out = 0
    lwm2_region_self = LWM2_NOT_MEASURED
    if (have_regions()) then
       if (region_read(trim(name) // c_null_char, out, 2_c_int) >= 0) lwm2_region_self = LWM2_OK
    end if
    seconds = out(1)
    calls = out(2)
  end function lwm2_region_self

end module lwm2_view
