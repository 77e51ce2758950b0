/* ml_warm_up: every pair of ranks exchanges, at each size, ml_warm_up_count(size) messages of that
 * size, and nothing else. This program's MPI_Sendrecv (the core library is linked statically, so
 * its calls come here) counts the messages per peer and size before passing them on; a
 * tournament that paired a rank with itself or twice with one peer, or left a pair out, would
 * show in the counts, and one that paired ranks inconsistently would hang (ctest's timeout). */
#include <stdint.h>
#include <stdlib.h>

#include "mpitest.h"
#include "warmup.h"

#define MAX_RANKS 16
static const int64_t sizes[] = {0, 1, 4096, (int64_t)1 << 20};
#define N_SIZES (sizeof sizes / sizeof sizes[0])
static long counts[MAX_RANKS][N_SIZES]; /* per peer and size index */
static long strays;                     /* calls matching no size, or to a peer out of range */

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    size_t i = 0;
    while (i < N_SIZES && sizes[i] != sendcount)
        i++;
    if (i == N_SIZES || dest != source || dest < 0 || dest >= MAX_RANKS || sendcount != recvcount)
        strays++;
    else
        counts[dest][i]++;
    return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                         comm, status);
}

int main(int argc, char **argv)
{
    int rank, size, one_host;
    MPI_Comm comm;
    mpitest_init_pairs(&argc, &argv, &rank, &size, &one_host, &comm);
    REQUIRE(size <= MAX_RANKS);
    CHECK(ml_warm_up_count(0) == ML_WARM_UP_MAX);
    CHECK(ml_warm_up_count(1) == ML_WARM_UP_MAX);
    CHECK(ml_warm_up_count((int64_t)1 << 15) == ML_WARM_UP_MAX);
    CHECK(ml_warm_up_count((int64_t)1 << 20) == 4);
    CHECK(ml_warm_up_count((int64_t)1 << 30) == ML_WARM_UP_MIN);

    char *send = malloc((size_t)1 << 20), *recv = malloc((size_t)1 << 20);
    REQUIRE(send && recv);
    CHECK(ml_warm_up(comm, sizes, N_SIZES, send, recv) == MPI_SUCCESS);
    CHECK(strays == 0);
    for (int peer = 0; peer < size; peer++)
        for (size_t i = 0; i < N_SIZES; i++)
            CHECK(counts[peer][i] == (peer == rank ? 0 : ml_warm_up_count(sizes[i])));
    free(send);
    free(recv);
    MPI_Comm_free(&comm);
    return mpitest_finish();
}
