/* mpilens-example-sweep: a Sweep3D-like discrete-ordinates wavefront sweep (docs/examples.md).
 *
 * The nx x ny x nz grid is split over a 2-D process grid in x and y; every rank holds all its z
 * planes. Each of the 8 octants of directions enters the grid at one corner and crosses the ranks
 * diagonally: a rank receives the faces of its upstream neighbours (blocking MPI_Recv), updates a
 * block of --kblock planes and sends its downstream faces (blocking MPI_Send), so that its
 * neighbours start before it has finished all its planes: the pipelined wavefront of Sweep3D.
 * Source iteration repeats the 8 sweeps --iterations times.
 *
 * Every cell is updated from the same operands in the same order whatever the decomposition, and
 * the checksum is formed in a fixed global order, so the output is bit-identical at any number of
 * ranks, for any --kblock, and with --wildcard. Only MPI is used: this program is the application
 * that PMPI layers under test intercept. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, when built with -std=c11 alone */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROGRAM "mpilens-example-sweep"
#define OCTANTS 8
#define ANGLES 6       /* per octant: the S6 level-symmetric set */
#define MAX_CELLS 4096 /* per dimension */
#define SCATTERING 0.5 /* scattering cross-section; the total one is 1 or 1.5 */

static const char usage_line[] =
    "usage: " PROGRAM " [--n N | --nx N --ny N --nz N] [--kblock K] [--iterations N] [--repeat R]"
    " [--wildcard] [--help] [--version]";
#include "example_options.h"

typedef struct {
    int nx, ny, nz, kblock, iterations, repeat, wildcard;
} options_t;

/* The process grid and the block of cells this rank holds. */
typedef struct {
    int rank;
    int nx, ny, nz;               /* global cells */
    int lx, ly;                   /* cells held here in x and y (all nz planes are held) */
    int gx0, gy0;                 /* global index of the first cell held here */
    int west, east, south, north; /* neighbour ranks, MPI_PROC_NULL at the boundary */
} grid_t;

/* Messages that arrived before the receive they belong to (only with --wildcard). */
typedef struct {
    int source, tag, count;
    double *data;
} parcel_t;

typedef struct {
    parcel_t *early; /* in arrival order */
    int n, capacity;
    double *scratch; /* where every wildcard receive lands */
    int scratch_count;
} mailbox_t;

/* One face a rank waits for before it can sweep a block. */
typedef struct {
    int source, tag, count;
    double *dest;
} expected_t;

typedef struct {
    double *qext, *sigt, *src, *phi; /* per cell, index (k * ly + j) * lx + i */
    double *xface;                   /* [angle][plane of the block][j]: in, then out, of an x face */
    double *yface;                   /* [angle][plane of the block][i] */
    double *zface;                   /* [angle][j][i], carried from block to block */
    mailbox_t mailbox;
} state_t;

typedef struct {
    int dx, dy, dz; /* +1 or -1 */
} octant_t;

/* The octants, in the order in which every cell adds up their fluxes; consecutive ones differ in x
 * or y, so that the next wavefront starts from a corner the previous one has already passed. */
static const octant_t octants[OCTANTS] = {
    {+1, +1, +1}, {-1, +1, +1}, {-1, -1, +1}, {+1, -1, +1}, {+1, +1, -1}, {-1, +1, -1}, {-1, -1, -1}, {+1, -1, -1},
};

/* Direction cosines of the S6 set: each angle takes its three cosines from these levels. */
static const double cosine_levels[3] = {0.2666355, 0.6815076, 0.9261808};
static const int angle_levels[ANGLES][3] = {{0, 0, 2}, {0, 2, 0}, {2, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};

/* ---------------------------------------------------------------- options */

_Noreturn static void exit_help(int rank)
{
    if (rank == 0)
        printf("%s\n"
               "Sweep3D-like wavefront sweep over a 2-D process grid (docs/examples.md).\n"
               "  --n N             cells in x, y and z (default 64)\n"
               "  --nx/--ny/--nz N  cells in one dimension, 1 to %d\n"
               "  --kblock K        z planes swept between two messages (default 4)\n"
               "  --iterations N    source iterations, 8 sweeps each (default 16)\n"
               "  --repeat R        solve R times, print the shortest time (default 1)\n"
               "  --wildcard        receive with MPI_ANY_SOURCE and MPI_ANY_TAG\n"
               "Prints on rank 0: checksum <%%a of the scalar flux sum>, time_s <seconds, the shortest\n"
               "solve>, time_max_s <seconds, the longest>.\n",
               usage_line, MAX_CELLS);
    MPI_Finalize();
    exit(0);
}

static void parse_options(int rank, int argc, char **argv, options_t *o)
{
    *o = (options_t){.nx = 64, .ny = 64, .nz = 64, .kblock = 4, .iterations = 16, .repeat = 1};
    for (int a = 1; a < argc; a++) {
        char option[64];
        const char *equals;
        option_name(rank, argv[a], option, &equals, exit_help);
        if (flag_option(rank, option, equals, "wildcard", &o->wildcard))
            continue;
        const int_option_t ints[] = {
            {"kblock", &o->kblock, 1, MAX_CELLS},
            {"iterations", &o->iterations, 1, 1000000},
            {"repeat", &o->repeat, 1, 10000},
        };
        const grid_options_t grid = {&o->nx, &o->ny, &o->nz, MAX_CELLS};
        set_int_option(rank, &grid, ints, sizeof ints / sizeof ints[0], argc, argv, &a, equals, option);
    }
}

/* ---------------------------------------------------------------- decomposition */

/* Cells [first, first + count) of n, when n is split into nearly equal parts. */
static void split(int n, int parts, int part, int *count, int *first)
{
    int base = n / parts, extra = n % parts;
    *count = base + (part < extra);
    *first = part * base + (part < extra ? part : extra);
}

static int blocks_per_octant(const options_t *o) { return (o->nz + o->kblock - 1) / o->kblock; }

static void grid_init(grid_t *g, const options_t *o)
{
    int size, dims[2] = {0, 0};
    MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    int px = dims[0], py = dims[1];
    if (o->nx < px || o->ny < py)
        exit_usage(g->rank, "--nx %d --ny %d is too small for the %dx%d process grid of %d ranks", o->nx, o->ny, px, py,
                   size);
    /* Message tags number (octant, block, axis); the MPI standard guarantees tags up to 32767. */
    if (OCTANTS * 2 * blocks_per_octant(o) > 32768)
        exit_usage(g->rank, "--kblock %d gives %d blocks of --nz %d; at most 2048 allowed", o->kblock,
                   blocks_per_octant(o), o->nz);
    int cx = g->rank % px, cy = g->rank / px;
    g->nx = o->nx;
    g->ny = o->ny;
    g->nz = o->nz;
    split(o->nx, px, cx, &g->lx, &g->gx0);
    split(o->ny, py, cy, &g->ly, &g->gy0);
    g->west = cx > 0 ? g->rank - 1 : MPI_PROC_NULL;
    g->east = cx < px - 1 ? g->rank + 1 : MPI_PROC_NULL;
    g->south = cy > 0 ? g->rank - px : MPI_PROC_NULL;
    g->north = cy < py - 1 ? g->rank + px : MPI_PROC_NULL;
}

/* ---------------------------------------------------------------- problem */

static void *allocate(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, PROGRAM ": cannot allocate %zu bytes\n", count * size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static size_t cells(const grid_t *g) { return (size_t)g->lx * g->ly * g->nz; }

/* A source in one corner region and a checkerboard of two materials: nothing is symmetric, so a
 * face put in the wrong place changes the result. */
static void state_init(state_t *s, const grid_t *g, const options_t *o)
{
    size_t n = cells(g), longest = (size_t)(g->lx > g->ly ? g->lx : g->ly);
    size_t kb = (size_t)(o->kblock < g->nz ? o->kblock : g->nz);
    s->qext = allocate(n, sizeof(double));
    s->sigt = allocate(n, sizeof(double));
    s->src = allocate(n, sizeof(double));
    s->phi = allocate(n, sizeof(double));
    s->xface = allocate(ANGLES * kb * g->ly, sizeof(double));
    s->yface = allocate(ANGLES * kb * g->lx, sizeof(double));
    s->zface = allocate(ANGLES * (size_t)g->ly * g->lx, sizeof(double));
    s->mailbox = (mailbox_t){.scratch = allocate(ANGLES * kb * longest, sizeof(double)),
                             .scratch_count = (int)(ANGLES * kb * longest)};
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->ly; j++)
            for (int i = 0; i < g->lx; i++) {
                int gi = g->gx0 + i, gj = g->gy0 + j;
                size_t c = ((size_t)k * g->ly + j) * g->lx + i;
                s->qext[c] = gi < g->nx / 2 && gj < g->ny / 3 && k < g->nz / 4 ? 1.0 : 0.0;
                s->sigt[c] = ((gi / 8 + gj / 8 + k / 8) % 2) ? 1.5 : 1.0;
            }
}

static void state_free(state_t *s)
{
    free(s->qext);
    free(s->sigt);
    free(s->src);
    free(s->phi);
    free(s->xface);
    free(s->yface);
    free(s->zface);
    free(s->mailbox.scratch);
    free(s->mailbox.early);
}

/* ---------------------------------------------------------------- receiving faces */

static void receive_specific(const expected_t *want)
{
    MPI_Recv(want->dest, want->count, MPI_DOUBLE, want->source, want->tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* With wildcards a face of a later block (an upstream rank may run ahead as far as its sends
 * complete) can come before the one awaited: it is kept, in arrival order, until its turn. */
static void keep_early(mailbox_t *mb, const MPI_Status *status, int count)
{
    if (mb->n == mb->capacity) {
        mb->capacity = mb->capacity ? 2 * mb->capacity : 8;
        parcel_t *grown = realloc(mb->early, (size_t)mb->capacity * sizeof *grown);
        if (!grown) {
            fprintf(stderr, PROGRAM ": out of memory for early messages\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mb->early = grown;
    }
    parcel_t *p = &mb->early[mb->n++];
    *p = (parcel_t){status->MPI_SOURCE, status->MPI_TAG, count, allocate((size_t)count, sizeof(double))};
    memcpy(p->data, mb->scratch, (size_t)count * sizeof(double));
}

static void deliver(const expected_t *want, const double *data, int count)
{
    if (count != want->count) {
        fprintf(stderr, PROGRAM ": message from rank %d with tag %d has %d values, expected %d\n", want->source,
                want->tag, count, want->count);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memcpy(want->dest, data, (size_t)count * sizeof(double));
}

/* Takes the oldest kept message for want, if any; messages from one source arrive in the order
 * sent, so the oldest is the one of this block, not of a later iteration reusing the tag. */
static int take_early(mailbox_t *mb, const expected_t *want)
{
    for (int e = 0; e < mb->n; e++) {
        parcel_t *p = &mb->early[e];
        if (p->source == want->source && p->tag == want->tag) {
            deliver(want, p->data, p->count);
            free(p->data);
            memmove(p, p + 1, (size_t)(mb->n - e - 1) * sizeof *p);
            mb->n--;
            return 1;
        }
    }
    return 0;
}

/* Receives every face in want[0..n) with MPI_ANY_SOURCE and MPI_ANY_TAG, placing each by the
 * source and tag in its status. */
static void receive_wildcard(mailbox_t *mb, const expected_t *want, int n)
{
    int missing = 0, done[2] = {0, 0};
    for (int w = 0; w < n; w++) {
        done[w] = take_early(mb, &want[w]);
        missing += !done[w];
    }
    while (missing > 0) {
        MPI_Status status;
        int count;
        MPI_Recv(mb->scratch, mb->scratch_count, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_DOUBLE, &count);
        int w = 0;
        while (w < n && (done[w] || want[w].source != status.MPI_SOURCE || want[w].tag != status.MPI_TAG))
            w++;
        if (w == n) {
            keep_early(mb, &status, count);
            continue;
        }
        deliver(&want[w], mb->scratch, count);
        done[w] = 1;
        missing--;
    }
}

/* ---------------------------------------------------------------- the sweep */

/* Where a block of planes [k0, k0 + kn) starts and which neighbours it talks to. */
typedef struct {
    const octant_t *oct;
    int k0, kn;
    int tag; /* tag of its x face; its y face has tag + 1 */
    int up_x, up_y, down_x, down_y;
} block_t;

/* Receives the upstream faces of a block; at the domain boundary nothing comes in (vacuum). */
static void receive_faces(state_t *s, const grid_t *g, const block_t *b, int wildcard)
{
    expected_t want[2];
    int n = 0, xcount = ANGLES * b->kn * g->ly, ycount = ANGLES * b->kn * g->lx;
    if (b->up_x != MPI_PROC_NULL)
        want[n++] = (expected_t){b->up_x, b->tag, xcount, s->xface};
    else
        memset(s->xface, 0, (size_t)xcount * sizeof(double));
    if (b->up_y != MPI_PROC_NULL)
        want[n++] = (expected_t){b->up_y, b->tag + 1, ycount, s->yface};
    else
        memset(s->yface, 0, (size_t)ycount * sizeof(double));
    if (wildcard)
        receive_wildcard(&s->mailbox, want, n);
    else
        for (int w = 0; w < n; w++)
            receive_specific(&want[w]);
}

static void send_faces(const state_t *s, const grid_t *g, const block_t *b)
{
    if (b->down_x != MPI_PROC_NULL)
        MPI_Send(s->xface, ANGLES * b->kn * g->ly, MPI_DOUBLE, b->down_x, b->tag, MPI_COMM_WORLD);
    if (b->down_y != MPI_PROC_NULL)
        MPI_Send(s->yface, ANGLES * b->kn * g->lx, MPI_DOUBLE, b->down_y, b->tag + 1, MPI_COMM_WORLD);
}

/* One line of cells in x for one angle: each cell balances what enters through its three upstream
 * faces against its losses (step scheme), and passes its flux on downstream. The faces carried in
 * yrow and zrow are updated in place, so that they hold the outgoing faces afterwards. */
static double sweep_line(const double *src, const double *sigt, double *phi, double *yrow, double *zrow, int lx, int dx,
                         const double cosine[3], double in_x)
{
    const double mu = cosine[0], eta = cosine[1], xi = cosine[2], leak = mu + eta + xi;
    const double weight = 1.0 / (OCTANTS * ANGLES);
    for (int ii = 0; ii < lx; ii++) {
        int i = dx > 0 ? ii : lx - 1 - ii;
        double psi = (src[i] + mu * in_x + eta * yrow[i] + xi * zrow[i]) / (sigt[i] + leak);
        phi[i] += weight * psi;
        in_x = yrow[i] = zrow[i] = psi;
    }
    return in_x;
}

/* Sweeps the planes of one block for every angle. Planes and rows are numbered in sweep order in
 * the face buffers, so sender and receiver agree whatever the direction. */
static void sweep_block(state_t *s, const grid_t *g, const block_t *b)
{
    const octant_t *o = b->oct;
    for (int m = 0; m < ANGLES; m++) {
        const double cosine[3] = {cosine_levels[angle_levels[m][0]], cosine_levels[angle_levels[m][1]],
                                  cosine_levels[angle_levels[m][2]]};
        for (int kk = 0; kk < b->kn; kk++) {
            int k = o->dz > 0 ? b->k0 + kk : b->k0 + b->kn - 1 - kk;
            double *xf = s->xface + ((size_t)m * b->kn + kk) * g->ly;
            double *yrow = s->yface + ((size_t)m * b->kn + kk) * g->lx;
            for (int jj = 0; jj < g->ly; jj++) {
                int j = o->dy > 0 ? jj : g->ly - 1 - jj;
                size_t row = ((size_t)k * g->ly + j) * g->lx;
                double *zrow = s->zface + ((size_t)m * g->ly + j) * g->lx;
                xf[j] = sweep_line(s->src + row, s->sigt + row, s->phi + row, yrow, zrow, g->lx, o->dx, cosine, xf[j]);
            }
        }
    }
}

static void sweep_octant(state_t *s, const grid_t *g, const options_t *opt, int octant)
{
    const octant_t *o = &octants[octant];
    int nblocks = blocks_per_octant(opt);
    /* Nothing enters through the z boundary where the octant starts. */
    memset(s->zface, 0, ANGLES * (size_t)g->ly * g->lx * sizeof(double));
    for (int step = 0; step < nblocks; step++) {
        int index = o->dz > 0 ? step : nblocks - 1 - step;
        block_t b = {.oct = o,
                     .k0 = index * opt->kblock,
                     .tag = 2 * (octant * nblocks + index),
                     .up_x = o->dx > 0 ? g->west : g->east,
                     .down_x = o->dx > 0 ? g->east : g->west,
                     .up_y = o->dy > 0 ? g->south : g->north,
                     .down_y = o->dy > 0 ? g->north : g->south};
        b.kn = g->nz - b.k0 < opt->kblock ? g->nz - b.k0 : opt->kblock;
        receive_faces(s, g, &b, opt->wildcard);
        sweep_block(s, g, &b);
        send_faces(s, g, &b);
    }
}

/* Source iteration: the scattered part of the source comes from the previous flux. */
static void solve(state_t *s, const grid_t *g, const options_t *o)
{
    size_t n = cells(g);
    memset(s->phi, 0, n * sizeof(double));
    for (int it = 0; it < o->iterations; it++) {
        for (size_t c = 0; c < n; c++)
            s->src[c] = s->qext[c] + SCATTERING * s->phi[c];
        memset(s->phi, 0, n * sizeof(double));
        for (int octant = 0; octant < OCTANTS; octant++)
            sweep_octant(s, g, o, octant);
    }
    if (s->mailbox.n != 0) {
        fprintf(stderr, PROGRAM ": rank %d: %d messages left unreceived\n", g->rank, s->mailbox.n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* ---------------------------------------------------------------- results */

/* The sum of the scalar flux, in one global order at any rank count: each column is summed over z
 * where it lives, the columns meet on rank 0 through an MPI_Reduce in which every rank contributes
 * zeros outside its own columns (adding zero is exact, so the reduction order does not matter),
 * and rank 0 adds them up in global order. */
static double checksum(const state_t *s, const grid_t *g)
{
    size_t columns = (size_t)g->nx * g->ny;
    double *mine = allocate(columns, sizeof(double));
    double *all = g->rank == 0 ? allocate(columns, sizeof(double)) : NULL;
    for (int j = 0; j < g->ly; j++)
        for (int i = 0; i < g->lx; i++) {
            double sum = 0.0;
            for (int k = 0; k < g->nz; k++)
                sum += s->phi[((size_t)k * g->ly + j) * g->lx + i];
            mine[(size_t)(g->gy0 + j) * g->nx + g->gx0 + i] = sum;
        }
    MPI_Reduce(mine, all, (int)columns, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double total = 0.0;
    if (all)
        for (size_t c = 0; c < columns; c++)
            total += all[c];
    free(mine);
    free(all);
    return total;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wall time of one solve: that of its slowest rank, on rank 0. */
static double timed_solve(state_t *s, const grid_t *g, const options_t *o)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double start = now();
    solve(s, g, o);
    double mine = now() - start, slowest = 0.0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return slowest;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    options_t opt;
    grid_t grid;
    state_t state;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    parse_options(rank, argc, argv, &opt);
    grid_init(&grid, &opt);
    state_init(&state, &grid, &opt);

    double best = 0.0, worst = 0.0;
    for (int r = 0; r < opt.repeat; r++) {
        double t = timed_solve(&state, &grid, &opt);
        best = r == 0 || t < best ? t : best;
        worst = t > worst ? t : worst;
    }
    double sum = checksum(&state, &grid);
    if (rank == 0)
        printf("checksum %a\ntime_s %.9f\ntime_max_s %.9f\n", sum, best, worst);

    state_free(&state);
    MPI_Finalize();
    return 0;
}
