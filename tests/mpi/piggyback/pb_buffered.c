/* Buffered sends with exactly the buffer the MPI standard says is enough (MPI 4.0 §3.6.1): for
 * N messages pending at once, the sum of each one's MPI_Pack_size plus MPI_BSEND_OVERHEAD. A
 * correct program attaches that much and no more, so whatever the piggyback layer adds to a
 * message must not come out of it (the in-band methods once sent P bytes more per message from
 * the user's buffer, and MPICH refused them: "Insufficient space in Bsend buffer").
 *
 * Every rank sends to its right neighbour, which posts nothing until all were sent, so that all
 * N messages of a group are in the buffer at once: N by MPI_Bsend, N by MPI_Ibsend, and N starts
 * of one MPI_Bsend_init request, each group with its own buffer attached at the exact size and
 * detached once its messages have arrived. The messages have distinct sizes (below and above
 * auto's threshold and the libraries' eager limits) and contents, and the receives are specific, wildcard, blocking and
 * nonblocking. A failed send ends the job at once with MPI's error string, rather than leaving
 * its receiver waiting. Rank 0 prints "expected N messages with piggyback" for the check
 * driver's count, as test_pb_calls does. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define PBTEST_STRIDE 1000000
#include "pbtest.h"

/* Messages beyond the libraries' eager limits stay in the buffer until their receive is posted;
 * the small ones come last, so that none has left the buffer when they need their room. */
enum { N = 7, MAX_COUNT = 150000, PERSISTENT_COUNT = 50000 };
static const int counts[N] = {40000, MAX_COUNT, 20000, 1500, 7, 1, 0};

static int rank, size, right, left;
static long received_messages;

/* A send that fails ends the job: its receiver would wait for ever. */
static void sent(int rc, const char *what, int message)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    fprintf(stderr, "rank %d: %s of message %d failed: %s\n", rank, what, message, text);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Attaches exactly what the standard requires for messages of counts[0..n-1] ints. */
static void *attach_exact(const int *message_counts, int n, int *bytes)
{
    *bytes = 0;
    for (int m = 0; m < n; m++) {
        int packed = 0;
        MPI_Pack_size(message_counts[m], MPI_INT, MPI_COMM_WORLD, &packed);
        *bytes += packed + MPI_BSEND_OVERHEAD;
    }
    void *buffer = malloc((size_t)*bytes);
    REQUIRE(buffer);
    MPI_Buffer_attach(buffer, *bytes);
    return buffer;
}

/* Detaches the group's buffer once its messages arrived: MPI gives back what was attached. */
static void detach(void *buffer, int bytes)
{
    void *back = NULL;
    int back_bytes = 0;
    MPI_Buffer_detach(&back, &back_bytes);
    CHECK(back == buffer && back_bytes == bytes);
    free(buffer);
}

/* The group's N messages from the left: message `first + m` holds counts[m] ints (`count` ints
 * each, when count >= 0), received with a wildcard source and tag when `wildcard`. */
static void receive_group(int first, int tag, int count, int wildcard)
{
    static int in[MAX_COUNT + 1];
    MPI_Request requests[N];
    for (int m = 0; m < N; m++) {
        int n = count >= 0 ? count : counts[m];
        MPI_Status st;
        if (m % 2) {
            MPI_Recv(in, MAX_COUNT + 1, MPI_INT, wildcard ? MPI_ANY_SOURCE : left, wildcard ? MPI_ANY_TAG : tag,
                     MPI_COMM_WORLD, &st);
        } else {
            MPI_Irecv(in, MAX_COUNT + 1, MPI_INT, wildcard ? MPI_ANY_SOURCE : left, wildcard ? MPI_ANY_TAG : tag,
                      MPI_COMM_WORLD, &requests[m]);
            MPI_Wait(&requests[m], &st);
        }
        int got = -1;
        MPI_Get_count(&st, MPI_INT, &got);
        if (st.MPI_SOURCE != left || st.MPI_TAG != tag || got != n || !holds(in, n, first + m)) {
            fprintf(stderr, "rank %d: message %d: source %d, tag %d, %d ints%s; expected %d, %d, %d ints\n", rank,
                    first + m, st.MPI_SOURCE, st.MPI_TAG, got, got == n ? ", other contents" : "", left, tag, n);
            check_failures++;
        }
        received_messages++;
    }
}

static void bsend_group(void)
{
    static int out[MAX_COUNT];
    int bytes;
    void *buffer = attach_exact(counts, N, &bytes);
    for (int m = 0; m < N; m++) {
        fill(out, counts[m], 100 + m);
        sent(MPI_Bsend(out, counts[m], MPI_INT, right, 1, MPI_COMM_WORLD), "MPI_Bsend", 100 + m);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every message is in the buffer before any receive */
    receive_group(100, 1, -1, 0);
    detach(buffer, bytes);
}

static void ibsend_group(void)
{
    static int out[N][MAX_COUNT];
    MPI_Request requests[N];
    int bytes;
    void *buffer = attach_exact(counts, N, &bytes);
    for (int m = 0; m < N; m++) {
        fill(out[m], counts[m], 200 + m);
        sent(MPI_Ibsend(out[m], counts[m], MPI_INT, right, 2, MPI_COMM_WORLD, &requests[m]), "MPI_Ibsend", 200 + m);
    }
    /* a buffered send completes locally: before its receive is posted, and its buffer is free */
    MPI_Status statuses[N];
    sent(MPI_Waitall(N, requests, statuses), "MPI_Waitall of MPI_Ibsend", 200);
    for (int m = 0; m < N; m++)
        fill(out[m], counts[m], -1);
    MPI_Barrier(MPI_COMM_WORLD);
    receive_group(200, 2, -1, 1);
    detach(buffer, bytes);
}

static void persistent_group(void)
{
    static int out[PERSISTENT_COUNT];
    int same[N], bytes;
    for (int m = 0; m < N; m++)
        same[m] = PERSISTENT_COUNT;
    void *buffer = attach_exact(same, N, &bytes);
    MPI_Request request;
    sent(MPI_Bsend_init(out, PERSISTENT_COUNT, MPI_INT, right, 3, MPI_COMM_WORLD, &request), "MPI_Bsend_init", 300);
    for (int m = 0; m < N; m++) {
        fill(out, PERSISTENT_COUNT, 300 + m); /* each start sends what the buffer holds then */
        sent(MPI_Start(&request), "MPI_Start of MPI_Bsend_init", 300 + m);
        sent(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait of MPI_Bsend_init", 300 + m);
    }
    MPI_Request_free(&request);
    MPI_Barrier(MPI_COMM_WORLD);
    receive_group(300, 3, PERSISTENT_COUNT, 0);
    detach(buffer, bytes);
}

int main(int argc, char **argv)
{
    mpitest_init(&argc, &argv, &rank, &size);
    REQUIRE(size >= 2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    bsend_group();
    ibsend_group();
    persistent_group();
    return pbtest_finish(received_messages);
}
