/* Paying an MPI library's first-use costs before anything is measured.
 *
 * A library's first messages between two processes are slower than the rest: MPICH 4.0.2's
 * shared-memory transport takes about 3 us more per round trip for the first 64 round trips of
 * messages above 64 bytes (first touch of its queue cells), Open MPI a few slow round trips;
 * a reference measured in those (10 to 20 round trips at one size) reads ten times too long, and
 * every ratio divided by it comes out wrong (docs/overlap.md, "Base references"). The costs are
 * the small messages' (cells, queues): large sizes get a few exchanges, so that a run of many
 * ranks over a slow network does not spend minutes here (every pair, every size). */
#ifndef MPILENS_CORE_WARMUP_H
#define MPILENS_CORE_WARMUP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Exchanges at each size with ML_WARM_UP_BYTES / size, between these bounds. */
#define ML_WARM_UP_MAX 128
#define ML_WARM_UP_MIN 1
#define ML_WARM_UP_BYTES ((int64_t)4 << 20)

/* How many exchanges ml_warm_up makes at one size. */
int ml_warm_up_count(int64_t size);

/* Collective. Every pair of ranks of comm exchanges messages of each of the n sizes (bytes, each
 * at most the length of both buffers) ml_warm_up_count(size) times, with MPI_Sendrecv, in
 * rounds in which every rank has one partner (n_ranks - 1 rounds, n_ranks when odd). Returns the
 * first MPI error, else MPI_SUCCESS. */
int ml_warm_up(MPI_Comm comm, const int64_t *sizes, size_t n, void *send_buf, void *recv_buf);

#endif
