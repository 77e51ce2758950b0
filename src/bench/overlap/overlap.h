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

    /* the parameter space */
    int64_t size_values[MAX_VALUES];
    size_t n_sizes;
    int64_t compute_values[MAX_VALUES];
    size_t n_computes;
    int64_t noncontig_sizes[MAX_VALUES]; /* size_values rounded to whole blocks */
    size_t n_noncontig;
    size_t n_noncontig_too_small;

    /* references (docs/overlap.md, "Base references"), measured first; indexed like the sizes */
    double lat0_ns;
    double one_way_ns[MAX_VALUES];
    double noncontig_one_way_ns[MAX_VALUES];
    double send_ns[MAX_VALUES];
    double multi_comm_ns[MAX_VALUES];

    /* message buffers, large enough for the largest message of every selected benchmark */
    char *send_buf, *recv_buf;
    size_t buf_len;
} overlap_t;

/* The seed's overhead ratio: (T_measured - max(T_comm, T_comp)) / min(T_comm, T_comp); NAN when
 * min(T_comm, T_comp) <= 0 (nothing to normalise by). */
double ml_overlap_ratio(double t_measured, double t_comm, double t_comp);

int overlap_selected(const overlap_t *o, const char *bench);

/* p2p.c */
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

/* Writes a map point (a benchmark at one size and computation time) on rank 0. extra_name /
 * extra_value add one more parameter (peers of multi) when extra_name is not NULL. */
void overlap_write_map_point(overlap_t *o, const char *bench, const char *key, int64_t size, int64_t compute,
                             const ml_sample_t *t, const ml_sample_t *comp, double t_comm, double lat0,
                             ml_stop_t reason, const char *extra_name, int64_t extra_value);

#endif
