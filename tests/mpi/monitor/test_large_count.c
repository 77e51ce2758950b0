/* MPI-4's large-count forms (MPI_Foo_c) counted like their int forms: a ring of MPI_Send_c (with
 * MPI_Recv_c), MPI_Isend_c, a persistent MPI_Send_init_c started twice, MPI_Allreduce_c and
 * MPI_Alltoallv_c with MPI_Count counts and MPI_Aint displacements (i sends i + 2j + 1 ints to
 * j), MPI_Put_c into a window. Built only where mpi.h says MPI_VERSION >= 4. */
#include "montest.h"

static int rank, size, next, prev;

static void ring(expected_t *e)
{
    char out[300] = {0}, in[300];
    MPI_Request requests[2];
    MPI_Send_c(out, 100, MPI_CHAR, next, 1, MPI_COMM_WORLD); /* buffered by the library: small */
    MPI_Recv_c(in, 100, MPI_CHAR, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv_c(in, 50, MPI_CHAR, prev, 2, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend_c(out, 50, MPI_CHAR, next, 2, MPI_COMM_WORLD, &requests[1]);
    wait_all(2, requests);
    MPI_Send_init_c(out, 20, MPI_CHAR, next, 3, MPI_COMM_WORLD, &requests[1]);
    MPI_Recv_init_c(in, 20, MPI_CHAR, prev, 3, MPI_COMM_WORLD, &requests[0]);
    for (int k = 0; k < 2; k++) {
        MPI_Startall(2, requests);
        wait_all(2, requests);
    }
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);
    for (int r = 0; r < size; r++)
        expect(e, r, (r + 1) % size, 4, 100 + 50 + 2 * 20);
}

static int v_count(int from, int to) { return from + 2 * to + 1; }

static void collectives(expected_t *e)
{
    int x = rank, y;
    MPI_Allreduce_c(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    exchange_t v = exchange_new(rank, size, v_count, NULL, sizeof(int));
    MPI_Alltoallv_c(v.out, v.sendcounts_c, v.sdispls_c, MPI_INT, v.in, v.recvcounts_c, v.rdispls_c, MPI_INT,
                    MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (i != j)
                expect(e, i, j, 2, sizeof(int) * (1 + (unsigned long)v_count(i, j)));
    exchange_free(&v);
}

static void one_sided(expected_t *e)
{
    int *base, value[3] = {1, 2, 3};
    MPI_Win win;
    OK(MPI_Win_allocate(3 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win_fence(0, win);
    MPI_Put_c(value, 3, MPI_INT, next, 0, 3, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    for (int r = 0; r < size; r++)
        expect(e, r, (r + 1) % size, 1, 3 * sizeof(int));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    OK(MPI_M_init());
    MPI_M_msid id;
    OK(MPI_M_start(MPI_COMM_WORLD, &id));
    expected_t p2p = expected_new(size), coll = expected_new(size), osc = expected_new(size);
    ring(&p2p);
    collectives(&coll);
    one_sided(&osc);
    OK(MPI_M_suspend(id));
    check_matrices("large-count point-to-point", id, MPI_M_P2P_ONLY, &p2p);
    check_matrices("large-count collectives", id, MPI_M_COLL_ONLY, &coll);
    check_matrices("large-count one-sided", id, MPI_M_OSC_ONLY, &osc);
    OK(MPI_M_free(id));
    OK(MPI_M_finalize());
    expected_free(&p2p);
    expected_free(&coll);
    expected_free(&osc);
    return mpitest_finish();
}
