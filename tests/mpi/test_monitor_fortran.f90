! The Fortran module mpi_monitoring: every procedure, the IGNORE sentinels, error codes, and the
! exact matrix of known traffic (3 messages of 100 bytes from each rank to the next, sent through
! the C interface). Then a ring sent from Fortran itself: counted when the MPI library's Fortran
! bindings go through the C interface (MPICH), not when they call PMPI_ directly (Open MPI), as
! docs/monitor.md says. usage: test_monitor_fortran counted|uncounted
program test_monitor_fortran
  use mpi
  use mpi_monitoring
  implicit none
  interface
     subroutine ring_traffic(comm, messages, bytes) bind(C, name="ring_traffic")
       use, intrinsic :: iso_c_binding, only: c_int
       integer(c_int), value :: comm, messages, bytes
     end subroutine ring_traffic
  end interface
  integer :: ierr, rank, nranks, msid, rc, provided, array_size, backend, i, j, next, failures
  integer(kind=8), allocatable :: counts(:), sizes(:), matrix(:), bytes_matrix(:)
  character(len=16) :: mode
  character(len=100) :: buffer

  failures = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, mode)
  next = mod(rank + 1, nranks)
  allocate(counts(nranks), sizes(nranks), matrix(nranks * nranks), bytes_matrix(nranks * nranks))

  call MPI_M_start(MPI_COMM_WORLD, msid, rc)
  call check(rc == MPI_M_MISSING_INIT, "start before init")
  call MPI_M_init(rc)
  call check(rc == MPI_SUCCESS, "init")
  call MPI_M_init(rc)
  call check(rc == MPI_M_MULTIPLE_CALL, "init twice")
  call MPI_M_get_backend(MPI_M_P2P_ONLY, backend, rc)
  call check(rc == MPI_SUCCESS .and. backend == MPI_M_BACKEND_PMPI, "get_backend")

  call MPI_M_start(MPI_COMM_WORLD, msid, rc)
  call check(rc == MPI_SUCCESS, "start")
  call ring_traffic(MPI_COMM_WORLD, 3, 100)
  call MPI_M_get_data(msid, counts, sizes, MPI_M_P2P_ONLY, rc)
  call check(rc == MPI_M_SESSION_NOT_SUSPENDED, "get_data while active")
  call MPI_M_suspend(msid, rc)
  call check(rc == MPI_SUCCESS, "suspend")
  call MPI_M_suspend(msid, rc)
  call check(rc == MPI_M_MULTIPLE_CALL, "suspend twice")

  call MPI_M_get_info(msid, provided, array_size, rc)
  call check(rc == MPI_SUCCESS .and. provided == MPI_THREAD_MULTIPLE .and. array_size == nranks, "get_info")
  call MPI_M_get_info(msid, MPI_M_INT_IGNORE, array_size, rc)
  call check(rc == MPI_SUCCESS .and. array_size == nranks, "get_info ignoring provided")
  call MPI_M_get_info(12345, provided, array_size, rc)
  call check(rc == MPI_M_INVALID_MSID, "get_info of no session")

  call MPI_M_get_data(msid, counts, sizes, MPI_M_P2P_ONLY, rc)
  call check(rc == MPI_SUCCESS, "get_data")
  do j = 0, nranks - 1
     call check(counts(j + 1) == merge(3_8, 0_8, j == next), "row counts")
     call check(sizes(j + 1) == merge(300_8, 0_8, j == next), "row bytes")
  end do
  sizes = -1
  call MPI_M_get_data(msid, counts, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY, rc)
  call check(rc == MPI_SUCCESS .and. all(sizes == -1), "get_data ignoring sizes")
  call MPI_M_get_data(msid, counts, sizes, 0, rc)
  call check(rc == MPI_M_INVALID_ARG, "get_data with flags 0")
  call MPI_M_get_data(msid, counts(1:nranks - 1), sizes, MPI_M_P2P_ONLY, rc)
  call check(rc == MPI_M_INVALID_ARG, "get_data into an array too small")
  call MPI_M_allgather_data(msid, matrix(1:nranks), bytes_matrix, MPI_M_ALL_COMM, rc)
  call check(rc == MPI_M_INVALID_ARG, "allgather_data into an array too small")

  call MPI_M_allgather_data(msid, matrix, bytes_matrix, MPI_M_ALL_COMM, rc)
  call check(rc == MPI_SUCCESS, "allgather_data")
  do i = 0, nranks - 1
     do j = 0, nranks - 1
        ! row-major, row i = what rank i sent
        call check(matrix(i * nranks + j + 1) == merge(3_8, 0_8, j == mod(i + 1, nranks)), "matrix counts")
        call check(bytes_matrix(i * nranks + j + 1) == merge(300_8, 0_8, j == mod(i + 1, nranks)), "matrix bytes")
     end do
  end do
  call MPI_M_rootgather_data(msid, nranks, matrix, bytes_matrix, MPI_M_ALL_COMM, rc)
  call check(rc == MPI_M_INVALID_ROOT, "rootgather with a bad root")
  call MPI_M_flush(msid, "/nonexistent-directory/x", MPI_M_ALL_COMM, rc)
  call check(rc == MPI_M_INTERNAL_FAIL, "flush into a missing directory")

  ! A ring sent from Fortran: counted or not depending on the library's Fortran bindings.
  call MPI_M_reset(msid, rc)
  call MPI_M_continue(msid, rc)
  call check(rc == MPI_SUCCESS, "continue")
  call MPI_Sendrecv(buffer, 100, MPI_CHARACTER, next, 0, buffer, 100, MPI_CHARACTER, &
       mod(rank + nranks - 1, nranks), 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call MPI_M_suspend(msid, rc)
  call MPI_M_get_data(msid, counts, sizes, MPI_M_P2P_ONLY, rc)
  if (trim(mode) == "counted") then
     call check(counts(next + 1) == 1 .and. sizes(next + 1) == 100, "a Fortran send is counted")
  else
     call check(all(counts == 0), "a Fortran send is not counted (bindings call PMPI_)")
  end if

  call MPI_M_free(msid, rc)
  call check(rc == MPI_SUCCESS, "free")
  call MPI_M_free(msid, rc)
  call check(rc == MPI_M_INVALID_MSID, "free twice")
  call MPI_M_finalize(rc)
  call check(rc == MPI_SUCCESS, "finalize")
  call MPI_M_finalize(rc)
  call check(rc == MPI_M_MISSING_INIT, "finalize twice")

  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', "test_monitor_fortran: ", failures, " failure(s)"
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
       failures = failures + 1
       print '(a, i0, 2a)', "rank ", rank, ": check failed: ", what
    end if
  end subroutine check

end program test_monitor_fortran
