#include "compute.h"

#include <math.h>

#include "clock.h"

/* Results of the kernels are stored here so the compiler cannot drop the work. */
volatile double ml_compute_sink;

/* About 30 ns of dependent arithmetic between clock reads: fine enough to stop within a
 * fraction of a microsecond of the target, coarse enough that clock reads stay a small part. */
#define ML_OPS_PER_CLOCK_READ 10

int64_t ml_compute_time(int64_t target_ns)
{
    double r = 1.0;
    int64_t start = ml_clock_ns(), elapsed;
    do {
        for (int k = 0; k < ML_OPS_PER_CLOCK_READ; k++)
            r = r * 1.0000001 + 1e-9;
        elapsed = ml_clock_ns() - start;
    } while (elapsed < target_ns);
    ml_compute_sink = r;
    return elapsed;
}

/* One unit: two independent chains of four multiply-adds, a few nanoseconds on any core. */
static double work(uint64_t units)
{
    double a = 1.0, b = 2.0;
    for (uint64_t u = 0; u < units; u++) {
        a = a * 1.0000001 + 1e-9;
        b = b * 0.9999999 + 1e-9;
        a = a * 1.0000001 + 1e-9;
        b = b * 0.9999999 + 1e-9;
        a = a * 1.0000001 + 1e-9;
        b = b * 0.9999999 + 1e-9;
        a = a * 1.0000001 + 1e-9;
        b = b * 0.9999999 + 1e-9;
    }
    return a + b;
}

int64_t ml_compute_work(uint64_t units)
{
    int64_t start = ml_clock_ns();
    ml_compute_sink = work(units);
    return ml_clock_ns() - start;
}

/* The median of three runs: one preempted run must not throw the calibration off. */
static int64_t robust_cost(ml_cost_fn cost, void *ctx, uint64_t units, int *steps)
{
    int64_t a = cost(units, ctx), b = cost(units, ctx), c = cost(units, ctx);
    *steps += 3;
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    if (b > c) {
        int64_t t = b;
        b = c;
        c = t;
    }
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    return b;
}

#define ML_MAX_UNITS (UINT64_C(1) << 40)
#define ML_MAX_REFINEMENTS 8

int ml_calibrate_units(ml_cost_fn cost, void *ctx, int64_t target_ns, double tolerance, ml_calibration_t *out)
{
    if (target_ns <= 0)
        return -1;
    int steps = 0;
    uint64_t units = 1;
    int64_t t = robust_cost(cost, ctx, units, &steps);

    /* Grow geometrically until within a factor of two, so the proportional step below starts
     * where the fixed overhead no longer dominates. */
    while (t < target_ns / 2 && units < ML_MAX_UNITS) {
        double factor = t > 0 ? (double)target_ns / (double)t : 16.0;
        factor = factor < 2.0 ? 2.0 : factor > 16.0 ? 16.0 : factor;
        units = (uint64_t)((double)units * factor);
        t = robust_cost(cost, ctx, units, &steps);
    }

    /* With cost = a*units + b, units <- units * target / cost converges to the exact answer. */
    for (int i = 0; i < ML_MAX_REFINEMENTS; i++) {
        if (fabs((double)(t - target_ns)) <= tolerance * (double)target_ns)
            break;
        double next = t > 0 ? round((double)units * (double)target_ns / (double)t) : 2.0 * (double)units;
        uint64_t next_units = next < 1.0 ? 1 : next > (double)ML_MAX_UNITS ? ML_MAX_UNITS : (uint64_t)next;
        if (next_units == units)
            break;
        units = next_units;
        t = robust_cost(cost, ctx, units, &steps);
    }

    out->units = units;
    out->achieved_ns = t;
    out->steps = steps;
    out->converged = fabs((double)(t - target_ns)) <= tolerance * (double)target_ns;
    return 0;
}

static int64_t work_cost(uint64_t units, void *ctx)
{
    (void)ctx;
    return ml_compute_work(units);
}

int ml_work_calibrate(int64_t target_ns, double tolerance, ml_calibration_t *out)
{
    return ml_calibrate_units(work_cost, NULL, target_ns, tolerance, out);
}
