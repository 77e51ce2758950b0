/* What the piggyback layer's test programs share: messages whose contents say which message and
 * which element they are, so that a payload the layer damaged, shifted or paired with the wrong
 * message shows. The includer defines PBTEST_STRIDE, more than the largest count it sends. */
#ifndef MPILENS_TESTS_PBTEST_H
#define MPILENS_TESTS_PBTEST_H

#include "../mpitest.h"

static inline int pbtest_value(int message, int i) { return message * PBTEST_STRIDE + i; }

/* Fills buf with message's n elements. */
static inline void fill(int *buf, int n, int message)
{
    for (int i = 0; i < n; i++)
        buf[i] = pbtest_value(message, i);
}

/* Whether buf holds message's n elements. */
static inline int holds(const int *buf, int n, int message)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != pbtest_value(message, i))
            return 0;
    return 1;
}

/* Ends the program: rank 0 prints how many messages every rank received in all, the count the
 * check driver must report verified (test_pb_layer.sh), and the verdict of the checks. */
static inline int pbtest_finish(long received)
{
    int rank;
    long all = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Reduce(&received, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("expected %ld messages with piggyback\n", all);
    return mpitest_finish();
}

#endif
