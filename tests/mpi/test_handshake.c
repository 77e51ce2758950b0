/* The ready-first handshake between pairs (0,1), (2,3), ...: commands arrive in order, and the
 * leader never goes on before its follower has entered the handshake. The follower dawdles 1 ms
 * before each handshake and stamps the moment it enters; the leader stamps the moment the
 * handshake returns. Causally the leader's stamp must come later, every round; a leader that did
 * not wait for "ready" would return ~1 ms too early. Both stamps come from one CLOCK_MONOTONIC,
 * so the order is checked when all ranks share a host. */
#include <stdint.h>
#include <stdlib.h>

#include "clock.h"
#include "compute.h"
#include "mpitest.h"
#include "sync.h"

#define ROUNDS 30
#define DAWDLE_NS 1000000

static void lead(MPI_Comm comm, int follower, int one_host)
{
    int64_t returned[ROUNDS], entered[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        CHECK(ml_handshake_lead(comm, follower, 16 + i) == MPI_SUCCESS);
        returned[i] = ml_clock_ns();
    }
    CHECK(ml_handshake_lead(comm, follower, ML_CMD_STOP) == MPI_SUCCESS);
    MPI_Recv(entered, ROUNDS, MPI_INT64_T, follower, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int ordered = 0;
    for (int i = 0; i < ROUNDS; i++)
        ordered += entered[i] < returned[i];
    if (one_host)
        CHECK(ordered == ROUNDS);
}

static void follow(MPI_Comm comm, int leader)
{
    int64_t entered[ROUNDS + 1];
    int cmd, rounds = 0, in_order = 1;
    do {
        ml_compute_time(DAWDLE_NS);
        entered[rounds] = ml_clock_ns();
        CHECK(ml_handshake_follow(comm, leader, &cmd) == MPI_SUCCESS);
        in_order &= cmd == (rounds < ROUNDS ? 16 + rounds : ML_CMD_STOP);
        REQUIRE(++rounds <= ROUNDS + 1);
    } while (cmd != ML_CMD_STOP);
    CHECK(in_order);
    CHECK(rounds == ROUNDS + 1);
    MPI_Send(entered, ROUNDS, MPI_INT64_T, leader, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size, one_host;
    MPI_Comm comm;
    mpitest_init_pairs(&argc, &argv, &rank, &size, &one_host, &comm);

    /* pairs run concurrently; an odd last rank sits out */
    if (rank < size - size % 2) {
        if (rank % 2 == 0)
            lead(comm, rank + 1, one_host);
        else
            follow(comm, rank - 1);
    }
    MPI_Comm_free(&comm);
    return mpitest_finish();
}
