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
 * --fast: a cheap pass (one short block per task, with a short round trip) picks the task with
 * the largest estimate, which is measured in full (from half the rule's least blocks, its round
 * trip in its first blocks only); then `audits` other tasks, drawn at random, are measured with
 * one block each, and any that exceeds the candidate by more than 5% is measured in full. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "coll.h"

/* An audited task above the candidate by more than this is measured in full. */
#define AUDIT_MARGIN 1.05
/* --fast: blocks of a task measured in full whose round trip is measured; the later blocks take
 * the estimate of those. A round trip between the same two ranks does not change during a point,
 * and without the M ping-pongs a block costs about half as much (the full method pairs a round
 * trip with every block). */
#define FAST_RTL_BLOCKS 2
/* --fast: a task measured in full needs half the blocks of the rule before its RSD may stop it (at
 * least 3). Its RSD must still fall below --rsd: with 4 blocks of 3% spread the median's standard
 * error is about 2%, against 1.3% with the seed's 8, well within the 5% --fast promises; and at
 * 4 ranks a candidate measured with the seed's 8 blocks alone takes a third of the full method's
 * time (it measures 3 tasks), which leaves --fast no room. */
#define FAST_MIN_BLOCKS_FLOOR 3
/* Settling pause: this many times an operation with every task acknowledging. */
#define SETTLE_FACTOR 2.0
#define SETTLE_MIN_NS 20000.0

typedef struct {
    int target;      /* task i */
    long iterations; /* per block */
    int remedy;      /* the clock-based measurement instead of E_i */
    long rtl_blocks; /* blocks whose RTL is measured (the rest reuse their estimate); 0: all */
    size_t done;     /* blocks measured so far for this task, the same count on every rank */
    double settle_ns;
    ml_offset_t offset;
    /* rank 0: E and RTL per block, under each estimator */
    ml_sample_t e[COLL_ESTIMATORS], rtl[COLL_ESTIMATORS];
} target_ctx_t;

static char ack_byte;

/* ---- one block -------------------------------------------------------------------------- */

/* A block's value under each estimator: the median of its operations' times (by default: on a
 * shared machine a rank that loses its core, or a sleep that overshoots, lengthens a few
 * operations by milliseconds; the median leaves them out where the mean would spread them over
 * the block) and their mean (the seed's). Both are kept, so that each estimate has the other
 * beside it. */
typedef struct {
    double v[COLL_ESTIMATORS];
} block_values_t;

static block_values_t block_values(const double *times, long n)
{
    block_values_t b;
    for (int k = 0; k < COLL_ESTIMATORS; k++)
        b.v[k] = coll_estimate(times, (size_t)n, (coll_estimator_t)k);
    return b;
}

static block_values_t rtl_block(coll_t *o, const target_ctx_t *t)
{
    int i = t->target, rank = o->prog.rank;
    if (i == 0)
        return (block_values_t){{0, 0}};
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
    block_values_t b = block_values(times, t->iterations);
    free(times);
    return b;
}

/* Seed figure 9: one priming operation, then M back to back; each operation is timed from the
 * previous acknowledgement to its own. */
static block_values_t bcast_block(coll_t *o, const coll_point_t *pt, const target_ctx_t *t)
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
    block_values_t b = block_values(times, t->iterations);
    free(times);
    return b;
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

static block_values_t one_at_a_time_block(coll_t *o, const coll_point_t *pt, const target_ctx_t *t,
                                          int64_t (*operation)(coll_t *, const coll_point_t *, const target_ctx_t *))
{
    double *times = malloc((size_t)t->iterations * sizeof *times);
    for (long x = 0; x <= t->iterations; x++) {
        int64_t d = operation(o, pt, t);
        if (x > 0) /* the first primes the block */
            times[x - 1] = (double)d;
    }
    block_values_t b = block_values(times, t->iterations);
    free(times);
    return b;
}

/* Rank 0: the RTL estimate of the blocks measured so far, under each estimator (other ranks
 * ignore it). */
static block_values_t measured_rtl(const target_ctx_t *t)
{
    block_values_t b = {{0, 0}};
    for (int k = 0; k < COLL_ESTIMATORS; k++)
        if (t->rtl[k].n)
            b.v[k] = coll_estimate(t->rtl[k].values, t->rtl[k].n, (coll_estimator_t)k);
    return b;
}

static double target_block(coll_t *o, const coll_point_t *pt, void *ctx)
{
    target_ctx_t *t = ctx;
    block_values_t e, rtl = {{0, 0}};
    if (t->remedy) {
        e = one_at_a_time_block(o, pt, t, stamped_operation);
    } else {
        rtl = t->rtl_blocks && (long)t->done >= t->rtl_blocks ? measured_rtl(t) : rtl_block(o, t);
        e = pt->op == OP_BCAST ? bcast_block(o, pt, t) : one_at_a_time_block(o, pt, t, gated_operation);
    }
    if (o->prog.rank == 0)
        for (int k = 0; k < COLL_ESTIMATORS; k++) {
            ml_sample_add(&t->e[k], e.v[k]);
            ml_sample_add(&t->rtl[k], rtl.v[k]);
        }
    t->done++;
    return e.v[o->estimator];
}

static void reset_blocks(target_ctx_t *t)
{
    t->done = 0;
    for (int k = 0; k < COLL_ESTIMATORS; k++) {
        ml_sample_reset(&t->e[k]);
        ml_sample_reset(&t->rtl[k]);
    }
}

static void free_blocks(target_ctx_t *t)
{
    for (int k = 0; k < COLL_ESTIMATORS; k++) {
        ml_sample_free(&t->e[k]);
        ml_sample_free(&t->rtl[k]);
    }
}

/* ---- one task, measured in full or audited ----------------------------------------------- */

typedef struct {
    double e, rtl, ol;             /* under --estimator */
    double ol_by[COLL_ESTIMATORS]; /* under each */
    ml_sample_t ol_blocks;         /* under --estimator */
    ml_stop_t reason;
} target_result_t;

static double estimate(const ml_sample_t *s, coll_estimator_t estimator)
{
    return s->n ? coll_estimate(s->values, s->n, estimator) : NAN;
}

/* Measures task i under `rule` (the seed's rule, or one block for an audit). Rank 0 gets the
 * result; OL per block pairs each block's E with its RTL, under each estimator. */
static void measure_target(coll_t *o, const coll_point_t *pt, target_ctx_t *t, const coll_block_rule_t *rule,
                           target_result_t *out)
{
    coll_result_t r;
    memset(&r, 0, sizeof r);
    reset_blocks(t);
    coll_measure(o, pt, target_block, t, rule, &r);
    coll_result_free(&r);
    ml_sample_reset(&out->ol_blocks);
    out->reason = r.reason;
    if (o->prog.rank != 0)
        return;
    for (int k = 0; k < COLL_ESTIMATORS; k++) {
        ml_sample_t ol = {0};
        for (size_t b = 0; b < t->e[k].n; b++)
            ml_sample_add(&ol, t->remedy ? t->e[k].values[b] : coll_ol(t->e[k].values[b], t->rtl[k].values[b]));
        out->ol_by[k] = estimate(&ol, (coll_estimator_t)k);
        if (k == (int)o->estimator) {
            ml_sample_free(&out->ol_blocks);
            out->ol_blocks = ol; /* taken over */
        } else {
            ml_sample_free(&ol);
        }
    }
    out->e = estimate(&t->e[o->estimator], o->estimator);
    out->rtl = t->remedy ? NAN : estimate(&t->rtl[o->estimator], o->estimator);
    out->ol = out->ol_by[o->estimator];
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
    for (int k = 0; k < COLL_ESTIMATORS; k++)
        out->ol_by[k][i] = res->ol_by[k];
    out->measured[i] = full ? 2 : 1;
    ml_sample_free(&out->rank_blocks[i]);
    out->rank_blocks[i] = res->ol_blocks; /* taken over */
    out->rank_reason[i] = res->reason;
    memset(&res->ol_blocks, 0, sizeof res->ol_blocks);
}

/* The rule a task measured in full follows: the run's, or under --fast the same from half its least
 * blocks. */
static coll_block_rule_t full_rule(const coll_t *o)
{
    coll_block_rule_t rule = o->rule;
    if (o->fast && rule.min_blocks > FAST_MIN_BLOCKS_FLOOR)
        rule.min_blocks = rule.min_blocks / 2 > FAST_MIN_BLOCKS_FLOOR ? rule.min_blocks / 2 : FAST_MIN_BLOCKS_FLOOR;
    return rule;
}

static void full_target(coll_t *o, const coll_point_t *pt, target_ctx_t *t, int i, coll_oli_t *out,
                        target_result_t *res)
{
    t->target = i;
    t->iterations = o->block;
    t->remedy = 0;
    t->rtl_blocks = o->fast ? FAST_RTL_BLOCKS : 0;
    coll_block_rule_t rule = full_rule(o);
    measure_target(o, pt, t, &rule, res);
    t->rtl_blocks = 0;
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
        reset_blocks(t);
        coll_measure(o, pt, target_block, t, &one, &r);
        if (o->prog.rank == 0) {
            out->cheap[i] = coll_ol(r.blocks.values[0], t->rtl[o->estimator].values[0]);
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
    coll_block_rule_t one = {1, 1, 1, 0}, full = full_rule(o);
    target_result_t res;
    memset(&res, 0, sizeof res);
    for (int i = 1; i < np; i++) {
        if (!out->gap_bound[i])
            continue;
        t->target = i;
        t->iterations = o->block;
        t->remedy = 1;
        measure_target(o, pt, t, out->measured[i] == 2 ? &full : &one, &res);
        if (o->prog.rank == 0) {
            out->clock_ol[i] = out->ol[i] = res.ol;
            for (int k = 0; k < COLL_ESTIMATORS; k++)
                out->ol_by[k][i] = res.ol_by[k];
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
    double **arrays[] = {
        &out->ol, &out->e, &out->rtl, &out->clock_ol, &out->ol_by[COLL_MEDIAN], &out->ol_by[COLL_MEAN]};
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
    free_blocks(&t);
    out->elapsed_ns = ml_clock_ns() - start;
}

void coll_oli_free(coll_oli_t *r)
{
    free(r->ol);
    free(r->e);
    free(r->rtl);
    free(r->clock_ol);
    for (int k = 0; k < COLL_ESTIMATORS; k++)
        free(r->ol_by[k]);
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
