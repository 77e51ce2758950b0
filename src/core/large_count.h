/* Large-count entry points (MPI-4's MPI_Foo_c) of a layer that works on int counts (`large
 * narrow` in its wrapped.spec, src/wrap/generate_wrappers.py): a count that fits in an int goes
 * to the layer's int form; a larger one is refused with MPI_ERR_COUNT through the communicator's
 * (or window's) error handler, and the layer says why once. */
#ifndef MPILENS_CORE_LARGE_COUNT_H
#define MPILENS_CORE_LARGE_COUNT_H

#include <limits.h>
#include <mpi.h>

/* The layer's name in its messages, defined by its generated wrappers ("libmpilens-piggyback"). */
extern const char ml_layer_name[];

#if MPI_VERSION >= 4
static inline int ml_count_fits(MPI_Count count) { return count >= 0 && count <= INT_MAX; }

/* The refusal, through the error handler of the call's communicator or window. */
int ml_count_refused_comm(const char *function, MPI_Comm comm);
int ml_count_refused_win(const char *function, MPI_Win win);
#endif

#endif
