/* libmpilens-monitor's counters under concurrent writers: a reader must never see a message
 * counted without its bytes (or bytes without their message), whatever the interleaving. Three
 * writer threads count 8-byte messages to one destination while a reader snapshots the cell in a
 * loop, as MPI_M_suspend does; on 2 cores writers are often preempted between their adds, which
 * is the window a torn read falls into. No MPI launch: the counters are plain memory. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "monitor.h"

ml_monitor_t ml_mon;

enum { WRITERS = 3, MESSAGES = 2000000, SIZE = 8 };

static int writers_done;

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < MESSAGES; i++)
        ml_count_world(ML_P2P, 0, SIZE);
    __atomic_fetch_add(&writers_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    ml_cell_t cell = {0};
    ml_mon.cells[ML_P2P] = &cell;
    pthread_t threads[WRITERS];
    for (int t = 0; t < WRITERS; t++)
        pthread_create(&threads[t], NULL, writer, NULL);

    long reads = 0, torn = 0, backwards = 0;
    uint64_t last = 0, messages, bytes;
    while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < WRITERS) {
        ml_cell_read(ML_P2P, 0, &messages, &bytes);
        reads++;
        torn += bytes != SIZE * messages;
        backwards += messages < last;
        last = messages;
    }
    for (int t = 0; t < WRITERS; t++)
        pthread_join(threads[t], NULL);
    ml_cell_read(ML_P2P, 0, &messages, &bytes);

    int failed = 0;
    if (torn || backwards) {
        fprintf(stderr, "FAIL: %ld of %ld reads torn, %ld went backwards\n", torn, reads, backwards);
        failed = 1;
    }
    if (messages != (uint64_t)WRITERS * MESSAGES || bytes != SIZE * messages) {
        fprintf(stderr, "FAIL: final %llu messages, %llu bytes\n", (unsigned long long)messages,
                (unsigned long long)bytes);
        failed = 1;
    }
    printf("%ld consistent reads while %d threads counted %d messages each\n", reads, WRITERS, MESSAGES);
    return failed;
}
