/* The computation of the overlap benchmarks (--kernel): `time`, the core's busy loop on the rank's
 * own thread (seed 000's time-based computation), or `openmp`, seed 000's multi-threaded
 * computation: the same wall-clock loop on --omp-threads threads of an OpenMP parallel region,
 * all until one deadline. Computing threads that take every core of the rank may keep an MPI
 * library's own progress (or libmpilens-progress's thread) from running: that is what the
 * openmp kernel shows. No OpenMP thread calls MPI. */
#include <omp.h>

#include "clock.h"
#include "compute.h"
#include "overlap.h"

/* Each thread runs the core's busy loop for what is left until the region's deadline. */
static int64_t compute_openmp(int threads, int64_t ns)
{
    int64_t t0 = ml_clock_ns(), until = t0 + ns;
#pragma omp parallel num_threads(threads)
    {
        int64_t left = until - ml_clock_ns();
        if (left > 0)
            ml_compute_time(left);
    }
    return ml_clock_ns() - t0;
}

int64_t overlap_compute(const overlap_t *o, int64_t ns)
{
    if (ns <= 0)
        return 0;
    return o->omp_threads > 0 ? compute_openmp((int)o->omp_threads, ns) : ml_compute_time(ns);
}
