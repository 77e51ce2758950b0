/* The seed's method (seed 003, §4, figure 9): the operation latency OL_i to each task i.
 *
 * Broadcast, as in the seed: RTL_i by ping-pong between the root and i; then blocks of M
 * back-to-back {broadcast; i acknowledges to the root}, timed by the root: E_i per operation.
 * OL_i = E_i - RTL_i/2. Only the path from the root to i is kept free of pipelining, which is all
 * that OL_i needs.
 *
 * The method assumes the acknowledgement arrives after the root has finished its broadcast. When
 * it does not (a flat broadcast: the root is still sending to others when i already answered),
 * E_i is the root's gap g_0 and says nothing of i. Such ranks are detected (E_i not clearly above
 * g_0, measured by sendlat; for allreduce the root's own time per operation, E_0) and measured
 * again by the remedy: i stamps its completion on rank 0's
 * clock (offsets by minimum round trip, docs/methods/core.md) and OL_i = stamp - root's start,
 * one operation at a time with a settling pause between operations.
 *
 * Reduce and allreduce (beyond the seed, docs/methods/coll.md): the latency from the last entry.
 * For reduce, the root lets every other rank enter, then sends "go" to task i, which enters last;
 * E_i is the time from the go to the root's completion, OL_i = E_i - RTL_i/2. For allreduce the
 * root enters last and task j acknowledges its completion. Both time one operation at a time
 * after a settling pause (twice an operation-plus-acknowledgements), so that what the other
 * ranks can do before the late one enters is done.
 *
 * --fast: a cheap pass (one short block per task, no RTL) picks the task with the largest
 * estimate, which is measured in full; then `audits` other tasks, drawn at random, are measured
 * with one block each, and any that exceeds the candidate by more than 5% is measured in full. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coll.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* An audited task above the candidate by more than this is measured in full. */
#define AUDIT_MARGIN 1.05
/* Settling pause: this many times an operation with every task acknowledging. */
#define SETTLE_FACTOR 2.0
#define SETTLE_MIN_NS 20000.0

typedef struct {
    int target;      /* task i */
    long iterations; /* per block */
    int remedy;      /* the clock-based measurement instead of E_i */
    double settle_ns;
    ml_offset_t offset;
    ml_sample_t rtl; /* rank 0: RTL per block */
} target_ctx_t;

static char ack_byte;

/* ---- one block -------------------------------------------------------------------------- */

/* A block's value: the median of its operations' times, not their mean. On a shared machine a
 * rank that loses its core, or a sleep that overshoots, lengthens a few operations by
 * milliseconds; the median leaves them out where the mean would spread them over the block. */
static double block_median(double *times, long n)
{
    qsort(times, (size_t)n, sizeof *times, compare_doubles);
    return ml_quantile_sorted(times, (size_t)n, 0.5);
}

static double rtl_block(coll_t *o, const target_ctx_t *t)
{
    int i = t->target, rank = o->prog.rank;
    if (i == 0)
        return 0;
    double *times = malloc((size_t)t->iterations * sizeof *times);
    int64_t t1 = 0;
    for (long x = 0; x <= t->iterations; x++) { /* the first primes the block: i may leave the barrier late */
        int64_t t0 = ml_clock_ns();
        if (rank == 0) {
            coll_send(o, &ack_byte, 0, i, TAG_PING, o->ctl);
            coll_recv(o, &ack_byte, 0, i, TAG_PING, o->ctl, NULL);
        } else if (rank == i) {
            coll_recv(o, &ack_byte, 0, 0, TAG_PING, o->ctl, NULL);
            coll_send(o, &ack_byte, 0, 0, TAG_PING, o->ctl);
        }
        t1 = ml_clock_ns();
        if (x > 0)
            times[x - 1] = (double)(t1 - t0);
    }
    double m = block_median(times, t->iterations);
    free(times);
    return m;
}

/* Seed figure 9: one priming operation, then M back to back; each operation is timed from the
 * previous acknowledgement to its own. */
static double bcast_block(coll_t *o, const coll_point_t *pt, const target_ctx_t *t)
{
    int i = t->target, rank = o->prog.rank;
    double *times = malloc((size_t)t->iterations * sizeof *times);
    int64_t t0 = ml_clock_ns();
    for (long x = 0; x <= t->iterations; x++) {
        coll_run(o, pt, 0);
        if (rank == 0)
            coll_recv(o, &ack_byte, 0, i, TAG_ACK, o->ctl, NULL);
        else if (rank == i)
            coll_send(o, &ack_byte, 0, 0, TAG_ACK, o->ctl);
        int64_t t1 = ml_clock_ns();
        if (x > 0)
            times[x - 1] = (double)(t1 - t0);
        t0 = t1;
    }
    double m = block_median(times, t->iterations);
    free(times);
    return m;
}

/* One gated operation, timed by the root from its go (reduce) or its entry (allreduce) to the
 * go's answer: its completion (reduce) or i's acknowledgement (allreduce). */
static int64_t gated_operation(coll_t *o, const coll_point_t *pt, const target_ctx_t *t)
{
    int i = t->target, rank = o->prog.rank;
    if (rank == 0) {
        coll_nap((int64_t)t->settle_ns);
        int64_t t0 = ml_clock_ns();
        if (pt->op == OP_REDUCE && i != 0)
            coll_send(o, &ack_byte, 0, i, TAG_GO, o->ctl);
        coll_run(o, pt, 0);
        if (pt->op == OP_ALLREDUCE && i != 0)
            coll_recv(o, &ack_byte, 0, i, TAG_ACK, o->ctl, NULL);
        return ml_clock_ns() - t0;
    }
    if (rank == i && pt->op == OP_REDUCE)
        coll_recv(o, &ack_byte, 0, 0, TAG_GO, o->ctl, NULL);
    coll_run(o, pt, 0);
    if (rank == i && pt->op == OP_ALLREDUCE)
        coll_send(o, &ack_byte, 0, 0, TAG_ACK, o->ctl);
    return 0;
}

/* The remedy: task i's completion stamped on rank 0's clock, minus the root's start. */
static int64_t stamped_operation(coll_t *o, const coll_point_t *pt, const target_ctx_t *t)
{
    int i = t->target, rank = o->prog.rank;
    int64_t stamp = 0;
    if (rank == 0) {
        coll_nap((int64_t)t->settle_ns);
        int64_t t0 = ml_clock_ns();
        coll_run(o, pt, 0);
        coll_recv(o, &stamp, sizeof stamp, i, TAG_STAMP, o->ctl, NULL);
        return stamp - t0;
    }
    coll_run(o, pt, 0);
    if (rank == i) {
        stamp = ml_global_ns(&t->offset);
        coll_send(o, &stamp, sizeof stamp, 0, TAG_STAMP, o->ctl);
    }
    return 0;
}

static double one_at_a_time_block(coll_t *o, const coll_point_t *pt, const target_ctx_t *t,
                                  int64_t (*operation)(coll_t *, const coll_point_t *, const target_ctx_t *))
{
    double *times = malloc((size_t)t->iterations * sizeof *times);
    for (long x = 0; x <= t->iterations; x++) {
        int64_t d = operation(o, pt, t);
        if (x > 0) /* the first primes the block */
            times[x - 1] = (double)d;
    }
    double m = block_median(times, t->iterations);
    free(times);
    return m;
}

static double target_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    target_ctx_t *t = ctx;
    if (t->remedy)
        return one_at_a_time_block(o, pt, t, stamped_operation);
    double rtl = rtl_block(o, t);
    if (o->prog.rank == 0)
        ml_sample_add(&t->rtl, rtl);
    if (pt->op == OP_BCAST)
        return bcast_block(o, pt, t);
    return one_at_a_time_block(o, pt, t, gated_operation);
}

/* ---- one task, measured in full or audited ----------------------------------------------- */

typedef struct {
    double e, rtl, ol;
    ml_sample_t ol_blocks;
    ml_stop_t reason;
} target_result_t;

static double median(const ml_sample_t *s)
{
    ml_summary_t sum;
    return s->n && ml_summarize(s->values, s->n, 0.95, &sum) == 0 ? sum.median : NAN;
}

/* Measures task i under `rule` (the seed's rule, or one block for an audit). Rank 0 gets the
 * result; OL per block pairs each block's E with its RTL. */
static void measure_target(coll_t *o, const coll_point_t *pt, target_ctx_t *t, const coll_block_rule_t *rule,
                           target_result_t *out)
{
    coll_result_t r;
    memset(&r, 0, sizeof r);
    ml_sample_reset(&t->rtl);
    coll_measure(o, pt, target_block, t, rule, &r);
    ml_sample_reset(&out->ol_blocks);
    out->reason = r.reason;
    if (o->prog.rank == 0) {
        for (size_t b = 0; b < r.blocks.n; b++)
            ml_sample_add(&out->ol_blocks,
                          t->remedy ? r.blocks.values[b] : coll_ol(r.blocks.values[b], t->rtl.values[b]));
        out->e = median(&r.blocks);
        out->rtl = t->remedy ? NAN : median(&t->rtl);
        out->ol = median(&out->ol_blocks);
    }
    coll_result_free(&r);
}

/* ---- the plan: which tasks, the settling pause, the remedy ------------------------------- */

static int first_target(const coll_point_t *pt) { return pt->op == OP_BCAST ? 1 : 0; }

/* Root's median time of an operation followed by every task's acknowledgement, times the
 * factor: by then whatever the operation set in motion has finished. Each try starts from a
 * barrier: back to back, operations would pipeline (a chain reduction delivers one result per
 * hop), and the pause would come out shorter than one operation. */
static double settle_time(coll_t *o, const coll_point_t *pt)
{
    enum { TRIES = 5 };
    double times[TRIES];
    for (int x = 0; x <= TRIES; x++) {
        coll_barrier_dissemination(o);
        int64_t t0 = ml_clock_ns();
        coll_run(o, pt, 0);
        if (o->prog.rank == 0)
            for (int y = 1; y < o->prog.size; y++)
                coll_recv(o, &ack_byte, 0, MPI_ANY_SOURCE, TAG_ACK, o->ctl, NULL);
        else
            coll_send(o, &ack_byte, 0, 0, TAG_ACK, o->ctl);
        if (x > 0)
            times[x - 1] = (double)(ml_clock_ns() - t0);
    }
    double settle = 0;
    if (o->prog.rank == 0) {
        ml_summary_t s;
        ml_summarize(times, TRIES, 0.95, &s);
        settle = fmax(SETTLE_FACTOR * s.median, SETTLE_MIN_NS);
    }
    MPI_Bcast(&settle, 1, MPI_DOUBLE, 0, o->ctl);
    return settle;
}

/* Rank 0 keeps a task's result; `full`: measured under the seed's rule (audits are not). */
static void record_target(coll_oli_t *out, int i, target_result_t *res, int full)
{
    out->e[i] = res->e;
    out->rtl[i] = res->rtl;
    out->ol[i] = res->ol;
    out->measured[i] = full ? 2 : 1;
    ml_sample_free(&out->rank_blocks[i]);
    out->rank_blocks[i] = res->ol_blocks; /* taken over */
    out->rank_reason[i] = res->reason;
    memset(&res->ol_blocks, 0, sizeof res->ol_blocks);
}

static void full_target(coll_t *o, const coll_point_t *pt, target_ctx_t *t, int i, coll_oli_t *out,
                        target_result_t *res)
{
    t->target = i;
    t->iterations = o->block;
    t->remedy = 0;
    measure_target(o, pt, t, &o->rule, res);
    if (o->prog.rank == 0)
        record_target(out, i, res, 1);
}

/* --fast: the cheap pass (one block of M/10 operations per task, at least 2) and the choice of
 * the candidate, the task with the largest estimate. */
static int cheap_candidate(coll_t *o, const coll_point_t *pt, target_ctx_t *t, coll_oli_t *out)
{
    coll_block_rule_t one = {1, 1, 1, 0};
    int np = o->prog.size, best = -1;
    out->cheap = malloc((size_t)np * sizeof *out->cheap);
    for (int i = 0; i < np; i++)
        out->cheap[i] = NAN;
    for (int i = first_target(pt); i < np; i++) {
        coll_result_t r;
        memset(&r, 0, sizeof r);
        t->target = i;
        t->iterations = o->block / 10 > 2 ? o->block / 10 : 2;
        t->remedy = 0;
        ml_sample_reset(&t->rtl);
        coll_measure(o, pt, target_block, t, &one, &r);
        if (o->prog.rank == 0) {
            out->cheap[i] = coll_ol(r.blocks.values[0], t->rtl.n ? t->rtl.values[0] : 0);
            if (best < 0 || out->cheap[i] > out->cheap[best])
                best = i;
        }
        coll_result_free(&r);
    }
    return ml_program_agree(&o->prog, best);
}

static void fast_targets(coll_t *o, const coll_point_t *pt, target_ctx_t *t, coll_oli_t *out)
{
    int candidate = cheap_candidate(o, pt, t, out);
    target_result_t res;
    memset(&res, 0, sizeof res);
    full_target(o, pt, t, candidate, out, &res);

    int np = o->prog.size, first = first_target(pt);
    unsigned int seed = (unsigned int)o->seed;
    coll_block_rule_t one = {1, 1, 1, 0};
    for (long a = 0; a < o->audits; a++) {
        int pick = -1;
        if (o->prog.rank == 0) {
            int left = 0;
            for (int i = first; i < np; i++)
                left += !out->measured[i];
            if (left > 0) {
                int k = rand_r(&seed) % left;
                for (int i = first; i < np && pick < 0; i++)
                    if (!out->measured[i] && k-- == 0)
                        pick = i;
            }
        }
        pick = ml_program_agree(&o->prog, pick);
        if (pick < 0)
            break;
        t->target = pick;
        t->iterations = o->block;
        t->remedy = 0;
        measure_target(o, pt, t, &one, &res);
        int exceeds = 0;
        if (o->prog.rank == 0) {
            exceeds = res.ol > AUDIT_MARGIN * out->ol[candidate];
            record_target(out, pick, &res, 0);
        }
        if (ml_program_agree(&o->prog, exceeds))
            full_target(o, pt, t, pick, out, &res);
    }
    ml_sample_free(&res.ol_blocks);
}

/* Broadcast and allreduce: the ranks whose E_i may be the root's gap (its own time in the
 * operation, which it must finish before it can take an acknowledgement) are measured again by
 * the remedy. */
static void remedy_gap_bound(coll_t *o, const coll_point_t *pt, target_ctx_t *t, coll_oli_t *out)
{
    int np = o->prog.size, any = 0;
    MPI_Bcast(out->measured, np, MPI_INT, 0, o->ctl);
    if (o->prog.rank == 0)
        for (int i = 1; i < np; i++) {
            out->gap_bound[i] = out->measured[i] && coll_gap_bound(out->e[i], out->rtl[i], out->gap_ns);
            any |= out->gap_bound[i];
        }
    MPI_Bcast(out->gap_bound, np, MPI_INT, 0, o->ctl);
    if (!ml_program_agree(&o->prog, any))
        return;
    ml_offset_estimate(o->ctl, 1000, 100, &t->offset);
    coll_block_rule_t one = {1, 1, 1, 0};
    target_result_t res;
    memset(&res, 0, sizeof res);
    for (int i = 1; i < np; i++) {
        if (!out->gap_bound[i])
            continue;
        t->target = i;
        t->iterations = o->block;
        t->remedy = 1;
        measure_target(o, pt, t, out->measured[i] == 2 ? &o->rule : &one, &res);
        if (o->prog.rank == 0) {
            out->clock_ol[i] = out->ol[i] = res.ol;
            ml_sample_free(&out->rank_blocks[i]);
            out->rank_blocks[i] = res.ol_blocks;
            out->rank_reason[i] = res.reason;
            memset(&res.ol_blocks, 0, sizeof res.ol_blocks);
        }
    }
    ml_sample_free(&res.ol_blocks);
}

static void alloc_result(coll_oli_t *out, int np)
{
    memset(out, 0, sizeof *out);
    out->np = np;
    double **arrays[] = {&out->ol, &out->e, &out->rtl, &out->clock_ol};
    for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++) {
        *arrays[a] = malloc((size_t)np * sizeof **arrays[a]);
        for (int i = 0; i < np; i++)
            (*arrays[a])[i] = NAN;
    }
    out->gap_bound = calloc((size_t)np, sizeof *out->gap_bound);
    out->measured = calloc((size_t)np, sizeof *out->measured);
    out->rank_blocks = calloc((size_t)np, sizeof *out->rank_blocks);
    out->rank_reason = calloc((size_t)np, sizeof *out->rank_reason);
    out->gap_ns = out->settle_ns = NAN;
    out->argmax = -1;
}

/* The largest OL_i among the tasks measured in full (audited tasks were not above it by more than
 * AUDIT_MARGIN, or they were measured in full), with its blocks for the record. */
static void final_argmax(coll_oli_t *out)
{
    int best = -1;
    for (int i = 0; i < out->np; i++)
        if (out->measured[i] == 2 && !isnan(out->ol[i]) && (best < 0 || out->ol[i] > out->ol[best]))
            best = i;
    out->argmax = best;
    if (best >= 0) {
        out->blocks = out->rank_blocks[best];
        out->reason = out->rank_reason[best];
        memset(&out->rank_blocks[best], 0, sizeof out->rank_blocks[best]);
    }
}

void coll_oli(coll_t *o, const coll_point_t *pt, double gap_ns, coll_oli_t *out)
{
    int np = o->prog.size;
    int64_t start = ml_clock_ns();
    alloc_result(out, np);
    target_ctx_t t;
    memset(&t, 0, sizeof t);
    t.settle_ns = out->settle_ns = settle_time(o, pt);
    if (pt->op == OP_BCAST)
        out->gap_ns = gap_ns;

    if (o->fast) {
        fast_targets(o, pt, &t, out);
    } else {
        target_result_t res;
        memset(&res, 0, sizeof res);
        for (int i = first_target(pt); i < np; i++)
            full_target(o, pt, &t, i, out, &res);
        ml_sample_free(&res.ol_blocks);
    }
    if (pt->op == OP_ALLREDUCE && o->prog.rank == 0) /* the root's own time per operation */
        out->gap_ns = out->measured[0] ? out->e[0] : out->cheap[0];
    if (pt->op != OP_REDUCE)
        remedy_gap_bound(o, pt, &t, out);
    if (o->prog.rank == 0)
        final_argmax(out);
    ml_sample_free(&t.rtl);
    out->elapsed_ns = ml_clock_ns() - start;
}

void coll_oli_free(coll_oli_t *r)
{
    free(r->ol);
    free(r->e);
    free(r->rtl);
    free(r->clock_ol);
    free(r->cheap);
    free(r->truth);
    free(r->gap_bound);
    free(r->measured);
    for (int i = 0; r->rank_blocks && i < r->np; i++)
        ml_sample_free(&r->rank_blocks[i]);
    free(r->rank_blocks);
    free(r->rank_reason);
    ml_sample_free(&r->blocks);
    memset(r, 0, sizeof *r);
}
