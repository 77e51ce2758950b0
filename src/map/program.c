/* mpilens-map: maps a communication matrix onto a machine with the algorithms of libmpilens-map,
 * and says what each mapping costs, as one JSON object (docs/cli.md, "mpilens map"). The matrix
 * is a file or a generated pattern (stencils, random, the CG example), so that the algorithms can
 * be timed at sizes no test machine runs (bench/map_speed).
 *
 * Not an MPI program: it never calls MPI_Init (the library links MPI for its reordering part
 * only), so it runs on a login node. Errors: a bad option is one line and exit status 2; a failure
 * of the library is "mpilens-map: <what>: <status>" and exit status 1. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "clock.h"
#include "json.h"
#include "meta.h"
#include "mpilens/map.h"
#include "options.h"

#define PROGRAM "mpilens-map"
#define MAX_ORDER (1L << 24)
#define MAX_ARG (1L << 30)
#define N_ALGOS (MPILENS_MAP_RANDOM + 1)
#define EXIT_FAILED 1
#define EXIT_USAGE 2
/* Bytes of one value in the generated patterns: the CG example exchanges doubles. */
#define VALUE_BYTES 8
/* Random matrices send 1 B to 64 KiB per entry: several orders of magnitude, as real ones do. */
#define RANDOM_MAX_BYTES 65536

typedef struct {
    const char *matrix, *generate, *topology, *hosts, *costs, *algo, *output, *save_matrix;
    long seed;
    int quiet;
} options_t;

static const char summary[] =
    "Maps the processes of a communication matrix onto the slots (cores) of a machine with each\n"
    "algorithm asked for, and writes one JSON object: the topology, the matrix, and per algorithm\n"
    "the slot of every process, the time the mapping took, the peak memory after it, and what the\n"
    "mapping costs (hop-bytes, weighted bytes, busiest link, bytes at each level). Give --matrix\n"
    "or --generate. Not an MPI program: run it directly, not under mpirun.\n"
    "\n"
    "--generate KIND:P[:ARG] makes the matrix of P processes:\n"
    "  stencil3d  P on the most cubic 3-D grid (row-major, as MPI_Cart_create), 6 neighbours,\n"
    "             not periodic, ARG bytes per face (default 8192)\n"
    "  stencil2d  the same on the most square 2-D grid, 4 neighbours\n"
    "  random     ARG distinct receivers per sender (default 10), 1 B to 64 KiB each, from --seed\n"
    "  cg         one iteration of examples/cg.c at P ranks, each holding an ARG^3 block (default\n"
    "             32): halo of ARG*ARG doubles with up to 4 neighbours on its 2-D process grid in\n"
    "             y and z, and the allreduce of two dot products as recursive-doubling pairs\n"
    "             (rank r and r XOR 2^k, 8 bytes each way per dot product)\n"
    "\n"
    "--topology hwloc is this machine; text with ':' a description from the top, \"NAME:ARITY\"\n"
    "separated by spaces (\"node:4 package:2 core:12\", optional \"cost=C0,C1,...\"); an existing\n"
    "file an hwloc XML export or a text file holding a description.";

/* The output file, removed when the program fails: never a half-written result. */
static const char *created_output;

static void vsay(const char *fmt, va_list ap)
{
    fprintf(stderr, PROGRAM ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void quit(int code) __attribute__((noreturn));
static void quit(int code)
{
    if (created_output)
        remove(created_output);
    exit(code);
}

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    quit(EXIT_USAGE);
}

/* "mpilens-map: <what>: <status>", exit status 1 (2 for a value the user gave that the library
 * refused as such: a description or option text that does not parse). */
static void check(mpilens_map_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(mpilens_map_status_t status, const char *fmt, ...)
{
    if (status == MPILENS_MAP_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROGRAM ": ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, ": %s\n", mpilens_map_status_string(status));
    va_end(ap);
    quit(status == MPILENS_MAP_ERR_SPEC ? EXIT_USAGE : EXIT_FAILED);
}

static double seconds_since(int64_t start_ns) { return (double)(ml_clock_ns() - start_ns) / 1e9; }

/* ---- options --------------------------------------------------------------------------------- */

static void parse_options(options_t *o, int argc, char **argv)
{
    ml_option_t table[] = {
        {"matrix", ML_OPT_STRING, "FILE", NULL, NULL,
         "the matrix: CSV sender,receiver,bytes[,count], dense .mat or Matrix Market .mtx", &o->matrix, 0, 0, NULL},
        {"generate", ML_OPT_STRING, "KIND:P[:ARG]", NULL, NULL, "a generated matrix instead (kinds below)",
         &o->generate, 0, 0, NULL},
        {"topology", ML_OPT_STRING, "hwloc|SPEC|FILE", "hwloc", NULL, "the machine to map onto (see below)",
         &o->topology, 0, 0, NULL},
        {"hosts", ML_OPT_STRING, "LIST", NULL, NULL,
         "host names separated by commas: the machine is then one copy of --topology per host, joined under a "
         "node level",
         &o->hosts, 0, 0, NULL},
        {"costs", ML_OPT_STRING, "LIST", NULL, NULL,
         "cost per byte at each level, from the top, separated by commas (default: the topology's)", &o->costs, 0, 0,
         NULL},
        {"algo", ML_OPT_STRING, "LIST", "treematch", NULL,
         "algorithms separated by commas: treematch, greedy, scotch, identity, packed, rr, random; all: every one "
         "this build has",
         &o->algo, 0, 0, NULL},
        {"seed", ML_OPT_INT, "N", "1", NULL, "seed of the random choices (random algorithm and matrices, ties)",
         &o->seed, 0, 4294967295L, NULL},
        {"output", ML_OPT_STRING, "FILE", NULL, NULL, "write the JSON there (default: standard output)", &o->output, 0,
         0, NULL},
        {"save-matrix", ML_OPT_STRING, "FILE", NULL, NULL,
         "also write the matrix there, as Matrix Market (for programs that read a matrix file, such as "
         "bench/map_ompi_treematch)",
         &o->save_matrix, 0, 0, NULL},
        {"quiet", ML_OPT_FLAG, NULL, NULL, NULL, "no time and memory lines on standard error", &o->quiet, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    memset(o, 0, sizeof *o);
    char err[512];
    switch (ml_options_parse(table, argc, argv, err, sizeof err)) {
    case ML_OPTIONS_HELP: ml_options_usage(stdout, PROGRAM, summary, table); exit(0);
    case ML_OPTIONS_VERSION: printf("%s %s\n", PROGRAM, ml_version_string); exit(0);
    case ML_OPTIONS_ERROR: usage_error("%s", err);
    default: break;
    }
    if (!o->matrix == !o->generate)
        usage_error("give one matrix: --matrix FILE or --generate KIND:P[:ARG] (see --help)");
}

/* The algorithms of --algo, without repeats (rr and round-robin are one). */
static int parse_algos(const char *text, mpilens_map_algo_t *algos)
{
    static const char allowed[] = "treematch, greedy, scotch, identity, packed, rr, random, or all";
    int n = 0, seen[N_ALGOS] = {0};
    if (strcmp(text, "all") == 0) {
        for (int a = 0; a < N_ALGOS; a++) {
            int available = 0;
            check(mpilens_map_algo_available((mpilens_map_algo_t)a, &available), "--algo all");
            if (available)
                algos[n++] = (mpilens_map_algo_t)a;
        }
        return n;
    }
    const char *p = text;
    for (;;) {
        size_t len = strcspn(p, ",");
        char name[32];
        mpilens_map_algo_t algo;
        int available = 0;
        snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1), p);
        if (len == 0 || len >= sizeof name || mpilens_map_algo_parse(name, &algo) != MPILENS_MAP_OK)
            usage_error("invalid value \"%s\" for --algo: expected names separated by commas among %s", text, allowed);
        check(mpilens_map_algo_available(algo, &available), "--algo %s", name);
        if (!available)
            usage_error("--algo %s: %s", name, mpilens_map_status_string(MPILENS_MAP_ERR_UNSUPPORTED));
        if (!seen[algo])
            algos[n++] = algo;
        seen[algo] = 1;
        if (p[len] == '\0')
            return n;
        p += len + 1;
    }
}

/* ---- topology -------------------------------------------------------------------------------- */

static mpilens_map_topology_t *load_topology(const char *text)
{
    mpilens_map_topology_t *t = NULL;
    struct stat st;
    if (strcmp(text, "hwloc") == 0)
        check(mpilens_map_topology_hwloc(&t), "--topology hwloc");
    else if (stat(text, &st) == 0)
        check(mpilens_map_topology_load(text, &t), "--topology \"%s\"", text);
    else if (strchr(text, ':'))
        check(mpilens_map_topology_synthetic(text, &t), "--topology \"%s\"", text);
    else
        usage_error("invalid value \"%s\" for --topology: expected hwloc, a description such as \"node:4 core:8\", "
                    "or an existing file",
                    text);
    return t;
}

/* --hosts: one copy of the node t per name, joined under a node level; the rankfiles and host
 * lists then name real hosts (docs/cluster.md). */
static mpilens_map_topology_t *join_hosts(mpilens_map_topology_t *t, const char *text)
{
    char *copy = strdup(text);
    const char **names = calloc(strlen(text) + 1, sizeof *names);
    if (!copy || !names)
        check(MPILENS_MAP_ERR_NOMEM, "--hosts");
    int n = 0;
    for (char *name = copy, *end; name; name = end) {
        end = strchr(name, ',');
        if (end)
            *end++ = '\0';
        if (!*name || strchr(name, ' ') || strlen(name) >= 256)
            usage_error("invalid value \"%s\" for --hosts: expected host names separated by commas", text);
        for (int k = 0; k < n; k++)
            if (strcmp(names[k], name) == 0)
                usage_error("invalid value \"%s\" for --hosts: \"%s\" is named twice", text, name);
        names[n++] = name;
    }
    mpilens_map_topology_t *joined = NULL;
    check(mpilens_map_topology_join(t, n, names, &joined), "--hosts \"%s\"", text);
    mpilens_map_topology_free(t);
    free(names);
    free(copy);
    return joined;
}

static void set_costs(mpilens_map_topology_t *t, const char *text)
{
    int depth;
    check(mpilens_map_topology_depth(t, &depth), "--costs");
    double costs[MPILENS_MAP_MAX_DEPTH];
    int n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        double value = strtod(p, &end);
        if (end == p || errno || (*end != ',' && *end != '\0') || n == MPILENS_MAP_MAX_DEPTH)
            usage_error("invalid value \"%s\" for --costs: expected numbers separated by commas, one per level", text);
        costs[n++] = value;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    if (n != depth)
        usage_error("invalid value \"%s\" for --costs: the topology has %d level%s, so %d cost%s from the top", text,
                    depth, depth == 1 ? "" : "s", depth, depth == 1 ? "" : "s");
    int status = mpilens_map_topology_set_costs(t, costs, n);
    if (status == MPILENS_MAP_ERR_ARG)
        status = MPILENS_MAP_ERR_SPEC; /* the costs themselves were refused: the user's value */
    check(status, "--costs \"%s\"", text);
}

/* ---- generated matrices ---------------------------------------------------------------------- */

typedef struct {
    uint64_t state;
} rng_t;

/* splitmix64: one multiply-xorshift step per number, enough for test patterns. */
static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The 2-D grid MPI_Dims_create gives: the factor pair of order closest to a square, larger first. */
static void square_dims(long order, long dims[2])
{
    long small = 1;
    for (long d = 1; d * d <= order; d++)
        if (order % d == 0)
            small = d;
    dims[0] = order / small;
    dims[1] = small;
}

/* The most cubic 3-D grid: the factors of order with the smallest sum, in non-increasing order. */
static void cubic_dims(long order, long dims[3])
{
    long best = -1;
    for (long c = 1; c * c * c <= order; c++) {
        long pair[2];
        if (order % c != 0)
            continue;
        square_dims(order / c, pair);
        if (pair[1] >= c && (best < 0 || pair[0] + pair[1] + c < best)) {
            best = pair[0] + pair[1] + c;
            dims[0] = pair[0];
            dims[1] = pair[1];
            dims[2] = c;
        }
    }
}

static int add_both(mpilens_map_matrix_t *m, long a, long b, double bytes)
{
    mpilens_map_status_t status = mpilens_map_matrix_add(m, (int)a, (int)b, bytes);
    return status != MPILENS_MAP_OK ? status : mpilens_map_matrix_add(m, (int)b, (int)a, bytes);
}

/* Neighbours one step apart in each of n dimensions, row-major (the last dimension varies
 * fastest), no wrap-around. */
static int add_grid(mpilens_map_matrix_t *m, long order, int n, const long *dims, double bytes)
{
    for (long r = 0; r < order; r++) {
        long stride = 1;
        for (int d = n - 1; d >= 0; d--) {
            if ((r / stride) % dims[d] + 1 < dims[d]) {
                int status = add_both(m, r, r + stride, bytes);
                if (status != MPILENS_MAP_OK)
                    return status;
            }
            stride *= dims[d];
        }
    }
    return MPILENS_MAP_OK;
}

static int make_stencil3d(mpilens_map_matrix_t *m, long order, long arg, rng_t *rng)
{
    long dims[3];
    (void)rng;
    cubic_dims(order, dims);
    return add_grid(m, order, 3, dims, (double)arg);
}

static int make_stencil2d(mpilens_map_matrix_t *m, long order, long arg, rng_t *rng)
{
    long dims[2];
    (void)rng;
    square_dims(order, dims);
    return add_grid(m, order, 2, dims, (double)arg);
}

/* examples/cg.c: rank r at (y, z) = (r % py, r / py) of its MPI_Dims_create grid (pz >= py), a halo
 * face of arg*arg doubles with each neighbour; then the two dot products of an iteration. */
static int make_cg(mpilens_map_matrix_t *m, long order, long arg, rng_t *rng)
{
    long dims[2];
    (void)rng;
    square_dims(order, dims);
    int status = add_grid(m, order, 2, dims, (double)arg * (double)arg * VALUE_BYTES);
    for (long r = 0; r < order && status == MPILENS_MAP_OK; r++)
        for (long mask = 1; mask < order && status == MPILENS_MAP_OK; mask <<= 1)
            if ((r ^ mask) < order)
                status = mpilens_map_matrix_add(m, (int)r, (int)(r ^ mask), 2.0 * VALUE_BYTES);
    return status;
}

static int make_random(mpilens_map_matrix_t *m, long order, long arg, rng_t *rng)
{
    long per_row = arg < order - 1 ? arg : order - 1;
    long *chosen_by = malloc(sizeof *chosen_by * (size_t)order); /* the last row that chose each column */
    if (!chosen_by)
        return MPILENS_MAP_ERR_NOMEM;
    for (long c = 0; c < order; c++)
        chosen_by[c] = -1;
    int status = MPILENS_MAP_OK;
    for (long r = 0; r < order && status == MPILENS_MAP_OK; r++) {
        chosen_by[r] = r;
        for (long k = 0; k < per_row && status == MPILENS_MAP_OK;) {
            long c = (long)(rng_next(rng) % (uint64_t)order);
            if (chosen_by[c] == r)
                continue;
            chosen_by[c] = r;
            status = mpilens_map_matrix_add(m, (int)r, (int)c, (double)(1 + rng_next(rng) % RANDOM_MAX_BYTES));
            k++;
        }
    }
    free(chosen_by);
    return status;
}

typedef struct {
    const char *kind;
    long default_arg;
    int (*make)(mpilens_map_matrix_t *m, long order, long arg, rng_t *rng);
} generator_t;

static const generator_t generators[] = {
    {"stencil3d", 8192, make_stencil3d},
    {"stencil2d", 8192, make_stencil2d},
    {"random", 10, make_random},
    {"cg", 32, make_cg},
};
#define N_GENERATORS (sizeof generators / sizeof generators[0])

/* A positive integer up to max, the whole of [text, text + len). */
static int parse_count(const char *text, size_t len, long max, long *value)
{
    char buf[24], *end;
    if (len == 0 || len >= sizeof buf || text[0] == '-' || text[0] == '+')
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (errno || *end != '\0' || v < 1 || v > max)
        return -1;
    *value = v;
    return 0;
}

static const generator_t *find_generator(const char *kind, size_t len)
{
    for (size_t i = 0; i < N_GENERATORS; i++)
        if (strlen(generators[i].kind) == len && strncmp(kind, generators[i].kind, len) == 0)
            return &generators[i];
    return NULL;
}

static mpilens_map_matrix_t *generate(const char *text, unsigned seed)
{
    const char *colon = strchr(text, ':');
    const generator_t *g = colon ? find_generator(text, (size_t)(colon - text)) : NULL;
    long order = 0, arg = g ? g->default_arg : 0;
    if (g) {
        const char *second = strchr(colon + 1, ':');
        size_t len = second ? (size_t)(second - colon - 1) : strlen(colon + 1);
        if (parse_count(colon + 1, len, MAX_ORDER, &order) != 0 ||
            (second && parse_count(second + 1, strlen(second + 1), MAX_ARG, &arg) != 0))
            g = NULL;
    }
    if (!g)
        usage_error("invalid value \"%s\" for --generate: expected KIND:P[:ARG] with KIND stencil3d, stencil2d, "
                    "random or cg, P from 1 to %ld and ARG from 1 to %ld (see --help)",
                    text, MAX_ORDER, MAX_ARG);
    mpilens_map_matrix_t *m = NULL;
    rng_t rng = {seed};
    check(mpilens_map_matrix_create((int)order, &m), "--generate %s", text);
    check(g->make(m, order, arg, &rng), "--generate %s", text);
    return m;
}

/* ---- the JSON object ------------------------------------------------------------------------- */

static void json_topology(ml_json_t *j, const mpilens_map_topology_t *t)
{
    char text[1024];
    int depth;
    long slots;
    check(mpilens_map_topology_describe(t, text, sizeof text), "describing the topology");
    check(mpilens_map_topology_depth(t, &depth), "describing the topology");
    check(mpilens_map_topology_slots(t, &slots), "describing the topology");
    ml_json_begin_object(j, "topology");
    ml_json_string(j, "text", text);
    ml_json_int(j, "slots", slots);
    ml_json_begin_array(j, "levels");
    for (int d = 0; d < depth; d++) {
        const char *name;
        int arity;
        double cost;
        check(mpilens_map_topology_level_name(t, d, &name), "describing level %d", d);
        check(mpilens_map_topology_arity(t, d, &arity), "describing level %d", d);
        check(mpilens_map_topology_cost(t, d, &cost), "describing level %d", d);
        ml_json_begin_object(j, NULL);
        ml_json_string(j, "name", name);
        ml_json_int(j, "arity", arity);
        ml_json_double(j, "cost", cost);
        ml_json_end_object(j);
    }
    ml_json_end_array(j);
    ml_json_begin_array(j, "places");
    for (long s = 0; s < slots; s++) {
        const char *host;
        int core, pu;
        check(mpilens_map_topology_slot_place(t, s, &host, &core, &pu), "placing slot %ld", s);
        ml_json_begin_array(j, NULL);
        ml_json_string(j, NULL, host);
        ml_json_int(j, NULL, core);
        ml_json_int(j, NULL, pu);
        ml_json_end_array(j);
    }
    ml_json_end_array(j);
    ml_json_end_object(j);
}

static void json_matrix(ml_json_t *j, const mpilens_map_matrix_t *m, const char *source)
{
    int order;
    size_t nonzeros;
    double total;
    check(mpilens_map_matrix_order(m, &order), "the matrix");
    check(mpilens_map_matrix_nonzeros(m, &nonzeros), "the matrix");
    check(mpilens_map_matrix_total(m, &total), "the matrix");
    ml_json_begin_object(j, "matrix");
    ml_json_string(j, "source", source);
    ml_json_int(j, "order", order);
    ml_json_int(j, "nonzeros", (int64_t)nonzeros);
    ml_json_double(j, "total_bytes", total);
    ml_json_end_object(j);
}

static void json_cost(ml_json_t *j, const mpilens_map_cost_t *c, int depth)
{
    ml_json_begin_object(j, "cost");
    ml_json_double(j, "total_bytes", c->total_bytes);
    ml_json_double(j, "hop_bytes", c->hop_bytes);
    ml_json_double(j, "weighted_bytes", c->weighted_bytes);
    ml_json_double(j, "busiest_link", c->busiest_link);
    ml_json_int(j, "busiest_level", c->busiest_level);
    ml_json_begin_array(j, "bytes_at_level");
    for (int d = 0; d <= depth; d++)
        ml_json_double(j, NULL, c->bytes_at_level[d]);
    ml_json_end_array(j);
    ml_json_end_object(j);
}

static long peak_rss_kib(void)
{
    struct rusage usage;
    return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss : -1; /* Linux counts KiB */
}

/* Maps with one algorithm and appends its result: the mapping, its time and memory, its cost. */
static void map_one(ml_json_t *j, const mpilens_map_topology_t *t, const mpilens_map_matrix_t *m,
                    mpilens_map_algo_t algo, const options_t *o)
{
    const char *name;
    check(mpilens_map_algo_name(algo, &name), "algorithm %d", (int)algo);
    int order, depth;
    check(mpilens_map_matrix_order(m, &order), "%s", name);
    check(mpilens_map_topology_depth(t, &depth), "%s", name);
    long *slot_of = malloc(sizeof *slot_of * (size_t)order);
    if (!slot_of)
        check(MPILENS_MAP_ERR_NOMEM, "%s", name);
    int64_t start = ml_clock_ns();
    check(mpilens_map_compute(t, m, algo, (unsigned)o->seed, slot_of), "%s", name);
    double seconds = seconds_since(start);
    long rss = peak_rss_kib();
    mpilens_map_cost_t cost;
    check(mpilens_map_cost(t, m, slot_of, &cost), "the cost of %s", name);
    if (!o->quiet)
        fprintf(stderr, "%s: %.3f s, peak %.1f MiB\n", name, seconds, (double)rss / 1024.0);
    ml_json_begin_object(j, NULL);
    ml_json_string(j, "algo", name);
    ml_json_begin_array(j, "slot_of");
    for (int p = 0; p < order; p++)
        ml_json_int(j, NULL, slot_of[p]);
    ml_json_end_array(j);
    ml_json_double(j, "seconds", seconds);
    ml_json_int(j, "max_rss_kib", rss);
    json_cost(j, &cost, depth);
    ml_json_end_object(j);
    free(slot_of);
}

/* The matrix as Matrix Market coordinate, 1-based, with its order in the size line: a file
 * mpilens_map_matrix_load reads back whole, silent last processes included. */
static void save_matrix(mpilens_map_matrix_t *matrix, const char *path)
{
    size_t count;
    const int *from, *to;
    const double *bytes;
    int order;
    check(mpilens_map_matrix_entries(matrix, &count, &from, &to, &bytes), "--save-matrix");
    mpilens_map_matrix_order(matrix, &order);
    FILE *file = fopen(path, "w");
    int failed = !file;
    if (file) {
        fprintf(file, "%%%%MatrixMarket matrix coordinate real general\n%d %d %zu\n", order, order, count);
        for (size_t e = 0; e < count; e++)
            fprintf(file, "%d %d %.17g\n", from[e] + 1, to[e] + 1, bytes[e]);
        failed = ferror(file) | (fclose(file) != 0);
    }
    if (failed) {
        fprintf(stderr, PROGRAM ": --save-matrix \"%s\": %s\n", path, strerror(errno));
        quit(EXIT_FAILED);
    }
}

static FILE *open_output(const char *path)
{
    if (!path)
        return stdout;
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, PROGRAM ": --output \"%s\": %s\n", path, strerror(errno));
        quit(EXIT_FAILED);
    }
    created_output = path;
    return out;
}

static void write_output(FILE *out, const ml_json_t *j, const char *path)
{
    if (j->failed)
        check(MPILENS_MAP_ERR_NOMEM, "writing the result");
    int failed = fwrite(j->buf, 1, j->len, out) != j->len || fputc('\n', out) == EOF || fflush(out) != 0;
    if (out != stdout && fclose(out) != 0)
        failed = 1;
    if (failed) {
        fprintf(stderr, PROGRAM ": writing %s: %s\n", path ? path : "standard output", strerror(errno));
        quit(EXIT_FAILED);
    }
}

int main(int argc, char **argv)
{
    options_t o;
    mpilens_map_algo_t algos[N_ALGOS];
    parse_options(&o, argc, argv);
    int n_algos = parse_algos(o.algo, algos);
    mpilens_map_topology_t *topology = load_topology(o.topology);
    if (o.hosts)
        topology = join_hosts(topology, o.hosts);
    if (o.costs)
        set_costs(topology, o.costs);
    FILE *out = open_output(o.output);

    int64_t start = ml_clock_ns();
    mpilens_map_matrix_t *matrix = NULL;
    if (o.matrix)
        check(mpilens_map_matrix_load(o.matrix, &matrix), "--matrix \"%s\"", o.matrix);
    else
        matrix = generate(o.generate, (unsigned)o.seed);
    double load_seconds = seconds_since(start);
    if (o.save_matrix)
        save_matrix(matrix, o.save_matrix);

    ml_json_t j;
    ml_json_init(&j);
    ml_json_begin_object(&j, NULL);
    ml_json_string(&j, "program", PROGRAM);
    ml_json_string(&j, "version", ml_version_string);
    ml_json_int(&j, "seed", o.seed);
    json_topology(&j, topology);
    json_matrix(&j, matrix, o.matrix ? o.matrix : o.generate);
    ml_json_begin_array(&j, "results");
    for (int a = 0; a < n_algos; a++)
        map_one(&j, topology, matrix, algos[a], &o);
    ml_json_end_array(&j);
    ml_json_double(&j, "load_seconds", load_seconds);
    ml_json_end_object(&j);
    write_output(out, &j, o.output);

    ml_json_free(&j);
    mpilens_map_matrix_free(matrix);
    mpilens_map_topology_free(topology);
    return 0;
}
