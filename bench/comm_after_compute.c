/* bench/comm_after_compute: does a message cost more right after a computation than in a loop?
 *
 * mpilens overlap takes T_comm from a ping-pong measured in a loop and its blocking control
 * (docs/overlap.md) checks that a blocking send after a computation costs that much. On some
 * machines it does not, whatever mpilens does: this program measures it with no mpilens code
 * between the computation and MPI. Two ranks. First the reference, in a loop as a ping-pong
 * measures it: REPS times { a blocking MPI_Send of SIZE bytes (argv[1], default 1024) from rank 0
 * to rank 1, then rank 1's 0-byte ack } back to back. Then for each computation time C (argv[2..],
 * in µs; default 64 256 1000 4000): REPS times { barrier; rank 0 spins C (the overlap benchmarks'
 * time-based kernel), then the same send and ack }. Prints the medians and quartiles of the send
 * alone and of send + ack on rank 0, and the send + ack median as a ratio to the loop's. Figures
 * measured in one run, not assertions; bench/comm_after_compute launches it under each library. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "compute.h"

enum { REPS = 100, WARM_UP = 10, MAX_TIMES = 16 };

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The quartiles of v[n], sorting it. */
static void quartiles(int64_t *v, int n, int64_t q[3])
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    q[0] = v[n / 4];
    q[1] = v[n / 2];
    q[2] = v[3 * n / 4];
}

/* REPS repetitions, each after a barrier and compute_ns of computation (in_loop: back to back,
 * neither); on rank 0, the send alone and send + ack. */
static void measure(int rank, char *buf, int size, int in_loop, int64_t compute_ns, int64_t *send, int64_t *both)
{
    for (int r = 0; r < REPS + WARM_UP; r++) {
        if (!in_loop)
            MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            if (!in_loop)
                ml_compute_time(compute_ns);
            int64_t t0 = ml_clock_ns();
            MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            int64_t t1 = ml_clock_ns();
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int64_t t2 = ml_clock_ns();
            if (r >= WARM_UP) {
                send[r - WARM_UP] = t1 - t0;
                both[r - WARM_UP] = t2 - t0;
            }
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int size = argc > 1 ? atoi(argv[1]) : 1024;
    int64_t times_us[MAX_TIMES] = {64, 256, 1000, 4000};
    int ntimes = 4;
    if (argc > 2)
        for (ntimes = 0; ntimes < MAX_TIMES && ntimes + 2 < argc; ntimes++)
            times_us[ntimes] = atoll(argv[ntimes + 2]);
    if (ranks != 2 || size < 0) {
        if (rank == 0)
            fprintf(stderr, "comm_after_compute: 2 ranks and a size >= 0, please\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = calloc((size_t)size + 1, 1);
    int64_t send[REPS], both[REPS], loop_median = 0;
    if (rank == 0)
        printf("%d B: blocking send and 0-byte ack (ns, median [quartiles])\n", size);
    for (int c = -1; c < ntimes; c++) {
        measure(rank, buf, size, c < 0, c < 0 ? 0 : times_us[c] * 1000, send, both);
        if (rank != 0)
            continue;
        int64_t s[3], b[3];
        quartiles(send, REPS, s);
        quartiles(both, REPS, b);
        char label[32];
        if (c < 0) {
            loop_median = b[1];
            snprintf(label, sizeof label, "in a loop");
        } else
            snprintf(label, sizeof label, "after %lld us", (long long)times_us[c]);
        printf("  %-15s send %6lld [%lld, %lld]  send + ack %6lld [%lld, %lld]  x%.2f of the loop's\n", label,
               (long long)s[1], (long long)s[0], (long long)s[2], (long long)b[1], (long long)b[0], (long long)b[2],
               loop_median > 0 ? (double)b[1] / (double)loop_median : 0.0);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
