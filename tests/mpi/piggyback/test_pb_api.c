/* The tool API of libmpilens-piggyback, linked, and its status convention (include/mpilens/
 * piggyback.h): a refused call returns its error and changes nothing, getters write only on
 * success, every status has a name of its own. Before MPI_Init the size and method are taken;
 * after it they are fixed (MPILENS_PB_ERR_STATE) and the getters give the agreed ones. Any rank
 * count. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* check.h, not mpitest.h: checks run before MPI_Init and after MPI_Finalize too */
#include "check.h"
#include "mpilens/piggyback.h"

static void check_names(void)
{
    static const mpilens_pb_status_t codes[] = {MPILENS_PB_OK, MPILENS_PB_ERR_ARG, MPILENS_PB_ERR_STATE};
    const size_t n = sizeof codes / sizeof codes[0];
    CHECK(strcmp(mpilens_pb_status_string(MPILENS_PB_OK), "success") == 0);
    for (size_t i = 0; i < n; i++) {
        CHECK(strcmp(mpilens_pb_status_string(codes[i]), "unknown status") != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(mpilens_pb_status_string(codes[i]), mpilens_pb_status_string(codes[j])) != 0);
    }
    CHECK(strcmp(mpilens_pb_status_string((mpilens_pb_status_t)(MPILENS_PB_ERR_STATE + 1)), "unknown status") == 0);
    CHECK(strcmp(mpilens_pb_status_string((mpilens_pb_status_t)-1), "unknown status") == 0);
}

/* The size and method in force are `bytes` and `method`. */
static void check_in_force(size_t bytes, const char *method)
{
    size_t size = 0;
    const char *name = NULL;
    CHECK(mpilens_pb_get_size(&size) == MPILENS_PB_OK && size == bytes);
    CHECK(mpilens_pb_get_method(&name) == MPILENS_PB_OK && name && strcmp(name, method) == 0);
}

int main(int argc, char **argv)
{
    /* the calls below decide, not the environment */
    unsetenv("MPILENS_PB_SIZE");
    unsetenv("MPILENS_PB_METHOD");
    check_names();

    CHECK(mpilens_pb_get_size(NULL) == MPILENS_PB_ERR_ARG);
    CHECK(mpilens_pb_get_method(NULL) == MPILENS_PB_ERR_ARG);
    CHECK(mpilens_pb_set_size(16) == MPILENS_PB_OK);
    CHECK(mpilens_pb_set_method("pack-after") == MPILENS_PB_OK);
    CHECK(mpilens_pb_set_size(MPILENS_PB_MAX_SIZE + 1) == MPILENS_PB_ERR_ARG);
    CHECK(mpilens_pb_set_method("pack") == MPILENS_PB_ERR_ARG);
    CHECK(mpilens_pb_set_method(NULL) == MPILENS_PB_ERR_ARG);
    check_in_force(16, "pack-after");
    CHECK(mpilens_pb_set_handlers(NULL, NULL, NULL) == MPILENS_PB_OK);

    MPI_Init(&argc, &argv);
    check_in_force(16, "pack-after");
    CHECK(mpilens_pb_set_size(8) == MPILENS_PB_ERR_STATE);
    CHECK(mpilens_pb_set_method("separate") == MPILENS_PB_ERR_STATE);
    CHECK(mpilens_pb_set_size(MPILENS_PB_MAX_SIZE + 1) == MPILENS_PB_ERR_ARG);
    check_in_force(16, "pack-after");

    /* the layer still carries messages after the refused calls */
    int rank, size, sum = 0, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == left);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size);

    int all_failures = 0;
    MPI_Allreduce(&check_failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    if (rank == 0 && !all_failures)
        printf("passed\n");
    return check_failures ? 1 : 0;
}
