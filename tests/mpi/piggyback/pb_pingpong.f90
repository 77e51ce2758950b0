! A ping-pong written in Fortran, for libmpilens-piggyback's Fortran entry points: under the layer
! with the check driver (test_pb_layer.sh) every message's pb is verified. Ranks 2k and 2k+1 are
! partners (an odd last rank sits out). Each exchange goes through another Fortran call: Send and
! Recv (statuses and their counts), Isend, Irecv and Waitall (MPI_STATUSES_IGNORE), Sendrecv,
! receives from MPI_ANY_SOURCE with MPI_ANY_TAG, persistent requests started and waited for,
! Probe and Iprobe, Testany (1-based index). Payloads are checked, and rank 0 prints "expected N
! messages with piggyback" (the count the driver must report) and "passed" on stderr when every
! check held, like test_pb_calls.
program pb_pingpong
  use mpi
  use fcheck
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  integer :: ierr, rank, nranks, partner, all_failures, received, all_received
  integer :: status(MPI_STATUS_SIZE), requests(2), count, index, k, flag, size_index
  integer :: sizes(3) = [1, 100, 10000]
  integer, allocatable :: out(:), in(:)
  logical :: done, first

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  check_rank = rank
  received = 0
  partner = merge(rank + 1, rank - 1, mod(rank, 2) == 0)
  first = mod(rank, 2) == 0
  allocate(out(10000), in(10000))

  if (partner < nranks) then
     do size_index = 1, 3
        count = sizes(size_index)
        call fill(out, count, 1)
        if (first) then
           call MPI_Send(out, count, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, ierr)
           call MPI_Recv(in, count, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, status, ierr)
        else
           call MPI_Recv(in, count, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, status, ierr)
           call MPI_Send(out, count, MPI_INTEGER, partner, 1, MPI_COMM_WORLD, ierr)
        end if
        call MPI_Get_count(status, MPI_INTEGER, k, ierr)
        call check(k == count .and. status(MPI_SOURCE) == partner, "Recv's status counts the payload")
        call expect(in, count, 1)
     end do

     call fill(out, 500, 2)
     call MPI_Irecv(in, 500, MPI_INTEGER, partner, 2, MPI_COMM_WORLD, requests(1), ierr)
     call MPI_Isend(out, 500, MPI_INTEGER, partner, 2, MPI_COMM_WORLD, requests(2), ierr)
     call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
     call expect(in, 500, 2)

     call fill(out, 50, 3)
     call MPI_Sendrecv(out, 50, MPI_INTEGER, partner, 3, in, 50, MPI_INTEGER, partner, 3, &
          MPI_COMM_WORLD, status, ierr)
     call expect(in, 50, 3)

     call fill(out, 7, 4)
     if (first) then
        call MPI_Send(out, 7, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, ierr)
        call MPI_Recv(in, 10000, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
     else
        call MPI_Recv(in, 10000, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status, ierr)
        call MPI_Send(out, 7, MPI_INTEGER, partner, 4, MPI_COMM_WORLD, ierr)
     end if
     call MPI_Get_count(status, MPI_INTEGER, k, ierr)
     call check(k == 7 .and. status(MPI_SOURCE) == partner .and. status(MPI_TAG) == 4, &
          "a wildcard receive's status")
     call expect(in, 7, 4)

     call fill(out, 30, 5)
     call MPI_Send_init(out, 30, MPI_INTEGER, partner, 5, MPI_COMM_WORLD, requests(2), ierr)
     call MPI_Recv_init(in, 30, MPI_INTEGER, partner, 5, MPI_COMM_WORLD, requests(1), ierr)
     do k = 1, 3
        call MPI_Start(requests(1), ierr)
        call MPI_Start(requests(2), ierr)
        call MPI_Wait(requests(1), status, ierr)
        call MPI_Wait(requests(2), MPI_STATUS_IGNORE, ierr)
        call expect(in, 30, 5)
     end do
     call MPI_Request_free(requests(1), ierr)
     call MPI_Request_free(requests(2), ierr)

     call fill(out, 20, 6)
     if (first) then
        call MPI_Send(out, 20, MPI_INTEGER, partner, 6, MPI_COMM_WORLD, ierr)
        call MPI_Probe(partner, 6, MPI_COMM_WORLD, status, ierr)
     else
        flag = 0
        do while (flag == 0)
           call probe_flag(flag, status)
        end do
        call MPI_Send(out, 20, MPI_INTEGER, partner, 6, MPI_COMM_WORLD, ierr)
     end if
     call MPI_Get_count(status, MPI_INTEGER, k, ierr)
     call check(k == 20, "a probe's status counts the payload")
     call MPI_Recv(in, 20, MPI_INTEGER, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
     call expect(in, 20, 6)

     call fill(out, 3, 7)
     call MPI_Irecv(in, 3, MPI_INTEGER, partner, 7, MPI_COMM_WORLD, requests(1), ierr)
     call MPI_Isend(out, 3, MPI_INTEGER, partner, 7, MPI_COMM_WORLD, requests(2), ierr)
     k = 0
     do while (k < 3)
        call MPI_Testany(2, requests, index, done, MPI_STATUS_IGNORE, ierr)
        if (done .and. index /= MPI_UNDEFINED) then
           call check(index == 1 .or. index == 2, "Testany's index is 1-based")
           k = k + index
        end if
     end do
     call expect(in, 3, 7)
     ! 3 ping-pongs, Isend, Sendrecv, wildcard, 3 starts, probe, Testany: one message each
     received = 3 + 1 + 1 + 1 + 3 + 1 + 1
  end if

  call MPI_Reduce(received, all_received, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(check_failures, all_failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     print '(a, i0, a)', "expected ", all_received, " messages with piggyback"
     if (all_failures == 0) write (error_unit, '(a)') "passed"
  end if
  call MPI_Finalize(ierr)
  if (all_failures /= 0) stop 1

contains

  subroutine probe_flag(flag, status)
    integer, intent(out) :: flag, status(MPI_STATUS_SIZE)
    logical :: arrived
    call MPI_Iprobe(partner, 6, MPI_COMM_WORLD, arrived, status, ierr)
    flag = merge(1, 0, arrived)
  end subroutine probe_flag

  ! What rank r sends in exchange e: values no other exchange or rank sends.
  subroutine fill(buffer, n, exchange)
    integer, intent(out) :: buffer(:)
    integer, intent(in) :: n, exchange
    integer :: i
    do i = 1, n
       buffer(i) = 1000000 * exchange + 1000 * rank + i
    end do
  end subroutine fill

  subroutine expect(buffer, n, exchange)
    integer, intent(in) :: buffer(:), n, exchange
    integer :: i
    do i = 1, n
       if (buffer(i) /= 1000000 * exchange + 1000 * partner + i) then
          call check(.false., "a payload arrived intact")
          return
       end if
    end do
  end subroutine expect

end program pb_pingpong
