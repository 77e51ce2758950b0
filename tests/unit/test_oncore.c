/* The share of a span a thread ran (src/core/oncore.c) against known truths: a thread that sleeps
 * through a span does not run (its CPU time over a 20 ms sleep is the microseconds of the call),
 * so it was off its core nearly all of it; sleeps of its own that cover the whole span leave
 * none of it to be off its core in (0, not a negative share or NaN). Shares stay within 0 and 1. */
#include <math.h>
#include <time.h>

#include "check.h"
#include "clock.h"
#include "oncore.h"

static int64_t sleep_ms(long ms)
{
    struct timespec t = {0, ms * 1000000};
    int64_t start = ml_clock_ns();
    nanosleep(&t, NULL);
    return ml_clock_ns() - start;
}

static void check_steal(double steal) { CHECK(isnan(steal) || (steal >= 0 && steal <= 1)); }

int main(void)
{
    ml_oncore_t start;
    double off_core, steal;

    ml_oncore_start(&start);
    sleep_ms(20);
    ml_oncore_since(&start, 0, &off_core, &steal);
    CHECK(off_core >= 0.9 && off_core <= 1);
    check_steal(steal);

    /* 20 ms of its own sleep against a span of microseconds */
    int64_t slept = sleep_ms(20);
    ml_oncore_start(&start);
    ml_oncore_since(&start, slept, &off_core, &steal);
    CHECK(off_core == 0);
    check_steal(steal);
    CHECK_DONE();
}
