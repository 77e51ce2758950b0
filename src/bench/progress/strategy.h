/* One repetition of the overhead measurement (seed 002, §V-A and §V-B3), for any communication
 * that starts requests and waits for them: the blocking reference, and start - compute - wait
 * with the computation cut by tests (schedule.h). Point-to-point (p2p.c) and the collectives
 * (nbc.c) differ only in what "start" posts. */
#ifndef MPILENS_PROGRESS_STRATEGY_H
#define MPILENS_PROGRESS_STRATEGY_H

#include <mpi.h>
#include <stdint.h>

#include "schedule.h"
#include "stats.h"

#define ML_MAX_REQUESTS 2

/* Posts the communication's requests (at most ML_MAX_REQUESTS). */
typedef void (*ml_start_fn)(void *ctx, MPI_Request *requests);

typedef struct {
    ml_start_fn start;
    void *ctx;
    int requests; /* how many start posts */
} ml_comm_t;

/* What one repetition measured, in ns. */
typedef struct {
    int64_t start_ns, test_ns, wait_ns; /* inside the start calls, all the tests, the wait */
    int64_t mpi_ns;                     /* start + tests + wait: the time-based overhead */
    int64_t ov_ns;                      /* t_ov: from the start to the end of the wait */
    int64_t c_ns;                       /* t_c: the workload alone (work-based only, else 0) */
    int64_t o_ns;                       /* t_o: mpi_ns (time-based) or ov_ns - c_ns (work-based) */
    int64_t tests;                      /* tests made */
} ml_rep_t;

/* Start, then wait at once: the blocking time t_b of one repetition, which is all inside MPI
 * (out->o_ns = mpi_ns = ov_ns = t_b). */
void ml_blocking_once(const ml_comm_t *comm, ml_rep_t *out);

/* Start; compute `amount` (ns when work is 0, units of the work kernel when 1) with `tests`
 * calls of MPI_Testall on the requests placed as `placement` says (schedule.h); wait. c_ns is
 * the caller's measurement of the same workload alone (work-based), from which t_o follows. */
void ml_overlapped_once(const ml_comm_t *comm, int work, int64_t amount, int64_t tests, ml_placement_t placement,
                        int64_t c_ns, ml_rep_t *out);

/* The workload λ of the work-based computation (seed 002, §V-B3): units of the work kernel that
 * take target_ns alone (calibrated within 5%; at least one unit). */
uint64_t ml_workload_units(int64_t target_ns);

/* The repetitions of a point, one sample per quantity. */
typedef struct {
    ml_sample_t o, mpi, ov, c, start, test, wait;
    int64_t tests; /* of the last repetition: every repetition makes the same number */
} ml_samples_t;

/* Appends one repetition; aborts the job when memory runs out. */
void ml_samples_add(ml_samples_t *r, const ml_rep_t *rep);
void ml_samples_free(ml_samples_t *r);

/* The median of a sample, NAN when empty. */
double ml_median(const ml_sample_t *s);

#endif
