/* When the `test` strategy tests (seed 002, §V-A): pure arithmetic, unit-tested
 * (tests/unit/test_progress_schedule.c).
 *
 * A message of `size` bytes tested every `interval` bytes gets N = floor(size / interval) + 1
 * tests: at least one, so that even a message smaller than the interval is tested once, and one
 * more per whole interval it holds. The tests are spread evenly through the computation: they
 * cut it into N + 1 slices as equal as integers allow, and test k (1..N) comes at the end of
 * slice k. No test comes at the very start or the very end: the start call and the wait are
 * there already, a test beside them would progress nothing the next MPI call does not. One test
 * goes in the middle of the computation, two at its thirds, and so on (ML_PLACE_EVEN).
 *
 * The seed places them otherwise (ML_PLACE_SEED, §V-A: "one test at the beginning, one after 50%
 * of the computation and one at the end" for N = 3): test k (0..N-1) at k / (N - 1) of the
 * computation, the first at its start and the last at its end; a single test at the start.
 *
 * The same positions serve both kinds of computation: nanoseconds of the time-based kernel, units
 * of the work-based one. */
#ifndef MPILENS_PROGRESS_SCHEDULE_H
#define MPILENS_PROGRESS_SCHEDULE_H

#include <stdint.h>

/* N = floor(size / interval) + 1; 0 for an interval <= 0 or a negative size (no schedule). */
int64_t ml_tests_for(int64_t size, int64_t interval);

/* Where slice k (0..tests) of a computation of `total` (ns or units, >= 0) ends, cut into
 * tests + 1 slices: floor(total * (k + 1) / (tests + 1)), exact for any total and for tests
 * below 2^32 (messages are at most 2^31 - 1 bytes, so N is too). Test k + 1 comes at that point,
 * for k < tests; the last slice ends at total. */
int64_t ml_slice_end(int64_t total, int64_t tests, int64_t k);

typedef enum { ML_PLACE_EVEN, ML_PLACE_SEED } ml_placement_t;

/* Where test k (0..tests-1) of `tests` comes in a computation of `total` (>= 0): even,
 * ml_slice_end(total, tests, k); seed, floor(total * k / (tests - 1)), 0 for a single test.
 * Non-decreasing in k, between 0 and total. */
int64_t ml_test_at(int64_t total, int64_t tests, int64_t k, ml_placement_t placement);

#endif
