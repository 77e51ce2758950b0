/* mpilens-example-cg: conjugate gradients on a 3-D Poisson problem (docs/examples.md).
 *
 * The 7-point Laplacian on an nx x ny x nz grid with zero boundary values, split over a 2-D process
 * grid in y and z (one dimension at 2 ranks). Every iteration exchanges the halo of the search
 * direction with its up to 4 neighbours (MPI_Irecv, MPI_Isend, one MPI_Waitall) and forms two dot
 * products (MPI_Allreduce). The local grid is small, so communication dominates: the pattern of
 * SMG2000, whose piggyback overhead the seed paper found largest.
 *
 * With --wildcard every receive takes MPI_ANY_SOURCE and MPI_ANY_TAG into a scratch buffer of its
 * own, and each halo is filled after MPI_Waitall from the source and tag in the statuses, so the
 * result is bit-identical to that of specific receives. Only MPI is used: this program is the
 * application that PMPI layers under test intercept. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, when built with -std=c11 alone */
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM "mpilens-example-cg"
#define MAX_CELLS 4096 /* per dimension */
#define SIDES 4
#define REPLACE_EVERY 50

static const char usage_line[] = "usage: " PROGRAM
                                 " [--n N | --nx N --ny N --nz N] [--iterations N] [--tolerance T] [--repeat R]"
                                 " [--wildcard] [--help]";

typedef struct {
    int nx, ny, nz, iterations, repeat, wildcard;
    double tolerance;
} options_t;

/* Sides of the local block, paired so that side ^ 1 is the opposite one. */
enum { SOUTH, NORTH, DOWN, UP };

/* The block of cells this rank holds, with one ghost layer all around: index (k * sy) + (j * sx) + i
 * for i in [1, nx], j in [1, ly], k in [1, lz]. Ghosts at the domain boundary stay zero. */
typedef struct {
    int rank;
    int nx, ly, lz;      /* cells held here; all nx cells of x */
    int gy0, gz0;        /* global index of the first cell held here in y and z */
    size_t sx, sy, size; /* strides and length of a vector with its ghosts */
} grid_t;

/* One halo exchange: what goes to and comes from each side. */
typedef struct {
    int neighbour[SIDES];   /* MPI_PROC_NULL at the domain boundary */
    int count[SIDES];       /* cells on each face */
    size_t *inner[SIDES];   /* cells sent across each side, in an order both ranks agree on */
    size_t *ghost[SIDES];   /* ghost cells filled from each side, in the same order */
    double *sendbuf[SIDES];
    double *recvbuf[SIDES]; /* one per receive request, each as long as the longest face */
    int longest, wildcard;
} halo_t;

/* ---------------------------------------------------------------- options */

/* Every rank parses the same command line, so all of them come here together; rank 0 speaks. */
_Noreturn static void exit_usage(int rank, const char *fmt, ...)
{
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fputs(PROGRAM ": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n%s\n", usage_line);
    }
    MPI_Finalize();
    exit(2);
}

_Noreturn static void exit_help(int rank)
{
    if (rank == 0)
        printf("%s\n"
               "Conjugate gradients on a 3-D Poisson problem (docs/examples.md).\n"
               "  --n N             cells in x, y and z (default 32)\n"
               "  --nx/--ny/--nz N  cells in one dimension, 1 to %d\n"
               "  --iterations N    CG iterations (default 3000)\n"
               "  --tolerance T     stop earlier once |r|/|b| <= T (default 0: never)\n"
               "  --repeat R        solve R times, print the shortest time (default 1)\n"
               "  --wildcard        receive with MPI_ANY_SOURCE and MPI_ANY_TAG\n"
               "Prints on rank 0: checksum <%%a of the solution sum>, time_s <seconds>,\n"
               "residual <|b - Ax| / |b|>.\n",
               usage_line, MAX_CELLS);
    MPI_Finalize();
    exit(0);
}

static int parse_int(int rank, const char *name, const char *text, int min, int max)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max)
        exit_usage(rank, "invalid value \"%s\" for --%s: expected an integer from %d to %d", text, name, min, max);
    return (int)value;
}

static double parse_tolerance(int rank, const char *text)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end || !(value >= 0.0 && value < 1.0))
        exit_usage(rank, "invalid value \"%s\" for --tolerance: expected a number from 0 to below 1", text);
    return value;
}

/* The value of option argv[*a]: after its "=", or the next argument. */
static const char *option_value(int rank, int argc, char **argv, int *a, const char *equals, const char *option)
{
    if (equals)
        return equals + 1;
    if (*a + 1 >= argc)
        exit_usage(rank, "missing value for --%s", option);
    return argv[++*a];
}

static void parse_options(int rank, int argc, char **argv, options_t *o)
{
    *o = (options_t){.nx = 32, .ny = 32, .nz = 32, .iterations = 3000, .repeat = 1};
    for (int a = 1; a < argc; a++) {
        if (strncmp(argv[a], "--", 2) != 0)
            exit_usage(rank, "unexpected argument \"%s\" (options start with --)", argv[a]);
        const char *name = argv[a] + 2, *equals = strchr(name, '=');
        size_t len = equals ? (size_t)(equals - name) : strlen(name);
        char option[64];
        snprintf(option, sizeof option, "%.*s", (int)len, name);
        if (strcmp(option, "help") == 0)
            exit_help(rank);
        if (strcmp(option, "wildcard") == 0) {
            if (equals)
                exit_usage(rank, "--wildcard takes no value");
            o->wildcard = 1;
            continue;
        }
        if (strcmp(option, "tolerance") == 0) {
            o->tolerance = parse_tolerance(rank, option_value(rank, argc, argv, &a, equals, option));
            continue;
        }
        /* --n, without a destination of its own, sets all three sizes; a later option wins. */
        struct { const char *name; int *dest; int min, max; } ints[] = {
            {"n", NULL, 1, MAX_CELLS},    {"nx", &o->nx, 1, MAX_CELLS},
            {"ny", &o->ny, 1, MAX_CELLS}, {"nz", &o->nz, 1, MAX_CELLS},
            {"iterations", &o->iterations, 1, 100000000}, {"repeat", &o->repeat, 1, 10000},
        };
        size_t i = 0;
        while (i < sizeof ints / sizeof ints[0] && strcmp(ints[i].name, option) != 0)
            i++;
        if (i == sizeof ints / sizeof ints[0])
            exit_usage(rank, "unknown option --%s (see --help)", option);
        int v = parse_int(rank, option, option_value(rank, argc, argv, &a, equals, option), ints[i].min, ints[i].max);
        if (ints[i].dest)
            *ints[i].dest = v;
        else
            o->nx = o->ny = o->nz = v;
    }
}

/* ---------------------------------------------------------------- decomposition */

static void *allocate(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, PROGRAM ": cannot allocate %zu bytes\n", count * size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Cells [first, first + count) of n, when n is split into nearly equal parts. */
static void split(int n, int parts, int part, int *count, int *first)
{
    int base = n / parts, extra = n % parts;
    *count = base + (part < extra);
    *first = part * base + (part < extra ? part : extra);
}

/* Lists the cells of the layer at j = layer (sides SOUTH, NORTH) or k = layer (DOWN, UP). */
static size_t *layer_cells(const grid_t *g, int side, int layer)
{
    int y_side = side == SOUTH || side == NORTH;
    int rows = y_side ? g->lz : g->ly;
    size_t *cells = allocate((size_t)rows * g->nx, sizeof(size_t)), n = 0;
    for (int r = 1; r <= rows; r++)
        for (int i = 1; i <= g->nx; i++)
            cells[n++] = y_side ? r * g->sy + layer * g->sx + i : layer * g->sy + r * g->sx + i;
    return cells;
}

static void halo_init(halo_t *h, const grid_t *g, int py, int pz, int wildcard)
{
    int cy = g->rank % py, cz = g->rank / py;
    h->neighbour[SOUTH] = cy > 0 ? g->rank - 1 : MPI_PROC_NULL;
    h->neighbour[NORTH] = cy < py - 1 ? g->rank + 1 : MPI_PROC_NULL;
    h->neighbour[DOWN] = cz > 0 ? g->rank - py : MPI_PROC_NULL;
    h->neighbour[UP] = cz < pz - 1 ? g->rank + py : MPI_PROC_NULL;
    const int inner_layer[SIDES] = {1, g->ly, 1, g->lz}, ghost_layer[SIDES] = {0, g->ly + 1, 0, g->lz + 1};
    h->count[SOUTH] = h->count[NORTH] = g->nx * g->lz;
    h->count[DOWN] = h->count[UP] = g->nx * g->ly;
    h->longest = h->count[SOUTH] > h->count[DOWN] ? h->count[SOUTH] : h->count[DOWN];
    h->wildcard = wildcard;
    for (int side = 0; side < SIDES; side++) {
        h->inner[side] = layer_cells(g, side, inner_layer[side]);
        h->ghost[side] = layer_cells(g, side, ghost_layer[side]);
        h->sendbuf[side] = allocate((size_t)h->count[side], sizeof(double));
        h->recvbuf[side] = allocate((size_t)h->longest, sizeof(double));
    }
}

static void halo_free(halo_t *h)
{
    for (int side = 0; side < SIDES; side++) {
        free(h->inner[side]);
        free(h->ghost[side]);
        free(h->sendbuf[side]);
        free(h->recvbuf[side]);
    }
}

static void grid_init(grid_t *g, halo_t *h, const options_t *o)
{
    int size, dims[2] = {0, 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int pz = dims[0], py = dims[1];
    if (o->ny < py || o->nz < pz)
        exit_usage(g->rank, "--ny %d --nz %d is too small for the %dx%d process grid of %d ranks", o->ny, o->nz, py,
                   pz, size);
    g->nx = o->nx;
    split(o->ny, py, g->rank % py, &g->ly, &g->gy0);
    split(o->nz, pz, g->rank / py, &g->lz, &g->gz0);
    g->sx = (size_t)g->nx + 2;
    g->sy = g->sx * ((size_t)g->ly + 2);
    g->size = g->sy * ((size_t)g->lz + 2);
    halo_init(h, g, py, pz, o->wildcard);
}

/* ---------------------------------------------------------------- halo exchange */

/* The side a wildcard receive came from, known from its status: a neighbour sends with the tag of
 * the side it sends across, so what comes from our side s carries the tag of the opposite side. */
static int side_of(const halo_t *h, const MPI_Status *status)
{
    for (int side = 0; side < SIDES; side++)
        if (h->neighbour[side] == status->MPI_SOURCE && (side ^ 1) == status->MPI_TAG)
            return side;
    fprintf(stderr, PROGRAM ": unexpected message from rank %d with tag %d\n", status->MPI_SOURCE, status->MPI_TAG);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return -1;
}

static void check_count(const halo_t *h, const MPI_Status *status, int side)
{
    int count;
    MPI_Get_count(status, MPI_DOUBLE, &count);
    if (count != h->count[side]) {
        fprintf(stderr, PROGRAM ": halo from rank %d has %d values, expected %d\n", status->MPI_SOURCE, count,
                h->count[side]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Fills the ghost cells of v from the neighbours: receives are posted first, then the sends, and
 * one MPI_Waitall completes them all. */
static void exchange(halo_t *h, double *v)
{
    MPI_Request requests[2 * SIDES];
    MPI_Status statuses[2 * SIDES];
    int from[SIDES], nrecv = 0, nreq;
    for (int side = 0; side < SIDES; side++) {
        if (h->neighbour[side] == MPI_PROC_NULL)
            continue;
        if (h->wildcard)
            MPI_Irecv(h->recvbuf[nrecv], h->longest, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &requests[nrecv]);
        else
            MPI_Irecv(h->recvbuf[nrecv], h->count[side], MPI_DOUBLE, h->neighbour[side], side ^ 1, MPI_COMM_WORLD,
                      &requests[nrecv]);
        from[nrecv++] = side;
    }
    nreq = nrecv;
    for (int side = 0; side < SIDES; side++) {
        if (h->neighbour[side] == MPI_PROC_NULL)
            continue;
        for (int c = 0; c < h->count[side]; c++)
            h->sendbuf[side][c] = v[h->inner[side][c]];
        MPI_Isend(h->sendbuf[side], h->count[side], MPI_DOUBLE, h->neighbour[side], side, MPI_COMM_WORLD,
                  &requests[nreq++]);
    }
    MPI_Waitall(nreq, requests, statuses);
    for (int r = 0; r < nrecv; r++) {
        int side = h->wildcard ? side_of(h, &statuses[r]) : from[r];
        check_count(h, &statuses[r], side);
        for (int c = 0; c < h->count[side]; c++)
            v[h->ghost[side][c]] = h->recvbuf[r][c];
    }
}

/* ---------------------------------------------------------------- the solver */

/* Visits the cells held here, without ghosts, in one fixed order. */
#define FOR_CELLS(g, c)                                                                                            \
    for (int k_ = 1; k_ <= (g)->lz; k_++)                                                                          \
        for (int j_ = 1; j_ <= (g)->ly; j_++)                                                                      \
            for (size_t c = k_ * (g)->sy + j_ * (g)->sx + 1, end_ = c + (size_t)(g)->nx; c < end_; c++)

/* out = A v, with A the 7-point Laplacian (6 on the diagonal); v's ghosts must be current. */
static void laplacian(const grid_t *g, const double *v, double *out)
{
    const size_t sx = g->sx, sy = g->sy;
    FOR_CELLS(g, c) {
        out[c] = 6.0 * v[c] - v[c - 1] - v[c + 1] - v[c - sx] - v[c + sx] - v[c - sy] - v[c + sy];
    }
}

static double dot(const grid_t *g, const double *a, const double *b)
{
    double local = 0.0, global;
    FOR_CELLS(g, c) {
        local += a[c] * b[c];
    }
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

/* A right-hand side without symmetry, so that a halo put on the wrong side changes the result;
 * small integers, so that it is exact. */
static void rhs(const grid_t *g, double *b)
{
    for (int k = 1; k <= g->lz; k++)
        for (int j = 1; j <= g->ly; j++)
            for (int i = 1; i <= g->nx; i++)
                b[k * g->sy + j * g->sx + i] = 1.0 + (i - 1 + 2 * (g->gy0 + j - 1) + 3 * (g->gz0 + k - 1)) % 7;
}

typedef struct {
    double *b, *x, *r, *p, *q;
} vectors_t;

/* r = b - Ax, computed anew from x. */
static void true_residual(const grid_t *g, halo_t *h, vectors_t *v)
{
    exchange(h, v->x);
    laplacian(g, v->x, v->q);
    FOR_CELLS(g, c) {
        v->r[c] = v->b[c] - v->q[c];
    }
}

/* Conjugate gradients from x = 0; returns |b - Ax| / |b|. Every REPLACE_EVERY iterations the
 * residual is recomputed from x (residual replacement, van der Vorst and Ye 2000): once x is as
 * good as floating point allows, the recurrence's residual would go on shrinking regardless, into
 * subnormal numbers that make each iteration many times slower. With it, any --iterations runs
 * at the same cost per iteration. */
static double solve(const grid_t *g, halo_t *h, vectors_t *v, const options_t *o)
{
    memset(v->x, 0, g->size * sizeof(double));
    memcpy(v->r, v->b, g->size * sizeof(double));
    memcpy(v->p, v->b, g->size * sizeof(double));
    double rr = dot(g, v->r, v->r), bnorm = sqrt(rr);
    /* An exactly zero residual means solved: going on would divide by zero. */
    for (int it = 1; it <= o->iterations && rr > 0.0 && sqrt(rr) > o->tolerance * bnorm; it++) {
        exchange(h, v->p);
        laplacian(g, v->p, v->q);
        double alpha = rr / dot(g, v->p, v->q);
        FOR_CELLS(g, c) {
            v->x[c] += alpha * v->p[c];
            v->r[c] -= alpha * v->q[c];
        }
        if (it % REPLACE_EVERY == 0)
            true_residual(g, h, v);
        double rr_next = dot(g, v->r, v->r), beta = rr_next / rr;
        rr = rr_next;
        FOR_CELLS(g, c) {
            v->p[c] = v->r[c] + beta * v->p[c];
        }
    }
    true_residual(g, h, v);
    return sqrt(dot(g, v->r, v->r)) / bnorm;
}

/* ---------------------------------------------------------------- results */

/* The sum of the solution; the MPI library adds the ranks' parts in an order fixed for a given
 * number of ranks, as it does for the dot products. */
static double checksum(const grid_t *g, const double *x)
{
    double local = 0.0, global = 0.0;
    FOR_CELLS(g, c) {
        local += x[c];
    }
    MPI_Reduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    return global;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wall time of one solve: that of its slowest rank, on rank 0. */
static double timed_solve(const grid_t *g, halo_t *h, vectors_t *v, const options_t *o, double *residual)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    *residual = solve(g, h, v, o);
    double mine = now() - start, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    options_t opt;
    grid_t grid;
    halo_t halo;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    parse_options(rank, argc, argv, &opt);
    grid_init(&grid, &halo, &opt);
    vectors_t v;
    double **all[] = {&v.b, &v.x, &v.r, &v.p, &v.q};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        *all[i] = allocate(grid.size, sizeof(double));
    rhs(&grid, v.b);

    double best = 0.0, residual = 0.0;
    for (int r = 0; r < opt.repeat; r++) {
        double t = timed_solve(&grid, &halo, &v, &opt, &residual);
        best = r == 0 || t < best ? t : best;
    }
    double sum = checksum(&grid, v.x);
    if (rank == 0)
        printf("checksum %a\ntime_s %.9f\nresidual %.17g\n", sum, best, residual);

    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(*all[i]);
    halo_free(&halo);
    MPI_Finalize();
    return 0;
}
