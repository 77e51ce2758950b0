/* What the monitoring tests share: an expected pair of matrices (messages and bytes, row i what
 * rank i sent), filled by the test from what its program does, and the comparison with what a
 * suspended session reports. A mismatch names each differing cell (rank 0 prints) and fails the
 * test on every rank. */
#ifndef MPILENS_TEST_MONTEST_H
#define MPILENS_TEST_MONTEST_H

#include <stdlib.h>

#include "mpi_monitoring.h"
#include "mpitest.h"

typedef struct {
    int n;
    unsigned long *counts, *bytes; /* n x n, row-major */
} expected_t;

static inline expected_t expected_new(int n)
{
    expected_t e = {n, calloc((size_t)n * (size_t)n, sizeof(unsigned long)),
                    calloc((size_t)n * (size_t)n, sizeof(unsigned long))};
    REQUIRE(e.counts && e.bytes);
    return e;
}

static inline void expected_clear(expected_t *e)
{
    memset(e->counts, 0, sizeof *e->counts * (size_t)e->n * (size_t)e->n);
    memset(e->bytes, 0, sizeof *e->bytes * (size_t)e->n * (size_t)e->n);
}

static inline void expected_free(expected_t *e)
{
    free(e->counts);
    free(e->bytes);
}

/* `messages` messages from rank `from` to rank `to`, `bytes` bytes in all. */
static inline void expect(expected_t *e, int from, int to, unsigned long messages, unsigned long bytes)
{
    e->counts[from * e->n + to] += messages;
    e->bytes[from * e->n + to] += bytes;
}

/* Whether this rank prints mismatches: rank 0 of MPI_COMM_WORLD, unless a test with sessions on
 * sub-communicators makes one rank of each print. */
static int montest_prints = -1;

/* Whether two matrices agree; if not, says where (`what`: which session and kinds). */
static inline int montest_same(const char *what, const char *half, const unsigned long *got, const unsigned long *want,
                               int n)
{
    int same = 1;
    if (montest_prints < 0) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        montest_prints = rank == 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (got[i * n + j] != want[i * n + j]) {
                if (montest_prints)
                    fprintf(stderr, "%s: %s %d -> %d: %lu, expected %lu\n", what, half, i, j, got[i * n + j],
                            want[i * n + j]);
                same = 0;
            }
    return same;
}

/* The session's matrices for `flags` (allgathered) must be the expected ones. */
static inline void check_matrices(const char *what, MPI_M_msid id, int flags, const expected_t *e)
{
    int n = e->n, size;
    CHECK(MPI_M_get_info(id, MPI_M_INT_IGNORE, &size) == MPI_SUCCESS && size == n);
    unsigned long *counts = calloc((size_t)n * (size_t)n, sizeof *counts);
    unsigned long *bytes = calloc((size_t)n * (size_t)n, sizeof *bytes);
    REQUIRE(counts && bytes);
    int rc = MPI_M_allgather_data(id, counts, bytes, flags);
    CHECK(rc == MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        int same = montest_same(what, "messages", counts, e->counts, n);
        same &= montest_same(what, "bytes", bytes, e->bytes, n);
        if (!same)
            check_failures++;
    }
    free(counts);
    free(bytes);
}

/* A session that must have seen nothing of the kinds in flags. */
static inline void check_nothing(const char *what, MPI_M_msid id, int flags)
{
    int n;
    CHECK(MPI_M_get_info(id, MPI_M_INT_IGNORE, &n) == MPI_SUCCESS);
    expected_t none = expected_new(n);
    check_matrices(what, id, flags, &none);
    expected_free(&none);
}

/* The arguments of an all-to-all-v or -w in which rank i sends rank j count(i, j) elements,
 * block j of a buffer starting where block j - 1 ends: counts and displacements as the int forms
 * take them and, under MPI-4, as the large-count forms do (MPI_Count, MPI_Aint). Displacements
 * advance by unit(j) per element of block j (NULL: by 1, displacements in elements; -w: the
 * element size, displacements in bytes). out and in, zeroed, hold out_total and in_total units
 * of unit_bytes bytes each. */
typedef struct {
    int *sendcounts, *recvcounts, *sdispls, *rdispls;
#if MPI_VERSION >= 4
    MPI_Count *sendcounts_c, *recvcounts_c;
    MPI_Aint *sdispls_c, *rdispls_c;
#endif
    int out_total, in_total;
    void *out, *in;
} exchange_t;

static inline int *montest_ints(int size)
{
    int *a = malloc(sizeof(int) * (size_t)size);
    REQUIRE(a);
    return a;
}

static inline exchange_t exchange_new(int rank, int size, int (*count)(int from, int to), int (*unit)(int to),
                                      size_t unit_bytes)
{
    exchange_t x = {.sendcounts = montest_ints(size),
                    .recvcounts = montest_ints(size),
                    .sdispls = montest_ints(size),
                    .rdispls = montest_ints(size)};
    for (int j = 0; j < size; j++) {
        x.sendcounts[j] = count(rank, j);
        x.recvcounts[j] = count(j, rank);
        x.sdispls[j] = x.out_total;
        x.rdispls[j] = x.in_total;
        x.out_total += x.sendcounts[j] * (unit ? unit(j) : 1);
        x.in_total += x.recvcounts[j] * (unit ? unit(rank) : 1);
    }
#if MPI_VERSION >= 4
    x.sendcounts_c = malloc(sizeof(MPI_Count) * (size_t)size);
    x.recvcounts_c = malloc(sizeof(MPI_Count) * (size_t)size);
    x.sdispls_c = malloc(sizeof(MPI_Aint) * (size_t)size);
    x.rdispls_c = malloc(sizeof(MPI_Aint) * (size_t)size);
    REQUIRE(x.sendcounts_c && x.recvcounts_c && x.sdispls_c && x.rdispls_c);
    for (int j = 0; j < size; j++) {
        x.sendcounts_c[j] = x.sendcounts[j];
        x.recvcounts_c[j] = x.recvcounts[j];
        x.sdispls_c[j] = x.sdispls[j];
        x.rdispls_c[j] = x.rdispls[j];
    }
#endif
    x.out = calloc((size_t)x.out_total, unit_bytes);
    x.in = calloc((size_t)x.in_total, unit_bytes);
    REQUIRE(x.out && x.in);
    return x;
}

static inline void exchange_free(exchange_t *x)
{
    free(x->sendcounts);
    free(x->recvcounts);
    free(x->sdispls);
    free(x->rdispls);
#if MPI_VERSION >= 4
    free(x->sendcounts_c);
    free(x->recvcounts_c);
    free(x->sdispls_c);
    free(x->rdispls_c);
#endif
    free(x->out);
    free(x->in);
}

/* MPI_Waitall with real statuses: MPICH's MPI_STATUSES_IGNORE sentinel trips gcc's bounds warnings. */
static inline void wait_all(int n, MPI_Request *requests)
{
    MPI_Status statuses[n > 0 ? n : 1];
    MPI_Waitall(n, requests, statuses);
}

#define OK(call) REQUIRE((call) == MPI_SUCCESS)

#endif
