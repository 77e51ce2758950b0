/* Known traffic for the Fortran test, sent through the C interface: each rank sends `messages`
 * messages of `bytes` bytes to the next rank of the ring. */
#include <mpi.h>
#include <stdlib.h>

void ring_traffic(MPI_Fint comm_f, int messages, int bytes);
void ring_traffic(MPI_Fint comm_f, int messages, int bytes)
{
    MPI_Comm comm = MPI_Comm_f2c(comm_f);
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char *out = calloc((size_t)bytes + 1, 1), *in = calloc((size_t)bytes + 1, 1);
    for (int i = 0; i < messages; i++)
        MPI_Sendrecv(out, bytes, MPI_CHAR, (rank + 1) % size, 0, in, bytes, MPI_CHAR, (rank + size - 1) % size, 0, comm,
                     MPI_STATUS_IGNORE);
    free(out);
    free(in);
}
