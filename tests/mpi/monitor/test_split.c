/* A session on a sub-communicator sees the traffic between its members whatever communicator
 * carries it, indexed by its own ranks (seed 004, 4.1). MPI_COMM_WORLD is split by rank % 2 and
 * each process starts a session on its half. Then, over MPI_COMM_WORLD, every rank sends
 * - 3 messages of 8 ints to the next rank of its own parity (world rank + 2, wrapping within the
 *   half; itself when the half has one rank), and
 * - 1 message of 100 chars to a rank of the other parity (world rank + 1, wrapping).
 * Each half's session must show the first, by ranks of the half (world rank r is rank r / 2 of
 * its half, and rank + 2 becomes half rank + 1), and nothing of the second. A session on
 * MPI_COMM_WORLD started at the same time sees both. */
#include "montest.h"

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size % 2 == 0);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int halfsize = size / 2;
    montest_prints = rank < 2; /* rank 0 of each half */
    OK(MPI_M_init());

    MPI_M_msid mine, world;
    OK(MPI_M_start(half, &mine));
    OK(MPI_M_start(MPI_COMM_WORLD, &world));
    int same = (rank + 2) % size, other = (rank + 1) % size, from_same = (rank + size - 2) % size,
        from_other = (rank + size - 1) % size;
    int out[8] = {0}, in[3][8];
    char text[100] = {0}, got[100];
    MPI_Request r[5];
    for (int m = 0; m < 3; m++)
        MPI_Irecv(in[m], 8, MPI_INT, from_same, m, MPI_COMM_WORLD, &r[m]);
    MPI_Irecv(got, 100, MPI_CHAR, from_other, 9, MPI_COMM_WORLD, &r[3]);
    for (int m = 0; m < 3; m++)
        MPI_Send(out, 8, MPI_INT, same, m, MPI_COMM_WORLD);
    MPI_Isend(text, 100, MPI_CHAR, other, 9, MPI_COMM_WORLD, &r[4]);
    wait_all(5, r);
    OK(MPI_M_suspend(MPI_M_ALL_MSID));

    expected_t e = expected_new(halfsize);
    for (int i = 0; i < halfsize; i++)
        expect(&e, i, (i + 1) % halfsize, 3, 3 * 8 * sizeof(int));
    check_matrices("session on the half", mine, MPI_M_ALL_COMM, &e);
    expected_free(&e);

    e = expected_new(size);
    for (int i = 0; i < size; i++) {
        expect(&e, i, (i + 2) % size, 3, 3 * 8 * sizeof(int));
        expect(&e, i, (i + 1) % size, 1, 100);
    }
    check_matrices("session on MPI_COMM_WORLD", world, MPI_M_ALL_COMM, &e);
    expected_free(&e);

    OK(MPI_M_free(MPI_M_ALL_MSID));
    OK(MPI_M_finalize());
    MPI_Comm_free(&half);
    return mpitest_finish();
}
