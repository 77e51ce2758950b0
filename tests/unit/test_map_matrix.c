/* Communication matrices against known sums: entries added and merged, dense input, the
 * symmetrised graph (weight(i, j) = bytes(i -> j) + bytes(j -> i)), the three file formats
 * (tests/data/map: ring.csv, small.mat, general.mtx, symmetric.mtx) and what makes each of them
 * wrong, and a 65536-process 3-D stencil whose every entry is known. argv[1]: tests/data/map. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mapunit.h"

static void check_sums(const mpilens_map_matrix_t *m, int order, size_t nonzeros, double total)
{
    int o = -1;
    size_t n = 0;
    double t = -1;
    CHECK(mpilens_map_matrix_order(m, &o) == MPILENS_MAP_OK && o == order);
    CHECK(mpilens_map_matrix_nonzeros(m, &n) == MPILENS_MAP_OK && n == nonzeros);
    CHECK(mpilens_map_matrix_total(m, &t) == MPILENS_MAP_OK);
    CHECK_NEAR(t, total, 0);
}

/* Row r of the graph is exactly these columns and weights, in column order. */
static void check_row(const mpilens_map_matrix_t *m, int r, int columns, const int *column, const double *weight)
{
    CHECK(m->row_start != NULL);
    if (!m->row_start)
        return;
    size_t start = m->row_start[r], end = m->row_start[r + 1];
    CHECK(end - start == (size_t)columns);
    for (int k = 0; k < columns && start + (size_t)k < end; k++) {
        CHECK(m->column[start + (size_t)k] == column[k]);
        CHECK_NEAR(m->weight[start + (size_t)k], weight[k], 0);
    }
}

static void test_add_and_merge(void)
{
    mpilens_map_matrix_t *m;
    CHECK(mpilens_map_matrix_create(4, &m) == MPILENS_MAP_OK);
    check_sums(m, 4, 0, 0);
    CHECK(mpilens_map_matrix_add(m, 2, 0, 5) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 1, 3) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 1, 0, 4) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 1, 1, 9) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 1, 1) == MPILENS_MAP_OK); /* a repeated pair adds up */
    CHECK(mpilens_map_matrix_add(m, 3, 2, 0) == MPILENS_MAP_OK); /* nothing sent: no entry */
    check_sums(m, 4, 4, 22);
    /* merged: sorted by (from, to), one entry per pair */
    static const int from[] = {0, 1, 1, 2}, to[] = {1, 0, 1, 0};
    static const double bytes[] = {4, 4, 9, 5};
    CHECK(m->merged && m->count == 4);
    for (size_t e = 0; e < 4 && e < m->count; e++)
        CHECK(m->from[e] == from[e] && m->to[e] == to[e] && m->bytes[e] == bytes[e]);

    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK);
    size_t *built = m->row_start;
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK && m->row_start == built); /* idempotent */
    CHECK(m->row_start && m->row_start[4] == 4);
    check_row(m, 0, 2, (int[]){1, 2}, (double[]){8, 5}); /* 4 + 4 both ways; the diagonal is left out */
    check_row(m, 1, 1, (int[]){0}, (double[]){8});
    check_row(m, 2, 1, (int[]){0}, (double[]){5});
    check_row(m, 3, 0, NULL, NULL);

    /* adding drops the graph, which then includes the new entry */
    CHECK(mpilens_map_matrix_add(m, 3, 0, 2.5) == MPILENS_MAP_OK);
    CHECK(m->row_start == NULL && !m->merged);
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK);
    check_row(m, 0, 3, (int[]){1, 2, 3}, (double[]){8, 5, 2.5});
    check_row(m, 3, 1, (int[]){0}, (double[]){2.5});
    check_sums(m, 4, 5, 24.5);

    /* bad arguments change nothing */
    CHECK(mpilens_map_matrix_add(m, -1, 0, 1) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(m, 0, 4, 1) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(m, 0, 1, -1) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(m, 0, 1, NAN) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(m, 0, 1, INFINITY) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_add(NULL, 0, 1, 1) == MPILENS_MAP_ERR_ARG);
    check_sums(m, 4, 5, 24.5);
    mpilens_map_matrix_free(m);

    mpilens_map_matrix_t *untouched = NULL;
    CHECK(mpilens_map_matrix_create(0, &untouched) == MPILENS_MAP_ERR_ARG && untouched == NULL);
    CHECK(mpilens_map_matrix_create(-3, &untouched) == MPILENS_MAP_ERR_ARG && untouched == NULL);
    CHECK(mpilens_map_matrix_create(3, NULL) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_free(NULL) == MPILENS_MAP_OK);

    /* thousands of entries on few pairs: growth and merging at scale */
    CHECK(mpilens_map_matrix_create(3, &m) == MPILENS_MAP_OK);
    for (int i = 0; i < 3000; i++)
        CHECK(mpilens_map_matrix_add(m, i % 3, (i / 3) % 3, 1) == MPILENS_MAP_OK);
    check_sums(m, 3, 9, 3000);
    mpilens_map_matrix_free(m);
}

static void test_dense(void)
{
    const unsigned long values[] = {0, 5, 0, 1, 0, 2, 0, 0, 9};
    mpilens_map_matrix_t *m;
    CHECK(mpilens_map_matrix_from_dense(3, values, &m) == MPILENS_MAP_OK);
    check_sums(m, 3, 4, 17);
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK);
    check_row(m, 0, 1, (int[]){1}, (double[]){6});
    check_row(m, 1, 2, (int[]){0, 2}, (double[]){6, 2});
    check_row(m, 2, 1, (int[]){1}, (double[]){2});
    mpilens_map_matrix_free(m);

    const unsigned long zeros[4] = {0};
    CHECK(mpilens_map_matrix_from_dense(2, zeros, &m) == MPILENS_MAP_OK);
    check_sums(m, 2, 0, 0);
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK && m->row_start[2] == 0);
    mpilens_map_matrix_free(m);
    CHECK(mpilens_map_matrix_from_dense(0, zeros, &m) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_from_dense(2, NULL, &m) == MPILENS_MAP_ERR_ARG);
}

static mpilens_map_matrix_t *load(const char *path, int expected_status)
{
    mpilens_map_matrix_t *m = NULL;
    int status = mpilens_map_matrix_load(path, &m);
    if (status != expected_status)
        fprintf(stderr, "loading %s gave %d (%s), expected %d\n", path, status, mpilens_map_status_string(status),
                expected_status);
    CHECK(status == expected_status);
    CHECK((m != NULL) == (expected_status == MPILENS_MAP_OK));
    return m;
}

static void test_files(void)
{
    /* header, blanks around fields, a repeated pair, a self message, a zero line that still
     * names rank 5 */
    mpilens_map_matrix_t *m = load(data_path("ring.csv"), MPILENS_MAP_OK);
    check_sums(m, 6, 5, 1057);
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK);
    check_row(m, 0, 2, (int[]){1, 3}, (double[]){150, 400});
    check_row(m, 3, 2, (int[]){0, 2}, (double[]){400, 300});
    check_row(m, 5, 0, NULL, NULL);
    mpilens_map_matrix_free(m);

    m = load(data_path("small.mat"), MPILENS_MAP_OK);
    check_sums(m, 3, 4, 17);
    CHECK(ml_map_matrix_graph(m) == MPILENS_MAP_OK);
    check_row(m, 1, 2, (int[]){0, 2}, (double[]){6, 2});
    mpilens_map_matrix_free(m);

    m = load(data_path("general.mtx"), MPILENS_MAP_OK);
    check_sums(m, 4, 3, 22);
    CHECK(m->count == 3 && m->from[0] == 0 && m->to[0] == 1 && m->bytes[0] == 16);
    mpilens_map_matrix_free(m);

    m = load(data_path("symmetric.mtx"), MPILENS_MAP_OK);
    check_sums(m, 3, 3, 5);
    CHECK(m->count == 3 && m->from[0] == 0 && m->to[0] == 1 && m->bytes[0] == 1.5);
    mpilens_map_matrix_free(m);

    /* What MPI_M_rootflush writes, and a CSV without header or count, with CRLF line ends. */
    m = load(scratch_file("ok.mat", "0 10\n20 0\n"), MPILENS_MAP_OK);
    if (m)
        check_sums(m, 2, 2, 30);
    mpilens_map_matrix_free(m);
    m = load(scratch_file("ok.csv", "0,2,1.5\r\n2,0,2e3\r\n"), MPILENS_MAP_OK);
    if (m)
        check_sums(m, 3, 2, 2001.5);
    mpilens_map_matrix_free(m);
    /* the largest rank that keeps the order an int */
    m = load(scratch_file("big.csv", "2147483646,0,1\n"), MPILENS_MAP_OK);
    CHECK(m && m->order == 2147483647);
    mpilens_map_matrix_free(m);
}

static void test_file_errors(void)
{
    static const struct {
        const char *name, *text;
    } bad[] = {
        {"empty.csv", ""},
        {"blank.csv", "\n  \n"},
        {"header_only.csv", "sender,receiver,bytes\n"},
        {"word.csv", "0,1,abc\n"},
        {"negative.csv", "0,1,-5\n"},
        {"negative_rank.csv", "-1,1,5\n"},
        {"fraction_rank.csv", "0.5,1,5\n"},
        {"two_fields.csv", "0,1\n"},
        {"five_fields.csv", "0,1,2,3,4\n"},
        {"late_header.csv", "0,1,2\nsender,receiver,bytes\n"},
        {"nan.csv", "0,1,nan\n"},
        {"trailing.csv", "0,1,2 x\n"},
        {"rank_2_31.csv", "2147483647,0,1\n"},
        {"huge_rank.csv", "0,99999999999,1\n"},
        {"ragged.mat", "0 1 2\n1 0\n2 1 0\n"},
        {"wide.mat", "0 1 2\n1 0 1\n"},
        {"tall.mat", "0 1\n1 0\n1 1\n"},
        {"word.mat", "0 1\n1 x\n"},
        {"negative.mat", "0 -1\n1 0\n"},
        {"pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n"},
        {"array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n"},
        {"skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 1\n"},
        {"rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 2 1\n"},
        {"no_size.mtx", "%%MatrixMarket matrix coordinate real general\n% nothing else\n"},
        {"zero_index.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n0 1 1\n"},
        {"beyond.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n"},
        {"short.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 1\n"},
        {"long.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n2 1 1\n"},
        {"negative.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 -1\n"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        load(scratch_file(bad[i].name, bad[i].text), MPILENS_MAP_ERR_FORMAT);
        unlink(scratch_path(bad[i].name));
    }
    load(data_path("no such file.csv"), MPILENS_MAP_ERR_IO);
    load(data_dir, MPILENS_MAP_ERR_IO);
    mpilens_map_matrix_t *m;
    CHECK(mpilens_map_matrix_load(NULL, &m) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_matrix_load(data_path("ring.csv"), NULL) == MPILENS_MAP_ERR_ARG);
}

/* A periodic 64 x 32 x 32 grid, 65536 processes, each sending 1000 + d bytes in direction d
 * (x+, x-, y+, y-, z+, z-): 393216 lines. Weight of each edge: the two directions of its axis,
 * 2001, 2005 or 2009. */
enum { NX = 64, NY = 32, NZ = 32, PROCESSES = NX * NY * NZ };

static int neighbour(int p, int d)
{
    int x = p % NX, y = (p / NX) % NY, z = p / (NX * NY), step = d % 2 ? -1 : 1;
    if (d / 2 == 0)
        x = (x + step + NX) % NX;
    else if (d / 2 == 1)
        y = (y + step + NY) % NY;
    else
        z = (z + step + NZ) % NZ;
    return x + NX * (y + NY * z);
}

static void test_stencil(void)
{
    const char *path = scratch_path("stencil.csv");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("sender,receiver,bytes,count\n", f);
    for (int p = 0; p < PROCESSES; p++)
        for (int d = 0; d < 6; d++)
            fprintf(f, "%d,%d,%d,1\n", p, neighbour(p, d), 1000 + d);
    fclose(f);
    mpilens_map_matrix_t *m = load(path, MPILENS_MAP_OK);
    unlink(path);
    if (!m)
        return;
    check_sums(m, PROCESSES, 6 * (size_t)PROCESSES, (double)PROCESSES * 6015);
    int built = ml_map_matrix_graph(m) == MPILENS_MAP_OK;
    CHECK(built);
    if (built) {
        CHECK(m->row_start[PROCESSES] == 6 * (size_t)PROCESSES);
        double sum = 0;
        for (size_t k = 0; k < m->row_start[PROCESSES]; k++)
            sum += m->weight[k];
        CHECK_NEAR(sum, 2.0 * PROCESSES * 6015, 0);
        /* process 0 (0,0,0): x neighbours 1 and 63, y 64 and 1984, z 2048 and 63488 */
        check_row(m, 0, 6, (int[]){1, 63, 64, 1984, 2048, 63488}, (double[]){2001, 2001, 2005, 2005, 2009, 2009});
    }
    mpilens_map_matrix_free(m);
}

int main(int argc, char **argv)
{
    if (mapunit_start(argc, argv))
        return 2;
    test_add_and_merge();
    test_dense();
    test_files();
    test_file_errors();
    test_stencil();
    mapunit_end();
    CHECK_DONE();
}
