/* Open MPI 4.1.4 and 5.0, no mpilens layer (docs/conformance.md, "Open MPI: MPI_Comm_idup hangs"):
 * the step of MPICH's comm/comm_idup_iallreduce that hangs under the separate piggyback method,
 * made as that method makes it. The program duplicates an intercommunicator with MPI_Comm_idup
 * and starts an MPI_Iallreduce on it; the method duplicates the new communicator's shadow from the
 * same parent at once, so two duplications are in flight there. Open MPI agrees on each new
 * context id through nonblocking collectives on the parent, each started from its progress
 * engine when the previous one completes, at moments that differ between processes, while libnbc
 * matches collectives on a communicator by the order they start; now and then two of them pair
 * crosswise and never complete (open-mpi/ompi#2025, "multiple outstanding idup on the same
 * communicator"). Arguments: rounds (default 20), duplications per round (default 2; 1 is the
 * program alone), and "world" to duplicate MPI_COMM_WORLD instead. Measured on 2026-11-30 (2 cores): Open MPI 4.1.4 hung in 9 runs of 9 at 6
 * ranks, 2 of 3 at 4, 0 of 3 at 2; Open MPI 5.0.11 in 3 of 3 at 6; with one duplication per round,
 * 0 of 3 under either; MPICH 4.0.2, 0 of 3 at 6 ranks. Duplicating MPI_COMM_WORLD (an
 * intracommunicator, whose agreements run libnbc's allreduce), Open MPI 4.1.4 hung in 0 of 9 at 6.
 *
 *   mpicc idup_twice.c -o idup_twice
 *   for i in $(seq 8); do timeout 60 mpirun --oversubscribe -n 6 ./idup_twice; echo $?; done */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, remote, errors = 0;
    MPI_Comm half, inter;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int copies = argc > 2 ? atoi(argv[2]) : 2;
    if (size < 2 || copies < 1 || copies > 2) {
        fprintf(stderr, "needs 2 ranks or more, and 1 or 2 duplications per round\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* even and odd ranks, joined as comm_idup_iallreduce joins them */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 1234, &inter);
    MPI_Comm_remote_size(inter, &remote);
    MPI_Comm parent = inter;
    if (argc > 3 && strcmp(argv[3], "world") == 0) {
        parent = MPI_COMM_WORLD;
        remote = size;
    }
    for (int round = 0; round < rounds; round++) {
        MPI_Comm copy[2];
        MPI_Request requests[3];
        MPI_Status statuses[3];
        int in = 1, out = 0;
        for (int c = 0; c < copies; c++)
            MPI_Comm_idup(parent, &copy[c], &requests[c]);
        MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, parent, &requests[copies]);
        MPI_Waitall(copies + 1, requests, statuses);
        errors += out != remote;
        for (int c = 0; c < copies; c++)
            MPI_Comm_free(&copy[c]);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    if (rank == 0)
        printf("%d rounds, %d wrong sums\n", rounds, errors);
    MPI_Finalize();
    return errors != 0;
}
