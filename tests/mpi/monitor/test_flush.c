/* MPI_M_flush and MPI_M_rootflush write the known matrices in the documented formats (read back
 * and compared character for character):
 * - flush: each process writes PREFIX.<rank>.prof, rank in the session's communicator, one line
 *   "<destination> <messages> <bytes>" per rank of the communicator;
 * - rootflush: the root writes PREFIX_counts.<rank>.prof and PREFIX_sizes.<rank>.prof, rank of
 *   the root in MPI_COMM_WORLD: one line per sending rank, values separated by single spaces.
 * Traffic over MPI_COMM_WORLD: rank i sends i + 1 messages of 3 bytes to rank i + 1 and 2 of 5
 * bytes to rank i + 2 (its own parity), then rank 0 broadcasts 5 ints. Sessions: one on
 * MPI_COMM_WORLD (flushed with P2P only, rootflushed with every kind), one on the half of the
 * rank's parity (ranks differ from world ranks: the last rank of the odd half is world rank
 * size - 1). Files go to a fresh temporary directory, removed at the end. */
#include <unistd.h>

#include "montest.h"

static int rank, size;

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *text = calloc(1, 1 << 16);
    size_t n = text ? fread(text, 1, (1 << 16) - 1, f) : 0;
    (void)n;
    fclose(f);
    return text;
}

static void check_file(const char *path, const char *want)
{
    char *got = slurp(path);
    CHECK(got != NULL);
    if (got && strcmp(got, want) != 0) {
        fprintf(stderr, "rank %d: %s holds\n%s--- expected\n%s---\n", rank, path, got, want);
        check_failures++;
    }
    free(got);
    CHECK(unlink(path) == 0);
}

/* Row r of a matrix pair in flush format. */
static void row_text(const expected_t *e, int r, char *text, size_t len)
{
    size_t at = 0;
    for (int j = 0; j < e->n; j++)
        at += (size_t)snprintf(text + at, len - at, "%d %lu %lu\n", j, e->counts[r * e->n + j], e->bytes[r * e->n + j]);
}

/* A matrix in rootflush format. */
static void matrix_text(const expected_t *e, const unsigned long *m, char *text, size_t len)
{
    size_t at = 0;
    for (int i = 0; i < e->n; i++)
        for (int j = 0; j < e->n; j++)
            at += (size_t)snprintf(text + at, len - at, "%lu%c", m[i * e->n + j], j + 1 < e->n ? ' ' : '\n');
}

/* Flushes session id (this process is rank `mine` of it) and roots a rootflush at `root`, whose
 * world rank is `root_world`; checks the files against e (flush) and all (rootflush). */
static void check_flushes(const char *dir, const char *name, MPI_M_msid id, int mine, int root, int root_world,
                          int flush_flags, const expected_t *e, const expected_t *all)
{
    char prefix[512], path[600], want[8192];
    snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
    CHECK(MPI_M_flush(id, prefix, flush_flags) == MPI_SUCCESS);
    snprintf(path, sizeof path, "%s.%d.prof", prefix, mine);
    row_text(e, mine, want, sizeof want);
    check_file(path, want);

    CHECK(MPI_M_rootflush(id, root, prefix, MPI_M_ALL_COMM) == MPI_SUCCESS);
    if (mine == root) {
        snprintf(path, sizeof path, "%s_counts.%d.prof", prefix, root_world);
        matrix_text(all, all->counts, want, sizeof want);
        check_file(path, want);
        snprintf(path, sizeof path, "%s_sizes.%d.prof", prefix, root_world);
        matrix_text(all, all->bytes, want, sizeof want);
        check_file(path, want);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(size % 2 == 0 && size <= 16);
    REQUIRE(mpitest_one_host()); /* the directory is shared through the local file system */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int halfsize = size / 2, mine = rank / 2;
    char dir[256] = "/tmp/mpilens-monitor-flush-XXXXXX";
    if (rank == 0)
        REQUIRE(mkdtemp(dir) != NULL);
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    setenv("MPILENS_MONITOR_BACKEND", "pmpi", 1);
    OK(MPI_M_init());

    MPI_M_msid world, parity;
    OK(MPI_M_start(MPI_COMM_WORLD, &world));
    OK(MPI_M_start(half, &parity));
    char out[5] = {0}, in[16 + 2][5];
    int ints[5] = {0};
    MPI_Request r[2 * 16 + 4];
    int n = 0;
    for (int m = 0; m < (rank + size - 1) % size + 1; m++) /* what rank - 1 sends me */
        MPI_Irecv(in[m], 3, MPI_CHAR, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &r[n++]);
    for (int m = 0; m < 2; m++)
        MPI_Irecv(in[16 + m], 5, MPI_CHAR, (rank + size - 2) % size, 2, MPI_COMM_WORLD, &r[n++]);
    for (int m = 0; m < rank + 1; m++)
        MPI_Isend(out, 3, MPI_CHAR, (rank + 1) % size, 1, MPI_COMM_WORLD, &r[n++]);
    for (int m = 0; m < 2; m++)
        MPI_Isend(out, 5, MPI_CHAR, (rank + 2) % size, 2, MPI_COMM_WORLD, &r[n++]);
    wait_all(n, r);
    MPI_Bcast(ints, 5, MPI_INT, 0, MPI_COMM_WORLD);
    OK(MPI_M_suspend(MPI_M_ALL_MSID));

    expected_t p2p = expected_new(size), all = expected_new(size), in_half = expected_new(halfsize);
    for (int i = 0; i < size; i++) {
        expect(&p2p, i, (i + 1) % size, (unsigned long)i + 1, 3 * ((unsigned long)i + 1));
        expect(&p2p, i, (i + 2) % size, 2, 10);
        expect(&all, i, (i + 1) % size, (unsigned long)i + 1, 3 * ((unsigned long)i + 1));
        expect(&all, i, (i + 2) % size, 2, 10);
        if (i > 0)
            expect(&all, 0, i, 1, 5 * sizeof(int));
    }
    for (int k = 0; k < halfsize; k++) {
        expect(&in_half, k, (k + 1) % halfsize, 2, 10);
        if (rank % 2 == 0 && k > 0)
            expect(&in_half, 0, k, 1, 5 * sizeof(int));
    }
    check_flushes(dir, "world", world, rank, size - 1, size - 1, MPI_M_P2P_ONLY, &p2p, &all);
    /* the two halves write their files at once: the prefixes must not clash */
    check_flushes(dir, rank % 2 ? "odd" : "even", parity, mine, halfsize - 1, size - 2 + rank % 2, MPI_M_ALL_COMM,
                  &in_half, &in_half);

    expected_free(&p2p);
    expected_free(&all);
    expected_free(&in_half);
    OK(MPI_M_free(MPI_M_ALL_MSID));
    OK(MPI_M_finalize());
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK(rmdir(dir) == 0); /* fails if a file was left over */
    return mpitest_finish();
}
