/* A token passed around the ring three times, rank 0 first: with the lamport driver, the clock
 * of the token leaving rank r in round k is 2P(k-1) + 2r + 1 (a send adds 1, a receive takes the
 * maximum and adds 1), so at the end rank 0 holds 6P and rank r > 0 holds 4P + 2r + 1. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int rank, size, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return 0;
}
