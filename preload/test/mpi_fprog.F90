! SPDX-License-Identifier: GPL-2.0-or-later
! Fortran test program for the MPI module, built once per binding
! (-DBINDING_mpifh, -DBINDING_mpi, -DBINDING_f08).  Two ranks; writes the
! counters its rank record must hold to $LWM2_EXPECT_DIR/expect.<rank>.
program fprog
#if defined(BINDING_f08)
  use mpi_f08
#elif defined(BINDING_mpi)
  use mpi
#endif
  implicit none
#if defined(BINDING_mpifh)
  include 'mpif.h'
#endif
  integer :: ierr, rank, nranks, i, peer
  integer :: buf(100), a(4), s(4)
#if defined(BINDING_f08)
  type(MPI_Request) :: rq
#else
  integer :: rq
#endif
  integer(8) :: p2p_calls, p2p_sent, p2p_recv
  character(len=4096) :: dir
  character(len=16) :: rs

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  peer = 1 - rank
  buf = rank
  p2p_calls = 0; p2p_sent = 0; p2p_recv = 0
  do i = 1, 10
    if (rank == 0) then
      call MPI_Send(buf, 100, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, ierr)
      p2p_sent = p2p_sent + 400
    else
      call MPI_Recv(buf, 100, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      p2p_recv = p2p_recv + 400
    end if
    p2p_calls = p2p_calls + 1
  end do
  if (rank == 0) then
    call MPI_Isend(buf, 50, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, rq, ierr)
    p2p_sent = p2p_sent + 200
  else
    call MPI_Irecv(buf, 50, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, rq, ierr)
    p2p_recv = p2p_recv + 200
  end if
  call MPI_Wait(rq, MPI_STATUS_IGNORE, ierr)
  p2p_calls = p2p_calls + 2
  a = rank
  call MPI_Allreduce(a, s, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)

  call get_environment_variable("LWM2_EXPECT_DIR", dir)
  write (rs, '(I0)') rank
  open (unit=10, file=trim(dir)//'/expect.'//trim(rs), status='replace')
  write (10, '(A,I0)') 'mpi_size = ', nranks
  write (10, '(A,I0)') 'mpi_p2p_calls = ', p2p_calls
  write (10, '(A,I0)') 'mpi_p2p_bytes_sent = ', p2p_sent
  write (10, '(A,I0)') 'mpi_p2p_bytes_recv = ', p2p_recv
  write (10, '(A)') 'mpi_coll_calls = 2'
  write (10, '(A)') 'mpi_coll_bytes_sent = 16'
  write (10, '(A)') 'mpi_coll_bytes_recv = 16'
  write (10, '(A)') 'mpi_other_calls = 0'
  write (10, '(A)') 'mpi_init_calls = 2'
  write (10, '(A)') 'flag_mpi = 1'
  write (10, '(A)') 'flag_mpi_finalized = 1'
  write (10, '(A)') 'runtime_fortran = 1'
  close (10)
end program fprog
