/* Assertions for MPI integration tests: tests/include/check.h's, a failed check printing rank,
 * place and expression; at the end every rank learns whether any rank failed and the test exits
 * non-zero. A rank that cannot go on calls MPI_Abort, so a failed test never hangs (ctest's
 * timeout is the last resort). */
#ifndef MPILENS_TEST_MPITEST_H
#define MPILENS_TEST_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* "rank R: " before each failed check. */
static inline const char *mpitest_who(void)
{
    static char who[32];
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(who, sizeof who, "rank %d: ", rank);
    return who;
}
#define CHECK_WHO() mpitest_who()
#include "check.h"

#define REQUIRE(cond)                                                                                                  \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #cond);                                       \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                              \
        }                                                                                                              \
    } while (0)

/* MPI_Init, then this process's rank in MPI_COMM_WORLD and the world's size. */
static inline void mpitest_init(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

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

/* mpitest_init for the tests of the clock layer, run between pairs of ranks: at least 2 ranks,
 * whether they share a host (mpitest_one_host) and a duplicate of MPI_COMM_WORLD for the test. */
static inline void mpitest_init_pairs(int *argc, char ***argv, int *rank, int *size, int *one_host, MPI_Comm *comm)
{
    mpitest_init(argc, argv, rank, size);
    REQUIRE(*size >= 2);
    *one_host = mpitest_one_host();
    MPI_Comm_dup(MPI_COMM_WORLD, comm);
}

/* Finalizes and returns main's exit status: 1 if a check failed on any rank. */
static inline int mpitest_finish(void)
{
    int any, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&check_failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        fprintf(stderr, any ? "FAILED: %d check(s)\n" : "passed\n", any);
    MPI_Finalize();
    return any != 0;
}

#endif
