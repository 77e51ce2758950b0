/* How much of a span of time the calling thread had a core.
 *
 * A thread that never blocks (a rank that spins in its waits) runs the whole span unless the core
 * is taken from it: by another process of the machine (the scheduler preempts it) or by the host
 * of a virtual machine (steal time, which Linux leaves out of a thread's CPU time as of the
 * scheduler's paravirtual clock). Timings that such a thread makes are only as good as the share
 * it ran: a rank that waits for its core adds that wait to every latency it times (one process
 * spinning beside 2 ranks on 2 cores put seed 003's hop-delay truths 48% to 58% off). Linux only:
 * CLOCK_THREAD_CPUTIME_ID and /proc/stat. No MPI calls. */
#ifndef MPILENS_CORE_ONCORE_H
#define MPILENS_CORE_ONCORE_H

#include <stdint.h>

typedef struct {
    int64_t wall_ns, cpu_ns;
    long long steal_ticks, all_ticks; /* the machine's CPU time so far; -1 where /proc/stat is not read */
} ml_oncore_t;

/* The start of a span, on the calling thread. */
void ml_oncore_start(ml_oncore_t *start);

/* Over the span since start, on the same thread, less slept_ns, the wall time the thread chose not
 * to run (its own sleeps, as it timed them): *off_core, the share of the rest the thread did not
 * run (0 to 1; for a thread that otherwise spun, the share the cores were taken from it), and
 * *steal, the share of the machine's CPU time its host took (0 to 1, NAN where unknown: no
 * /proc/stat, or no tick counted in a span shorter than one tick). */
void ml_oncore_since(const ml_oncore_t *start, int64_t slept_ns, double *off_core, double *steal);

#endif
