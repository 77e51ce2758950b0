/* The CPU that timer interrupts and the context switches they cause take from computing threads
 * (seed 002, §V-B2). No MPI: it loads every processing unit of the machine the process may use,
 * one thread each, as the seed does, not only those the rank is bound to. */
#ifndef MPILENS_PROGRESS_INTERRUPTS_H
#define MPILENS_PROGRESS_INTERRUPTS_H

#include <stdint.h>

typedef struct {
    double rate_hz;  /* timer expirations asked for per second (the seed: 8192) */
    int64_t work_ns; /* what the fixed workload takes on a quiet core */
    int rounds;      /* each round measures both stages */
} interrupt_opts_t;

typedef struct {
    int threads;             /* one computing thread per processing unit of the machine */
    int rank_cpus;           /* the processing units the measuring rank itself is bound to */
    double t1_ns, t2_ns;     /* workload time per thread, without and with the timer (median of rounds) */
    double wakeups;          /* the timer thread's wake-ups during stage 2 (median of rounds) */
    double achieved_hz;      /* wake-ups per second while the timer ran (median of rounds) */
    double per_interrupt_ns; /* CPU taken per wake-up per core: (t2 - t1) * threads / wakeups */
    double spread;           /* relative spread (max - min) / median of stage 1's thread times */
} interrupt_result_t;

/* Stage 1: every thread computes the workload; stage 2: the same while a timer thread, bound to
 * nothing, wakes at rate_hz (timerfd). Returns 0, or -1 with errno: EINVAL for bad options,
 * ENOMEM, EAGAIN when a thread cannot be created, or timerfd_create's error. */
int progress_interrupt_cost(const interrupt_opts_t *opts, interrupt_result_t *out);

#endif
