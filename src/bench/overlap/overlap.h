/* mpilens-overlap: shared state of the benchmark suite (docs/overlap.md).
 *
 * main (overlap.c) parses options and plans the parameter space; p2p.c runs the leader/follower
 * benchmarks and their references; nload.c the background-thread load; nbc.c the non-blocking
 * collectives; metric.c the seed's overhead ratio. */
#ifndef MPILENS_OVERLAP_H
#define MPILENS_OVERLAP_H

#include <mpi.h>
#include <stdint.h>

#include "program.h"
#include "progress_setting.h"
#include "stats.h"

#define FAMILY "overlap"
#define MAX_VALUES 256
/* The seed's non-contiguous datatype: blocks of 32 MPI_CHAR every 64 bytes. */
#define NONCONTIG_BLOCK 32
#define NONCONTIG_STRIDE 64

/* A ratio's interval no wider than this is determined (analysis/overlap.py, DETERMINED_WIDTH). */
#define DECIDE_WIDTH 0.4
/* Repetitions of a map point under --decide on: no decision before this many (the median's 95%
 * interval needs 6 values), at most DECIDE_MAX_FACTOR x --reps, and beyond --reps only with time
 * that decided points saved (overlap_t.saved_ns). */
#define DECIDE_MIN_REPS 6
#define DECIDE_MAX_FACTOR 4

/* What decides a map point on rank 0: its T_comm and the bounds of that reference's median
 * interval relative to its median, and the class of its neighbours (overlap_neighbour_class). */
typedef struct {
    double t_comm_ns;
    double comm_rel[2];
    size_t min_reps, reps, max_reps;
    int neighbour_class;
    int64_t start_ns;       /* when the point began */
    const double *saved_ns; /* the run's savings, which repetitions beyond `reps` spend */
} overlap_decision_t;

typedef struct {
    ml_program_t prog;
    ml_setting_t progress_setting; /* what progresses the transfers besides the program's calls */
    MPI_Comm comm;                 /* the benchmarks' own messages (mpilens' control messages use prog.sync) */

    /* options */
    const char *preset;
    ml_list_t benches;
    ml_size_range_t sizes;
    ml_time_range_t compute;
    long density; /* values per doubling */
    long max_threads;
    const char *kernel; /* the computation: "time" or "openmp" (kernel.c) */
    long omp_threads;   /* openmp: the region's threads; 0 under the time kernel */
    long comm_threads;  /* threads: the threads that each send (or receive) one message */
    const char *decide; /* "on": map points stop once their class is decided (decide.c) */
    double saved_ns;    /* rank 0, --decide on: time decided points saved against --reps each */

    /* the parameter space */
    int64_t size_values[MAX_VALUES];
    size_t n_sizes;
    int64_t compute_values[MAX_VALUES];
    size_t n_computes;
    int64_t noncontig_sizes[MAX_VALUES]; /* size_values rounded to whole blocks */
    size_t n_noncontig;
    size_t n_noncontig_too_small;

    /* the 0-byte one-way time measured last: with the references at the start, then before each
     * column of a map that subtracts it (p2p.c) */
    double lat0_ns;
    /* the ping-pong reference's one-way times measured at the start (nload's T_comm), indexed
     * like the sizes; each map measures its own reference again per size (docs/overlap.md, "Base
     * references") */
    double one_way_ns[MAX_VALUES];

    /* message buffers, large enough for the largest message of every selected benchmark */
    char *send_buf, *recv_buf;
    size_t buf_len;
} overlap_t;

/* The seed's overhead ratio: (T_measured - max(T_comm, T_comp)) / min(T_comm, T_comp); NAN when
 * min(T_comm, T_comp) <= 0 (nothing to normalise by). */
double ml_overlap_ratio(double t_measured, double t_comm, double t_comp);

int overlap_selected(const overlap_t *o, const char *bench);

/* decide.c: ML_STOP_DECIDED when the ratio of a map point (T_measured sample t, T_comp sample
 * comp) is determined or its class decided at the confidence level; ML_STOP_MAX_REPS at the
 * maximum; ML_STOP_TIME_BUDGET beyond --reps when the savings would not pay one more repetition;
 * else ML_STOP_CONTINUE. */
ml_stop_t overlap_decide(const overlap_decision_t *d, const ml_sample_t *t, const ml_sample_t *comp, double level);
/* The decision of a map point whose T_comm has the given reference interval, between points of
 * class neighbour_class (overlap_neighbour_class); NULL when the run does not decide (--decide off, or
 * --reps auto: its own rule). */
const overlap_decision_t *overlap_decision(const overlap_t *o, double t_comm_ns, const double rel[2],
                                           int neighbour_class, overlap_decision_t *out);
/* sweep.c: the order of a map's n sizes, coarse to fine (each interval's middle, level by
 * level, after both ends): order[k] is the index of the k-th size measured (k < n <= MAX_VALUES). */
void overlap_sweep_order(size_t n, size_t order[]);
/* Neighbours of different classes: a point between them is decided only when determined. */
#define OVERLAP_CLASS_MIXED 99
/* The class of the nearest sizes measured on either side of size i at the same computation
 * time (classes[j] < 0: not measured, or no class): theirs when they agree or only one side has
 * one, OVERLAP_CLASS_MIXED when they differ, -1 when neither side has one. */
int overlap_neighbour_class(const int classes[], size_t n, size_t i);
/* rows x n classes, all -1 (nothing measured yet), for overlap_neighbour_class by row; free() it. */
int *overlap_classes_new(size_t rows, size_t n);
/* The class of a ratio, as the report's bands number them: 0 overlap (< 0.2), 1 partial (< 0.8),
 * 2 none (<= 1.2), 3 hurts; -1 for NaN. */
int overlap_class(double ratio);
/* After a decided point of n repetitions: what it saved against --reps (or spent beyond it) goes
 * to the run's savings. */
void overlap_account(overlap_t *o, const overlap_decision_t *d, size_t n);

/* The stopping rule of a reference (T_comm at one size). Every map point at that size divides by
 * it, so under --decide on it is repeated until its median is known to within
 * REFERENCE_PRECISION (95%), from --reps on, at most REFERENCE_MAX_FACTOR x --reps and
 * REFERENCE_BUDGET_NS: references are short, and 10 round trips left a median interval of
 * -75%..+175% where the machine is noisy. Otherwise the run's rule (fills out, returns it). */
#define REFERENCE_PRECISION 0.05
#define REFERENCE_MAX_FACTOR 8
#define REFERENCE_BUDGET_NS 500000000
const ml_stop_rule_t *overlap_reference_rule(const overlap_t *o, ml_stop_rule_t *out);

/* kernel.c: the computation of ns (--kernel), the time it took (at least ns; 0 for ns <= 0). */
int64_t overlap_compute(const overlap_t *o, int64_t ns);

/* p2p.c */
/* Whether the threads benchmark can run: it needs MPI_THREAD_MULTIPLE. */
int p2p_threads_possible(const overlap_t *o);
long p2p_points(const overlap_t *o);
void p2p_run(overlap_t *o);
/* One point of the blocking ping-pong between ranks 0 and 1 (both call it); on rank 0 fills t
 * with round trip / 2 per repetition. Needs the references measured (lat0). */
ml_stop_t p2p_pingpong_half(overlap_t *o, int64_t size, ml_sample_t *t);

/* nload.c */
long nload_points(const overlap_t *o);
void nload_run(overlap_t *o);

/* nbc.c */
long nbc_points(const overlap_t *o);
void nbc_run(overlap_t *o);

/* A point-to-point map point (a benchmark at one size and computation time) as measured: its
 * samples, T_comm from the reference measured right before its size's points (p2p.c, column
 * references) with that reference's sample, the 0-byte one-way time its sequences subtract (0
 * where none is), and one more parameter (peers of multi, ...) when extra_name is not NULL. */
typedef struct {
    const char *bench, *key;
    int64_t size, compute_ns;
    const ml_sample_t *t, *comp;
    ml_stop_t reason;
    double t_comm_ns;
    const ml_sample_t *ref;
    const ml_stop_rule_t *ref_rule;
    ml_stop_t ref_reason;
    double lat0_ns;
    const char *extra_name;
    int64_t extra_value;
} overlap_map_point_t;

/* Writes a map point on rank 0 and returns its ratio. */
double overlap_write_map_point(overlap_t *o, const overlap_map_point_t *m);

#endif
