#include "warmup.h"

/* The communicator is private to the caller (a duplicate), so a fixed tag cannot collide. */
enum { TAG_WARM_UP = 111 };

int ml_warm_up_count(int64_t size)
{
    int64_t count = size > 0 ? ML_WARM_UP_BYTES / size : ML_WARM_UP_MAX;
    return (int)(count > ML_WARM_UP_MAX ? ML_WARM_UP_MAX : count < ML_WARM_UP_MIN ? ML_WARM_UP_MIN : count);
}

/* This rank's partner in round `round` of a round-robin tournament of `slots` (even) places,
 * the circle method: place slots - 1 stays, the others turn; -1 for the place of the odd one out
 * (slots = n_ranks + 1), which sits the round out. */
static int partner(int rank, int round, int slots, int n_ranks)
{
    int turning = slots - 1, other;
    if (rank == turning)
        other = round;
    else if (rank == round)
        other = turning;
    else
        other = ((2 * round - rank) % turning + turning) % turning;
    return other < n_ranks ? other : -1;
}

int ml_warm_up(MPI_Comm comm, const int64_t *sizes, size_t n, void *send_buf, void *recv_buf)
{
    int rank, n_ranks, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n_ranks);
    int slots = n_ranks + n_ranks % 2;
    for (int round = 0; round < slots - 1; round++) {
        int peer = partner(rank, round, slots, n_ranks);
        if (peer < 0)
            continue;
        for (size_t i = 0; i < n; i++)
            for (int k = ml_warm_up_count(sizes[i]); k > 0; k--)
                if ((rc = MPI_Sendrecv(send_buf, (int)sizes[i], MPI_BYTE, peer, TAG_WARM_UP, recv_buf, (int)sizes[i],
                                       MPI_BYTE, peer, TAG_WARM_UP, comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                    return rc;
    }
    return MPI_SUCCESS;
}
