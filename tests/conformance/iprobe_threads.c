/* Open MPI 4.1.4 under MPI_THREAD_MULTIPLE, with no mpilens layer (docs/conformance.md, "Open MPI:
 * MPI_Iprobe from several threads"): four threads of rank 0 send 1024 messages of one int each, with
 * one tag; four threads of rank 1 each MPI_Iprobe, MPI_Get_count, MPI_Recv them, as MPICH's
 * threads/pt2pt/mt_iprobe_isendrecv does. With one more thread of the program calling
 * MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) on a communicator of its own every 50 us (argument 1;
 * 2: that thread at real-time priority), the count of a probed message now and then comes out
 * MPI_UNDEFINED; without it (argument 0), never. libmpilens-progress's thread does what that
 * thread does.
 *
 *   mpicc -pthread iprobe_threads.c -o iprobe_threads
 *   for i in $(seq 15); do mpirun -n 2 ./iprobe_threads 1; done      # some runs: "N bad counts" */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { THREADS = 4, MESSAGES = 1024 };

static MPI_Comm own;
static volatile int stop;
static int rank, bad;

static void *prober(void *unused)
{
    (void)unused;
    while (!stop) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, own, &flag, MPI_STATUS_IGNORE);
        struct timespec pause = {0, 50000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void *worker(void *unused)
{
    (void)unused;
    int buf[MESSAGES];
    MPI_Request requests[MESSAGES];
    MPI_Status statuses[MESSAGES]; /* MPICH's MPI_STATUSES_IGNORE trips gcc's bounds warnings */
    if (rank == 0) {
        for (int i = 0; i < MESSAGES; i++) {
            buf[i] = i;
            MPI_Isend(&buf[i], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[i]);
        }
        MPI_Waitall(MESSAGES, requests, statuses);
        return NULL;
    }
    for (int i = 0; i < MESSAGES; i++) {
        int flag = 0, count = -1;
        MPI_Status status;
        while (!flag)
            MPI_Iprobe(0, 0, MPI_COMM_WORLD, &flag, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        if (count != 1) {
            if (__sync_fetch_and_add(&bad, 1) < 4)
                fprintf(stderr, "message %d: count %d (source %d, tag %d)\n", i, count, status.MPI_SOURCE,
                        status.MPI_TAG);
            count = 1; /* every message is one int: receive it all the same */
        }
        MPI_Recv(&buf[i], count, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, probing = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &own);
    pthread_t probe, workers[THREADS];
    if (probing) {
        pthread_create(&probe, NULL, prober, NULL);
        struct sched_param fifo = {.sched_priority = 1};
        if (probing == 2)
            pthread_setschedparam(probe, SCHED_FIFO, &fifo);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_create(&workers[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(workers[i], NULL);
    stop = 1;
    if (probing)
        pthread_join(probe, NULL);
    int all = 0;
    MPI_Reduce(&bad, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d bad counts\n", probing ? "with a probing thread" : "without", all);
    MPI_Comm_free(&own);
    MPI_Finalize();
    return all != 0;
}
