/* bench/monitor_ops: mean time of a few small operations, for
 * bench/monitor_overhead to compare with and without libmpilens-monitor.
 * Prints one line per operation: "<name> <mean ns per operation>" (rank 0).
 *   pingpong  1-byte ping-pong between ranks 0 and 1 (per round trip)
 *   reduce    MPI_Reduce of one int to rank 0
 *   bcast     MPI_Bcast of one int from rank 0
 *   send      MPI_Isend of 1 byte to oneself, then MPI_Recv (per pair): the per-call cost */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

static double per_op(int64_t start, int ops) { return (double)(ml_clock_ns() - start) / ops; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, ops = argc > 1 ? atoi(argv[1]) : 20000, x = 1, y;
    char byte = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Barrier(MPI_COMM_WORLD);
    int64_t t = ml_clock_ns();
    for (int i = 0; i < ops && size > 1; i++) {
        if (rank == 0) {
            MPI_Send(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&byte, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&byte, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
        }
    }
    double pingpong = per_op(t, ops);

    MPI_Barrier(MPI_COMM_WORLD);
    t = ml_clock_ns();
    for (int i = 0; i < ops; i++)
        MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    double reduce = per_op(t, ops);

    MPI_Barrier(MPI_COMM_WORLD);
    t = ml_clock_ns();
    for (int i = 0; i < ops; i++)
        MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    double bcast = per_op(t, ops);

    MPI_Barrier(MPI_COMM_WORLD);
    t = ml_clock_ns();
    for (int i = 0; i < ops; i++) {
        MPI_Request r;
        MPI_Isend(&byte, 1, MPI_CHAR, rank, 1, MPI_COMM_WORLD, &r);
        MPI_Recv(&y, 1, MPI_CHAR, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    double send = per_op(t, ops);

    if (rank == 0)
        printf("pingpong %.1f\nreduce %.1f\nbcast %.1f\nsend %.1f\n", pingpong, reduce, bcast, send);
    MPI_Finalize();
    return 0;
}
