#include "clock.h"

/* Enough reads to see the step of a coarse clock (a few µs) and to average the read cost. */
#define ML_CLOCK_READS 200000

void ml_clock_measure(ml_clock_info_t *info)
{
    struct timespec res;
    clock_gettime(CLOCK_MONOTONIC, &res);
    clock_getres(CLOCK_MONOTONIC, &res);
    info->reported_resolution_ns = (double)res.tv_sec * 1e9 + (double)res.tv_nsec;

    int64_t smallest_step = INT64_MAX;
    int64_t first = ml_clock_ns();
    int64_t prev = first;
    for (int i = 0; i < ML_CLOCK_READS; i++) {
        int64_t now = ml_clock_ns();
        if (now > prev && now - prev < smallest_step)
            smallest_step = now - prev;
        prev = now;
    }
    info->read_cost_ns = (double)(prev - first) / ML_CLOCK_READS;
    info->resolution_ns = smallest_step == INT64_MAX ? info->reported_resolution_ns : (double)smallest_step;
}
