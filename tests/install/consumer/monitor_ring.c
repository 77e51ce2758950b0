/* A program of a site using the installed monitoring API: each rank sends 2 messages of 64 bytes
 * to the next in a ring, in a monitoring session; its row must count exactly those. Prints
 * "consumer C: passed" on rank 0; exits 1 on any difference. */
#include <mpi.h>
#include <mpi_monitoring.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_M_msid msid;
    ok &= MPI_M_init() == MPI_SUCCESS && MPI_M_start(MPI_COMM_WORLD, &msid) == MPI_SUCCESS;
    char out[64] = {0}, in[64];
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(out, 64, MPI_BYTE, next, 0, in, 64, MPI_BYTE, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok &= MPI_M_suspend(msid) == MPI_SUCCESS;
    unsigned long *counts = calloc((size_t)size, sizeof *counts), *bytes = calloc((size_t)size, sizeof *bytes);
    ok &= MPI_M_get_data(msid, counts, bytes, MPI_M_P2P_ONLY) == MPI_SUCCESS;
    for (int r = 0; r < size; r++)
        ok &= counts[r] == (r == next ? 2u : 0u) && bytes[r] == (r == next ? 128u : 0u);
    ok &= MPI_M_free(msid) == MPI_SUCCESS && MPI_M_finalize() == MPI_SUCCESS;
    int all = 0;
    MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("consumer C: %s\n", all ? "passed" : "FAILED");
    free(counts);
    free(bytes);
    MPI_Finalize();
    return rank == 0 && !all;
}
