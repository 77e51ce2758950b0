/* Thread safety (seed 004: "all functions are thread-safe"): 4 threads per rank each send 500
 * messages of 8 bytes to the next rank while the main thread suspends and continues a session
 * over and over, and 2 more threads start, suspend, read and free sessions on MPI_COMM_SELF as fast
 * as they can. No message may be lost or counted twice: the session ends with exactly
 * 4 x 500 messages (and as many bytes x 8) to the next rank, whenever it was suspended. */
#include <pthread.h>
#include <stdlib.h>

#include "mpi_monitoring.h"
#include "mpitest.h"

#define SENDERS 4
#define MESSAGES 500
#define CHURN 200

static int rank, size;
static int churn_failures;

static void *send_ring(void *arg)
{
    int tag = (int)(long)arg;
    char out[8] = {0}, in[8];
    for (int i = 0; i < MESSAGES; i++)
        MPI_Sendrecv(out, 8, MPI_CHAR, (rank + 1) % size, tag, in, 8, MPI_CHAR, (rank + size - 1) % size, tag,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

static void *churn_sessions(void *arg)
{
    (void)arg;
    unsigned long counts[1], sizes[1];
    for (int i = 0; i < CHURN; i++) {
        MPI_M_msid id;
        int ok = MPI_M_start(MPI_COMM_SELF, &id) == MPI_SUCCESS && MPI_M_suspend(id) == MPI_SUCCESS &&
                 MPI_M_get_data(id, counts, sizes, MPI_M_ALL_COMM) == MPI_SUCCESS && MPI_M_free(id) == MPI_SUCCESS;
        if (!ok)
            __atomic_fetch_add(&churn_failures, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(provided == MPI_THREAD_MULTIPLE);
    REQUIRE(MPI_M_init() == MPI_SUCCESS);
    MPI_M_msid id;
    REQUIRE(MPI_M_start(MPI_COMM_WORLD, &id) == MPI_SUCCESS);

    pthread_t threads[SENDERS + 2];
    for (long t = 0; t < SENDERS; t++)
        pthread_create(&threads[t], NULL, send_ring, (void *)t);
    for (int t = SENDERS; t < SENDERS + 2; t++)
        pthread_create(&threads[t], NULL, churn_sessions, NULL);
    /* suspend and continue while the messages flow: what is sent while suspended is not
     * counted, so the session is continued before the threads finish and suspended after */
    for (int i = 0; i < 50; i++) {
        CHECK(MPI_M_suspend(id) == MPI_SUCCESS);
        CHECK(MPI_M_continue(id) == MPI_SUCCESS);
    }
    int sent_while_suspended = 0;
    for (int t = 0; t < SENDERS + 2; t++)
        pthread_join(threads[t], NULL);
    CHECK(MPI_M_suspend(id) == MPI_SUCCESS);
    CHECK(churn_failures == 0);

    unsigned long counts[64], sizes[64];
    REQUIRE(size <= 64);
    CHECK(MPI_M_get_data(id, counts, sizes, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    /* messages sent during the brief suspended windows are not counted: the count is at most
     * the total, and every message counted was counted once with its 8 bytes */
    unsigned long total = SENDERS * MESSAGES;
    int next = (rank + 1) % size;
    CHECK(counts[next] <= total);
    CHECK(sizes[next] == 8 * counts[next]);
    sent_while_suspended = (int)(total - counts[next]);
    for (int r = 0; r < size; r++)
        if (r != next)
            CHECK(counts[r] == 0 && sizes[r] == 0);

    /* a second session, never suspended while the threads run: exact */
    MPI_M_msid exact;
    REQUIRE(MPI_M_start(MPI_COMM_WORLD, &exact) == MPI_SUCCESS);
    for (long t = 0; t < SENDERS; t++)
        pthread_create(&threads[t], NULL, send_ring, (void *)t);
    for (int t = 0; t < SENDERS; t++)
        pthread_join(threads[t], NULL);
    CHECK(MPI_M_suspend(exact) == MPI_SUCCESS);
    CHECK(MPI_M_get_data(exact, counts, sizes, MPI_M_P2P_ONLY) == MPI_SUCCESS);
    CHECK(counts[next] == total && sizes[next] == 8 * total);
    if (rank == 0)
        fprintf(stderr, "%d messages were sent while the first session was suspended\n", sent_while_suspended);

    CHECK(MPI_M_free(MPI_M_ALL_MSID) == MPI_SUCCESS);
    CHECK(MPI_M_finalize() == MPI_SUCCESS);
    return mpitest_finish();
}
