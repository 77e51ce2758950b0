/* Calibration logic of the work kernel, on synthetic cost functions with known answers (so the
 * test does not depend on the machine), and the time-based kernel's guarantee. */
#include <stdint.h>

#include "check.h"
#include "compute.h"

typedef struct {
    double ns_per_unit, overhead_ns, noise; /* noise: relative amplitude, deterministic */
    int calls;
} linear_cost_t;

static int64_t linear_cost(uint64_t units, void *ctx)
{
    linear_cost_t *c = ctx;
    c->calls++;
    /* A deterministic wobble of +-noise, and with noise, a run slowed by half (a preemption)
     * in every third call: the calibration must see through one bad run in three. */
    double wobble = (c->calls % 2 ? 1 : -1) * c->noise + (c->noise > 0 && c->calls % 3 == 1 ? 0.5 : 0.0);
    return (int64_t)((c->ns_per_unit * (double)units + c->overhead_ns) * (1.0 + wobble));
}

static void test_linear(void)
{
    static const int64_t targets[] = {1000, 10000, 1000000, 100000000};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        linear_cost_t c = {3.7, 150.0, 0.0, 0};
        ml_calibration_t cal;
        CHECK(ml_calibrate_units(linear_cost, &c, targets[i], 0.01, &cal) == 0);
        CHECK(cal.converged);
        double exact = ((double)targets[i] - 150.0) / 3.7;
        CHECK_NEAR((double)cal.units, exact, exact * 0.01 + 1);
        CHECK_NEAR((double)cal.achieved_ns, (double)targets[i], 0.01 * (double)targets[i]);
        CHECK(cal.steps == c.calls);
        CHECK(cal.steps < 120); /* geometric growth, not a linear search */
    }
}

static void test_noisy(void)
{
    /* +-3% noise and a preempted run in every three: the median of three keeps it on target */
    linear_cost_t c = {2.0, 50.0, 0.03, 0};
    ml_calibration_t cal;
    CHECK(ml_calibrate_units(linear_cost, &c, 500000, 0.05, &cal) == 0);
    CHECK(cal.converged);
    CHECK_NEAR((double)cal.units, (500000.0 - 50.0) / 2.0, 0.05 * 250000.0);
}

static void test_unreachable(void)
{
    /* One unit already costs more than the target: units = 1, not converged, said so. */
    linear_cost_t c = {10.0, 500.0, 0.0, 0};
    ml_calibration_t cal;
    CHECK(ml_calibrate_units(linear_cost, &c, 100, 0.01, &cal) == 0);
    CHECK(cal.units == 1);
    CHECK(!cal.converged);
    CHECK(cal.achieved_ns == 510);
    CHECK(ml_calibrate_units(linear_cost, &c, 0, 0.01, &cal) == -1);
    CHECK(ml_calibrate_units(linear_cost, &c, -5, 0.01, &cal) == -1);
}

static void test_time_kernel(void)
{
    /* The busy loop runs until the target has passed: never shorter, by construction. */
    for (int64_t target = 0; target <= 200000; target += 50000)
        CHECK(ml_compute_time(target) >= target);
}

int main(void)
{
    test_linear();
    test_noisy();
    test_unreachable();
    test_time_kernel();
    CHECK_DONE();
}
