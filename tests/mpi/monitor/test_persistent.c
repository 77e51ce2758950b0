/* Persistent operations count at each start, not at creation:
 * - a Send_init of N ints to rank + 1 (with a Recv_init from rank - 1, never counted) started
 *   STARTS times, by MPI_Startall and by MPI_Start in turn: STARTS messages;
 * - Bsend_init, Ssend_init and Rsend_init of 1, 2, 3 doubles to rank - 1, started twice each
 *   (receives posted, then a barrier, so the ready send is legal);
 * - an Ssend_init to MPI_PROC_NULL started STARTS times: nothing;
 * - requests are created before the session and started inside and outside it: only the starts
 *   while it is active count;
 * - after MPI_Request_free, new persistent receives (which MPI may give the freed handles) must
 *   not count the freed sends when started;
 * - (MPI-4) persistent collectives by their logical pattern at each start: Bcast_init from the
 *   last rank, Allreduce_init, Gather_init to rank 0, Scan_init. */
#include "montest.h"

enum { N = 4, STARTS = 5 };

static int rank, size, right, left;

static void ring(MPI_Request send, MPI_Request recv, int starts)
{
    for (int s = 0; s < starts; s++) {
        MPI_Request both[2] = {recv, send};
        if (s % 2)
            MPI_Startall(2, both);
        else {
            MPI_Start(&both[0]);
            MPI_Start(&both[1]);
        }
        wait_all(2, both);
    }
}

/* Each mode's send to rank - 1, with the matching receive posted before anyone sends. */
static void modes(MPI_Request *sends, MPI_Request *recvs, MPI_Request null_send)
{
    for (int s = 0; s < 2; s++) {
        MPI_Startall(3, recvs);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Startall(3, sends);
        MPI_Start(&null_send);
        wait_all(3, sends);
        wait_all(3, recvs);
        MPI_Wait(&null_send, MPI_STATUS_IGNORE);
    }
}

#if MPI_VERSION >= 4
enum { COLL_STARTS = 3 };

static void persistent_collectives(expected_t *e)
{
    int broadcast[4] = {0}, ints[3] = {0}, sums[3];
    double d[2] = {0}, gathered[2 * 64];
    MPI_Request r[4];
    MPI_Bcast_init(broadcast, 4, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Allreduce_init(d, d + 1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Gather_init(d, 2, MPI_DOUBLE, gathered, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Scan_init(ints, sums, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    for (int s = 0; s < COLL_STARTS; s++) {
        for (int k = 0; k < 4; k++)
            MPI_Start(&r[k]);
        wait_all(4, r);
    }
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&r[k]);
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++) {
            if (i == size - 1 && j != i)
                expect(e, i, j, COLL_STARTS, COLL_STARTS * 4 * sizeof(int));
            if (i != j)
                expect(e, i, j, COLL_STARTS, COLL_STARTS * sizeof(double));
            if (j == 0 && i != 0)
                expect(e, i, j, COLL_STARTS, COLL_STARTS * 2 * sizeof(double));
            if (j > i)
                expect(e, i, j, COLL_STARTS, COLL_STARTS * 3 * sizeof(int));
        }
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size <= 64);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    int attached = 4 * ((int)sizeof(double) + MPI_BSEND_OVERHEAD);
    void *buffer = malloc((size_t)attached);
    MPI_Buffer_attach(buffer, attached);
    OK(MPI_M_init());

    int out[N] = {0}, in[N];
    double dout[6] = {0}, din[9];
    MPI_Request send, recv, sends[3], recvs[3], null_send;
    MPI_Send_init(out, N, MPI_INT, right, 0, MPI_COMM_WORLD, &send);
    MPI_Recv_init(in, N, MPI_INT, left, 0, MPI_COMM_WORLD, &recv);
    MPI_Bsend_init(dout, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &sends[0]);
    MPI_Ssend_init(dout + 1, 2, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &sends[1]);
    MPI_Rsend_init(dout + 3, 3, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &sends[2]);
    for (int k = 0; k < 3; k++)
        MPI_Recv_init(din + 3 * k, 3, MPI_DOUBLE, right, k + 1, MPI_COMM_WORLD, &recvs[k]);
    MPI_Ssend_init(out, N, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &null_send);

    ring(send, recv, 2); /* before the session: not its business */
    MPI_M_msid id;
    OK(MPI_M_start(MPI_COMM_WORLD, &id));
    ring(send, recv, STARTS);
    modes(sends, recvs, null_send);
    OK(MPI_M_suspend(id));
    ring(send, recv, 1); /* while suspended */

    expected_t e = expected_new(size);
    for (int i = 0; i < size; i++) {
        expect(&e, i, (i + 1) % size, STARTS, STARTS * N * sizeof(int));
        expect(&e, i, (i + size - 1) % size, 2 * 3, 2 * (1 + 2 + 3) * sizeof(double));
    }
    check_matrices("persistent sends", id, MPI_M_P2P_ONLY, &e);

    /* The freed sends' handles may come back as receives: starting them counts nothing. */
    MPI_Request_free(&send);
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&sends[k]);
    MPI_Request_free(&null_send);
    CHECK(send == MPI_REQUEST_NULL);
    MPI_Request reused[5];
    for (int k = 0; k < 5; k++)
        MPI_Recv_init(in, N, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &reused[k]);
    OK(MPI_M_reset(id));
    OK(MPI_M_continue(id));
    for (int k = 0; k < 5; k++) {
        MPI_Start(&reused[k]);
        MPI_Send(out, 1, MPI_INT, rank, 99, MPI_COMM_WORLD); /* to oneself, to complete it */
        MPI_Wait(&reused[k], MPI_STATUS_IGNORE);
        MPI_Request_free(&reused[k]);
    }
    OK(MPI_M_suspend(id));
    expected_clear(&e);
    for (int i = 0; i < size; i++)
        expect(&e, i, i, 5, 5 * sizeof(int));
    check_matrices("after Request_free", id, MPI_M_P2P_ONLY, &e);

#if MPI_VERSION >= 4
    OK(MPI_M_reset(id));
    OK(MPI_M_continue(id));
    expected_clear(&e);
    persistent_collectives(&e);
    OK(MPI_M_suspend(id));
    check_matrices("persistent collectives", id, MPI_M_COLL_ONLY, &e);
    check_nothing("persistent collectives", id, MPI_M_P2P_ONLY);
#endif

    MPI_Request_free(&recv);
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&recvs[k]);
    expected_free(&e);
    OK(MPI_M_free(id));
    OK(MPI_M_finalize());
    MPI_Buffer_detach(&buffer, &attached);
    free(buffer);
    return mpitest_finish();
}
