#include "schedule.h"

int64_t ml_tests_for(int64_t size, int64_t interval)
{
    if (interval <= 0 || size < 0)
        return 0;
    return size / interval + 1;
}

int64_t ml_slice_end(int64_t total, int64_t tests, int64_t k)
{
    uint64_t slices = (uint64_t)tests + 1, t = (uint64_t)total, upto = (uint64_t)k + 1;
    /* total * upto / slices as (q * slices + r) * upto / slices = q * upto + r * upto / slices:
     * q * upto <= total, and r * upto < slices^2 fits while slices <= 2^32 */
    uint64_t q = t / slices, r = t % slices;
    return (int64_t)(q * upto + r * upto / slices);
}
