/* bench/core_overhead: what the measurement core itself costs, so its share of any measured time
 * is known. Prints the cost of a clock read, of adding one repetition to a sample and checking
 * the stopping rule (amortised over a typical point), and how close the work kernel comes to its
 * calibrated duration. Figures, not assertions: the machine may be busy. */
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "compute.h"
#include "stats.h"

#define READS 2000000
#define POINTS 2000
#define REPS_PER_POINT 200

static double clock_read_ns(void)
{
    int64_t sink = 0, t0 = ml_clock_ns();
    for (int i = 0; i < READS; i++)
        sink += ml_clock_ns();
    int64_t t1 = ml_clock_ns();
    if (sink == 42)
        puts("");
    return (double)(t1 - t0) / READS;
}

/* A point's worth of repetitions with the auto rule's checks, as a benchmark does them. */
static double stats_update_ns(void)
{
    ml_stop_rule_t rule = ml_stop_rule_auto();
    rule.precision = 0.0; /* never satisfied: every check does its full work */
    rule.max_reps = REPS_PER_POINT + 1;
    ml_sample_t sample = {0};
    int64_t t0 = ml_clock_ns();
    for (int p = 0; p < POINTS; p++) {
        ml_stopper_t stopper;
        ml_stopper_start(&stopper, &rule);
        ml_sample_reset(&sample);
        for (int r = 0; r < REPS_PER_POINT; r++) {
            ml_sample_add(&sample, 1000.0 + (double)((r * 7919) % 113));
            ml_stopper_check(&stopper, &sample);
        }
    }
    int64_t t1 = ml_clock_ns();
    ml_sample_free(&sample);
    return (double)(t1 - t0) / ((double)POINTS * REPS_PER_POINT);
}

int main(void)
{
    ml_clock_info_t info;
    ml_clock_measure(&info);
    printf("clock: resolution %.0f ns (clock_getres says %.0f ns)\n", info.resolution_ns, info.reported_resolution_ns);
    printf("clock read: %.1f ns\n", clock_read_ns());
    printf("stats update (add one repetition + stopping-rule check, %d reps per point): %.1f ns\n", REPS_PER_POINT,
           stats_update_ns());

    static const int64_t targets[] = {1000, 10000, 100000, 1000000};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        ml_calibration_t cal;
        ml_work_calibrate(targets[i], 0.02, &cal);
        int64_t again = ml_compute_work(cal.units);
        printf("work kernel %8lld ns target: %llu units, calibrated %lld ns, rerun %lld ns (ratio %.3f), %d "
               "calibration runs\n",
               (long long)targets[i], (unsigned long long)cal.units, (long long)cal.achieved_ns, (long long)again,
               (double)again / (double)targets[i], cal.steps);
    }
    return 0;
}
