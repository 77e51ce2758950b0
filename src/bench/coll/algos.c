/* The operations under test, the barriers of the barrier methods, and how ranks wait.
 *
 * Reference algorithms are written with point-to-point messages so that their structure, and
 * under --hop-delay their exact latency, is known (docs/methods/coll.md). Ranks are numbered
 * relative to the root (v = rank - root mod P). Broadcast trees:
 *   linear:   v receives from v-1 and sends to v+1 (a chain 0, 1, ..., P-1)
 *   backward: v receives from v+1 and sends to v-1 (a chain 0, P-1, ..., 1)
 *   binomial: v receives from v minus its lowest set bit, then sends to v+mask for each lower
 *             power of two mask, largest first (the root sends to P/2, P/4, ..., 1)
 *   flat:     the root sends to 1, 2, ..., P-1 in turn
 * A reduction follows the same tree backwards (each rank combines what its children sent, then
 * sends to its parent); an allreduce is that reduction followed by the broadcast. With a hop
 * delay every send of a reference algorithm first waits that long: the root's too, so that a
 * linear broadcast takes (P-1) d, a binomial one ceil(log2 P) d. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "coll.h"
#include "oncore.h"

const char *const coll_op_names[N_OPS] = {"bcast", "reduce", "allreduce"};
const char *const coll_algo_names[N_ALGOS] = {"library", "linear", "backward", "binomial", "flat"};

/* Nap of a sleeping wait: short enough to add little to each hop (a few % of a millisecond hop
 * delay), long enough to leave the CPU to the working ranks. */
#define NAP_NS 50000
/* A sleeping hop delay spins its last part: sleeps overshoot by tens of microseconds. */
#define SPIN_TAIL_NS 100000

/* Time this rank slept in coll_nap since coll_conditions_start: not counted as time off its core. */
static int64_t napped_ns;

void coll_nap(int64_t ns)
{
    if (ns <= 0)
        return;
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    int64_t start = ml_clock_ns();
    nanosleep(&t, NULL);
    napped_ns += ml_clock_ns() - start;
}

void coll_wait(const coll_t *o, MPI_Request *request, MPI_Status *status)
{
    if (o->wait == WAIT_SPIN) {
        MPI_Wait(request, status ? status : MPI_STATUS_IGNORE);
        return;
    }
    int done = 0;
    for (;;) {
        MPI_Test(request, &done, status ? status : MPI_STATUS_IGNORE);
        if (done)
            return;
        coll_nap(NAP_NS);
    }
}

void coll_send(const coll_t *o, const void *buf, int count, int dest, int tag, MPI_Comm comm)
{
    MPI_Request r;
    MPI_Isend(buf, count, MPI_BYTE, dest, tag, comm, &r);
    coll_wait(o, &r, NULL);
}

void coll_recv(const coll_t *o, void *buf, int count, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    MPI_Request r;
    MPI_Irecv(buf, count, MPI_BYTE, source, tag, comm, &r);
    coll_wait(o, &r, status);
}

/* What this rank had since coll_conditions_start: the hop delays it applied (a delay ends late
 * when the rank is not running at its end, and the true latency is then that of the delays
 * applied, not of the one asked for), and how much of the time it did not sleep it ran. */
static double delays_sum_ns, delays_count;
static ml_oncore_t conditions_start;

void coll_conditions_start(void)
{
    delays_sum_ns = delays_count = 0;
    napped_ns = 0;
    ml_oncore_start(&conditions_start);
}

coll_conditions_t coll_conditions_end(const coll_t *o)
{
    /* off-core and steal as their maximum over the ranks, -1 where unknown (MPI_MAX over NaN is
     * not defined) */
    double off_core, steal;
    ml_oncore_since(&conditions_start, napped_ns, &off_core, &steal);
    double sums[2] = {delays_sum_ns, delays_count},
           maxima[2] = {o->wait == WAIT_SPIN ? off_core : -1, isnan(steal) ? -1 : steal};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, o->ctl);
    MPI_Allreduce(MPI_IN_PLACE, maxima, 2, MPI_DOUBLE, MPI_MAX, o->ctl);
    return (coll_conditions_t){
        .hop_delay_ns = sums[1] > 0 ? sums[0] / sums[1] : NAN,
        .off_core = maxima[0] >= 0 ? maxima[0] : NAN,
        .steal = maxima[1] >= 0 ? maxima[1] : NAN,
    };
}

/* The hop delay before a reference algorithm's send. Spinning is exact when the rank has a core;
 * with --wait sleep it sleeps, then spins the last SPIN_TAIL_NS, so that ranks sharing cores do
 * not steal each other's time while they wait. */
static void hop_delay(const coll_t *o)
{
    if (o->hop_delay_ns <= 0)
        return;
    int64_t start = ml_clock_ns(), end = start + o->hop_delay_ns;
    if (o->wait == WAIT_SLEEP)
        coll_nap(o->hop_delay_ns - SPIN_TAIL_NS);
    int64_t now;
    while ((now = ml_clock_ns()) < end)
        ;
    delays_sum_ns += (double)(now - start);
    delays_count++;
}

/* ---- reference algorithms, in ranks relative to the root -------------------------------- */

typedef struct {
    const coll_t *o;
    int np, root, count;
} ref_t;

static int real_rank(const ref_t *x, int v) { return (v + x->root) % x->np; }

static void ref_send(const ref_t *x, const void *buf, int v)
{
    hop_delay(x->o);
    coll_send(x->o, buf, x->count, real_rank(x, v), TAG_ALGO, x->o->comm);
}

static void ref_recv(const ref_t *x, void *buf, int v)
{
    coll_recv(x->o, buf, x->count, real_rank(x, v), TAG_ALGO, x->o->comm, NULL);
}

/* The next task of a chain broadcast, or -1 at its end. */
static int chain_next(coll_algo_t algo, int v, int np)
{
    int next = algo == ALGO_LINEAR ? v + 1 : (v - 1 + np) % np;
    return next % np == 0 ? -1 : next % np;
}

static int chain_prev(coll_algo_t algo, int v, int np) { return algo == ALGO_LINEAR ? v - 1 : (v + 1) % np; }

static int lowest_bit(int v) { return v & -v; }

/* Highest power of two below np, the root's first child in the binomial tree. */
static int top_mask(int np)
{
    int mask = 1;
    while (mask < np)
        mask <<= 1;
    return mask >> 1;
}

static void ref_bcast(const ref_t *x, coll_algo_t algo, int v, void *buf)
{
    switch (algo) {
    case ALGO_LINEAR:
    case ALGO_BACKWARD: {
        if (v != 0)
            ref_recv(x, buf, chain_prev(algo, v, x->np));
        int next = chain_next(algo, v, x->np);
        if (next >= 0)
            ref_send(x, buf, next);
        break;
    }
    case ALGO_BINOMIAL: {
        int mask = v == 0 ? top_mask(x->np) : lowest_bit(v) >> 1;
        if (v != 0)
            ref_recv(x, buf, v - lowest_bit(v));
        for (; mask > 0; mask >>= 1)
            if (v + mask < x->np)
                ref_send(x, buf, v + mask);
        break;
    }
    case ALGO_FLAT:
        if (v == 0)
            for (int dest = 1; dest < x->np; dest++)
                ref_send(x, buf, dest);
        else
            ref_recv(x, buf, 0);
        break;
    default: break;
    }
}

static void combine(const ref_t *x, const void *in, void *inout)
{
    MPI_Reduce_local(in, inout, x->count, MPI_UNSIGNED_CHAR, MPI_MAX);
}

/* acc holds this rank's contribution on entry and, at the root, the result on return. */
static void ref_reduce(const ref_t *x, coll_algo_t algo, int v, void *acc, void *tmp)
{
    switch (algo) {
    case ALGO_LINEAR:
    case ALGO_BACKWARD: {
        /* the broadcast chain backwards: receive from the next, send to the previous */
        int next = chain_next(algo, v, x->np);
        if (next >= 0) {
            ref_recv(x, tmp, next);
            combine(x, tmp, acc);
        }
        if (v != 0)
            ref_send(x, acc, chain_prev(algo, v, x->np));
        break;
    }
    case ALGO_BINOMIAL:
        for (int mask = 1; mask < x->np; mask <<= 1) {
            if (v & mask) {
                ref_send(x, acc, v - mask);
                break;
            }
            if (v + mask < x->np) {
                ref_recv(x, tmp, v + mask);
                combine(x, tmp, acc);
            }
        }
        break;
    case ALGO_FLAT:
        if (v == 0) {
            for (int src = 1; src < x->np; src++) {
                ref_recv(x, tmp, src);
                combine(x, tmp, acc);
            }
        } else {
            ref_send(x, acc, 0);
        }
        break;
    default: break;
    }
}

/* ---- the operation under test ------------------------------------------------------------ */

static void run_library(coll_t *o, coll_op_t op, int root)
{
    int count = (int)o->size;
    switch (op) {
    case OP_BCAST: MPI_Bcast(o->data, count, MPI_BYTE, root, o->comm); break;
    case OP_REDUCE: MPI_Reduce(o->data, o->result, count, MPI_UNSIGNED_CHAR, MPI_MAX, root, o->comm); break;
    default: MPI_Allreduce(o->data, o->result, count, MPI_UNSIGNED_CHAR, MPI_MAX, o->comm); break;
    }
}

void coll_run(coll_t *o, const coll_point_t *pt, int root)
{
    if (pt->algo == ALGO_LIBRARY) {
        run_library(o, pt->op, root);
        return;
    }
    ref_t x = {o, o->prog.size, root, (int)o->size};
    int v = (o->prog.rank - root + x.np) % x.np;
    switch (pt->op) {
    case OP_BCAST: ref_bcast(&x, pt->algo, v, o->data); break;
    case OP_REDUCE:
        memcpy(o->result, o->data, o->size);
        ref_reduce(&x, pt->algo, v, o->result, o->tmp);
        break;
    default:
        memcpy(o->result, o->data, o->size);
        ref_reduce(&x, pt->algo, v, o->result, o->tmp);
        ref_bcast(&x, pt->algo, v, o->result);
        break;
    }
}

/* ---- barriers ----------------------------------------------------------------------------- */

void coll_barrier_library(const coll_t *o) { MPI_Barrier(o->ctl); }

/* Seed 003, figure 5: a token leaves task 0 and travels twice around the ring; the barrier ends
 * the second time it reaches task P-2. Task P-1 may leave after the first round: when the token
 * reaches it every other task has arrived. */
void coll_barrier_ring(const coll_t *o)
{
    int rank = o->prog.rank, np = o->prog.size;
    char token = 0;
    if (rank == 0) {
        coll_send(o, &token, 0, 1, TAG_BARRIER, o->ctl);
        coll_recv(o, &token, 0, np - 1, TAG_BARRIER, o->ctl, NULL);
        if (np > 2)
            coll_send(o, &token, 0, 1, TAG_BARRIER, o->ctl);
        return;
    }
    coll_recv(o, &token, 0, rank - 1, TAG_BARRIER, o->ctl, NULL);
    coll_send(o, &token, 0, (rank + 1) % np, TAG_BARRIER, o->ctl);
    if (rank == np - 1)
        return;
    coll_recv(o, &token, 0, rank - 1, TAG_BARRIER, o->ctl, NULL);
    if (rank + 1 <= np - 2)
        coll_send(o, &token, 0, rank + 1, TAG_BARRIER, o->ctl);
}

/* The dissemination barrier (Hensgen, Finkel and Manber): ceil(log2 P) rounds; in round k each
 * task signals task rank + 2^k and waits for task rank - 2^k. The same on every library. */
void coll_barrier_dissemination(const coll_t *o)
{
    int rank = o->prog.rank, np = o->prog.size;
    char out = 0, in = 0;
    for (int k = 1; k < np; k <<= 1) {
        MPI_Request r[2];
        MPI_Irecv(&in, 0, MPI_BYTE, (rank - k + np) % np, TAG_BARRIER, o->ctl, &r[0]);
        MPI_Isend(&out, 0, MPI_BYTE, (rank + k) % np, TAG_BARRIER, o->ctl, &r[1]);
        coll_wait(o, &r[0], NULL);
        coll_wait(o, &r[1], NULL);
    }
}

/* Sleeping ranks leave ml_idle_barrier up to its longest nap late; the dissemination barrier
 * after it brings them within a few short naps of each other. */
void coll_block_barrier(const coll_t *o)
{
    if (o->wait == WAIT_SLEEP) {
        ml_idle_barrier(o->ctl);
        coll_barrier_dissemination(o);
    } else {
        MPI_Barrier(o->ctl);
    }
}
