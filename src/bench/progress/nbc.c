/* Non-blocking collective overhead (seed 002, §V-B; NBCBench): every rank starts the collective
 * at one global time (clock offsets against rank 0, then a start time broadcast ahead: core's
 * ml_start_together), computes, waits, and measures its own overhead.
 *
 * Every rank computes for the same t_b, the slowest rank's blocking time (the median of its
 * repetitions), as the ranks of a balanced application would: the computation then covers
 * every rank's communication. A repetition in which some rank reached the start late is not
 * kept, and the lead grows until ranks really start together (core's ml_lead_t). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "compute.h"
#include "sync.h"

typedef struct nbc nbc_t;

typedef struct {
    const char *name;
    ml_start_fn start;
} op_t;

struct nbc {
    ml_bench_t *b;
    const op_t *op;
    int64_t size;
    int64_t t_b;    /* the common computation of time-based points, ns */
    uint64_t units; /* work-based: this rank's workload λ, calibrated to t_b */
    ml_offset_t offset;
    ml_lead_t lead; /* rank 0's: how far ahead it sets the common start */
};

/* Reductions add unsigned chars (MPI_SUM): any byte count works, and the reduction costs CPU
 * as the seed's do, unlike a bitwise operation on MPI_BYTE. */
static void start_iallreduce(void *ctx, MPI_Request *r)
{
    nbc_t *n = ctx;
    MPI_Iallreduce(n->b->send_buf, n->b->recv_buf, (int)n->size, MPI_UNSIGNED_CHAR, MPI_SUM, n->b->comm, r);
}

static void start_ibcast(void *ctx, MPI_Request *r)
{
    nbc_t *n = ctx;
    MPI_Ibcast(n->b->send_buf, (int)n->size, MPI_BYTE, 0, n->b->comm, r);
}

static void start_ireduce(void *ctx, MPI_Request *r)
{
    nbc_t *n = ctx;
    MPI_Ireduce(n->b->send_buf, n->b->recv_buf, (int)n->size, MPI_UNSIGNED_CHAR, MPI_SUM, 0, n->b->comm, r);
}

static void start_ialltoall(void *ctx, MPI_Request *r)
{
    nbc_t *n = ctx;
    MPI_Ialltoall(n->b->send_buf, (int)n->size, MPI_BYTE, n->b->recv_buf, (int)n->size, MPI_BYTE, n->b->comm, r);
}

static const op_t ops[] = {
    {"iallreduce", start_iallreduce},
    {"ibcast", start_ibcast},
    {"ireduce", start_ireduce},
    {"ialltoall", start_ialltoall},
};
#define N_OPS (sizeof ops / sizeof ops[0])

size_t ml_nbc_buffer_bytes(const ml_bench_t *b, int64_t size)
{
    /* alltoall sends one block of `size` bytes to every rank */
    return ml_list_contains(&b->ops, "ialltoall") ? (size_t)size * (size_t)b->prog.size : (size_t)size;
}

/* One repetition on every rank. Returns -1 when rank 0 said stop (`go` 0), else whether it
 * counts; *slowest receives the largest t_o of the ranks (one allreduce carries it with the
 * lateness: collectives outside the timed region cost milliseconds on shared cores). */
static int once(nbc_t *n, const ml_point_t *pt, int go, ml_rep_t *rep, int64_t *slowest)
{
    int64_t c = pt->work > 0 ? ml_compute_work(n->units) : 0;
    ml_start_t start;
    ml_start_together(n->b->prog.sync, &n->offset, n->lead.lead_ns, go, &start);
    if (!start.go)
        return -1;
    ml_comm_t comm = {n->op->start, n, 1};
    ml_point_once(&comm, pt, n->b->test_placement, n->t_b, n->units, c, rep);
    int64_t mine[2] = {start.late, rep->o_ns}, max[2];
    MPI_Allreduce(mine, max, 2, MPI_INT64_T, MPI_MAX, n->b->prog.sync);
    *slowest = max[1];
    return ml_lead_update(&n->lead, max[0]);
}

/* A warm-up that started together, then repetitions until rank 0's stopping rule, on the
 * slowest rank's t_o of each repetition, says stop. The reason is rank 0's. */
static ml_stop_t repeat(nbc_t *n, const ml_point_t *pt, ml_samples_t *s, ml_sample_t *slowest, long *late)
{
    ml_rep_t rep;
    int64_t worst;
    while (once(n, pt, 1, &rep, &worst) == 0)
        ;
    ml_stopper_t stopper;
    ml_stopper_start(&stopper, &n->b->prog.stop_rule);
    ml_stop_t reason = ML_STOP_CONTINUE;
    int counted;
    *late = 0;
    while ((counted = once(n, pt, reason == ML_STOP_CONTINUE, &rep, &worst)) >= 0) {
        if (!counted) {
            (*late)++;
            continue;
        }
        ml_samples_add(s, &rep);
        if (n->b->prog.rank == 0) {
            if (ml_sample_add(slowest, (double)worst) != 0)
                MPI_Abort(MPI_COMM_WORLD, 2);
            reason = ml_stopper_check(&stopper, slowest);
        }
    }
    return reason;
}

/* ---- records: every rank's medians, gathered on rank 0 ------------------------------------- */

enum { Q_O, Q_MPI, Q_OV, Q_C, Q_START, Q_TEST, Q_WAIT, Q_UNITS, N_Q };
static const char *const q_names[N_Q] = {"t_o_ns",     "t_mpi_ns",  "t_ov_ns",   "t_c_ns",
                                         "t_start_ns", "t_test_ns", "t_wait_ns", "workload_units"};

/* Rank 0 receives all[rank * N_Q + q]; other ranks NULL. */
static double *gather(nbc_t *n, const ml_samples_t *s)
{
    double mine[N_Q] = {ml_median(&s->o),     ml_median(&s->mpi),  ml_median(&s->ov),   ml_median(&s->c),
                        ml_median(&s->start), ml_median(&s->test), ml_median(&s->wait), (double)n->units};
    int rank0 = n->b->prog.rank == 0;
    double *all = rank0 ? malloc(sizeof mine * (size_t)n->b->prog.size) : NULL;
    if (rank0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Gather(mine, N_Q, MPI_DOUBLE, all, N_Q, MPI_DOUBLE, 0, n->b->prog.sync);
    return all;
}

static double column_max(const double *all, int ranks, int q)
{
    double m = all[q];
    for (int r = 1; r < ranks; r++)
        m = all[r * N_Q + q] > m ? all[r * N_Q + q] : m;
    return m;
}

static double column_mean(const double *all, int ranks, int q)
{
    double sum = 0;
    for (int r = 0; r < ranks; r++)
        sum += all[r * N_Q + q];
    return sum / ranks;
}

static void column(ml_json_t *j, const char *name, const double *all, int ranks, int q)
{
    ml_json_begin_array(j, name);
    for (int r = 0; r < ranks; r++)
        ml_json_double(j, NULL, all[r * N_Q + q]);
    ml_json_end_array(j);
}

/* A blocking point's statistics: t_b is the slowest rank's, the computation of every other point. */
static void blocking_stats(ml_json_t *j, const double *all, int ranks)
{
    ml_json_double(j, "t_b_ns", column_max(all, ranks, Q_O));
    ml_json_double(j, "t_b_mean_ns", column_mean(all, ranks, Q_O));
    ml_json_begin_object(j, "per_rank");
    column(j, "t_b_ns", all, ranks, Q_O);
    ml_json_end_object(j);
}

static void overhead_stats(ml_json_t *j, const ml_point_t *pt, const double *all, int ranks, double t_b, int64_t tests)
{
    ml_json_double(j, "t_b_ns", t_b);
    ml_json_double(j, "t_o_ns", column_max(all, ranks, Q_O));
    ml_json_double(j, "t_o_mean_ns", column_mean(all, ranks, Q_O));
    if (pt->work)
        ml_json_double(j, "t_c_ns", column_mean(all, ranks, Q_C));
    ml_json_int(j, "tests", tests);
    ml_json_begin_object(j, "per_rank");
    for (int q = 0; q < N_Q; q++)
        if (pt->work || (q != Q_C && q != Q_UNITS))
            column(j, q_names[q], all, ranks, q);
    ml_json_end_object(j);
}

/* A point on every rank: its repetitions, then rank 0 gathers every rank's medians and writes
 * the record. Returns (on rank 0) the largest median t_o of the ranks: t_b for the blocking
 * point. */
static double measure(void *ctx, const ml_point_t *pt, const char *key, double t_b)
{
    nbc_t *n = ctx;
    ml_samples_t s = {0};
    ml_sample_t slowest = {0};
    long late;
    ml_switch_snapshot_t before;
    ml_switches_snapshot(&before);
    ml_stop_t reason = repeat(n, pt, &s, &slowest, &late);
    ml_switches_t *switches = ml_switches_gather(&before, n->b->prog.sync);
    double *all = gather(n, &s), t_o = NAN;
    int ranks = n->b->prog.size;
    if (all) {
        t_o = column_max(all, ranks, Q_O);
        ml_json_t j;
        ml_point_begin(&j, n->b, pt, key, ranks);
        if (pt->work < 0)
            blocking_stats(&j, all, ranks);
        else
            overhead_stats(&j, pt, all, ranks, t_b, s.tests);
        ml_json_int(&j, "late_reps", late);
        ml_switches_json(&j, switches, ranks);
        ml_json_sample(&j, "sample", &slowest, &n->b->prog.stop_rule, reason);
        ml_program_point_end(&n->b->prog, &j);
    }
    free(all);
    free(switches);
    ml_samples_free(&s);
    ml_sample_free(&slowest);
    return t_o;
}

static void prepare(void *ctx, int work, double t_b)
{
    nbc_t *n = ctx;
    n->t_b = (int64_t)llround(t_b);
    n->units = work ? ml_workload_units(n->t_b) : 0;
}

long ml_nbc_points(const ml_bench_t *b)
{
    if (!ml_list_contains(&b->benches, "nbc"))
        return 0;
    long n = 0;
    for (size_t k = 0; k < N_OPS; k++)
        if (ml_list_contains(&b->ops, ops[k].name))
            n += (long)b->n_sizes * ml_sweep_points(b);
    return n;
}

void ml_nbc_run(ml_bench_t *b)
{
    if (!ml_list_contains(&b->benches, "nbc"))
        return;
    nbc_t n = {.b = b};
    ml_lead_init(&n.lead);
    /* offsets once for the whole run: it lasts minutes at most, and the sanity family measures
     * how far clocks drift over such a run */
    ml_offset_estimate(b->prog.sync, 2000, 100, &n.offset);
    ml_sweep_t sweep = {&n, b->prog.sync, b->prog.size, prepare, measure};
    for (size_t k = 0; k < N_OPS; k++) {
        if (!ml_list_contains(&b->ops, ops[k].name))
            continue;
        n.op = &ops[k];
        for (size_t i = 0; i < b->n_sizes; i++) {
            n.size = b->size_values[i];
            ml_sweep_size(b, &sweep, "nbc", ops[k].name, n.size);
        }
    }
}
