/* Does a rendezvous-size transfer complete while the receiver computes without calling MPI?
 *
 * Ranks pair up (0 with 1, 2 with 3, ...). The even rank posts a 4 MiB receive, tells its partner
 * to send (a zero-byte message, sent eagerly), and computes for COMPUTE_MS without an MPI call.
 * The odd rank sends, waits for its send to complete, and reports the moment on the node's
 * monotonic clock. A rendezvous transfer needs the receiver to answer: without background
 * progress the send cannot complete before the receiver is back in MPI, after its computation;
 * with the progress thread it completes during it. Ordering on one clock, not a timing threshold.
 *
 * usage: progress_rendezvous on|off   (what is expected: the transfer done during the computation)
 * prints "passed" on rank 0 when every pair saw what was expected. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BYTES = 4 << 20, COMPUTE_MS = 400, TAG_GO = 1, TAG_DATA = 2, TAG_DONE = 3 };

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Work the optimiser cannot remove, with no MPI call, until `until`. */
static double compute_until(long long until)
{
    volatile double x = 1.0;
    while (now_ns() < until)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "on") != 0 && strcmp(argv[1], "off") != 0)) {
        fprintf(stderr, "usage: progress_rendezvous on|off\n");
        return 2;
    }
    int expect_during = strcmp(argv[1], "on") == 0;
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = calloc(BYTES, 1);
    int ok = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2 == 0 && rank + 1 < size) {
        MPI_Request request;
        MPI_Irecv(buf, BYTES, MPI_BYTE, rank + 1, TAG_DATA, MPI_COMM_WORLD, &request);
        MPI_Send(NULL, 0, MPI_BYTE, rank + 1, TAG_GO, MPI_COMM_WORLD);
        long long start = now_ns(), end = start + COMPUTE_MS * 1000000LL;
        compute_until(end);
        end = now_ns();
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        long long sender_done;
        MPI_Recv(&sender_done, 1, MPI_LONG_LONG, rank + 1, TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int during = sender_done < end;
        ok = during == expect_during && buf[0] == 7 && buf[BYTES - 1] == 7;
        printf("pair %d-%d: send done %.1f ms after the computation started, which lasted %.1f ms: %s%s\n", rank,
               rank + 1, (sender_done - start) / 1e6, (end - start) / 1e6, during ? "during it" : "after it",
               ok ? "" : " (unexpected)");
    } else if (rank % 2 == 1) {
        memset(buf, 7, BYTES);
        MPI_Recv(NULL, 0, MPI_BYTE, rank - 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request request;
        MPI_Isend(buf, BYTES, MPI_BYTE, rank - 1, TAG_DATA, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        long long done = now_ns();
        MPI_Send(&done, 1, MPI_LONG_LONG, rank - 1, TAG_DONE, MPI_COMM_WORLD);
    }
    int all = 0;
    MPI_Reduce(&ok, &all, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\n", all ? "passed" : "FAILED");
    free(buf);
    MPI_Finalize();
    return all || rank ? 0 : 1;
}
