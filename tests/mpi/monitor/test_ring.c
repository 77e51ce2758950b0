/* Ring shift: each rank sends K messages of N ints to rank + 1, once per send mode (blocking and
 * non-blocking, standard, buffered, synchronous, ready), each in its own session: every session's
 * P2P matrix is K messages, 4 K N bytes from i to i + 1, and nothing else. Receives are posted
 * before a barrier, so ready sends are legal; the barrier is a collective and must stay out of
 * the P2P data. */
#include "montest.h"

enum { K = 3, N = 10 };

typedef enum { SEND, BSEND, SSEND, RSEND, ISEND, IBSEND, ISSEND, IRSEND, MODES } send_mode;
static const char *names[MODES] = {"Send", "Bsend", "Ssend", "Rsend", "Isend", "Ibsend", "Issend", "Irsend"};

static void shift(send_mode mode, int left, int right)
{
    int out[K][N], in[K][N];
    MPI_Request received[K], sent[K];
    for (int m = 0; m < K; m++) {
        for (int i = 0; i < N; i++)
            out[m][i] = m * N + i;
        MPI_Irecv(in[m], N, MPI_INT, left, m, MPI_COMM_WORLD, &received[m]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int m = 0; m < K; m++) {
        switch (mode) {
        case SEND: MPI_Send(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD); break;
        case BSEND: MPI_Bsend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD); break;
        case SSEND: MPI_Ssend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD); break;
        case RSEND: MPI_Rsend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD); break;
        case ISEND: MPI_Isend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD, &sent[m]); break;
        case IBSEND: MPI_Ibsend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD, &sent[m]); break;
        case ISSEND: MPI_Issend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD, &sent[m]); break;
        case IRSEND: MPI_Irsend(out[m], N, MPI_INT, right, m, MPI_COMM_WORLD, &sent[m]); break;
        case MODES: break;
        }
    }
    if (mode >= ISEND)
        wait_all(K, sent);
    wait_all(K, received);
    CHECK(in[K - 1][N - 1] == (K - 1) * N + N - 1);
}

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int attached = K * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    void *buffer = malloc((size_t)attached);
    MPI_Buffer_attach(buffer, attached);
    OK(MPI_M_init());

    expected_t ring = expected_new(size);
    for (int i = 0; i < size; i++)
        expect(&ring, i, (i + 1) % size, K, K * N * sizeof(int));
    for (send_mode mode = SEND; mode < MODES; mode++) {
        MPI_M_msid id;
        OK(MPI_M_start(MPI_COMM_WORLD, &id));
        shift(mode, left, right);
        OK(MPI_M_suspend(id));
        check_matrices(names[mode], id, MPI_M_P2P_ONLY, &ring);
        check_nothing(names[mode], id, MPI_M_OSC_ONLY);
        OK(MPI_M_free(id));
    }

    expected_free(&ring);
    OK(MPI_M_finalize());
    MPI_Buffer_detach(&buffer, &attached);
    free(buffer);
    return mpitest_finish();
}
