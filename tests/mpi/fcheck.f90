! Checks for the Fortran MPI tests, as tests/include/check.h for the C ones: a failed check prints
! the rank (check_rank, which the test sets) and what failed, and is counted in check_failures.
module fcheck
  implicit none
  integer :: check_failures = 0, check_rank = -1
contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
       check_failures = check_failures + 1
       print '(a, i0, 2a)', "rank ", check_rank, ": check failed: ", what
    end if
  end subroutine check

end module fcheck
