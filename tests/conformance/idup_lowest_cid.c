/* Open MPI 4.1.4 and 5.0, no mpilens layer (docs/conformance.md, "Open MPI: MPI_Comm_idup hangs"):
 * a correct program that never completes. Two communicators, low (made first, so the lower
 * context id) and high. Even ranks duplicate high (blocking), then low (nonblocking); odd ranks
 * start the nonblocking duplication of low first, test it a few times, then duplicate high. Each
 * communicator sees its collectives in the same order on every rank, and a pending nonblocking
 * collective must not hold back a blocking one on another communicator, so MPI requires both to
 * complete (MPI-3.1 §5.12, nonblocking collective operations).
 *
 * Open MPI 4.1.4 agrees on a context id one agreement at a time per process, lowest
 * communicator id first (ompi_comm_cid_lowest_id in ompi/communicator/comm_cid.c): on odd ranks
 * the pending duplication of low holds that turn until every rank has started it, so their
 * duplication of high waits, and even ranks, which start low's only after high's, wait for them.
 * The separate piggyback method meets the same rule when it duplicates the shadow of an
 * MPI_Comm_idup'd communicator from its parent's shadow (MPICH's comm/comm_create_group_idup).
 * Measured on 2026-11-30: Open MPI 4.1.4 hung in 6 runs of 6 (2 and 4 ranks), Open MPI 5.0.11 in
 * 4 of 4 (both ranks in the blocking duplication); MPICH 4.0.2 completed 4 of 4.
 *
 *   mpicc idup_lowest_cid.c -o idup_lowest_cid
 *   timeout 20 mpirun -n 2 ./idup_lowest_cid; echo $?   # 124: hung; 0 and "done": completed */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Comm low, high, low_dup, high_dup;
    MPI_Request request;
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &low);
    MPI_Comm_dup(MPI_COMM_WORLD, &high);
    if (rank % 2 == 0) {
        MPI_Comm_dup(high, &high_dup);
        MPI_Comm_idup(low, &low_dup, &request);
    } else {
        int flag = 0;
        MPI_Comm_idup(low, &low_dup, &request);
        /* Progress, as any MPI call makes: the duplication of low takes its turn. It cannot
         * complete here: even ranks have not started it. */
        for (int i = 0; i < 100 && !flag; i++)
            MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
        MPI_Comm_dup(high, &high_dup);
    }
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Barrier(low_dup);
    MPI_Barrier(high_dup);
    MPI_Comm_free(&low_dup);
    MPI_Comm_free(&high_dup);
    MPI_Comm_free(&low);
    MPI_Comm_free(&high);
    if (rank == 0)
        printf("done\n");
    MPI_Finalize();
    return 0;
}
