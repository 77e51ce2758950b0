/* Every error code, reached by misuse, and after each misuse the session M (one message of 12
 * bytes from each rank to rank + 1) unchanged and still usable: same data, and it can be
 * continued and suspended again. Every code has a description of its own. */
#include "montest.h"

static int rank, size;
static MPI_M_msid m;
static expected_t known;

static void check_intact(const char *after)
{
    check_matrices(after, m, MPI_M_P2P_ONLY, &known);
    CHECK(MPI_M_continue(m) == MPI_SUCCESS);
    CHECK(MPI_M_suspend(m) == MPI_SUCCESS);
    check_matrices(after, m, MPI_M_P2P_ONLY, &known);
}

/* Every call that takes an msid must answer `code` for id (the data-reading calls with flags). */
static void check_every_call(MPI_M_msid id, int code, int flags, int with_state_changes)
{
    unsigned long row[64];
    char prefix[] = "/nonexistent-mpilens-dir/never";
    if (with_state_changes) {
        CHECK(MPI_M_suspend(id) == code);
        CHECK(MPI_M_continue(id) == code);
    }
    CHECK(MPI_M_reset(id) == code);
    CHECK(MPI_M_free(id) == code);
    CHECK(MPI_M_get_data(id, row, row, flags) == code);
    CHECK(MPI_M_allgather_data(id, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, flags) == code);
    CHECK(MPI_M_rootgather_data(id, 0, MPI_M_DATA_IGNORE, MPI_M_DATA_IGNORE, flags) == code);
    CHECK(MPI_M_flush(id, prefix, flags) == code);
    CHECK(MPI_M_rootflush(id, 0, prefix, flags) == code);
}

static void ring(void)
{
    char out[12] = {0}, in[12];
    MPI_Sendrecv(out, 12, MPI_CHAR, (rank + 1) % size, 0, in, 12, MPI_CHAR, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

static void error_strings(void)
{
    const int codes[] = {MPI_SUCCESS,        MPI_M_INTERNAL_FAIL,        MPI_M_MPIT_FAIL,
                         MPI_M_MISSING_INIT, MPI_M_SESSION_STILL_ACTIVE, MPI_M_SESSION_NOT_SUSPENDED,
                         MPI_M_INVALID_MSID, MPI_M_SESSION_OVERFLOW,     MPI_M_MULTIPLE_CALL,
                         MPI_M_INVALID_ROOT, MPI_M_INVALID_ARG};
    enum { N = sizeof codes / sizeof codes[0] };
    const char *unknown = MPI_M_error_string(12345);
    CHECK(unknown && *unknown);
    CHECK(strcmp(MPI_M_error_string(MPI_SUCCESS), "success") == 0);
    for (int i = 0; i < N; i++) {
        const char *s = MPI_M_error_string(codes[i]);
        CHECK(s && *s && strcmp(s, unknown) != 0);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(s, MPI_M_error_string(codes[j])) != 0);
    }
}

int main(int argc, char **argv)
{
    /* Before MPI_Init: nothing works, and MPI_M_init refuses (it needs MPI). Checked once MPI
     * is up, as a failed check reports through MPI. */
    MPI_M_msid never;
    int backend;
    int before[] = {MPI_M_get_info(0, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE),
                    MPI_M_start(MPI_COMM_WORLD, &never),
                    MPI_M_suspend(0),
                    MPI_M_finalize(),
                    MPI_M_get_backend(MPI_M_P2P_ONLY, &backend),
                    MPI_M_allgather_data(0, NULL, NULL, MPI_M_ALL_COMM)};
    int init_before_mpi = MPI_M_init();
    int after_failed_init = MPI_M_suspend(0);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size <= 64);
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++)
        CHECK(before[i] == MPI_M_MISSING_INIT);
    CHECK(init_before_mpi == MPI_M_MPIT_FAIL);
    CHECK(after_failed_init == MPI_M_MISSING_INIT);
    error_strings();

    OK(MPI_M_init());
    CHECK(MPI_M_init() == MPI_M_MULTIPLE_CALL);
    OK(MPI_M_start(MPI_COMM_WORLD, &m));
    ring();
    OK(MPI_M_suspend(m));
    known = expected_new(size);
    for (int i = 0; i < size; i++)
        expect(&known, i, (i + 1) % size, 1, 12);
    check_intact("the session");

    /* MULTIPLE_CALL */
    CHECK(MPI_M_suspend(m) == MPI_M_MULTIPLE_CALL);
    OK(MPI_M_continue(m));
    CHECK(MPI_M_continue(m) == MPI_M_MULTIPLE_CALL);
    OK(MPI_M_suspend(m));
    check_intact("MULTIPLE_CALL");

    /* INVALID_MSID: never started, out of range, freed; MPI_M_ALL_MSID where it means nothing */
    MPI_M_msid freed;
    OK(MPI_M_start(MPI_COMM_WORLD, &freed));
    OK(MPI_M_suspend(freed));
    OK(MPI_M_free(freed));
    MPI_M_msid invalid[] = {freed, m + 1 == freed ? m + 2 : m + 1, -5, MPI_M_MAX_SESSIONS, 99999};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        CHECK(MPI_M_get_info(invalid[i], MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_INVALID_MSID);
        check_every_call(invalid[i], MPI_M_INVALID_MSID, MPI_M_ALL_COMM, 1);
    }
    unsigned long row[64];
    char prefix[] = "/nonexistent-mpilens-dir/never";
    CHECK(MPI_M_get_info(MPI_M_ALL_MSID, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_get_data(MPI_M_ALL_MSID, row, row, MPI_M_ALL_COMM) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_allgather_data(MPI_M_ALL_MSID, NULL, NULL, MPI_M_ALL_COMM) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_rootgather_data(MPI_M_ALL_MSID, 0, NULL, NULL, MPI_M_ALL_COMM) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_flush(MPI_M_ALL_MSID, prefix, MPI_M_ALL_COMM) == MPI_M_INVALID_MSID);
    CHECK(MPI_M_rootflush(MPI_M_ALL_MSID, 0, prefix, MPI_M_ALL_COMM) == MPI_M_INVALID_MSID);
    check_intact("INVALID_MSID");

    /* SESSION_NOT_SUSPENDED: reading, resetting, freeing an active session, or all of them */
    OK(MPI_M_continue(m));
    check_every_call(m, MPI_M_SESSION_NOT_SUSPENDED, MPI_M_ALL_COMM, 0);
    CHECK(MPI_M_reset(MPI_M_ALL_MSID) == MPI_M_SESSION_NOT_SUSPENDED);
    CHECK(MPI_M_free(MPI_M_ALL_MSID) == MPI_M_SESSION_NOT_SUSPENDED);

    /* SESSION_STILL_ACTIVE: MPI_M_finalize leaves everything as it was */
    CHECK(MPI_M_finalize() == MPI_M_SESSION_STILL_ACTIVE);
    OK(MPI_M_suspend(m));
    check_intact("SESSION_NOT_SUSPENDED and SESSION_STILL_ACTIVE");

    /* SESSION_OVERFLOW: M plus MAX - 1 sessions on MPI_COMM_SELF fill the table */
    static MPI_M_msid extra[MPI_M_MAX_SESSIONS];
    int started = 0, rc = MPI_SUCCESS;
    while (started < MPI_M_MAX_SESSIONS && (rc = MPI_M_start(MPI_COMM_SELF, &extra[started])) == MPI_SUCCESS)
        started++;
    CHECK(rc == MPI_M_SESSION_OVERFLOW);
    CHECK(started == MPI_M_MAX_SESSIONS - 1);
    for (int i = 0; i < started; i++) {
        CHECK(MPI_M_suspend(extra[i]) == MPI_SUCCESS);
        CHECK(MPI_M_free(extra[i]) == MPI_SUCCESS);
    }
    check_intact("SESSION_OVERFLOW");

    /* INVALID_ROOT */
    unsigned long *matrix = calloc((size_t)size * (size_t)size, sizeof *matrix);
    CHECK(MPI_M_rootgather_data(m, -1, matrix, matrix, MPI_M_ALL_COMM) == MPI_M_INVALID_ROOT);
    CHECK(MPI_M_rootgather_data(m, size, matrix, matrix, MPI_M_ALL_COMM) == MPI_M_INVALID_ROOT);
    CHECK(MPI_M_rootflush(m, -1, prefix, MPI_M_ALL_COMM) == MPI_M_INVALID_ROOT);
    CHECK(MPI_M_rootflush(m, size, prefix, MPI_M_ALL_COMM) == MPI_M_INVALID_ROOT);
    check_intact("INVALID_ROOT");

    /* INVALID_ARG: null msid or file name, flags outside 1..7, a kind that is not one */
    CHECK(MPI_M_start(MPI_COMM_WORLD, NULL) == MPI_M_INVALID_ARG);
    CHECK(MPI_M_flush(m, NULL, MPI_M_ALL_COMM) == MPI_M_INVALID_ARG);
    CHECK(MPI_M_rootflush(m, 0, NULL, MPI_M_ALL_COMM) == MPI_M_INVALID_ARG);
    for (int flags = 0; flags <= 8; flags += 8) {
        CHECK(MPI_M_get_data(m, row, row, flags) == MPI_M_INVALID_ARG);
        CHECK(MPI_M_allgather_data(m, matrix, matrix, flags) == MPI_M_INVALID_ARG);
        CHECK(MPI_M_rootgather_data(m, 0, matrix, matrix, flags) == MPI_M_INVALID_ARG);
        CHECK(MPI_M_flush(m, prefix, flags) == MPI_M_INVALID_ARG);
        CHECK(MPI_M_rootflush(m, 0, prefix, flags) == MPI_M_INVALID_ARG);
    }
    CHECK(MPI_M_get_backend(MPI_M_ALL_COMM, &backend) == MPI_M_INVALID_ARG);
    CHECK(MPI_M_get_backend(MPI_M_P2P_ONLY, NULL) == MPI_M_INVALID_ARG);
    check_intact("INVALID_ARG");

    /* INTERNAL_FAIL: files in a directory that does not exist, on every rank */
    CHECK(MPI_M_flush(m, prefix, MPI_M_ALL_COMM) == MPI_M_INTERNAL_FAIL);
    CHECK(MPI_M_rootflush(m, size - 1, prefix, MPI_M_ALL_COMM) == MPI_M_INTERNAL_FAIL);
    check_intact("INTERNAL_FAIL");

    /* MISSING_INIT after MPI_M_finalize, which frees the suspended sessions */
    OK(MPI_M_finalize());
    CHECK(MPI_M_get_info(m, MPI_M_INT_IGNORE, MPI_M_INT_IGNORE) == MPI_M_MISSING_INIT);
    CHECK(MPI_M_start(MPI_COMM_WORLD, &never) == MPI_M_MISSING_INIT);
    CHECK(MPI_M_get_backend(MPI_M_P2P_ONLY, &backend) == MPI_M_MISSING_INIT);
    check_every_call(m, MPI_M_MISSING_INIT, MPI_M_ALL_COMM, 1);
    CHECK(MPI_M_finalize() == MPI_M_MISSING_INIT);

    free(matrix);
    expected_free(&known);
    return mpitest_finish();
}
