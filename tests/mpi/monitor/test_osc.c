/* One-sided operations: one message from origin to target per operation, of the bytes accessed
 * at the target (target count x target type). Every operation works on its own bytes of a
 * byte-addressed window.
 * - In a fence epoch: Put of 5 ints to rank + 1, Get of 3 doubles from rank - 1, Accumulate of
 *   4 ints on oneself (counted: messages to oneself are).
 * - In a passive epoch (lock_all): Rput of 2 doubles to rank + 1, Rget of 1 int from rank - 1,
 *   Raccumulate of 3 ints to rank + 1, Rget_accumulate with MPI_NO_OP (no origin data: the
 *   target's 6 ints count) from rank - 1, Get_accumulate of 2 doubles to rank + 1,
 *   Fetch_and_op of one long to rank + 1, Compare_and_swap of one int to rank - 1, and a Put to
 *   MPI_PROC_NULL (nothing).
 * Nothing is point-to-point or collective (fences and locks are not messages). */
#include "montest.h"

enum { WINDOW = 256 };

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(MPI_M_init());

    char *base;
    MPI_Win win;
    MPI_Win_allocate(WINDOW, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, WINDOW);
    int ints[8] = {1, 2, 3, 4, 5, 6, 7, 8}, int_result[8];
    double doubles[4] = {1, 2, 3, 4}, double_result[4];
    long one = 1, long_result;

    MPI_M_msid fence, passive;
    OK(MPI_M_start(MPI_COMM_WORLD, &fence));
    MPI_Win_fence(0, win);
    MPI_Put(ints, 5, MPI_INT, right, 0, 5, MPI_INT, win);
    MPI_Get(doubles, 3, MPI_DOUBLE, left, 32, 3, MPI_DOUBLE, win);
    MPI_Accumulate(ints, 4, MPI_INT, rank, 64, 4, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    OK(MPI_M_suspend(fence));

    expected_t e = expected_new(size);
    for (int i = 0; i < size; i++) {
        expect(&e, i, (i + 1) % size, 1, 5 * sizeof(int));
        expect(&e, i, (i + size - 1) % size, 1, 3 * sizeof(double));
        expect(&e, i, i, 1, 4 * sizeof(int));
    }
    check_matrices("fence epoch", fence, MPI_M_OSC_ONLY, &e);
    check_nothing("fence epoch", fence, MPI_M_P2P_ONLY | MPI_M_COLL_ONLY);

    OK(MPI_M_start(MPI_COMM_WORLD, &passive));
    MPI_Win_lock_all(0, win);
    MPI_Request r[4];
    MPI_Rput(doubles, 2, MPI_DOUBLE, right, 96, 2, MPI_DOUBLE, win, &r[0]);
    MPI_Rget(int_result, 1, MPI_INT, left, 112, 1, MPI_INT, win, &r[1]);
    MPI_Raccumulate(ints, 3, MPI_INT, right, 120, 3, MPI_INT, MPI_SUM, win, &r[2]);
    MPI_Rget_accumulate(NULL, 0, MPI_INT, int_result + 2, 6, MPI_INT, left, 136, 6, MPI_INT, MPI_NO_OP, win, &r[3]);
    wait_all(4, r);
    MPI_Get_accumulate(doubles, 2, MPI_DOUBLE, double_result, 2, MPI_DOUBLE, right, 160, 2, MPI_DOUBLE, MPI_SUM, win);
    MPI_Fetch_and_op(&one, &long_result, MPI_LONG, right, 176, MPI_SUM, win);
    MPI_Compare_and_swap(&ints[0], &ints[1], &int_result[0], MPI_INT, left, 184, win);
    MPI_Put(ints, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    OK(MPI_M_suspend(passive));

    expected_clear(&e);
    for (int i = 0; i < size; i++) {
        int to_right = (i + 1) % size, to_left = (i + size - 1) % size;
        expect(&e, i, to_right, 1, 2 * sizeof(double));
        expect(&e, i, to_left, 1, sizeof(int));
        expect(&e, i, to_right, 1, 3 * sizeof(int));
        expect(&e, i, to_left, 1, 6 * sizeof(int));
        expect(&e, i, to_right, 1, 2 * sizeof(double));
        expect(&e, i, to_right, 1, sizeof(long));
        expect(&e, i, to_left, 1, sizeof(int));
    }
    check_matrices("passive epoch", passive, MPI_M_OSC_ONLY, &e);
    check_nothing("passive epoch", passive, MPI_M_P2P_ONLY | MPI_M_COLL_ONLY);

    expected_free(&e);
    OK(MPI_M_free(MPI_M_ALL_MSID));
    MPI_Win_free(&win);
    OK(MPI_M_finalize());
    return mpitest_finish();
}
