/* 2-D halo exchange with MPI_Sendrecv on a periodic ROWS x COLS grid of MPI_COMM_WORLD's ranks
 * (2 x P/2, or 1 x P when P is 2 or odd), row-major. Each of ITERS steps sends, in each dimension,
 * one message to the neighbour at +1 and one to the neighbour at -1: ROW_HALO doubles along a
 * row, COL_HALO doubles along a column. The neighbours are worked out here from coordinates,
 * independently of MPI's topology functions. With one row, a rank's neighbours along the column
 * are itself (counted: messages to oneself are), and with two rows or two columns the +1 and -1
 * neighbours are the same rank, which gets both messages. */
#include "montest.h"

enum { ITERS = 4, ROW_HALO = 6, COL_HALO = 4 };

static int rows, cols;

/* The rank at displacement `step` from `rank` along dimension `dim` (0: across rows, 1: across
 * columns). */
static int neighbour(int rank, int dim, int step)
{
    int i = rank / cols, j = rank % cols;
    if (dim == 0)
        i = (i + step + rows) % rows;
    else
        j = (j + step + cols) % cols;
    return i * cols + j;
}

/* Doubles sent along a dimension: moving across rows carries a row's worth. */
static int halo(int dim) { return dim == 0 ? ROW_HALO : COL_HALO; }

int main(int argc, char **argv)
{
    int rank, size;
    mpitest_init(&argc, &argv, &rank, &size);
    rows = size % 2 == 0 && size > 2 ? 2 : 1;
    cols = size / rows;
    OK(MPI_M_init());

    MPI_M_msid id;
    OK(MPI_M_start(MPI_COMM_WORLD, &id));
    double out[ROW_HALO] = {0}, in[ROW_HALO];
    for (int it = 0; it < ITERS; it++)
        for (int dim = 0; dim < 2; dim++)
            for (int step = -1; step <= 1; step += 2)
                MPI_Sendrecv(out, halo(dim), MPI_DOUBLE, neighbour(rank, dim, step), dim, in, halo(dim), MPI_DOUBLE,
                             neighbour(rank, dim, -step), dim, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    OK(MPI_M_suspend(id));

    expected_t grid = expected_new(size);
    for (int r = 0; r < size; r++)
        for (int dim = 0; dim < 2; dim++)
            for (int step = -1; step <= 1; step += 2)
                expect(&grid, r, neighbour(r, dim, step), ITERS, ITERS * halo(dim) * sizeof(double));
    check_matrices("halo", id, MPI_M_P2P_ONLY, &grid);
    check_matrices("halo, every kind", id, MPI_M_ALL_COMM, &grid);

    expected_free(&grid);
    OK(MPI_M_free(id));
    OK(MPI_M_finalize());
    return mpitest_finish();
}
