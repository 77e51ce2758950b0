! The same ring as monitor_ring.c, through the installed Fortran module mpi_monitoring.
program monitor_ring
  use mpi
  use mpi_monitoring
  implicit none
  integer :: ierr, rank, nranks, next, prev, msid, rc, i, r
  logical :: ok, all_ok
  character :: out(64), in(64)
  integer(kind=8), allocatable :: counts(:), sizes(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)
  allocate(counts(nranks), sizes(nranks))
  out = 'x'
  call MPI_M_init(rc)
  ok = rc == MPI_SUCCESS
  call MPI_M_start(MPI_COMM_WORLD, msid, rc)
  ok = ok .and. rc == MPI_SUCCESS
  do i = 1, 2
     call MPI_Sendrecv(out, 64, MPI_CHARACTER, next, 0, in, 64, MPI_CHARACTER, prev, 0, &
                       MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end do
  call MPI_M_suspend(msid, rc)
  ok = ok .and. rc == MPI_SUCCESS
  call MPI_M_get_data(msid, counts, sizes, MPI_M_P2P_ONLY, rc)
  ok = ok .and. rc == MPI_SUCCESS
  do r = 0, nranks - 1
     ok = ok .and. counts(r + 1) == merge(2_8, 0_8, r == next) .and. sizes(r + 1) == merge(128_8, 0_8, r == next)
  end do
  call MPI_M_free(msid, rc)
  call MPI_M_finalize(rc)
  call MPI_Reduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     if (all_ok) then
        print '(a)', 'consumer Fortran: passed'
     else
        print '(a)', 'consumer Fortran: FAILED'
     end if
  end if
  call MPI_Finalize(ierr)
  if (rank == 0 .and. .not. all_ok) stop 1
end program monitor_ring
