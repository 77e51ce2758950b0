/* The usual broadcast benchmark methods (seed 003, figure 2), each on the operation under test,
 * and the block loop that repeats any method under the seed's stopping rule. Every method is
 * timed on the root's clock (rank 0): no clock synchronisation is involved. The barrier method
 * with the library's barrier also keeps each rank's local time of the operation, from which
 * what OSU (mean of the ranks' local times) and IMB (their maximum) would report is computed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coll.h"

void coll_result_free(coll_result_t *r)
{
    ml_sample_free(&r->blocks);
    free(r->local_ns);
    r->local_ns = NULL;
}

void coll_measure(coll_t *o, const coll_point_t *pt, coll_block_fn block, void *ctx, const coll_block_rule_t *rule,
                  coll_result_t *r)
{
    int64_t start = ml_clock_ns();
    ml_sample_reset(&r->blocks);
    r->reason = ML_STOP_CONTINUE;
    for (;;) {
        coll_block_barrier(o);
        double value = block(o, pt, ctx);
        int go_on = 1;
        if (o->prog.rank == 0) {
            ml_sample_add(&r->blocks, value);
            r->reason = coll_blocks_decide(rule, r->blocks.values, r->blocks.n);
            go_on = r->reason == ML_STOP_CONTINUE;
        }
        if (!ml_program_agree(&o->prog, go_on))
            break;
    }
    r->elapsed_ns = ml_clock_ns() - start;
}

/* ---- sendlat: the root times back-to-back operations, so it measures its gap g_0 ---------- */

static double sendlat_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    (void)ctx;
    coll_run(o, pt, 0); /* primes the block */
    int64_t t1 = ml_clock_ns();
    for (long x = 0; x < o->block; x++)
        coll_run(o, pt, 0);
    return (double)(ml_clock_ns() - t1) / (double)o->block;
}

int coll_sendlat(coll_t *o, const coll_point_t *pt, coll_result_t *r)
{
    coll_measure(o, pt, sendlat_block, NULL, &o->rule, r);
    return 0;
}

/* ---- rounds: one operation from every root in turn, forward or reverse order ------------- */

static double rounds_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    int reverse = *(int *)ctx, np = o->prog.size;
    int64_t t1 = 0;
    for (long x = 0; x <= o->block; x++) {
        if (x == 1) /* the first round primes the block */
            t1 = ml_clock_ns();
        for (int k = 0; k < np; k++)
            coll_run(o, pt, reverse ? np - 1 - k : k);
    }
    return (double)(ml_clock_ns() - t1) / ((double)o->block * np);
}

int coll_rounds(coll_t *o, const coll_point_t *pt, int reverse, coll_result_t *r)
{
    if (pt->op == OP_ALLREDUCE)
        return -1; /* no root to rotate */
    coll_measure(o, pt, rounds_block, &reverse, &o->rule, r);
    return 0;
}

/* ---- barrier: the operation then a barrier; OSU and IMB time the operation alone, locally -- */

typedef struct {
    void (*barrier)(const coll_t *o);
    double local_sum_ns; /* this rank's local times of the operation, over every block */
    long local_count;
} barrier_ctx_t;

static double barrier_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    barrier_ctx_t *b = ctx;
    coll_run(o, pt, 0);
    b->barrier(o);
    int64_t t1 = ml_clock_ns();
    for (long x = 0; x < o->block; x++) {
        int64_t before = ml_clock_ns();
        coll_run(o, pt, 0);
        b->local_sum_ns += (double)(ml_clock_ns() - before);
        b->barrier(o);
    }
    b->local_count += o->block;
    return (double)(ml_clock_ns() - t1) / (double)o->block;
}

int coll_barrier_method(coll_t *o, const coll_point_t *pt, const char *barrier, coll_result_t *r)
{
    barrier_ctx_t b = {coll_barrier_library, 0, 0};
    if (strcmp(barrier, "barrier-ring") == 0)
        b.barrier = coll_barrier_ring;
    else if (strcmp(barrier, "barrier-dissem") == 0)
        b.barrier = coll_barrier_dissemination;
    coll_measure(o, pt, barrier_block, &b, &o->rule, r);
    double mine = b.local_sum_ns / (double)b.local_count;
    free(r->local_ns);
    r->local_ns = o->prog.rank == 0 ? malloc((size_t)o->prog.size * sizeof *r->local_ns) : NULL;
    MPI_Gather(&mine, 1, MPI_DOUBLE, r->local_ns, 1, MPI_DOUBLE, 0, o->ctl);
    return 0;
}

/* ---- ack: every task acknowledges each operation to the root ------------------------------ */

static void ack_iteration(coll_t *o, const coll_point_t *pt)
{
    char none = 0;
    coll_run(o, pt, 0);
    if (o->prog.rank != 0) {
        coll_send(o, &none, 0, 0, TAG_ACK, o->ctl);
        return;
    }
    for (int y = 1; y < o->prog.size; y++)
        coll_recv(o, &none, 0, MPI_ANY_SOURCE, TAG_ACK, o->ctl, NULL);
}

static double ack_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    (void)ctx;
    ack_iteration(o, pt);
    int64_t t1 = ml_clock_ns();
    for (long x = 0; x < o->block; x++)
        ack_iteration(o, pt);
    return (double)(ml_clock_ns() - t1) / (double)o->block;
}

int coll_ack(coll_t *o, const coll_point_t *pt, coll_result_t *r)
{
    coll_measure(o, pt, ack_block, NULL, &o->rule, r);
    return 0;
}
