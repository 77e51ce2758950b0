/* An MPI program that knows nothing of mpilens, for the whole-run mode: each rank sends 2
 * messages of 64 bytes to the next rank, then rank 0 broadcasts 128 bytes. */
#include <mpi.h>

int main(int argc, char **argv)
{
    char out[64] = {0}, in[64], data[128] = {0};
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(out, 64, MPI_CHAR, (rank + 1) % size, 0, in, 64, MPI_CHAR, (rank + size - 1) % size, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(data, 128, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
