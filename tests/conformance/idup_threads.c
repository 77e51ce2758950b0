/* Open MPI 4.1.4, no mpilens layer (docs/conformance.md, "Open MPI: MPI_Comm_idup hangs"): ten
 * MPI_Comm_idup of MPI_COMM_WORLD in flight at once, then MPI_Waitall, as MPICH's
 * comm/comm_idup_mul does, 20 times. With one more thread of the program calling
 * MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG) on a communicator of its own (argument 1: back to back,
 * as libmpilens-progress's poll mode does; 2: at real-time priority with a 100 us pause after
 * each call, as its rt mode does), the duplications now and then never complete; without it
 * (argument 0), they do.
 *
 *   mpicc -pthread idup_threads.c -o idup_threads
 *   for i in $(seq 8); do timeout 20 mpirun -n 2 ./idup_threads 2; echo $?; done   # 124: hung */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { IDUPS = 10, ROUNDS = 20 };

static MPI_Comm own;
static volatile int stop;
static int realtime;

static void *prober(void *unused)
{
    (void)unused;
    while (!stop) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, own, &flag, MPI_STATUS_IGNORE);
        if (realtime) {
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

/* IDUPS duplications of MPI_COMM_WORLD in flight together, completed by one MPI_Waitall */
static void duplicate_together(void)
{
    MPI_Comm comm[IDUPS];
    MPI_Request request[IDUPS];
    for (int i = 0; i < IDUPS; i++)
        MPI_Comm_idup(MPI_COMM_WORLD, &comm[i], &request[i]);
    MPI_Waitall(IDUPS, request, MPI_STATUSES_IGNORE);
    for (int i = 0; i < IDUPS; i++)
        MPI_Comm_free(&comm[i]);
}

int main(int argc, char **argv)
{
    int provided, rank, mode = argc > 1 ? atoi(argv[1]) : 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &own);
    realtime = mode == 2;
    pthread_t thread;
    if (mode > 0 && pthread_create(&thread, NULL, prober, NULL) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (realtime) {
        struct sched_param param = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
        if (pthread_setschedparam(thread, SCHED_FIFO, &param) != 0)
            fprintf(stderr, "SCHED_FIFO not permitted: the thread runs at normal priority\n");
    }
    for (int round = 0; round < ROUNDS; round++)
        duplicate_together();
    stop = 1;
    if (mode > 0)
        pthread_join(thread, NULL);
    if (rank == 0)
        printf("%d rounds of %d duplications done\n", ROUNDS, IDUPS);
    MPI_Comm_free(&own);
    MPI_Finalize();
    return 0;
}
