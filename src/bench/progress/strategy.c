#include "strategy.h"

#include <math.h>

#include "clock.h"
#include "compute.h"

void ml_blocking_once(const ml_comm_t *comm, ml_rep_t *out)
{
    MPI_Request requests[ML_MAX_REQUESTS];
    MPI_Status statuses[ML_MAX_REQUESTS];
    int64_t t0 = ml_clock_ns();
    comm->start(comm->ctx, requests);
    MPI_Waitall(comm->requests, requests, statuses);
    int64_t t = ml_clock_ns() - t0;
    *out = (ml_rep_t){.mpi_ns = t, .ov_ns = t, .o_ns = t};
}

/* Computes from `done` up to `end` (ns or units) when end is beyond it; returns where the
 * computation now is. Time-based, that is where the kernel got to: later tests aim at positions
 * of the computing time achieved so far, so that the kernel's small overshoots do not add up
 * over many tests. */
static int64_t compute_until(int work, int64_t done, int64_t end)
{
    if (end <= done)
        return done;
    if (work) {
        ml_compute_work((uint64_t)(end - done));
        return end;
    }
    return done + ml_compute_time(end - done);
}

/* Computes `amount` with `tests` calls of MPI_Testall at the positions of `placement`; adds the
 * time inside the tests to *test_ns. */
static void compute_tested(int work, int64_t amount, int64_t tests, ml_placement_t placement, MPI_Request *requests,
                           int n, int64_t *test_ns)
{
    MPI_Status statuses[ML_MAX_REQUESTS]; /* MPICH's MPI_STATUSES_IGNORE trips gcc's bounds checks */
    int64_t done = 0;
    for (int64_t k = 0; k < tests; k++) {
        done = compute_until(work, done, ml_test_at(amount, tests, k, placement));
        int flag;
        int64_t t0 = ml_clock_ns();
        MPI_Testall(n, requests, &flag, statuses);
        *test_ns += ml_clock_ns() - t0;
    }
    compute_until(work, done, amount);
}

void ml_overlapped_once(const ml_comm_t *comm, int work, int64_t amount, int64_t tests, ml_placement_t placement,
                        int64_t c_ns, ml_rep_t *out)
{
    MPI_Request requests[ML_MAX_REQUESTS];
    MPI_Status statuses[ML_MAX_REQUESTS];
    out->test_ns = 0;
    int64_t t0 = ml_clock_ns();
    comm->start(comm->ctx, requests);
    int64_t t1 = ml_clock_ns();
    compute_tested(work, amount, tests, placement, requests, comm->requests, &out->test_ns);
    out->tests = tests;
    int64_t t2 = ml_clock_ns();
    MPI_Waitall(comm->requests, requests, statuses);
    int64_t t3 = ml_clock_ns();
    out->start_ns = t1 - t0;
    out->wait_ns = t3 - t2;
    out->mpi_ns = out->start_ns + out->test_ns + out->wait_ns;
    out->ov_ns = t3 - t0;
    out->c_ns = work ? c_ns : 0;
    out->o_ns = work ? out->ov_ns - c_ns : out->mpi_ns;
}

uint64_t ml_workload_units(int64_t target_ns)
{
    ml_calibration_t cal;
    if (ml_work_calibrate(target_ns > 0 ? target_ns : 1, 0.05, &cal) != 0)
        return 1;
    return cal.units;
}

static void add(ml_sample_t *s, int64_t v)
{
    if (ml_sample_add(s, (double)v) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

void ml_samples_add(ml_samples_t *r, const ml_rep_t *rep)
{
    add(&r->o, rep->o_ns);
    add(&r->mpi, rep->mpi_ns);
    add(&r->ov, rep->ov_ns);
    add(&r->c, rep->c_ns);
    add(&r->start, rep->start_ns);
    add(&r->test, rep->test_ns);
    add(&r->wait, rep->wait_ns);
    r->tests = rep->tests;
}

void ml_samples_free(ml_samples_t *r)
{
    ml_sample_t *all[] = {&r->o, &r->mpi, &r->ov, &r->c, &r->start, &r->test, &r->wait};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ml_sample_free(all[i]);
}

double ml_median(const ml_sample_t *s)
{
    ml_summary_t sum;
    return s->n > 0 && ml_summarize(s->values, s->n, 0.95, &sum) == 0 ? sum.median : NAN;
}
