/* mpilens-coll: the latency of a collective operation, measured per destination (seed 003).
 *
 * coll.c holds options, the plan and the records; algos.c the operations under test (the
 * library's and reference algorithms written with point-to-point, with an optional hop delay),
 * the home-made barriers and the waiting helpers; methods.c the usual methods (sendlat, rounds,
 * barrier, ack, and what OSU and IMB would report); oli.c the seed's per-destination method, its
 * remedy and --fast; blocks.c the seed's stopping rule; truth.c the analytic latencies of the
 * reference algorithms under a hop delay. docs/methods/coll.md explains each choice. */
#ifndef MPILENS_COLL_H
#define MPILENS_COLL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "blocks.h"
#include "program.h"
#include "stats.h"
#include "sync.h"

#define FAMILY "coll"

typedef enum { OP_BCAST, OP_REDUCE, OP_ALLREDUCE, N_OPS } coll_op_t;
typedef enum { ALGO_LIBRARY, ALGO_LINEAR, ALGO_BACKWARD, ALGO_BINOMIAL, ALGO_FLAT, N_ALGOS } coll_algo_t;
typedef enum { WAIT_SPIN, WAIT_SLEEP } coll_wait_t;

extern const char *const coll_op_names[N_OPS];
extern const char *const coll_algo_names[N_ALGOS];

/* Message tags on the private communicators. */
enum { TAG_ALGO = 1, TAG_ACK = 2, TAG_PING = 3, TAG_GO = 4, TAG_BARRIER = 5, TAG_STAMP = 6 };

typedef struct {
    ml_program_t prog;
    MPI_Comm comm; /* the operation under test and the reference algorithms' messages */
    MPI_Comm ctl;  /* the methods' own messages: ACKs, ping-pongs, go, home-made barriers */

    /* options */
    ml_list_t ops, methods, algos;
    uint64_t size;
    int64_t hop_delay_ns;
    long block, min_blocks, max_blocks, audits, seed;
    double rsd;
    int fast;
    const char *wait_name, *estimator_name;
    coll_wait_t wait;           /* resolved from --wait */
    coll_estimator_t estimator; /* resolved from --estimator */
    coll_block_rule_t rule;

    /* buffers of `size` bytes: the data, the result of a reduction, a receive buffer */
    unsigned char *data, *result, *tmp;
} coll_t;

/* One operation as measured: which, how, from which root. */
typedef struct {
    coll_op_t op;
    coll_algo_t algo;
} coll_point_t;

/* ---- algos.c ---- */
/* Runs the operation once with the given root. Every rank of o->comm calls it. */
void coll_run(coll_t *o, const coll_point_t *pt, int root);
/* Waits for a request: MPI_Wait, or with --wait sleep MPI_Test and short naps, so that ranks
 * sharing cores leave the CPU to the ranks that work. */
void coll_wait(const coll_t *o, MPI_Request *request, MPI_Status *status);
void coll_send(const coll_t *o, const void *buf, int count, int dest, int tag, MPI_Comm comm);
void coll_recv(const coll_t *o, void *buf, int count, int source, int tag, MPI_Comm comm, MPI_Status *status);
/* The three barriers of the barrier methods, on o->ctl. */
void coll_barrier_library(const coll_t *o);
void coll_barrier_ring(const coll_t *o);
void coll_barrier_dissemination(const coll_t *o);
/* A barrier between blocks (not timed), sleeping when --wait sleep. */
void coll_block_barrier(const coll_t *o);
/* Sleeps about ns nanoseconds (not timed; for settling). */
void coll_nap(int64_t ns);
/* What the ranks really had while a point was measured (the truths are judged by it). */
typedef struct {
    double hop_delay_ns; /* the mean hop delay the ranks applied; NAN when none was */
    double off_core;     /* under --wait spin, the largest share of the time a rank did not run
                            (ml_oncore_since); NAN when ranks sleep, where not running is the point */
    double steal;        /* the largest share of its machine's CPU time a rank's host took; NAN unknown */
} coll_conditions_t;
/* Starts counting, on every rank; then (collective) what was counted. */
void coll_conditions_start(void);
coll_conditions_t coll_conditions_end(const coll_t *o);

/* ---- methods.c ---- */
typedef struct {
    ml_sample_t blocks; /* rank 0: one estimate per block, ns */
    ml_stop_t reason;
    int64_t elapsed_ns;
    double *local_ns; /* barrier method only: each rank's mean local time of the operation
                              (gathered at rank 0, size P) */
} coll_result_t;

void coll_result_free(coll_result_t *r);
/* Each returns 0, or -1 when the method cannot run this operation (the caller notes it). */
int coll_sendlat(coll_t *o, const coll_point_t *pt, coll_result_t *r);
int coll_rounds(coll_t *o, const coll_point_t *pt, int reverse, coll_result_t *r);
int coll_barrier_method(coll_t *o, const coll_point_t *pt, const char *barrier, coll_result_t *r);
int coll_ack(coll_t *o, const coll_point_t *pt, coll_result_t *r);
/* The block loop: calls block(o, pt, ctx) until rank 0's stopping `rule` is met; the value the
 * block returns on rank 0 is its estimate. */
typedef double (*coll_block_fn)(coll_t *o, const coll_point_t *pt, void *ctx);
void coll_measure(coll_t *o, const coll_point_t *pt, coll_block_fn block, void *ctx, const coll_block_rule_t *rule,
                  coll_result_t *r);

/* ---- oli.c ---- */
typedef struct {
    int np;
    double *ol, *e, *rtl;           /* per rank under --estimator, NAN where not measured */
    double *ol_by[COLL_ESTIMATORS]; /* OL per rank under each estimator */
    double *clock_ol;               /* the remedy's value for gap-bound ranks, else NAN */
    double *cheap;                  /* --fast: the cheap pass's estimate per rank, else NULL */
    double *truth;                  /* per rank, or NULL */
    int *gap_bound;                 /* per rank, 0/1 */
    int *measured;                  /* per rank: 0 not measured, 1 audited (one block), 2 in full */
    ml_sample_t *rank_blocks;       /* rank 0: OL per block of each task (internal) */
    ml_stop_t *rank_reason;
    double gap_ns;    /* root's gap: g_0 for bcast, E_0 for allreduce, NAN for reduce */
    double settle_ns; /* reduce and allreduce: the wait before each gated operation */
    int argmax;
    ml_sample_t blocks; /* OL per block of the argmax rank */
    ml_stop_t reason;
    int64_t elapsed_ns;
} coll_oli_t;

/* gap_ns: the root's gap g_0 from sendlat (bcast only; ignored otherwise). */
void coll_oli(coll_t *o, const coll_point_t *pt, double gap_ns, coll_oli_t *out);
void coll_oli_free(coll_oli_t *r);

/* ---- truth.c ---- */
/* Analytic OL_i of a reference algorithm whose every send waits hop_ns first, other costs
 * ignored (docs/methods/coll.md, "Ground truth"): for bcast and allreduce the time at which rank
 * i returns, counted from the root's entry; for reduce the time from rank i's late entry to the
 * root's return. Fills per_rank[0..np-1] and returns the maximum over the ranks a method measures.
 * Returns -1 for the library algorithm (no truth). */
double coll_truth(coll_op_t op, coll_algo_t algo, int np, double hop_ns, double *per_rank);

#endif
