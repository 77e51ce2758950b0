! The Fortran module mpi_monitoring: every procedure, the IGNORE sentinels, error codes, and the
! exact matrix of known traffic (3 messages of 100 bytes from each rank to the next, sent through
! the C interface). Then traffic sent from Fortran itself, through the layer's Fortran entry
! points (Open MPI's own Fortran bindings call PMPI_, so without them nothing would be counted):
! blocking, non-blocking, persistent and Sendrecv sends, completion by Waitall, Waitany and
! Testsome (1-based indices, statuses and their IGNORE sentinels), Allreduce in place, Bcast and
! Alltoallw (datatype arrays); the data must arrive right and the matrices be exact.
program test_monitor_fortran
  use mpi
  use mpi_monitoring
  use fcheck
  implicit none
  interface
     subroutine ring_traffic(comm, messages, bytes) bind(C, name="ring_traffic")
       use, intrinsic :: iso_c_binding, only: c_int
       integer(c_int), value :: comm, messages, bytes
     end subroutine ring_traffic
  end interface
  integer :: ierr, rank, nranks, msid, rc, provided, array_size, backend, i, j, next, prev
  integer(kind=8), allocatable :: counts(:), sizes(:), matrix(:), bytes_matrix(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  check_rank = rank
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  next = mod(rank + 1, nranks)
  prev = mod(rank + nranks - 1, nranks)
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

  ! Traffic from Fortran, counted through the layer's Fortran entry points.
  call MPI_M_reset(msid, rc)
  call MPI_M_continue(msid, rc)
  call check(rc == MPI_SUCCESS, "continue")
  call fortran_traffic()
  call MPI_M_suspend(msid, rc)
  call MPI_M_allgather_data(msid, matrix, bytes_matrix, MPI_M_P2P_ONLY, rc)
  call check(rc == MPI_SUCCESS, "allgather_data of Fortran traffic")
  do i = 0, nranks - 1
     do j = 0, nranks - 1
        call check(matrix(i * nranks + j + 1) == merge(7_8, 0_8, j == mod(i + 1, nranks)), &
             "Fortran point-to-point messages")
        call check(bytes_matrix(i * nranks + j + 1) == merge(203_8, 0_8, j == mod(i + 1, nranks)), &
             "Fortran point-to-point bytes")
     end do
  end do
  call MPI_M_allgather_data(msid, matrix, bytes_matrix, MPI_M_COLL_ONLY, rc)
  do i = 0, nranks - 1
     do j = 0, nranks - 1
        ! Allreduce and Alltoallw: 4 bytes to every other rank; Bcast: 20 bytes from rank 0
        call check(matrix(i * nranks + j + 1) == merge(merge(3_8, 2_8, i == 0), 0_8, i /= j), &
             "Fortran collective messages")
        call check(bytes_matrix(i * nranks + j + 1) == merge(merge(28_8, 8_8, i == 0), 0_8, i /= j), &
             "Fortran collective bytes")
     end do
  end do

  call MPI_M_free(msid, rc)
  call check(rc == MPI_SUCCESS, "free")
  call MPI_M_free(msid, rc)
  call check(rc == MPI_M_INVALID_MSID, "free twice")
  call MPI_M_finalize(rc)
  call check(rc == MPI_SUCCESS, "finalize")
  call MPI_M_finalize(rc)
  call check(rc == MPI_M_MISSING_INIT, "finalize twice")

  call MPI_Allreduce(MPI_IN_PLACE, check_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a)', "test_monitor_fortran: ", check_failures, " failure(s)"
  call MPI_Finalize(ierr)
  if (check_failures /= 0) stop 1

contains

  ! To the next rank: 100 + 50 + 10 + 2 x 20 + 1 + 2 = 203 bytes in 7 messages.
  subroutine fortran_traffic()
    character(len=100) :: out, in
    integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2), requests(2), indices(2)
    integer :: index, count, outcount, done, k, x, values(5), sendcounts(nranks), displs(nranks)
    integer :: types(nranks), received(nranks), sent(nranks)

    out = repeat("f", 100)
    call MPI_Irecv(in, 100, MPI_CHARACTER, prev, 1, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Send(out, 100, MPI_CHARACTER, next, 1, MPI_COMM_WORLD, ierr)
    call MPI_Wait(requests(1), status, ierr)
    call MPI_Get_count(status, MPI_CHARACTER, count, ierr)
    call check(status(MPI_SOURCE) == prev .and. count == 100 .and. in == out, "Send and Wait's status")
    call check(requests(1) == MPI_REQUEST_NULL, "Wait frees the request")

    call MPI_Irecv(in, 50, MPI_CHARACTER, prev, 2, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(out, 50, MPI_CHARACTER, next, 2, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. all(requests == MPI_REQUEST_NULL), "Isend and Waitall")

    call MPI_Sendrecv(out, 10, MPI_CHARACTER, next, 3, in, 10, MPI_CHARACTER, prev, 3, &
         MPI_COMM_WORLD, status, ierr)
    call MPI_Get_count(status, MPI_CHARACTER, count, ierr)
    call check(status(MPI_TAG) == 3 .and. count == 10, "Sendrecv's status")

    call MPI_Send_init(out, 20, MPI_CHARACTER, next, 4, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Recv_init(in, 20, MPI_CHARACTER, prev, 4, MPI_COMM_WORLD, requests(1), ierr)
    do k = 1, 2
       call MPI_Startall(2, requests, ierr)
       call MPI_Waitall(2, requests, statuses, ierr)
       call check(statuses(MPI_SOURCE, 1) == prev, "persistent receive's status")
    end do
    call MPI_Request_free(requests(1), ierr)
    call MPI_Request_free(requests(2), ierr)

    call MPI_Irecv(in, 1, MPI_CHARACTER, prev, 5, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(out, 1, MPI_CHARACTER, next, 5, MPI_COMM_WORLD, requests(2), ierr)
    done = 0
    do k = 1, 2
       call MPI_Waitany(2, requests, index, MPI_STATUS_IGNORE, ierr)
       call check(index == 1 .or. index == 2, "Waitany's index is 1-based")
       done = done + index
    end do
    call check(done == 3, "Waitany completes both requests")

    call MPI_Irecv(in, 2, MPI_CHARACTER, prev, 6, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(out, 2, MPI_CHARACTER, next, 6, MPI_COMM_WORLD, requests(2), ierr)
    done = 0
    do while (done < 3)
       call MPI_Testsome(2, requests, outcount, indices, statuses, ierr)
       do k = 1, outcount
          call check(indices(k) == 1 .or. indices(k) == 2, "Testsome's indices are 1-based")
          done = done + indices(k)
       end do
    end do

    x = rank + 1
    call MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    call check(x == nranks * (nranks + 1) / 2, "Allreduce in place")
    values = merge(7, 0, rank == 0)
    call MPI_Bcast(values, 5, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call check(all(values == 7), "Bcast")
    sendcounts = 1
    types = MPI_INTEGER
    do k = 1, nranks
       displs(k) = 4 * (k - 1)
       sent(k) = 100 * rank + k - 1
    end do
    received = -1
    call MPI_Alltoallw(sent, sendcounts, displs, types, received, sendcounts, displs, types, &
         MPI_COMM_WORLD, ierr)
    do k = 1, nranks
       call check(received(k) == 100 * (k - 1) + rank, "Alltoallw")
    end do
  end subroutine fortran_traffic

end program test_monitor_fortran
