#include "schedule.h"

int64_t ml_tests_for(int64_t size, int64_t interval)
{
    if (interval <= 0 || size < 0)
        return 0;
    return size / interval + 1;
}

/* floor(total * upto / slices) for upto <= slices, without overflow: with total = q * slices + r,
 * it is q * upto + r * upto / slices; q * upto <= total, and r * upto < slices^2 fits while
 * slices <= 2^32. */
static int64_t fraction_of(int64_t total, uint64_t upto, uint64_t slices)
{
    uint64_t t = (uint64_t)total, q = t / slices, r = t % slices;
    return (int64_t)(q * upto + r * upto / slices);
}

int64_t ml_slice_end(int64_t total, int64_t tests, int64_t k)
{
    return fraction_of(total, (uint64_t)k + 1, (uint64_t)tests + 1);
}

int64_t ml_test_at(int64_t total, int64_t tests, int64_t k, ml_placement_t placement)
{
    if (placement == ML_PLACE_EVEN)
        return ml_slice_end(total, tests, k);
    return tests > 1 ? fraction_of(total, (uint64_t)k, (uint64_t)tests - 1) : 0;
}
