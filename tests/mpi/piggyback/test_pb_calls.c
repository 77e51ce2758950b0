/* Every point-to-point call the piggyback layer covers, each message with its own size and
 * contents, so that a pb paired with the wrong message shows (the check driver compares the
 * payload size the pb names with the one received) and so does a payload damaged by the layer.
 * Run without the layer it checks itself; run with it (LD_PRELOAD, MPILENS_PB_DRIVER=check) the
 * driver verifies every pb. Rank 0 prints "expected N messages with piggyback": the count the
 * driver's report must show. Works at any number of ranks from 2: ranks 0 and 1 do the pairwise
 * tests, every rank the ring exchanges. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PBTEST_STRIDE 1000
#include "pbtest.h"

/* MPICH defines MPI_STATUSES_IGNORE as the address 1, which GCC takes for an empty array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static int rank, size;
/* Ranks 0 and 1, whose exchanges (wildcard receives among them) must not meet the other ranks'
 * traffic on MPI_COMM_WORLD; the other ranks have a communicator of their own. */
static MPI_Comm pair;
static long received_messages; /* receives that brought a message from another rank */

static int count_of(const MPI_Status *st, MPI_Datatype type)
{
    int n = -1;
    MPI_Get_count(st, type, &n);
    return n;
}

/* ---- blocking modes, specific and wildcard ----------------------------------------------------- */

static void blocking_modes(void)
{
    int buf[64];
    MPI_Status st;
    if (rank == 1) {
        fill(buf, 10, 1);
        MPI_Send(buf, 10, MPI_INT, 0, 1, pair);
        fill(buf, 11, 2);
        MPI_Bsend(buf, 11, MPI_INT, 0, 2, pair);
        fill(buf, 12, 3);
        MPI_Ssend(buf, 12, MPI_INT, 0, 3, pair);
        MPI_Recv(NULL, 0, MPI_INT, 0, 99, pair, MPI_STATUS_IGNORE); /* rank 0 has posted */
        fill(buf, 13, 4);
        MPI_Rsend(buf, 13, MPI_INT, 0, 4, pair);
    } else if (rank == 0) {
        MPI_Recv(buf, 64, MPI_INT, 1, 1, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 10 && holds(buf, 10, 1));
        MPI_Recv(buf, 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, pair, &st);
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 2 && count_of(&st, MPI_INT) == 11 && holds(buf, 11, 2));
        MPI_Recv(buf, 64, MPI_INT, 1, MPI_ANY_TAG, pair, MPI_STATUS_IGNORE);
        CHECK(holds(buf, 12, 3));
        MPI_Request r;
        MPI_Irecv(buf, 64, MPI_INT, 1, 4, pair, &r);
        MPI_Send(NULL, 0, MPI_INT, 1, 99, pair);
        MPI_Wait(&r, &st);
        CHECK(count_of(&st, MPI_INT) == 13 && holds(buf, 13, 4));
        received_messages += 4;
    }
    if (rank == 1)
        received_messages += 1; /* the zero-byte go */
}

/* ---- the wildcard pairing case: Irecv(ANY_SOURCE) then Irecv(1), completed in either order ---- */

static void wildcard_then_specific(int second_first)
{
    int a[32], b[32];
    if (rank == 1) {
        fill(a, 5, 10);
        MPI_Send(a, 5, MPI_INT, 0, 7, pair);
        fill(a, 9, 11);
        MPI_Send(a, 9, MPI_INT, 0, 7, pair);
    } else if (rank == 0) {
        MPI_Request r[2];
        MPI_Status st;
        MPI_Irecv(a, 32, MPI_INT, MPI_ANY_SOURCE, 7, pair, &r[0]);
        MPI_Irecv(b, 32, MPI_INT, 1, 7, pair, &r[1]);
        /* matching follows post order: the first message belongs to the wildcard receive */
        MPI_Wait(&r[second_first ? 1 : 0], &st);
        CHECK(count_of(&st, MPI_INT) == (second_first ? 9 : 5));
        MPI_Wait(&r[second_first ? 0 : 1], &st);
        CHECK(count_of(&st, MPI_INT) == (second_first ? 5 : 9));
        CHECK(holds(a, 5, 10) && holds(b, 9, 11));
        received_messages += 2;
    }
}

/* ---- nonblocking modes, completed by every completion call ------------------------------------- */

static void nonblocking_completions(void)
{
    enum { N = 8 };
    int out[N][40], in[N][40];
    MPI_Request r[N];
    MPI_Status st[N];
    if (rank == 1) {
        for (int m = 0; m < N; m++)
            fill(out[m], 20 + m, 100 + m);
        MPI_Isend(out[0], 20, MPI_INT, 0, 20, pair, &r[0]);
        MPI_Ibsend(out[1], 21, MPI_INT, 0, 21, pair, &r[1]);
        MPI_Issend(out[2], 22, MPI_INT, 0, 22, pair, &r[2]);
        for (int m = 3; m < N; m++)
            MPI_Isend(out[m], 20 + m, MPI_INT, 0, 20 + m, pair, &r[m]);
        MPI_Waitall(N, r, MPI_STATUSES_IGNORE);
        MPI_Recv(NULL, 0, MPI_INT, 0, 98, pair, MPI_STATUS_IGNORE);
        MPI_Irsend(out[0], 20, MPI_INT, 0, 30, pair, &r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        received_messages++;
    } else if (rank == 0) {
        for (int m = 0; m < N; m++)
            MPI_Irecv(in[m], 40, MPI_INT, 1, 20 + m, pair, &r[m]);
        int flag = 0, index, outcount, indices[N];
        MPI_Wait(&r[0], &st[0]);
        CHECK(count_of(&st[0], MPI_INT) == 20);
        while (!flag)
            MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
        MPI_Waitany(N, r, &index, &st[0]);
        CHECK(index >= 2 && count_of(&st[0], MPI_INT) == 20 + index);
        for (flag = 0; !flag;)
            MPI_Testany(N, r, &index, &flag, MPI_STATUS_IGNORE);
        MPI_Waitsome(N, r, &outcount, indices, st);
        for (int k = 0; k < outcount; k++)
            CHECK(count_of(&st[k], MPI_INT) == 20 + indices[k]);
        int left = 0;
        for (int m = 0; m < N; m++)
            left += r[m] != MPI_REQUEST_NULL;
        while (left > 0) {
            MPI_Testsome(N, r, &outcount, indices, st);
            CHECK(outcount != MPI_UNDEFINED);
            left -= outcount;
        }
        for (int m = 0; m < N; m++)
            CHECK(holds(in[m], 20 + m, 100 + m));
        /* every request is null now: MPI_UNDEFINED */
        MPI_Waitany(N, r, &index, MPI_STATUS_IGNORE);
        CHECK(index == MPI_UNDEFINED);
        MPI_Waitsome(N, r, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(outcount == MPI_UNDEFINED);
        MPI_Testany(N, r, &index, &flag, MPI_STATUS_IGNORE);
        CHECK(flag && index == MPI_UNDEFINED);
        MPI_Irecv(in[0], 40, MPI_INT, 1, 30, pair, &r[0]);
        MPI_Send(NULL, 0, MPI_INT, 1, 98, pair);
        MPI_Testall(1, r, &flag, st);
        if (!flag)
            MPI_Waitall(1, r, st);
        CHECK(count_of(&st[0], MPI_INT) == 20 && holds(in[0], 20, 100));
        received_messages += N + 1;
    }
}

/* ---- Sendrecv and Sendrecv_replace around a ring ------------------------------------------------- */

static void ring_exchanges(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[50], in[50];
    MPI_Status st;
    fill(out, 30 + rank, 200 + rank);
    MPI_Sendrecv(out, 30 + rank, MPI_INT, right, 40, in, 50, MPI_INT, left, 40, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == left && count_of(&st, MPI_INT) == 30 + left && holds(in, 30 + left, 200 + left));
    fill(out, 25, 300 + rank);
    MPI_Sendrecv_replace(out, 25, MPI_INT, right, 41, left, 41, MPI_COMM_WORLD, &st);
    CHECK(count_of(&st, MPI_INT) == 25 && holds(out, 25, 300 + left));
    received_messages += 2;
}

#if MPI_VERSION >= 4
/* Whether MPI's own MPI_Isendrecv fills its status: MPICH does not do it right (4.0.2 leaves it
 * empty: source 0, tag 0, count 0; 5.0.2 gives the source with another tag and count), whatever
 * its header (the MPI-5 standard ABI's names no MPICH version), so the library is asked at run
 * time. The piggyback layer makes its own, always filled. */
static int isendrecv_status_filled(void)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(library, &length);
    if (!strstr(library, "MPICH"))
        return 1;
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "mpilens-piggyback");
}

/* MPI-4's Isendrecv and Isendrecv_replace around the ring, completed by MPI_Wait, MPI_Test,
 * MPI_Waitany and MPI_Waitsome beside another request, the receive's status the program's; and
 * with one side MPI_PROC_NULL. */
static void ring_isendrecv(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, flag = 0, filled = isendrecv_status_filled();
    int out[50], in[50];
    MPI_Status st;
    MPI_Request request;
    fill(out, 20 + rank, 250 + rank);
    MPI_Isendrecv(out, 20 + rank, MPI_INT, right, 45, in, 50, MPI_INT, left, 45, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, &st);
    CHECK(holds(in, 20 + left, 250 + left));
    CHECK(!filled || (st.MPI_SOURCE == left && st.MPI_TAG == 45 && count_of(&st, MPI_INT) == 20 + left));
    fill(out, 15, 350 + rank);
    MPI_Isendrecv_replace(out, 15, MPI_INT, right, 46, left, 46, MPI_COMM_WORLD, &request);
    while (!flag)
        MPI_Test(&request, &flag, &st);
    CHECK(holds(out, 15, 350 + left));
    CHECK(!filled || count_of(&st, MPI_INT) == 15);
    /* beside an MPI_Irecv that cannot complete yet, in one MPI_Waitany; then the other in MPI_Waitall */
    int extra[8], index = -1;
    MPI_Request both[2];
    fill(out, 9, 550 + rank);
    MPI_Irecv(extra, 8, MPI_INT, left, 49, MPI_COMM_WORLD, &both[0]);
    MPI_Isendrecv(out, 9, MPI_INT, right, 48, in, 50, MPI_INT, left, 48, MPI_COMM_WORLD, &both[1]);
    MPI_Waitany(2, both, &index, &st);
    CHECK(index == 1 && holds(in, 9, 550 + left));
    MPI_Barrier(MPI_COMM_WORLD); /* else a fast left neighbour's send could complete the Irecv first */
    fill(out, 8, 650 + rank);
    MPI_Send(out, 8, MPI_INT, right, 49, MPI_COMM_WORLD);
    MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    CHECK(holds(extra, 8, 650 + left));
    received_messages += 4;
    /* MPI_Waitsome among a pair and a receive: only the receive can complete at first (the pair's
     * messages are sent and received after the barrier), then the pair */
    int indices[2], outcount = 0;
    fill(out, 8, 750 + rank);
    MPI_Irecv(extra, 8, MPI_INT, left, 51, MPI_COMM_WORLD, &both[0]);
    MPI_Isendrecv(out, 7, MPI_INT, right, 52, in, 50, MPI_INT, left, 53, MPI_COMM_WORLD, &both[1]);
    MPI_Send(out, 8, MPI_INT, right, 51, MPI_COMM_WORLD);
    MPI_Waitsome(2, both, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount == 1 && indices[0] == 0 && holds(extra, 8, 750 + left));
    MPI_Barrier(MPI_COMM_WORLD);
    int got[50];
    fill(out, 5, 850 + rank);
    MPI_Send(out, 5, MPI_INT, right, 53, MPI_COMM_WORLD);
    MPI_Recv(got, 50, MPI_INT, left, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(holds(got, 7, 750 + left));
    MPI_Waitsome(2, both, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(outcount == 1 && indices[0] == 1 && holds(in, 5, 850 + left));
    received_messages += 3;
    /* one side MPI_PROC_NULL: the odd ranks only receive from the left, the even only send right */
    if (size % 2 == 0) {
        fill(out, 6, 450 + rank);
        int to = rank % 2 ? MPI_PROC_NULL : right, from = rank % 2 ? left : MPI_PROC_NULL;
        MPI_Isendrecv(out, 6, MPI_INT, to, 47, in, 50, MPI_INT, from, 47, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, &st);
        if (from != MPI_PROC_NULL) {
            CHECK(holds(in, 6, 450 + left));
            CHECK(!filled || count_of(&st, MPI_INT) == 6);
            received_messages++;
        }
    }
}
#endif

/* Sendrecv from many different buffers: the datatype methods keep the struct types of blocking
 * calls by buffer, and a Sendrecv uses one for each direction at once; a new type for one must
 * never free the other's (a shared cache did, when the two buffers' entries met in one slot). The
 * buffers are spread over 64 KiB in a pseudo-random order that every rank follows. */
static void ring_exchanges_many_buffers(void)
{
    enum { EXCHANGES = 512, N = 4, SPAN = 16384 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static int out[SPAN], in[SPAN];
    unsigned lcg = 12345;
    for (int x = 0; x < EXCHANGES; x++) {
        lcg = lcg * 1103515245u + 12345u;
        int *o = out + (lcg >> 8) % (SPAN - N), *i = in + (lcg >> 4) % (SPAN - N);
        fill(o, N, 400 + x % 100);
        MPI_Sendrecv(o, N, MPI_INT, right, 42, i, N, MPI_INT, left, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(holds(i, N, 400 + x % 100));
    }
    received_messages += EXCHANGES;
}

/* ---- windows of nonblocking messages ---------------------------------------------------------------
 * Windows of Isends from one send buffer, all pending at once, into a ring of receive buffers
 * wider than the table of struct types the layer keeps for nonblocking messages (256 keys), with
 * two counts per buffer: each message must still carry its own pb (the check driver numbers each
 * stream) and its whole payload. At 1024 ints a payload is 4 KiB, where `auto` sends and receives
 * with a struct type. */
static void windows_of_messages(void)
{
    enum { WINDOW = 40, ROUNDS = 16, RING = 300, N = 1024 };
    static int out[N], in[RING][N];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r[2 * WINDOW];
    for (int round = 0, next = 0; round < ROUNDS; round++) {
        int count = N - round % 2, first = next;
        fill(out, count, 500 + round);
        for (int k = 0; k < WINDOW; k++, next = (next + 1) % RING)
            MPI_Irecv(in[next], count, MPI_INT, left, 43, MPI_COMM_WORLD, &r[k]);
        for (int k = 0; k < WINDOW; k++)
            MPI_Isend(out, count, MPI_INT, right, 43, MPI_COMM_WORLD, &r[WINDOW + k]);
        MPI_Waitall(2 * WINDOW, r, MPI_STATUSES_IGNORE);
        for (int k = 0; k < WINDOW; k++)
            CHECK(holds(in[(first + k) % RING], count, 500 + round));
    }
    received_messages += WINDOW * ROUNDS;
}

/* ---- messages by the lean path ----------------------------------------------------------------------
 * A nonblocking message whose (buffer, count, type) has an idle kept pair goes by the pair's own
 * record (ml_pb_kept_record, src/piggyback/inband.c), which the layer hands back to the pair at
 * completion instead of freeing. Each message here is posted twice from the same buffers, so that
 * the second goes that way under every method that uses struct types (datatype-*, and auto from
 * 4 KiB, their size): seen complete by MPI_Request_get_status before its Wait, completed by
 * Waitany and Testsome, freed while active, and a receive cancelled, whose pair then serves the
 * next receive into the same buffer. */
static void lean_path(void)
{
    enum { N = 1024, TIMES = 2 };
    static int out[3][N], in[3][N];
    MPI_Request r[3];
    MPI_Status st[3];
    for (int time = 0; time < TIMES; time++) {
        if (rank == 1) {
            for (int m = 0; m < 3; m++) {
                fill(out[m], N - m, 1000 + 10 * time + m);
                MPI_Isend(out[m], N - m, MPI_INT, 0, 90 + m, pair, &r[m]);
            }
            MPI_Request_free(&r[2]);
            int index;
            MPI_Waitany(2, r, &index, MPI_STATUS_IGNORE);
            MPI_Wait(&r[1 - index], MPI_STATUS_IGNORE);
            MPI_Recv(NULL, 0, MPI_INT, 0, 99, pair, MPI_STATUS_IGNORE); /* out[2] stays until then */
            received_messages++;
        } else if (rank == 0) {
            for (int m = 0; m < 3; m++)
                MPI_Irecv(in[m], N, MPI_INT, 1, 90 + m, pair, &r[m]);
            int flag = 0, outcount, indices[2], left = 2;
            while (!flag)
                MPI_Request_get_status(r[0], &flag, &st[0]);
            CHECK(count_of(&st[0], MPI_INT) == N && holds(in[0], N, 1000 + 10 * time));
            MPI_Wait(&r[0], &st[0]);
            CHECK(count_of(&st[0], MPI_INT) == N);
            while (left > 0) {
                MPI_Testsome(2, r + 1, &outcount, indices, st);
                CHECK(outcount != MPI_UNDEFINED);
                for (int k = 0; k < outcount; k++)
                    CHECK(count_of(&st[k], MPI_INT) == N - 1 - indices[k]);
                left -= outcount;
            }
            for (int m = 1; m < 3; m++)
                CHECK(holds(in[m], N - m, 1000 + 10 * time + m));
            MPI_Irecv(in[0], N, MPI_INT, 1, 97, pair, &r[0]); /* nobody sends it */
            MPI_Cancel(&r[0]);
            MPI_Wait(&r[0], &st[0]);
            int cancelled = 0;
            MPI_Test_cancelled(&st[0], &cancelled);
            CHECK(cancelled);
            MPI_Send(NULL, 0, MPI_INT, 1, 99, pair);
            received_messages += 3;
        }
    }
}

/* ---- many requests completed in a scrambled order ------------------------------------------------
 * 400 receives and 400 sends pending at once around the ring, completed one at a time in an order
 * a generator scrambles (MPI_Wait on one, MPI_Testsome on a slice): the layer's table of request
 * records grows past its first sizes and loses records from the middle of its probe runs, and
 * every record must still be found (a lost one hangs or mixes up pbs). */
static void scrambled_completions(void)
{
    enum { M = 400, MAXN = 16 };
    static int out[M][MAXN], in[M][MAXN];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r[2 * M];
    for (int k = 0; k < M; k++)
        MPI_Irecv(in[k], MAXN, MPI_INT, left, 44, MPI_COMM_WORLD, &r[k]);
    for (int k = 0; k < M; k++) {
        fill(out[k], 10 + k % 7, 600 + k);
        MPI_Isend(out[k], 10 + k % 7, MPI_INT, right, 44, MPI_COMM_WORLD, &r[M + k]);
    }
    unsigned lcg = 777u + (unsigned)rank;
    for (int left_over = 2 * M; left_over > 0;) {
        lcg = lcg * 1103515245u + 12345u;
        int j = (int)((lcg >> 8) % (2 * M));
        if (r[j] == MPI_REQUEST_NULL)
            continue;
        if (lcg & 0x10000) {
            MPI_Wait(&r[j], MPI_STATUS_IGNORE);
            left_over--;
        } else {
            int n = j + 32 <= 2 * M ? 32 : 2 * M - j, outcount, indices[32];
            MPI_Testsome(n, r + j, &outcount, indices, MPI_STATUSES_IGNORE);
            left_over -= outcount == MPI_UNDEFINED ? 0 : outcount;
        }
    }
    for (int k = 0; k < M; k++)
        CHECK(holds(in[k], 10 + k % 7, 600 + k));
    received_messages += M;
}

/* ---- persistent requests restarted with new data ---------------------------------------------------- */

static void persistent_requests(void)
{
    int buf[64] = {0};
    MPI_Request r[2];
    MPI_Status st;
    if (rank == 1) {
        MPI_Send_init(buf, 16, MPI_INT, 0, 50, pair, &r[0]);
        MPI_Ssend_init(buf + 32, 17, MPI_INT, 0, 51, pair, &r[1]);
        for (int round = 0; round < 5; round++) {
            fill(buf, 16, 400 + round);
            fill(buf + 32, 17, 500 + round);
            if (round % 2)
                MPI_Startall(2, r);
            else {
                MPI_Start(&r[0]);
                MPI_Start(&r[1]);
            }
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    } else if (rank == 0) {
        int in2[64];
        MPI_Recv_init(buf, 64, MPI_INT, 1, 50, pair, &r[0]);
        MPI_Recv_init(in2, 64, MPI_INT, MPI_ANY_SOURCE, 51, pair, &r[1]);
        for (int round = 0; round < 5; round++) {
            MPI_Startall(2, r);
            MPI_Wait(&r[1], &st);
            CHECK(count_of(&st, MPI_INT) == 17 && holds(in2, 17, 500 + round));
            MPI_Wait(&r[0], &st);
            CHECK(count_of(&st, MPI_INT) == 16 && holds(buf, 16, 400 + round));
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
        received_messages += 10;
    }
}

/* ---- probes, matched probes, counts ------------------------------------------------------------------ */

static void probes(void)
{
    int buf[64];
    MPI_Status st;
    if (rank == 1) {
        for (int m = 0; m < 4; m++) {
            fill(buf, 6 + m, 600 + m);
            MPI_Send(buf, 6 + m, MPI_INT, 0, 60 + m, pair);
        }
    } else if (rank == 0) {
        MPI_Probe(1, 60, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 6);
        MPI_Recv(buf, count_of(&st, MPI_INT), MPI_INT, 1, 60, pair, &st);
        CHECK(holds(buf, 6, 600));
        int flag = 0;
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, 61, pair, &flag, &st);
        CHECK(count_of(&st, MPI_INT) == 7);
        MPI_Recv(buf, 64, MPI_INT, 1, 61, pair, MPI_STATUS_IGNORE);
        CHECK(holds(buf, 7, 601));
        MPI_Message message;
        MPI_Mprobe(1, 62, pair, &message, &st);
        CHECK(count_of(&st, MPI_INT) == 8);
        MPI_Mrecv(buf, 8, MPI_INT, &message, &st);
        CHECK(count_of(&st, MPI_INT) == 8 && holds(buf, 8, 602) && message == MPI_MESSAGE_NULL);
        for (flag = 0; !flag;)
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, pair, &flag, &message, &st);
        CHECK(st.MPI_TAG == 63 && count_of(&st, MPI_INT) == 9);
        MPI_Request r;
        MPI_Imrecv(buf, 64, MPI_INT, &message, &r);
        MPI_Wait(&r, &st);
        CHECK(count_of(&st, MPI_INT) == 9 && holds(buf, 9, 603));
        received_messages += 4;
    }
}

/* Three ints and a double at their absolute addresses, sent from MPI_BOTTOM. */
static MPI_Datatype absolute_struct(int *x, double *y)
{
    MPI_Aint at[2];
    MPI_Get_address(x, &at[0]);
    MPI_Get_address(y, &at[1]);
    int lengths[2] = {3, 1};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Type_create_struct(2, lengths, at, types, &t);
    MPI_Type_commit(&t);
    return t;
}

/* ---- counts and datatypes ----------------------------------------------------------------------------- */

static void counts_and_datatypes(void)
{
    MPI_Status st;
    /* every other int of 2×10: a non-contiguous vector */
    MPI_Datatype every_other;
    MPI_Type_vector(10, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[20], flat[20];
    if (rank == 1) {
        fill(strided, 20, 700);
        MPI_Send(strided, 1, every_other, 0, 70, pair);
        fill(flat, 7, 701);
        MPI_Send(flat, 7, MPI_INT, 0, 71, pair); /* short: the receive allows 20 */
        MPI_Send(NULL, 0, MPI_INT, 0, 72, pair);
        int x[3] = {1, 2, 3};
        double y = 4.5;
        MPI_Datatype absolute = absolute_struct(x, &y);
        MPI_Send(MPI_BOTTOM, 1, absolute, 0, 73, pair);
        MPI_Type_free(&absolute);
    } else if (rank == 0) {
        MPI_Recv(flat, 20, MPI_INT, 1, 70, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 10);
        for (int i = 0; i < 10; i++)
            CHECK(flat[i] == pbtest_value(700, 2 * i));
        MPI_Count elements = -1;
        MPI_Get_elements_x(&st, MPI_INT, &elements);
        CHECK(elements == 10);
        memset(strided, 0, sizeof strided);
        MPI_Recv(flat, 20, MPI_INT, 1, 71, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 7 && holds(flat, 7, 701));
        CHECK(count_of(&st, every_other) == MPI_UNDEFINED); /* 7 ints are not whole vectors */
        int n = -1;
        MPI_Get_elements(&st, every_other, &n);
        CHECK(n == 7);
        MPI_Recv(flat, 20, MPI_INT, 1, 72, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 0);
        int x[3] = {0};
        double y = 0;
        MPI_Datatype absolute = absolute_struct(x, &y);
        MPI_Recv(MPI_BOTTOM, 1, absolute, 1, 73, pair, &st);
        CHECK(count_of(&st, absolute) == 1 && x[0] == 1 && x[1] == 2 && x[2] == 3 && y == 4.5);
        MPI_Type_free(&absolute);
        received_messages += 4;
    }
    MPI_Type_free(&every_other);
}

/* ---- cancel, MPI_PROC_NULL, a freed active send, a communicator of its own ------------------------- */

static void odds_and_ends(void)
{
    int buf[16];
    MPI_Status st;
    MPI_Request r;
    /* a receive nobody sends to, cancelled */
    MPI_Irecv(buf, 16, MPI_INT, (rank + 1) % size, 80, MPI_COMM_WORLD, &r);
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);
    /* MPI_PROC_NULL: nothing sent, an empty status */
    MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 81, MPI_COMM_WORLD);
    MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 81, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count_of(&st, MPI_INT) == 0);
    MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 82, buf + 8, 4, MPI_INT, MPI_PROC_NULL, 82, MPI_COMM_WORLD, &st);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    /* an active send freed: the message still arrives whole */
    if (rank == 1) {
        fill(buf, 14, 800);
        MPI_Isend(buf, 14, MPI_INT, 0, 83, pair, &r);
        MPI_Request_free(&r);
        CHECK(r == MPI_REQUEST_NULL);
        MPI_Recv(NULL, 0, MPI_INT, 0, 84, pair, MPI_STATUS_IGNORE); /* buf stays until then */
        received_messages++;
    } else if (rank == 0) {
        int in[16];
        MPI_Recv(in, 16, MPI_INT, 1, 83, pair, &st);
        CHECK(count_of(&st, MPI_INT) == 14 && holds(in, 14, 800));
        MPI_Send(NULL, 0, MPI_INT, 1, 84, pair);
        received_messages++;
    }
    /* a split communicator, ranks in reverse order, wildcard receives */
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &reversed);
    int me, right, left;
    MPI_Comm_rank(reversed, &me);
    right = (me + 1) % size;
    left = (me + size - 1) % size;
    fill(buf, 3 + me, 900 + me);
    MPI_Isend(buf, 3 + me, MPI_INT, right, 85, reversed, &r);
    int in[16];
    MPI_Recv(in, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, reversed, &st);
    CHECK(st.MPI_SOURCE == left && count_of(&st, MPI_INT) == 3 + left && holds(in, 3 + left, 900 + left));
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Comm_free(&reversed);
    received_messages++;
}

/* ---- MPI's progress rule ------------------------------------------------------------------------
 * A send and a receive that match, both started, must complete whatever else their ranks do
 * (MPI 4.0, §3.5): here the receiver waits for its receive only after a barrier that the sender
 * reaches only once its send has completed. Any layer that receives part of a message in a
 * second step, once the user's Wait has shown it the first (a header, then the payload), hangs
 * here; docs/methods/piggyback.md ("auto") says why the layer has no such step. A message far
 * beyond any eager limit, and a synchronous one; specific and wildcard receives. */
static void progress_rule(void)
{
    if (rank > 1)
        return;
    enum { LARGE = 1 << 20 };
    int *buf = malloc(LARGE * sizeof *buf);
    REQUIRE(buf);
    for (int wildcard = 0; wildcard < 2; wildcard++)
        for (int synchronous = 0; synchronous < 2; synchronous++) {
            int n = synchronous ? 7 : LARGE, message = 60 + 2 * wildcard + synchronous;
            MPI_Request r;
            if (rank == 0) {
                fill(buf, n, message);
                if (synchronous)
                    MPI_Issend(buf, n, MPI_INT, 1, 11, pair, &r);
                else
                    MPI_Isend(buf, n, MPI_INT, 1, 11, pair, &r);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
                MPI_Barrier(pair);
            } else {
                MPI_Status st;
                memset(buf, 0, (size_t)n * sizeof *buf);
                MPI_Irecv(buf, n, MPI_INT, wildcard ? MPI_ANY_SOURCE : 0, 11, pair, &r);
                MPI_Barrier(pair);
                MPI_Wait(&r, &st);
                CHECK(st.MPI_SOURCE == 0 && count_of(&st, MPI_INT) == n && holds(buf, n, message));
                received_messages++;
            }
        }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size >= 2);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : 1, rank, &pair);
    /* buffered sends: room for each message, its piggyback (up to 64 KiB) and MPI's overhead */
    int bsize = 4 * (int)(64 * sizeof(int) + MPI_BSEND_OVERHEAD + 65536);
    void *attached = malloc((size_t)bsize);
    MPI_Buffer_attach(attached, bsize);
    blocking_modes();
    wildcard_then_specific(0);
    wildcard_then_specific(1);
    nonblocking_completions();
    ring_exchanges();
#if MPI_VERSION >= 4
    ring_isendrecv();
#endif
    ring_exchanges_many_buffers();
    windows_of_messages();
    lean_path();
    scrambled_completions();
    persistent_requests();
    probes();
    counts_and_datatypes();
    odds_and_ends();
    progress_rule();
    MPI_Buffer_detach(&attached, &bsize);
    free(attached);
    MPI_Comm_free(&pair);
    return pbtest_finish(received_messages);
}
