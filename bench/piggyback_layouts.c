/* bench/piggyback_layouts: what the MPI library itself charges for the layouts an in-band
 * piggyback needs, with no layer at all, and what a preloaded piggyback layer reaches beside it
 * (docs/methods/piggyback.md, "auto").
 *
 * An in-band method sends and receives each message as its pb bytes joined with the user's
 * buffer: a struct type of two blocks at absolute addresses, since the pb cannot live inside the
 * user's buffer. Ranks 0 and 1 measure windowed bandwidth (the benchmark's: --window messages
 * back to back, then an empty acknowledgement) for each layout, in turns over --rounds rounds.
 * For each layout it prints the best bandwidth of the rounds, and its ratio to plain contiguous
 * buffers as the median over rounds of the ratio within each round (the two measured back to
 * back: a ratio of bests would pair the luckiest moments of different rounds):
 *   contiguous    n bytes from a buffer into a buffer (the library alone);
 *   struct-send   struct {4 B, n B} sent, n + 4 contiguous bytes received;
 *   struct-recv   n + 4 contiguous bytes sent, struct {4 B, n B} received;
 *   struct-both   struct sent and received: what every in-band method asks of the library;
 *   layer         n bytes from a buffer into a buffer through MPI_Isend / MPI_Irecv /
 *                 MPI_Waitall, which a preloaded layer intercepts (libmpilens-piggyback with its
 *                 method: its bandwidth as a program sees it); without one, contiguous again.
 * Every other layout calls the library's PMPI_ entry points, so a preloaded layer sees only the
 * `layer` messages (and the acknowledgements and barriers, on both sides alike). The ratio of
 * struct-both is the most any in-band method can reach on this library; a ratio of struct-recv
 * alone that low says the receive side is where the library pays. Last, the ratio of layer to
 * struct-both, round by round: how close the layer comes to that floor.
 *
 * usage: piggyback_layouts [--sizes BYTES,...] [--window N] [--rounds N] [--iterations N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piggyback_joined.h"

/* MPICH defines MPI_STATUSES_IGNORE as the address 1, which GCC takes for an empty array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

enum { PB = 4, MAX_SIZES = 8, MAX_ROUNDS = 99 };
enum layout { CONTIGUOUS, STRUCT_SEND, STRUCT_RECV, STRUCT_BOTH, LAYER, N_LAYOUTS };
static const char *const layout_names[N_LAYOUTS] = {"contiguous", "struct-send", "struct-recv", "struct-both", "layer"};

typedef struct {
    int sizes[MAX_SIZES], n_sizes, window, rounds, iterations, rank;
    char *send_buf, *recv_buf, *pbs; /* recv_buf: one slot per message of the window */
    size_t slot;
    MPI_Request *requests;
    MPI_Datatype *types; /* a struct layout's, one per message of the window */
} bench_t;

static void usage(const char *why)
{
    fprintf(stderr,
            "piggyback_layouts: %s\nusage: piggyback_layouts [--sizes BYTES,...] [--window N] "
            "[--rounds N] [--iterations N]\n",
            why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static int positive(const char *text)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < 1 || v > (1L << 30))
        usage("options take positive integers up to 2^30");
    return (int)v;
}

static void parse(bench_t *b, int argc, char **argv)
{
    b->sizes[0] = 1 << 20, b->sizes[1] = 4 << 20, b->n_sizes = 2;
    b->window = 64, b->rounds = 9, b->iterations = 4;
    for (int i = 1; i < argc; i++) {
        if (i + 1 == argc)
            usage("an option without its value");
        const char *value = argv[++i];
        if (!strcmp(argv[i - 1], "--sizes")) {
            char *list = strdup(value);
            b->n_sizes = 0;
            for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
                if (b->n_sizes == MAX_SIZES)
                    usage("at most 8 sizes");
                b->sizes[b->n_sizes++] = positive(item);
            }
            free(list);
        } else if (!strcmp(argv[i - 1], "--window")) {
            b->window = positive(value);
        } else if (!strcmp(argv[i - 1], "--rounds")) {
            if ((b->rounds = positive(value)) > MAX_ROUNDS)
                usage("at most 99 rounds");
        } else if (!strcmp(argv[i - 1], "--iterations")) {
            b->iterations = positive(value);
        } else {
            usage("unknown option");
        }
    }
}

static int as_struct(const bench_t *b, enum layout layout)
{
    return layout == STRUCT_BOTH || layout == (b->rank == 0 ? STRUCT_SEND : STRUCT_RECV);
}

static char *message_buffer(const bench_t *b, int k)
{
    return b->rank == 0 ? b->send_buf : b->recv_buf + (size_t)k * b->slot;
}

/* Starts message k of a window in `layout`, as rank 0 (sender) or rank 1 (receiver), a struct
 * layout with the window's type k. */
static void start(bench_t *b, enum layout layout, int n, int k)
{
    int sender = b->rank == 0;
    char *buf = message_buffer(b, k);
    /* the message is n + PB bytes with a pb (the layer adds its own) */
    int bytes = layout == CONTIGUOUS || layout == LAYER ? n : n + PB;
    MPI_Request *r = &b->requests[k];
    if (layout == LAYER) {
        if (sender)
            MPI_Isend(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, r);
        else
            MPI_Irecv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, r);
    } else if (as_struct(b, layout)) {
        if (sender)
            PMPI_Isend(MPI_BOTTOM, 1, b->types[k], 1, 0, MPI_COMM_WORLD, r);
        else
            PMPI_Irecv(MPI_BOTTOM, 1, b->types[k], 0, 0, MPI_COMM_WORLD, r);
    } else if (sender) {
        PMPI_Isend(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, r);
    } else {
        PMPI_Irecv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, r);
    }
}

/* Bytes per second of `iterations` windows of n-byte payloads (rank 0's figure). A struct
 * layout's types, one per message of the window (each has its own pb), are made before and freed
 * after, as the layer keeps its own (docs/methods/piggyback.md): the figure is what the library
 * charges for moving the layout, not for making its type. */
static double bandwidth(bench_t *b, enum layout layout, int n, int iterations)
{
    if (as_struct(b, layout))
        for (int k = 0; k < b->window; k++)
            b->types[k] = piggyback_joined(b->pbs + (size_t)k * PB, PB, message_buffer(b, k), n, MPI_BYTE);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
        for (int k = 0; k < b->window; k++)
            start(b, layout, n, k);
        if (layout == LAYER)
            MPI_Waitall(b->window, b->requests, MPI_STATUSES_IGNORE);
        else
            PMPI_Waitall(b->window, b->requests, MPI_STATUSES_IGNORE);
        if (b->rank == 0)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
    double seconds = MPI_Wtime() - t0;
    if (as_struct(b, layout))
        for (int k = 0; k < b->window; k++)
            PMPI_Type_free(&b->types[k]);
    return (double)b->window * iterations * n / seconds;
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, ascending);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* The distribution-free interval of the median of n sorted values: [x_k, x_(n+1-k)] with the
 * largest k whose binomial tail P(Bin(n, 1/2) < k) is at most 2.5% (at least 95% coverage; the
 * whole range when n is too small for that). */
static void median_interval(const double *sorted, int n, double *lo, double *hi)
{
    double tail = 0, term = 1;
    for (int i = 0; i < n; i++)
        term /= 2; /* P(X = 0) */
    int k = 1;
    for (int j = 0; j < n / 2; j++) {
        tail += term; /* P(X <= j): the coverage of [x_(j+1), x_(n-j)] is 1 - 2 P(X <= j) */
        if (tail > 0.025)
            break;
        k = j + 1;
        term = term * (double)(n - j) / (double)(j + 1); /* P(X = j + 1) */
    }
    *lo = sorted[k - 1];
    *hi = sorted[n - k];
}

static void report(const bench_t *b, double measured[][N_LAYOUTS][MAX_ROUNDS])
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length;
    MPI_Get_library_version(version, &length);
    printf("== bench/piggyback_layouts (%.*s, window %d, %d rounds: best bandwidth, median ratio)\n",
           (int)strcspn(version, "\n"), version, b->window, b->rounds);
    for (int s = 0; s < b->n_sizes; s++)
        for (int l = 0; l < N_LAYOUTS; l++) {
            double best = 0, ratios[MAX_ROUNDS];
            for (int r = 0; r < b->rounds; r++) {
                best = measured[s][l][r] > best ? measured[s][l][r] : best;
                ratios[r] = measured[s][l][r] / measured[s][CONTIGUOUS][r];
            }
            printf("%-12s %9d B %8.2f GB/s  ratio %.3f\n", layout_names[l], b->sizes[s], best / 1e9,
                   median(ratios, b->rounds));
        }
    for (int s = 0; s < b->n_sizes; s++) {
        double ratios[MAX_ROUNDS], lo, hi;
        for (int r = 0; r < b->rounds; r++)
            ratios[r] = measured[s][LAYER][r] / measured[s][STRUCT_BOTH][r];
        double m = median(ratios, b->rounds); /* sorts ratios */
        median_interval(ratios, b->rounds, &lo, &hi);
        printf("layer/struct-both %9d B  ratio %.3f  95%% interval %.3f %.3f\n", b->sizes[s], m, lo, hi);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_t b = {0};
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        usage("runs at 2 ranks");
    parse(&b, argc, argv);
    int largest = 0;
    for (int s = 0; s < b.n_sizes; s++)
        largest = b.sizes[s] > largest ? b.sizes[s] : largest;
    /* slots of a whole number of pages, as the benchmark's power-of-two sizes give: every slot
     * keeps the buffer's alignment (a misaligned contiguous receive is slower, and would flatter
     * the struct types) */
    b.slot = ((size_t)largest + PB + 4095) / 4096 * 4096;
    b.send_buf = malloc(b.slot);
    b.recv_buf = malloc(b.slot * (size_t)b.window);
    b.pbs = malloc((size_t)PB * (size_t)b.window);
    b.requests = malloc(sizeof *b.requests * (size_t)b.window);
    b.types = malloc(sizeof *b.types * (size_t)b.window);
    if (!b.send_buf || !b.recv_buf || !b.pbs || !b.requests || !b.types)
        usage("cannot allocate the buffers: lower --sizes or --window");
    memset(b.send_buf, 1, b.slot); /* touched: first-touch costs are not measured */
    memset(b.recv_buf, 0, b.slot * (size_t)b.window);
    memset(b.pbs, 2, (size_t)PB * (size_t)b.window);
    static double measured[MAX_SIZES][N_LAYOUTS][MAX_ROUNDS];
    for (int r = 0; r < b.rounds; r++) /* in turns: a slow spell of the machine hits every layout */
        for (int s = 0; s < b.n_sizes; s++)
            for (int l = 0; l < N_LAYOUTS; l++) {
                bandwidth(&b, l, b.sizes[s], 1); /* warm-up: the library's protocol set-up */
                measured[s][l][r] = bandwidth(&b, l, b.sizes[s], b.iterations);
            }
    if (b.rank == 0)
        report(&b, measured);
    free(b.send_buf);
    free(b.recv_buf);
    free(b.pbs);
    free(b.requests);
    free(b.types);
    MPI_Finalize();
    return 0;
}
