#include "oncore.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

#include "clock.h"

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The first line of /proc/stat: "cpu  user nice system idle iowait irq softirq steal guest
 * guest_nice", in clock ticks summed over the CPUs. guest and guest_nice are already counted in
 * user and nice, so the machine's time is the first eight. */
static void read_machine_ticks(long long *steal, long long *all)
{
    *steal = *all = -1;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    long long v[8];
    int n = fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                   &v[7]);
    fclose(f);
    if (n != 8)
        return;
    *steal = v[7];
    *all = 0;
    for (int i = 0; i < 8; i++)
        *all += v[i];
}

void ml_oncore_start(ml_oncore_t *start)
{
    read_machine_ticks(&start->steal_ticks, &start->all_ticks);
    start->cpu_ns = thread_cpu_ns();
    start->wall_ns = ml_clock_ns();
}

void ml_oncore_since(const ml_oncore_t *start, int64_t slept_ns, double *off_core, double *steal)
{
    int64_t wall = ml_clock_ns() - start->wall_ns - slept_ns, cpu = thread_cpu_ns() - start->cpu_ns;
    long long steal_ticks, all_ticks;
    read_machine_ticks(&steal_ticks, &all_ticks);
    double off = wall > 0 ? 1.0 - (double)cpu / (double)wall : 0.0;
    *off_core = fmin(1.0, fmax(0.0, off)); /* the two clocks are read a few ns apart */
    long long d_all = all_ticks - start->all_ticks;
    *steal = start->all_ticks >= 0 && all_ticks >= 0 && d_all > 0
                 ? fmin(1.0, fmax(0.0, (double)(steal_ticks - start->steal_ticks) / (double)d_all))
                 : NAN;
}
