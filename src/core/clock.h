/* The one clock of mpilens: CLOCK_MONOTONIC in nanoseconds.
 *
 * Every benchmark times with this clock, never MPI_Wtime, so results are uniform across MPI
 * libraries (seed 000, "Uniform timing"). */
#ifndef MPILENS_CORE_CLOCK_H
#define MPILENS_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

#define ML_CLOCK_SOURCE "CLOCK_MONOTONIC"

static inline int64_t ml_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

typedef struct {
    double resolution_ns;          /* smallest non-zero step seen between two consecutive reads */
    double reported_resolution_ns; /* what clock_getres() claims */
    double read_cost_ns;           /* mean cost of one read */
} ml_clock_info_t;

/* Measures the clock on this process (a few milliseconds of work). */
void ml_clock_measure(ml_clock_info_t *info);

#endif
