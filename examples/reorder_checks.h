/* What the two reordering examples (reorder_allgather.c, cg.c built with MPILENS_EXAMPLE_REORDER)
 * do when a call of libmpilens-monitor or libmpilens-map fails in the middle of a run, possibly
 * on one rank only: say which call and why, then MPI_Abort so that nobody waits. The including
 * file defines PROGRAM first. */
#ifndef MPILENS_EXAMPLES_REORDER_CHECKS_H
#define MPILENS_EXAMPLES_REORDER_CHECKS_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpi_monitoring.h"
#include "mpilens/map.h"

_Noreturn static inline void die(const char *what, const char *why)
{
    fprintf(stderr, PROGRAM ": %s failed: %s\n", what, why);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static inline void check_map(mpilens_map_status_t status, const char *what)
{
    if (status != MPILENS_MAP_OK)
        die(what, mpilens_map_status_string(status));
}

static inline void check_monitor(int code, const char *what)
{
    if (code != MPI_SUCCESS)
        die(what, MPI_M_error_string(code));
}

#endif
