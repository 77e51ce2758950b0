/* MPI_Sendrecv and MPI_Sendrecv_replace count their send part only:
 * - Sendrecv of 5 ints to rank + 1 (receiving 9 from rank - 1: the receive is not counted);
 * - Sendrecv_replace of 7 doubles to rank - 1;
 * - Sendrecv_replace of 0 elements to rank + 1: one message of 0 bytes (Open MPI hands this
 *   case to its own Sendrecv: it must not count twice);
 * - Sendrecv of 3 chars to oneself: counted;
 * - Sendrecv to and from MPI_PROC_NULL: nothing;
 * - (MPI-4) Isendrecv of 2 ints to rank + 1 and Isendrecv_replace of 1 double to rank - 1. */
#include "montest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(MPI_M_init());
    MPI_M_msid id;
    OK(MPI_M_start(MPI_COMM_WORLD, &id));

    int ints[9] = {0};
    double doubles[7] = {0};
    char chars[3] = "ab", got[3];
    MPI_Sendrecv(ints, 5, MPI_INT, right, 1, ints, 9, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv_replace(doubles, 7, MPI_DOUBLE, left, 2, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv_replace(doubles, 0, MPI_DOUBLE, right, 3, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(chars, 3, MPI_CHAR, rank, 4, got, 3, MPI_CHAR, rank, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(strcmp(got, "ab") == 0);
    MPI_Sendrecv(ints, 4, MPI_INT, MPI_PROC_NULL, 5, ints, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4
    MPI_Request requests[2];
    MPI_Isendrecv(ints, 2, MPI_INT, right, 6, ints + 4, 2, MPI_INT, left, 6, MPI_COMM_WORLD, &requests[0]);
    MPI_Isendrecv_replace(doubles, 1, MPI_DOUBLE, left, 7, right, 7, MPI_COMM_WORLD, &requests[1]);
    wait_all(2, requests);
#endif
    OK(MPI_M_suspend(id));

    expected_t e = expected_new(size);
    for (int i = 0; i < size; i++) {
        int r = (i + 1) % size, l = (i + size - 1) % size;
        expect(&e, i, r, 1, 5 * sizeof(int));
        expect(&e, i, l, 1, 7 * sizeof(double));
        expect(&e, i, r, 1, 0);
        expect(&e, i, i, 1, 3);
#if MPI_VERSION >= 4
        expect(&e, i, r, 1, 2 * sizeof(int));
        expect(&e, i, l, 1, sizeof(double));
#endif
    }
    check_matrices("sendrecv", id, MPI_M_P2P_ONLY, &e);
    check_nothing("sendrecv", id, MPI_M_COLL_ONLY | MPI_M_OSC_ONLY);

    expected_free(&e);
    OK(MPI_M_free(id));
    OK(MPI_M_finalize());
    return mpitest_finish();
}
