/* Assertions for MPI integration tests. A failed check prints rank, place and expression; at the
 * end every rank learns whether any rank failed and the test exits non-zero. A rank that cannot
 * go on calls MPI_Abort, so a failed test never hangs (ctest's timeout is the last resort). */
#ifndef MPILENS_TEST_MPITEST_H
#define MPILENS_TEST_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int mpitest_failures;

#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            int r_;                                                                                 \
            MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                     \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", r_, __FILE__, __LINE__, #cond);   \
            mpitest_failures++;                                                                     \
        }                                                                                           \
    } while (0)

#define REQUIRE(cond)                                                                               \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #cond);                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
        }                                                                                           \
    } while (0)

/* Whether every rank runs on the same host (then they share one CLOCK_MONOTONIC). */
static inline int mpitest_one_host(void)
{
    char mine[256] = {0}, root[256] = {0};
    gethostname(mine, sizeof mine - 1);
    memcpy(root, mine, sizeof root);
    MPI_Bcast(root, sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    int same = strcmp(mine, root) == 0, all;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* Finalizes and returns main's exit status: 1 if a check failed on any rank. */
static inline int mpitest_finish(void)
{
    int any, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&mpitest_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        fprintf(stderr, any ? "FAILED: %d check(s)\n" : "passed\n", any);
    MPI_Finalize();
    return any != 0;
}

#endif
