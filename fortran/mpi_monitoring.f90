! mpi_monitoring: the Fortran interface of libmpilens-monitor (seed 004, 4.3).
!
! As seed 004 defines it: a session identifier is an INTEGER, and every procedure has one more
! argument, last, that receives the return value (MPI_SUCCESS or an MPI_M_* error code).
! Counters are INTEGER(KIND=8) arrays. MPI_M_INT_IGNORE and MPI_M_DATA_IGNORE may be passed for
! outputs that are not wanted. Unlike C, Fortran knows an array's size: one too small for the
! data (the communicator's size for get_data, its square for allgather_data) is refused with
! MPI_M_INVALID_ARG before anything is written.
module mpi_monitoring
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: MPI_M_ALL_MSID = -1
  integer, parameter, public :: MPI_M_P2P_ONLY = 1, MPI_M_COLL_ONLY = 2, MPI_M_OSC_ONLY = 4, MPI_M_ALL_COMM = 7
  integer, parameter, public :: MPI_M_INTERNAL_FAIL = -1001, MPI_M_MPIT_FAIL = -1002, &
       MPI_M_MISSING_INIT = -1003, MPI_M_SESSION_STILL_ACTIVE = -1004, &
       MPI_M_SESSION_NOT_SUSPENDED = -1005, MPI_M_INVALID_MSID = -1006, &
       MPI_M_SESSION_OVERFLOW = -1007, MPI_M_MULTIPLE_CALL = -1008, MPI_M_INVALID_ROOT = -1009, &
       MPI_M_INVALID_ARG = -1010
  integer, parameter, public :: MPI_M_MAX_SESSIONS = 1024
  integer, parameter, public :: MPI_M_BACKEND_PMPI = 1, MPI_M_BACKEND_OMPI_MPIT = 2

  ! Sentinels: passed as an output, they say "not wanted" (recognised by address).
  integer, target, public, save :: MPI_M_INT_IGNORE
  integer(kind=8), target, public, save :: MPI_M_DATA_IGNORE(1)

  public :: MPI_M_init, MPI_M_finalize, MPI_M_start, MPI_M_suspend, MPI_M_continue, MPI_M_reset, &
       MPI_M_free, MPI_M_get_info, MPI_M_get_data, MPI_M_allgather_data, MPI_M_rootgather_data, &
       MPI_M_flush, MPI_M_rootflush, MPI_M_get_backend

  interface
     integer(c_int) function c_init() bind(C, name="MPI_M_init")
       import :: c_int
     end function c_init
     integer(c_int) function c_finalize() bind(C, name="MPI_M_finalize")
       import :: c_int
     end function c_finalize
     integer(c_int) function c_start(comm, msid) bind(C, name="mpilens_f_m_start")
       import :: c_int
       integer(c_int), value :: comm
       integer(c_int), intent(out) :: msid
     end function c_start
     integer(c_int) function c_suspend(msid) bind(C, name="MPI_M_suspend")
       import :: c_int
       integer(c_int), value :: msid
     end function c_suspend
     integer(c_int) function c_continue(msid) bind(C, name="MPI_M_continue")
       import :: c_int
       integer(c_int), value :: msid
     end function c_continue
     integer(c_int) function c_reset(msid) bind(C, name="MPI_M_reset")
       import :: c_int
       integer(c_int), value :: msid
     end function c_reset
     integer(c_int) function c_free(msid) bind(C, name="MPI_M_free")
       import :: c_int
       integer(c_int), value :: msid
     end function c_free
     integer(c_int) function c_get_info(msid, provided, array_size) bind(C, name="MPI_M_get_info")
       import :: c_int, c_ptr
       integer(c_int), value :: msid
       type(c_ptr), value :: provided, array_size
     end function c_get_info
     integer(c_int) function c_get_data(msid, counts, sizes, flags) bind(C, name="MPI_M_get_data")
       import :: c_int, c_ptr
       integer(c_int), value :: msid, flags
       type(c_ptr), value :: counts, sizes
     end function c_get_data
     integer(c_int) function c_allgather_data(msid, counts, sizes, flags) bind(C, name="MPI_M_allgather_data")
       import :: c_int, c_ptr
       integer(c_int), value :: msid, flags
       type(c_ptr), value :: counts, sizes
     end function c_allgather_data
     integer(c_int) function c_rootgather_data(msid, root, counts, sizes, flags) &
          bind(C, name="MPI_M_rootgather_data")
       import :: c_int, c_ptr
       integer(c_int), value :: msid, root, flags
       type(c_ptr), value :: counts, sizes
     end function c_rootgather_data
     integer(c_int) function c_flush(msid, filename, flags) bind(C, name="MPI_M_flush")
       import :: c_int, c_char
       integer(c_int), value :: msid, flags
       character(kind=c_char), intent(in) :: filename(*)
     end function c_flush
     integer(c_int) function c_rootflush(msid, root, filename, flags) bind(C, name="MPI_M_rootflush")
       import :: c_int, c_char
       integer(c_int), value :: msid, root, flags
       character(kind=c_char), intent(in) :: filename(*)
     end function c_rootflush
     integer(c_int) function c_get_backend(kind, backend) bind(C, name="MPI_M_get_backend")
       import :: c_int
       integer(c_int), value :: kind
       integer(c_int), intent(out) :: backend
     end function c_get_backend
  end interface

contains

  ! The C pointer for an output array, or NULL when it is MPI_M_DATA_IGNORE.
  function data_ptr(array) result(p)
    integer(kind=8), target, contiguous, intent(in) :: array(:)
    type(c_ptr) :: p
    p = c_loc(array)
    if (c_associated(p, c_loc(MPI_M_DATA_IGNORE))) p = c_null_ptr
  end function data_ptr

  ! Whether an output array can hold `needed` values (the IGNORE sentinel always can).
  logical function holds(array, needed)
    integer(kind=8), target, contiguous, intent(in) :: array(:)
    integer, intent(in) :: needed
    holds = .not. c_associated(data_ptr(array)) .or. size(array) >= needed
  end function holds

  ! The size of the session's communicator, or a negative error code.
  integer function session_size(msid)
    integer, intent(in) :: msid
    integer, target :: n
    integer :: rc
    rc = c_get_info(msid, c_null_ptr, c_loc(n))
    session_size = merge(n, rc, rc == 0)
  end function session_size

  function int_ptr(value) result(p)
    integer, target, intent(in) :: value
    type(c_ptr) :: p
    p = c_loc(value)
    if (c_associated(p, c_loc(MPI_M_INT_IGNORE))) p = c_null_ptr
  end function int_ptr

  function c_string(text) result(s)
    character(len=*), intent(in) :: text
    character(kind=c_char) :: s(len_trim(text) + 1)
    integer :: i
    do i = 1, len_trim(text)
       s(i) = text(i:i)
    end do
    s(len_trim(text) + 1) = c_null_char
  end function c_string

  subroutine MPI_M_init(retval)
    integer, intent(out) :: retval
    retval = c_init()
  end subroutine MPI_M_init

  subroutine MPI_M_finalize(retval)
    integer, intent(out) :: retval
    retval = c_finalize()
  end subroutine MPI_M_finalize

  subroutine MPI_M_start(comm, msid, retval)
    integer, intent(in) :: comm
    integer, intent(out) :: msid, retval
    retval = c_start(comm, msid)
  end subroutine MPI_M_start

  subroutine MPI_M_suspend(msid, retval)
    integer, intent(in) :: msid
    integer, intent(out) :: retval
    retval = c_suspend(msid)
  end subroutine MPI_M_suspend

  subroutine MPI_M_continue(msid, retval)
    integer, intent(in) :: msid
    integer, intent(out) :: retval
    retval = c_continue(msid)
  end subroutine MPI_M_continue

  subroutine MPI_M_reset(msid, retval)
    integer, intent(in) :: msid
    integer, intent(out) :: retval
    retval = c_reset(msid)
  end subroutine MPI_M_reset

  subroutine MPI_M_free(msid, retval)
    integer, intent(in) :: msid
    integer, intent(out) :: retval
    retval = c_free(msid)
  end subroutine MPI_M_free

  subroutine MPI_M_get_info(msid, provided, array_size, retval)
    integer, intent(in) :: msid
    integer, target, intent(inout) :: provided, array_size
    integer, intent(out) :: retval
    retval = c_get_info(msid, int_ptr(provided), int_ptr(array_size))
  end subroutine MPI_M_get_info

  subroutine MPI_M_get_data(msid, msg_counts, msg_sizes, flags, retval)
    integer, intent(in) :: msid, flags
    integer(kind=8), target, contiguous, intent(inout) :: msg_counts(:), msg_sizes(:)
    integer, intent(out) :: retval
    integer :: n
    n = session_size(msid)
    if (n < 0) then
       retval = n
    else if (.not. (holds(msg_counts, n) .and. holds(msg_sizes, n))) then
       retval = MPI_M_INVALID_ARG
    else
       retval = c_get_data(msid, data_ptr(msg_counts), data_ptr(msg_sizes), flags)
    end if
  end subroutine MPI_M_get_data

  ! A collective: every rank checks the same size, so all refuse or none does.
  subroutine MPI_M_allgather_data(msid, matrix_counts, matrix_sizes, flags, retval)
    integer, intent(in) :: msid, flags
    integer(kind=8), target, contiguous, intent(inout) :: matrix_counts(:), matrix_sizes(:)
    integer, intent(out) :: retval
    integer :: n
    n = session_size(msid)
    if (n < 0) then
       retval = n
    else if (.not. (holds(matrix_counts, n * n) .and. holds(matrix_sizes, n * n))) then
       retval = MPI_M_INVALID_ARG
    else
       retval = c_allgather_data(msid, data_ptr(matrix_counts), data_ptr(matrix_sizes), flags)
    end if
  end subroutine MPI_M_allgather_data

  ! Only root's arrays receive data, and only root knows it is root: sizes are not checked here.
  subroutine MPI_M_rootgather_data(msid, root, matrix_counts, matrix_sizes, flags, retval)
    integer, intent(in) :: msid, root, flags
    integer(kind=8), target, contiguous, intent(inout) :: matrix_counts(:), matrix_sizes(:)
    integer, intent(out) :: retval
    retval = c_rootgather_data(msid, root, data_ptr(matrix_counts), data_ptr(matrix_sizes), flags)
  end subroutine MPI_M_rootgather_data

  subroutine MPI_M_flush(msid, filename, flags, retval)
    integer, intent(in) :: msid, flags
    character(len=*), intent(in) :: filename
    integer, intent(out) :: retval
    retval = c_flush(msid, c_string(filename), flags)
  end subroutine MPI_M_flush

  subroutine MPI_M_rootflush(msid, root, filename, flags, retval)
    integer, intent(in) :: msid, root, flags
    character(len=*), intent(in) :: filename
    integer, intent(out) :: retval
    retval = c_rootflush(msid, root, c_string(filename), flags)
  end subroutine MPI_M_rootflush

  subroutine MPI_M_get_backend(kind, backend, retval)
    integer, intent(in) :: kind
    integer, intent(out) :: backend, retval
    retval = c_get_backend(kind, backend)
  end subroutine MPI_M_get_backend

end module mpi_monitoring
