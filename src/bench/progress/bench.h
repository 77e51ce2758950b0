/* mpilens-progress: the state every part of the program shares (docs/programs/mpilens-progress.md).
 *
 * progress.c holds main, the options and the interrupt benchmark; p2p.c and nbc.c the overhead
 * benchmarks of seed 002 §V-A and §V-B; sweep.c the order of a size's points (blocking time,
 * then every strategy of every kind of computation) that both follow; strategy.c one
 * repetition; records.c the point records; the core's progress_setting.c the progress this run has. */
#ifndef MPILENS_PROGRESS_BENCH_H
#define MPILENS_PROGRESS_BENCH_H

#include <mpi.h>
#include <stdint.h>

#include "program.h"
#include "progress_setting.h"
#include "strategy.h"
#include "switches.h"

#define FAMILY "progress"
#define PROGRAM "mpilens-progress"
#define ML_MAX_VALUES 64

typedef struct {
    ml_program_t prog;
    MPI_Comm comm; /* the measured messages; mpilens' own go on prog.sync */

    /* options */
    const char *preset, *test_placement_name;
    ml_list_t benches, ops, strategies, computes;
    ml_size_range_t sizes, intervals;
    int64_t budget_ns, interrupt_work_ns;
    long rate_hz, interrupt_rounds;

    /* the plan */
    ml_placement_t test_placement; /* of the test strategy's tests (schedule.h), from --test-placement */
    int64_t size_values[ML_MAX_VALUES];
    size_t n_sizes;
    int64_t interval_values[ML_MAX_VALUES];
    size_t n_intervals;

    ml_setting_t setting;
    char *send_buf, *recv_buf; /* touched; large enough for every selected benchmark */
} ml_bench_t;

/* One point: a benchmark (and collective) at a message size, kind of computation and strategy. */
typedef struct {
    const char *bench;    /* "p2p" or "nbc" */
    const char *op;       /* nbc: "iallreduce", ...; NULL for p2p */
    int64_t size;         /* bytes */
    int work;             /* 0: time-based, 1: work-based computation; -1: none (blocking) */
    const char *strategy; /* "blocking", "none", "test", "test-best" */
    int64_t interval;     /* test, test-best: bytes between tests; else 0 */
} ml_point_t;

/* ---- records.c ---- */
/* Each rank's context switches since its snapshot before (switches.h), gathered to rank 0 of
 * comm (collective): an array of its size there (free() it), NULL elsewhere. */
ml_switches_t *ml_switches_gather(const ml_switch_snapshot_t *before, MPI_Comm comm);
/* stats.context_switches: per group (rank, progress_thread, other_threads) the voluntary and
 * involuntary switches of each rank over the point's repetitions, warm-up included;
 * progress_thread null when no rank has libmpilens-progress's thread. */
void ml_switches_json(ml_json_t *j, const ml_switches_t *ranks, int n);
void ml_point_key(char *buf, size_t len, const ml_point_t *pt);
/* Initialises j with a point record's opening: type, family, bench, key, every parameter
 * (ranks > 0 adds "ranks"), and opens "stats"; ml_program_point_end closes and writes it. */
void ml_point_begin(ml_json_t *j, const ml_bench_t *b, const ml_point_t *pt, const char *key, int ranks);
/* The medians of a point's samples (t_o_ns, t_mpi_ns, t_ov_ns, t_start_ns, t_test_ns, t_wait_ns,
 * t_c_ns for work-based points) and the tests of one repetition. */
void ml_samples_json(ml_json_t *j, const ml_samples_t *s, int work);
/* The number at `field` ("stats.t_b_ns") of the point `key` in the results file being written,
 * for a resumed run that needs a value it measured before. Returns 0, or -1 if absent. */
int ml_recorded_number(const char *path, const char *key, const char *field, double *out);

/* ---- sweep.c ---- */
/* What a benchmark does at the points of a size; sweep.c calls them in order on every rank of
 * `group`, skipping the points a resumed file holds. */
typedef struct {
    void *ctx;
    MPI_Comm group; /* the ranks taking part, rank 0 first; t_b is broadcast over it */
    int ranks;      /* recorded in every point (params.ranks) when > 0 */
    /* before the first measured point of a kind of computation (work-based: calibrate λ to t_b) */
    void (*prepare)(void *ctx, int work, double t_b);
    /* measure and write a point; return its t_o (on rank 0 at least), which for the blocking
     * point (t_b NAN) is t_b: all its time is inside MPI */
    double (*measure)(void *ctx, const ml_point_t *pt, const char *key, double t_b);
} ml_sweep_t;

/* One repetition of a point: blocking, or start - compute t_b (time-based) or `units` of work
 * (work-based, c_ns: the same work timed alone just before) with the point's tests - wait. */
void ml_point_once(const ml_comm_t *comm, const ml_point_t *pt, ml_placement_t placement, int64_t t_b, uint64_t units,
                   int64_t c_ns, ml_rep_t *rep);

/* Points of one size: blocking, then per kind of computation none, each test interval, test-best. */
long ml_sweep_points(const ml_bench_t *b);
void ml_sweep_size(ml_bench_t *b, const ml_sweep_t *s, const char *bench, const char *op, int64_t size);

/* ---- p2p.c, nbc.c ---- */
long ml_p2p_points(const ml_bench_t *b);
void ml_p2p_run(ml_bench_t *b);
long ml_nbc_points(const ml_bench_t *b);
void ml_nbc_run(ml_bench_t *b);
/* Bytes each of the two buffers needs for nbc at `size` (alltoall: one block per rank). */
size_t ml_nbc_buffer_bytes(const ml_bench_t *b, int64_t size);

#endif
