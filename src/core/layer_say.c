#include "layer_say.h"

#include <mpi.h>
#include <stdio.h>

int ml_layer_world_rank(void)
{
    int initialized = 0, finalized = 0, rank = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized)
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void ml_layer_vsay(const char *layer, int once, const char *fmt, va_list ap)
{
    int rank = ml_layer_world_rank();
    if (once && rank != 0)
        return;
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    if (once)
        fprintf(stderr, "%s: %s\n", layer, line);
    else
        fprintf(stderr, "%s: rank %d: %s\n", layer, rank, line);
}
