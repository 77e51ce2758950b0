/* Asks for MPI_THREAD_MULTIPLE and prints what it was given (rank 0), then exchanges one message
 * so that the layer is seen working at the level it gave. Also prints the first line of the
 * library's version, which names the library in the layer's file of auto thresholds. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int provided, queried, rank, size, value = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Query_thread(&queried);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("provided %s\n", provided == MPI_THREAD_MULTIPLE     ? "MULTIPLE"
                                : provided == MPI_THREAD_SERIALIZED ? "SERIALIZED"
                                                                    : "lower");
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    library[strcspn(library, "\n")] = 0;
    if (rank == 0)
        printf("library %s\n", library);
    if (queried != provided && rank == 0)
        printf("MPI_Query_thread says otherwise\n");
    MPI_Sendrecv_replace(&value, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
