/* Sessions are independent: they overlap, nest, are suspended and continued around phases, reset,
 * and read with different flags. Three sessions:
 * - A on MPI_COMM_WORLD, from the start;
 * - B on MPI_COMM_WORLD, started after phase 1, suspended during phase 3;
 * - C on the pair {2k, 2k + 1} of each rank (a subset), started with B and never suspended
 *   until the end: it sees only the messages between the two members of its pair.
 * Phases (point-to-point around the ring, plus a collective in the first two):
 *   1: 1 message of 10 bytes to rank + 1, and a Barrier;
 *   2: 2 messages of 20 bytes to rank + 1, and an Allreduce of one int;
 *   3: 3 messages of 30 bytes to rank + 1;
 *   4: 1 message of 40 bytes to rank - 1.
 * Then MPI_M_reset of one session and of all, MPI_M_continue / suspend / free of all. */
#include "montest.h"

static int rank, size;

/* `messages` messages of `bytes` chars to rank + step, received from rank - step. */
static void phase(int messages, int bytes, int step)
{
    char out[64] = {0}, in[4][64];
    MPI_Request r[8];
    int to = (rank + step + size) % size, from = (rank - step + size) % size;
    for (int m = 0; m < messages; m++) {
        MPI_Irecv(in[m], bytes, MPI_CHAR, from, m, MPI_COMM_WORLD, &r[2 * m]);
        MPI_Isend(out, bytes, MPI_CHAR, to, m, MPI_COMM_WORLD, &r[2 * m + 1]);
    }
    wait_all(2 * messages, r);
}

/* What `phase` sends, into world-indexed matrices. */
static void expect_phase(expected_t *e, int messages, int bytes, int step)
{
    for (int i = 0; i < size; i++)
        expect(e, i, (i + step + size) % size, messages, (unsigned long)(messages * bytes));
}

static void expect_all_pairs(expected_t *e, unsigned long bytes)
{
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (i != j)
                expect(e, i, j, 1, bytes);
}

/* The part of a world-indexed matrix between the members of this rank's pair, indexed 0, 1. */
static expected_t pair_of(const expected_t *world)
{
    expected_t e = expected_new(2);
    int first = rank - rank % 2;
    for (int i = 0; i < e.n; i++)
        for (int j = 0; j < e.n; j++) {
            int cell = (first + i) * size + first + j;
            expect(&e, i, j, world->counts[cell], world->bytes[cell]);
        }
    return e;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size % 2 == 0);
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    montest_prints = rank % 2 == 0; /* rank 0 of each pair */
    setenv("MPILENS_MONITOR_BACKEND", "pmpi", 1);
    OK(MPI_M_init());

    MPI_M_msid a, b, c;
    int one = 1, sum;
    OK(MPI_M_start(MPI_COMM_WORLD, &a));
    phase(1, 10, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_M_start(MPI_COMM_WORLD, &b));
    OK(MPI_M_start(pair, &c));
    phase(2, 20, 1);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    OK(MPI_M_suspend(b));
    phase(3, 30, 1);
    OK(MPI_M_continue(b));
    phase(1, 40, -1);
    OK(MPI_M_suspend(MPI_M_ALL_MSID));

    /* What each session saw, by kind. */
    expected_t a_p2p = expected_new(size), a_coll = expected_new(size), a_all = expected_new(size);
    expected_t b_p2p = expected_new(size), b_coll = expected_new(size), b_all = expected_new(size);
    expected_t c_world = expected_new(size);
    for (int k = 0; k < 3; k++) {
        expected_t *all[] = {&a_all, &b_all, &c_world};
        expect_phase(all[k], 2, 20, 1);
        expect_phase(all[k], 1, 40, -1);
        expect_all_pairs(all[k], sizeof(int));
    }
    expect_phase(&a_all, 1, 10, 1);
    expect_all_pairs(&a_all, 0);
    expect_phase(&a_all, 3, 30, 1);
    expect_phase(&c_world, 3, 30, 1);
    expect_phase(&a_p2p, 1, 10, 1);
    expect_phase(&a_p2p, 2, 20, 1);
    expect_phase(&a_p2p, 3, 30, 1);
    expect_phase(&a_p2p, 1, 40, -1);
    expect_all_pairs(&a_coll, 0);
    expect_all_pairs(&a_coll, sizeof(int));
    expect_phase(&b_p2p, 2, 20, 1);
    expect_phase(&b_p2p, 1, 40, -1);
    expect_all_pairs(&b_coll, sizeof(int));
    expected_t c_pair = pair_of(&c_world);

    check_matrices("A, P2P", a, MPI_M_P2P_ONLY, &a_p2p);
    check_matrices("A, COLL", a, MPI_M_COLL_ONLY, &a_coll);
    check_matrices("A, every kind", a, MPI_M_ALL_COMM, &a_all);
    check_matrices("A, P2P and OSC", a, MPI_M_P2P_ONLY | MPI_M_OSC_ONLY, &a_p2p);
    check_nothing("A, OSC", a, MPI_M_OSC_ONLY);
    check_matrices("B, P2P", b, MPI_M_P2P_ONLY, &b_p2p);
    check_matrices("B, COLL", b, MPI_M_COLL_ONLY, &b_coll);
    check_matrices("B, every kind", b, MPI_M_ALL_COMM, &b_all);
    check_matrices("C, every kind", c, MPI_M_ALL_COMM, &c_pair);

    /* Reset one: the others keep their data; the reset one counts afresh once continued. */
    OK(MPI_M_reset(a));
    check_nothing("A after reset", a, MPI_M_ALL_COMM);
    check_matrices("B after A's reset", b, MPI_M_ALL_COMM, &b_all);
    OK(MPI_M_continue(a));
    phase(1, 8, 1);
    OK(MPI_M_suspend(a));
    expected_t fresh = expected_new(size);
    expect_phase(&fresh, 1, 8, 1);
    check_matrices("A counting again", a, MPI_M_ALL_COMM, &fresh);
    check_matrices("B, untouched", b, MPI_M_ALL_COMM, &b_all);

    /* Reset all, continue all, suspend all: every session sees the same last phase. */
    OK(MPI_M_reset(MPI_M_ALL_MSID));
    check_nothing("B after resetting all", b, MPI_M_ALL_COMM);
    check_nothing("C after resetting all", c, MPI_M_ALL_COMM);
    OK(MPI_M_continue(MPI_M_ALL_MSID));
    phase(1, 16, -1);
    OK(MPI_M_suspend(MPI_M_ALL_MSID));
    OK(MPI_M_suspend(MPI_M_ALL_MSID)); /* none active: nothing to do, no error */
    expected_clear(&fresh);
    expect_phase(&fresh, 1, 16, -1);
    check_matrices("A after continuing all", a, MPI_M_ALL_COMM, &fresh);
    check_matrices("B after continuing all", b, MPI_M_ALL_COMM, &fresh);
    expected_free(&c_pair);
    c_pair = pair_of(&fresh);
    check_matrices("C after continuing all", c, MPI_M_ALL_COMM, &c_pair);

    /* Freeing all fails, freeing nothing, while one is active. */
    OK(MPI_M_continue(b));
    CHECK(MPI_M_free(MPI_M_ALL_MSID) == MPI_M_SESSION_NOT_SUSPENDED);
    CHECK(MPI_M_get_info(a, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_SUCCESS);
    OK(MPI_M_suspend(b));
    OK(MPI_M_free(MPI_M_ALL_MSID));
    CHECK(MPI_M_get_info(a, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_get_info(b, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_get_info(c, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_INVALID_MSID);

    expected_t *all[] = {&a_p2p, &a_coll, &a_all, &b_p2p, &b_coll, &b_all, &c_world, &c_pair, &fresh};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        expected_free(all[k]);
    OK(MPI_M_finalize());
    MPI_Comm_free(&pair);
    return mpitest_finish();
}
