/* MPICH 4.0.2 under MPI_THREAD_MULTIPLE, with no mpilens layer (docs/conformance.md, "MPICH: a torn
 * MPI_FLOAT_INT"): is MPI_Get_accumulate with MPI_NO_OP still atomic per element while another
 * thread of each rank drives progress? MPICH's rma/atomic_get_float_int fails now and then under
 * libmpilens-progress in rt mode; this program asks the same question with the program's own
 * thread instead of the layer's.
 *
 * Three ranks. Rank 2 writes pairs {a = v, b = v} of MPI_FLOAT_INT into rank 0's window with
 * MPI_Accumulate(MPI_REPLACE), ten elements per call; rank 1 reads them back with
 * MPI_Get_accumulate(MPI_NO_OP) at the same time. Element-wise atomicity (MPI-3.1 11.7.1) means every
 * pair read has a == b; a torn pair is counted and the first few printed. Argument 1: a thread per
 * rank calls MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) on a communicator of its own every 50 us, as
 * libmpilens-progress's does (2: that thread at real-time priority, as its rt mode; 3: a real-time
 * thread that only sleeps, never calling MPI; 0: no thread).
 * Argument 2: rounds, 1 to 1500 (default 300; the figures in the doc are of 1500).
 *
 *   mpicc -pthread gacc_pair_threads.c -o gacc_pair_threads
 *   for i in $(seq 10); do mpiexec -n 3 ./gacc_pair_threads 2 1500; done   # some: "N torn pairs" */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ELEMENTS = 10, WRITES = 1000, READS = 100 };

typedef struct {
    float a;
    int b;
} pair_t;

static const char *thread_kinds[] = {"without", "with a probing thread", "with a real-time probing thread",
                                     "with a real-time thread that never calls MPI"};
static MPI_Comm own;
static volatile int stop;
static int probing; /* the kind of thread: an index of thread_kinds */

static void *prober(void *unused)
{
    (void)unused;
    while (!stop) {
        int flag;
        if (probing != 3)
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, own, &flag, MPI_STATUS_IGNORE);
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void write_round(MPI_Win win, int round)
{
    pair_t values[ELEMENTS];
    for (int i = 0; i < WRITES; i++) {
        for (int k = 0; k < ELEMENTS; k++) {
            int v = (round * WRITES + i) * ELEMENTS + k; /* below 2^24: exact as a float */
            values[k] = (pair_t){(float)v, v};
        }
        MPI_Accumulate(values, ELEMENTS, MPI_FLOAT_INT, 0, 0, ELEMENTS, MPI_FLOAT_INT, MPI_REPLACE, win);
    }
}

static int read_round(MPI_Win win, int round)
{
    pair_t got[READS][ELEMENTS];
    int torn = 0;
    for (int r = 0; r < READS; r++)
        MPI_Get_accumulate(NULL, 0, MPI_FLOAT_INT, got[r], ELEMENTS, MPI_FLOAT_INT, 0, 0, ELEMENTS, MPI_FLOAT_INT,
                           MPI_NO_OP, win);
    MPI_Win_fence(0, win); /* the reads complete here, so `got` may be looked at only after */
    for (int r = 0; r < READS; r++)
        for (int k = 0; k < ELEMENTS; k++)
            if ((int)got[r][k].a != got[r][k].b && torn++ < 3)
                fprintf(stderr, "round %d read %d element %d: a = %.0f, b = %d\n", round, r, k, got[r][k].a,
                        got[r][k].b);
    return torn;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    probing = argc > 1 ? atoi(argv[1]) : 1;
    int rounds = argc > 2 ? atoi(argv[2]) : 300;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE || size != 3 || rounds < 1 || rounds > 1500 || probing < 0 || probing > 3) {
        if (rank == 0)
            fprintf(stderr, "needs MPI_THREAD_MULTIPLE, 3 ranks, a thread kind 0 to 3 and 1 to 1500 rounds\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &own);
    pthread_t probe;
    if (probing) {
        pthread_create(&probe, NULL, prober, NULL);
        struct sched_param fifo = {.sched_priority = 1};
        if (probing >= 2 && pthread_setschedparam(probe, SCHED_FIFO, &fifo) != 0 && rank == 0)
            fprintf(stderr, "no real-time priority here: the thread runs at normal priority\n");
    }
    pair_t *window;
    MPI_Win win;
    MPI_Win_allocate(ELEMENTS * sizeof(pair_t), sizeof(pair_t), MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    int torn = 0;
    for (int round = 0; round < rounds; round++) {
        MPI_Win_fence(0, win);
        if (rank == 2)
            write_round(win, round);
        if (rank == 1) {
            torn += read_round(win, round);
        } else {
            MPI_Win_fence(0, win);
        }
    }
    MPI_Win_fence(0, win);
    MPI_Win_free(&win);
    stop = 1;
    if (probing)
        pthread_join(probe, NULL);
    int all = 0;
    MPI_Reduce(&torn, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d torn pairs in %d reads of %d elements\n", thread_kinds[probing], all, rounds * READS, ELEMENTS);
    MPI_Comm_free(&own);
    MPI_Finalize();
    return all != 0;
}
