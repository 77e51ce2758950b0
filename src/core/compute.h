/* Computation kernels that stand in for an application's work while communication is pending.
 *
 * Two kinds, because they answer different questions (seed 002, §V-B3):
 * - time-based: spin until a wall-clock duration has passed. Communication overlap shows as a
 *   shorter total, but CPU stolen by a progress thread or interrupts is invisible.
 * - work-based: a fixed amount of work calibrated to a target duration. Stolen CPU makes it
 *   last longer, so the cost of progression shows.
 * Both report the duration they achieved beside the one requested. Neither calls MPI: any
 * progress made during them is background progress. */
#ifndef MPILENS_CORE_COMPUTE_H
#define MPILENS_CORE_COMPUTE_H

#include <stdint.h>

/* Busy loop for target_ns, reading the clock every few floating-point operations. Returns the
 * achieved duration (>= target_ns). */
int64_t ml_compute_time(int64_t target_ns);

/* Runs `units` units of fixed work, no clock reads inside; returns its duration. */
int64_t ml_compute_work(uint64_t units);

/* Duration of running `units` units of some work, in ns. */
typedef int64_t (*ml_cost_fn)(uint64_t units, void *ctx);

typedef struct {
    uint64_t units;      /* the calibrated amount of work */
    int64_t achieved_ns; /* its measured duration (median of a few runs) */
    int steps;           /* measurements made */
    int converged;       /* achieved within the tolerance of the target */
} ml_calibration_t;

/* Finds the number of units whose cost is target_ns within `tolerance` (relative). Assumes the
 * cost grows with units, roughly linearly with a fixed overhead. Targets below the cost of one
 * unit give units = 1 and converged = 0. Returns 0, or -1 for a target <= 0. */
int ml_calibrate_units(ml_cost_fn cost, void *ctx, int64_t target_ns, double tolerance, ml_calibration_t *out);

/* ml_calibrate_units applied to the work kernel of ml_compute_work. */
int ml_work_calibrate(int64_t target_ns, double tolerance, ml_calibration_t *out);

#endif
