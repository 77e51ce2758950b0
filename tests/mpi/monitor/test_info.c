/* MPI_M_get_info (array size = size of the session's communicator, thread level
 * MPI_THREAD_MULTIPLE, active or suspended), MPI_M_INT_IGNORE and MPI_M_DATA_IGNORE accepted
 * for every output, and MPI_M_get_backend: P2P and OSC are always counted at the interface;
 * collectives too here, as these tests run without Open MPI's monitoring (and Debian's Open MPI
 * 4.1 could not provide it anyway). The data read: each rank sent one message of 6 bytes to
 * rank + 1. */
#include "montest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int halfsize;
    MPI_Comm_size(half, &halfsize);
    OK(MPI_M_init());

    int backend;
    CHECK(MPI_M_get_backend(MPI_M_P2P_ONLY, &backend) == MPI_SUCCESS && backend == MPI_M_BACKEND_PMPI);
    CHECK(MPI_M_get_backend(MPI_M_OSC_ONLY, &backend) == MPI_SUCCESS && backend == MPI_M_BACKEND_PMPI);
    CHECK(MPI_M_get_backend(MPI_M_COLL_ONLY, &backend) == MPI_SUCCESS && backend == MPI_M_BACKEND_PMPI);

    MPI_M_msid world, mine, self;
    OK(MPI_M_start(MPI_COMM_WORLD, &world));
    OK(MPI_M_start(half, &mine));
    OK(MPI_M_start(MPI_COMM_SELF, &self));
    MPI_M_msid ids[3] = {world, mine, self};
    int sizes[3] = {size, halfsize, 1};
    for (int k = 0; k < 3; k++) {
        int provided = -1, n = -1;
        CHECK(MPI_M_get_info(ids[k], &provided, &n) == MPI_SUCCESS);
        CHECK(provided == MPI_THREAD_MULTIPLE && n == sizes[k]);
        n = -1;
        CHECK(MPI_M_get_info(ids[k], MPI_M_INT_IGNORE, &n) == MPI_SUCCESS && n == sizes[k]);
        provided = -1;
        CHECK(MPI_M_get_info(ids[k], &provided, MPI_M_INT_IGNORE) == MPI_SUCCESS && provided == MPI_THREAD_MULTIPLE);
        CHECK(MPI_M_get_info(ids[k], MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_SUCCESS);
    }

    char out[6] = {0}, in[6];
    int right = (rank + 1) % size;
    MPI_Sendrecv(out, 6, MPI_CHAR, right, 0, in, 6, MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    OK(MPI_M_suspend(MPI_M_ALL_MSID));
    int n = -1;
    CHECK(MPI_M_get_info(world, MPI_M_INT_IGNORE, &n) == MPI_SUCCESS && n == size);

    /* This process's row, with either output dropped. */
    unsigned long *counts = calloc((size_t)size, sizeof *counts), *bytes = calloc((size_t)size, sizeof *bytes);
    CHECK(MPI_M_get_data(world, counts, bytes, MPI_M_ALL_COMM) == MPI_SUCCESS);
    for (int j = 0; j < size; j++)
        CHECK(counts[j] == (j == right ? 1u : 0u) && bytes[j] == (j == right ? 6u : 0u));
    memset(counts, 0, sizeof *counts * (size_t)size);
    CHECK(MPI_M_get_data(world, counts, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_SUCCESS && counts[right] == 1);
    memset(bytes, 0, sizeof *bytes * (size_t)size);
    CHECK(MPI_M_get_data(world, MPI_M_DATA_IGNORE, bytes, MPI_M_P2P_ONLY) == MPI_SUCCESS && bytes[right] == 6);
    CHECK(MPI_M_get_data(world, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_SUCCESS);

    /* The matrices, with either dropped; gathered on one root, the others passing nothing. */
    unsigned long *matrix = calloc((size_t)size * (size_t)size, sizeof *matrix);
    CHECK(MPI_M_allgather_data(world, matrix, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    for (int i = 0; i < size; i++)
        CHECK(matrix[i * size + (i + 1) % size] == 1);
    memset(matrix, 0, sizeof *matrix * (size_t)size * (size_t)size);
    CHECK(MPI_M_allgather_data(world, MPI_M_DATA_IGNORE, matrix, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    for (int i = 0; i < size; i++)
        CHECK(matrix[i * size + (i + 1) % size] == 6);
    int root = size - 1;
    memset(matrix, 0, sizeof *matrix * (size_t)size * (size_t)size);
    if (rank == root) {
        CHECK(MPI_M_rootgather_data(world, root, MPI_M_DATA_IGNORE, matrix, MPI_M_P2P_ONLY) == MPI_SUCCESS);
        for (int i = 0; i < size; i++)
            CHECK(matrix[i * size + (i + 1) % size] == 6);
    } else {
        CHECK(MPI_M_rootgather_data(world, root, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    }
    CHECK(MPI_M_rootgather_data(world, 0, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, MPI_M_P2P_ONLY) == MPI_SUCCESS);

    free(counts);
    free(bytes);
    free(matrix);
    OK(MPI_M_free(MPI_M_ALL_MSID));
    OK(MPI_M_finalize());
    MPI_Comm_free(&half);
    return mpitest_finish();
}
