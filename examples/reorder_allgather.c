/* mpilens-example-reorder-allgather: does reordering ranks at run time pay off? (seed 004, 6.4
 * and 6.3; docs/examples.md)
 *
 * Groups of G ranks each do MPI_Allgather on a communicator of their own, group g holding the
 * ranks r with r % (size / G) == g: under a packed placement (consecutive ranks on the same node)
 * every group spans the nodes. For each number of iterations n and size B, one repetition
 *   - runs n allgathers of B bytes per rank, the first under a monitoring session on
 *     MPI_COMM_WORLD (t1: their time, the slowest rank's);
 *   - reorders (t2): ends the session, gathers its matrix, maps (mpilens_map_reorder_session),
 *     splits MPI_COMM_WORLD, and rebuilds the groups by the same rule on the new ranks;
 *   - runs n allgathers on the new groups (t3).
 * The gain is the seed's 100 (t1 - (t2 + t3)) / t1; the predicted gain compares the cost model's
 * weighted bytes of the placement before and after. Every point reorders anew so that t2 is what
 * reordering really costs. Times come from the core's clock; each point is repeated and its
 * medians recorded (docs/examples.md describes the results file).
 *
 * --collective bcast|reduce is section 6.3 (figure 5): one MPI_Bcast (MPI_Reduce) from rank 0 of
 * all ranks, the ranks given round robin over the nodes (rank k on node k % nodes) as a
 * launcher does without instructions. The rule that makes the groups is then "one group, ordered
 * round robin", applied again to the new ranks after reordering. What the mapping sees is what
 * monitoring counted: the messages the MPI library really sent to carry out the collective (its
 * tree) where Open MPI's monitoring is on (MPI_M_get_backend), else the collective's logical
 * pattern (root to every rank), which no placement improves. */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "meta.h"
#include "mpi_monitoring.h"
#include "mpilens/map.h"
#include "node.h"
#include "options.h"
#include "progress.h"
#include "results.h"
#include "stats.h"
#include "units.h"

#define PROGRAM "mpilens-example-reorder-allgather"
#include "reorder_checks.h"
#define FAMILY "map"
/* the bench of each --collective */
static const char *const collectives[] = {"allgather", "bcast", "reduce"};
static const char *const benches[] = {"allgather_groups", "bcast_reorder", "reduce_reorder"};
#define MAX_VALUES 64
#define TOPOLOGY_TEXT 512 /* room for any description (8 levels and their costs) */

typedef struct {
    long group, repeat;
    const char *collective, *algo_name, *topology_spec, *iterations_text, *sizes_text, *output;
    int quiet;
} options_t;

typedef struct {
    int rank, size, ngroups;
    int op;         /* index of --collective in collectives[] */
    int group_size; /* ranks per group: --group, or all of them for bcast and reduce */
    int nodes;      /* bcast, reduce: the nodes the ranks are given round robin over */
    options_t opt;
    ml_option_t *table;
    mpilens_map_algo_t algo;
    mpilens_map_topology_t *topology; /* NULL: the machine the ranks run on */
    char topology_text[TOPOLOGY_TEXT];
    int all_bound;
    long iterations[MAX_VALUES];
    uint64_t sizes[MAX_VALUES];
    int n_iterations, n_sizes;
    MPI_Comm world_group; /* this rank's group before any reordering */
    char *sendbuf, *recvbuf;
    ml_results_t *results; /* rank 0 */
} demo_t;

/* One repetition of a point: the slowest rank's time of each phase, and what the mapping said. */
typedef struct {
    double before_s, reorder_s, after_s;
    mpilens_map_cost_t before, after;
} repetition_t;

/* ---------------------------------------------------------------- errors */

/* Every rank meets the same bad option, so all of them come here; rank 0 speaks. */
_Noreturn static void exit_usage(const demo_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn static void exit_usage(const demo_t *d, const char *fmt, ...)
{
    if (d->rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fputs(PROGRAM ": ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

/* ---------------------------------------------------------------- options */

/* "1,10,100": positive integers, none twice (each point needs a key of its own). */
static int parse_iterations(const char *text, long *values, int *count)
{
    int n = 0;
    for (const char *p = text;; p++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 100000000 || n == MAX_VALUES || (*end != ',' && *end != '\0'))
            return -1;
        for (int i = 0; i < n; i++)
            if (values[i] == v)
                return -1;
        values[n++] = v;
        if (*end == '\0')
            break;
        p = end;
    }
    *count = n;
    return 0;
}

/* "1K,64K": sizes in the core's grammar, from 1 byte to INT_MAX (MPI counts), none twice. */
static int parse_sizes(const char *text, uint64_t *values, int *count)
{
    int n = 0;
    char item[64];
    for (const char *p = text;;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof item || n == MAX_VALUES)
            return -1;
        memcpy(item, p, len);
        item[len] = '\0';
        uint64_t v;
        if (ml_parse_size(item, &v) != 0 || v < 1 || v > INT_MAX)
            return -1;
        for (int i = 0; i < n; i++)
            if (values[i] == v)
                return -1;
        values[n++] = v;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    *count = n;
    return 0;
}

static void parse_options(demo_t *d, int argc, char **argv)
{
    options_t *o = &d->opt;
    const ml_option_t table[] = {
        {"collective", ML_OPT_CHOICE, "NAME", "allgather", "allgather,bcast,reduce",
         "allgather in groups (section 6.4), or one bcast or reduce of all ranks given round robin over the nodes "
         "(section 6.3)",
         &o->collective, 0, 0, NULL},
        {"group", ML_OPT_INT, "G", "2", NULL,
         "allgather: ranks per group; the number of ranks must be a multiple (bcast and reduce: all ranks)", &o->group,
         2, 1 << 20, NULL},
        {"algo", ML_OPT_STRING, "NAME", "treematch", NULL,
         "mapping algorithm: treematch, greedy, scotch, identity, packed, rr, random", &o->algo_name, 0, 0, NULL},
        {"topology", ML_OPT_STRING, "SPEC", NULL, NULL,
         "synthetic machine, rank r on its slot r, e.g. \"node:2 core:2\" (default: the real one)", &o->topology_spec,
         0, 0, NULL},
        {"iterations", ML_OPT_STRING, "LIST", "1,10,100,1000", NULL, "collectives per phase, comma-separated",
         &o->iterations_text, 0, 0, NULL},
        {"sizes", ML_OPT_STRING, "LIST", "1K,10K,100K,1M", NULL, "bytes each rank contributes, comma-separated",
         &o->sizes_text, 0, 0, NULL},
        {"repeat", ML_OPT_INT, "R", "3", NULL, "repetitions of each point (medians are recorded)", &o->repeat, 1,
         1000000, NULL},
        {"output", ML_OPT_STRING, "FILE", "reorder-allgather.jsonl", NULL, "results file (JSON Lines)", &o->output, 0,
         0, NULL},
        {"quiet", ML_OPT_FLAG, NULL, NULL, NULL, "no progress lines on stderr", &o->quiet, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    d->table = malloc(sizeof table);
    if (!d->table)
        exit_usage(d, "out of memory");
    memcpy(d->table, table, sizeof table);

    char err[512];
    switch (ml_options_parse(d->table, argc, argv, err, sizeof err)) {
    case ML_OPTIONS_HELP:
        if (d->rank == 0)
            ml_options_usage(stdout, PROGRAM,
                             "Groups of ranks spanning the nodes do MPI_Allgather; reordering the ranks at run time\n"
                             "(monitoring, mapping, MPI_Comm_split) brings each group together. Measures, for each\n"
                             "number of iterations and size, the time before, the time of reordering and the time\n"
                             "after (seed 004, section 6.4); with --collective bcast or reduce, the same for one\n"
                             "collective of all ranks given round robin over the nodes (section 6.3).",
                             d->table);
        MPI_Finalize();
        exit(0);
    case ML_OPTIONS_VERSION:
        if (d->rank == 0)
            printf("%s %s\n", PROGRAM, ml_version_string);
        MPI_Finalize();
        exit(0);
    case ML_OPTIONS_ERROR: exit_usage(d, "%s", err);
    default: break;
    }
    if (parse_iterations(o->iterations_text, d->iterations, &d->n_iterations) != 0)
        exit_usage(d,
                   "invalid value \"%s\" for --iterations: expected distinct integers from 1 to 100000000, "
                   "comma-separated",
                   o->iterations_text);
    if (parse_sizes(o->sizes_text, d->sizes, &d->n_sizes) != 0)
        exit_usage(d,
                   "invalid value \"%s\" for --sizes: expected distinct sizes from 1 to 2GiB-1 such as 1K or 64K, "
                   "comma-separated",
                   o->sizes_text);
    while (strcmp(collectives[d->op], o->collective) != 0)
        d->op++;
    /* an option left at its default holds the default's own text */
    if (d->op != 0 && ml_options_find(d->table, "group")->value != ml_options_find(d->table, "group")->defval)
        exit_usage(d, "--group is allgather's: --collective %s takes all ranks", o->collective);
    d->group_size = d->op == 0 ? (int)o->group : d->size;
    if (d->size % d->group_size != 0)
        exit_usage(d, "invalid value \"%ld\" for --group: the %d ranks must be a multiple of it", o->group, d->size);
    d->ngroups = d->size / d->group_size;
}

static void choose_algo(demo_t *d)
{
    int available = 0;
    if (mpilens_map_algo_parse(d->opt.algo_name, &d->algo) != MPILENS_MAP_OK)
        exit_usage(d,
                   "invalid value \"%s\" for --algo: expected treematch, greedy, scotch, identity, packed, rr or "
                   "random",
                   d->opt.algo_name);
    if (mpilens_map_algo_available(d->algo, &available) != MPILENS_MAP_OK || !available)
        exit_usage(d, "--algo %s is not available in this build", d->opt.algo_name);
}

/* The machine the mapping works on, and its text for the results. */
static void choose_topology(demo_t *d)
{
    mpilens_map_topology_t *t = NULL;
    if (d->opt.topology_spec) {
        long slots = 0;
        if (mpilens_map_topology_synthetic(d->opt.topology_spec, &t) != MPILENS_MAP_OK)
            exit_usage(d,
                       "invalid value \"%s\" for --topology: expected levels NAME:ARITY from the top, such as "
                       "\"node:2 core:2\", optionally cost=C0,C1,...",
                       d->opt.topology_spec);
        mpilens_map_topology_slots(t, &slots);
        if (slots < d->size) {
            mpilens_map_topology_free(t);
            exit_usage(d, "invalid value \"%s\" for --topology: its %ld slots cannot hold the %d ranks",
                       d->opt.topology_spec, slots, d->size);
        }
        /* rank r is taken to be on slot r: where the ranks really are does not matter */
        d->all_bound = 1;
        d->topology = t;
    } else {
        long *slot_of_rank = malloc(sizeof(long) * (size_t)d->size);
        if (!slot_of_rank)
            die("allocation", "out of memory");
        check_map(mpilens_map_topology_of_comm(MPI_COMM_WORLD, &t, slot_of_rank, &d->all_bound),
                  "finding the machine (mpilens_map_topology_of_comm)");
        free(slot_of_rank);
    }
    check_map(mpilens_map_topology_describe(t, d->topology_text, sizeof d->topology_text), "describing the topology");
    check_map(mpilens_map_topology_arity(t, 0, &d->nodes), "counting the nodes");
    if (d->op != 0 && d->size % d->nodes != 0)
        exit_usage(d, "--collective %s gives the ranks round robin over the %d nodes: the %d ranks must be a multiple",
                   d->opt.collective, d->nodes, d->size);
    if (!d->topology)
        mpilens_map_topology_free(t);
}

/* ---------------------------------------------------------------- measurement */

static double seconds_since(int64_t start_ns) { return (double)(ml_clock_ns() - start_ns) * 1e-9; }

/* n of the collective, on its group */
static void collectives_of(const demo_t *d, long n, int bytes, MPI_Comm group)
{
    for (long i = 0; i < n; i++)
        if (d->op == 0)
            MPI_Allgather(d->sendbuf, bytes, MPI_BYTE, d->recvbuf, bytes, MPI_BYTE, group);
        else if (d->op == 1)
            MPI_Bcast(d->sendbuf, bytes, MPI_BYTE, 0, group);
        else
            MPI_Reduce(d->sendbuf, d->recvbuf, bytes, MPI_BYTE, MPI_BOR, 0, group);
}

/* The group of `rank` of comm by the rule: allgather, group rank % ngroups in rank order;
 * bcast and reduce, all ranks, the one on slot r (r = rank, packed over the nodes) taking rank
 * (r % per node) x nodes + r / per node, so that ranks 0, 1, ... lie on nodes 0, 1, .... */
static MPI_Comm group_by_rule(const demo_t *d, MPI_Comm comm)
{
    int rank, per_node = d->size / d->nodes;
    MPI_Comm group;
    MPI_Comm_rank(comm, &rank);
    if (d->op == 0)
        MPI_Comm_split(comm, rank % d->ngroups, rank, &group);
    else
        MPI_Comm_split(comm, 0, rank % per_node * d->nodes + rank / per_node, &group);
    return group;
}

/* One repetition: n allgathers (the first monitored), the reordering, n allgathers after it.
 * Barriers separate the phases so that each starts with every rank. */
static void repeat_once(const demo_t *d, long n, int bytes, repetition_t *out, int *new_rank_of)
{
    MPI_M_msid msid;
    MPI_Comm newcomm, group;
    double mine[3];

    MPI_Barrier(MPI_COMM_WORLD);
    int64_t start = ml_clock_ns();
    check_monitor(MPI_M_start(MPI_COMM_WORLD, &msid), "MPI_M_start");
    double reorder_s = seconds_since(start);
    start = ml_clock_ns();
    collectives_of(d, 1, bytes, d->world_group);
    double before_s = seconds_since(start);
    start = ml_clock_ns();
    check_monitor(MPI_M_suspend(msid), "MPI_M_suspend");
    reorder_s += seconds_since(start);
    start = ml_clock_ns();
    collectives_of(d, n - 1, bytes, d->world_group);
    mine[0] = before_s + seconds_since(start);

    MPI_Barrier(MPI_COMM_WORLD);
    start = ml_clock_ns();
    check_map(mpilens_map_reorder_session(MPI_COMM_WORLD, msid, MPI_M_ALL_COMM, d->topology, d->algo, &newcomm,
                                          new_rank_of, &out->before, &out->after),
              "reordering (mpilens_map_reorder_session)");
    check_monitor(MPI_M_free(msid), "MPI_M_free");
    group = group_by_rule(d, newcomm); /* the same rule on the new ranks */
    mine[1] = reorder_s + seconds_since(start);

    MPI_Barrier(MPI_COMM_WORLD);
    start = ml_clock_ns();
    collectives_of(d, n, bytes, group);
    mine[2] = seconds_since(start);

    MPI_Comm_free(&group);
    MPI_Comm_free(&newcomm);
    double slowest[3];
    MPI_Allreduce(mine, slowest, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    out->before_s = slowest[0];
    out->reorder_s = slowest[1];
    out->after_s = slowest[2];
}

static double median(const double *values, size_t n)
{
    ml_summary_t s;
    if (ml_summarize(values, n, 0.95, &s) != 0)
        die("summarizing", "out of memory");
    return s.median;
}

static void json_values(ml_json_t *j, const char *key, const double *values, size_t n)
{
    ml_json_begin_array(j, key);
    for (size_t i = 0; i < n; i++)
        ml_json_double(j, NULL, values[i]);
    ml_json_end_array(j);
}

/* The point record (rank 0). times[phase][repetition]; costs and new_rank_of from the last
 * repetition: the matrix and the mapping are the same in every one. */
static void write_point(demo_t *d, const char *key, long n, uint64_t bytes, double *const times[3],
                        const repetition_t *last, const int *new_rank_of)
{
    size_t reps = (size_t)d->opt.repeat;
    double t1 = median(times[0], reps), t2 = median(times[1], reps), t3 = median(times[2], reps);
    const char *algo;
    check_map(mpilens_map_algo_name(d->algo, &algo), "naming the algorithm");
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, FAMILY, benches[d->op], key);
    ml_json_begin_object(&j, "params");
    ml_json_int(&j, "iterations", n);
    ml_json_int(&j, "size_bytes", (int64_t)bytes);
    ml_json_int(&j, "group", d->group_size);
    ml_json_string(&j, "algo", algo);
    ml_json_string(&j, "topology", d->topology_text);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    ml_json_double(&j, "before_s", t1);
    ml_json_double(&j, "reorder_s", t2);
    ml_json_double(&j, "after_s", t3);
    ml_json_double(&j, "gain_pct", 100.0 * (t1 - (t2 + t3)) / t1);
    ml_json_double(&j, "predicted_gain_pct", 100.0 * (1.0 - last->after.weighted_bytes / last->before.weighted_bytes));
    ml_json_double(&j, "weighted_before", last->before.weighted_bytes);
    ml_json_double(&j, "weighted_after", last->after.weighted_bytes);
    ml_json_double(&j, "hop_bytes_before", last->before.hop_bytes);
    ml_json_double(&j, "hop_bytes_after", last->after.hop_bytes);
    ml_json_int(&j, "all_bound", d->all_bound);
    /* what the mapping saw of the collective: the messages the library sent, or its logical pattern */
    int backend = 0;
    check_monitor(MPI_M_get_backend(MPI_M_COLL_ONLY, &backend), "MPI_M_get_backend");
    ml_json_string(&j, "coll_backend", backend == MPI_M_BACKEND_OMPI_MPIT ? "ompi-mpit" : "pmpi");
    ml_json_begin_array(&j, "new_rank_of");
    for (int r = 0; r < d->size; r++)
        ml_json_int(&j, NULL, new_rank_of[r]);
    ml_json_end_array(&j);
    /* the repetitions behind the medians, in the order measured */
    ml_json_begin_object(&j, "samples");
    json_values(&j, "before_s", times[0], reps);
    json_values(&j, "reorder_s", times[1], reps);
    json_values(&j, "after_s", times[2], reps);
    ml_json_end_object(&j);
    ml_json_end_object(&j);
    ml_json_end_object(&j);
    if (j.failed || ml_results_append(d->results, j.buf) != 0) {
        fprintf(stderr, PROGRAM ": cannot write results to \"%s\"; the points written before are kept\n",
                d->opt.output);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    ml_json_free(&j);
}

static void measure_point(demo_t *d, long n, uint64_t bytes, int *new_rank_of)
{
    size_t reps = (size_t)d->opt.repeat;
    double *times[3];
    for (int phase = 0; phase < 3; phase++)
        if (!(times[phase] = malloc(sizeof(double) * reps)))
            die("allocation", "out of memory");
    repetition_t rep;
    for (size_t r = 0; r < reps; r++) {
        repeat_once(d, n, (int)bytes, &rep, new_rank_of);
        times[0][r] = rep.before_s;
        times[1][r] = rep.reorder_s;
        times[2][r] = rep.after_s;
    }
    if (d->rank == 0) {
        char key[128];
        snprintf(key, sizeof key, "%s/iterations=%ld/size_bytes=%llu", benches[d->op], n, (unsigned long long)bytes);
        write_point(d, key, n, bytes, times, &rep, new_rank_of);
    }
    for (int phase = 0; phase < 3; phase++)
        free(times[phase]);
}

/* ---------------------------------------------------------------- set-up */

/* The largest size needs its send buffer and G of them to receive; refuse what would not fit. */
static void allocate_buffers(demo_t *d)
{
    uint64_t largest = 0;
    for (int s = 0; s < d->n_sizes; s++)
        largest = d->sizes[s] > largest ? d->sizes[s] : largest;
    int receives = d->op == 0 ? d->group_size : 1; /* an allgather receives from its whole group */
    double need = (double)largest * (double)(receives + 1), have = ml_node_memory_per_rank();
    int too_big = need > have / 2, any;
    MPI_Allreduce(&too_big, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any) {
        char needs[32], haves[32];
        ml_format_bytes(needs, sizeof needs, need);
        ml_format_bytes(haves, sizeof haves, have);
        exit_usage(d,
                   "--sizes and --group need %s of buffers per rank, more than half of the %s each rank has; "
                   "use smaller sizes",
                   needs, haves);
    }
    d->sendbuf = malloc((size_t)largest);
    d->recvbuf = malloc((size_t)largest * (size_t)receives);
    if (!d->sendbuf || !d->recvbuf)
        die("allocation", "out of memory");
    memset(d->sendbuf, d->rank & 0xff, (size_t)largest);
}

/* Rank 0 writes the meta record; every rank learns whether that worked. */
static void open_results(demo_t *d, int argc, char **argv)
{
    ml_clock_info_t clock;
    ml_clock_measure(&clock);
    int provided;
    MPI_Query_thread(&provided);
    ml_meta_args_t args = {
        .family = FAMILY,
        .program = PROGRAM,
        .argc = argc,
        .argv = argv,
        .clock = &clock,
        .options = d->table,
        .points_total = (long)d->n_iterations * d->n_sizes,
        .thread_level = provided,
    };
    ml_json_t meta;
    ml_json_init(&meta);
    char err[512] = "cannot collect the run's metadata";
    int status = ml_meta_build(MPI_COMM_WORLD, &args, &meta) == MPI_SUCCESS ? 0 : -1;
    if (status == 0 && d->rank == 0) {
        struct stat st;
        /* mpilens' benchmarks resume such a file; this demo has no --resume, so it just refuses */
        if (stat(d->opt.output, &st) == 0 && st.st_size > 0) {
            snprintf(err, sizeof err, "output \"%s\" already holds results; remove it or choose another --output",
                     d->opt.output);
            status = -1;
        } else
            status = ml_results_create(d->opt.output, meta.buf, &d->results, err, sizeof err);
    }
    ml_json_free(&meta);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0)
        exit_usage(d, "%s", err);
}

int main(int argc, char **argv)
{
    demo_t d;
    memset(&d, 0, sizeof d);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &d.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d.size);
    parse_options(&d, argc, argv);
    choose_algo(&d);
    choose_topology(&d);
    allocate_buffers(&d);
    open_results(&d, argc, argv);
    check_monitor(MPI_M_init(), "MPI_M_init");
    d.world_group = group_by_rule(&d, MPI_COMM_WORLD);

    int *new_rank_of = malloc(sizeof(int) * (size_t)d.size);
    if (!new_rank_of)
        die("allocation", "out of memory");
    ml_progress_t progress;
    ml_progress_start(&progress, d.rank == 0 && !d.opt.quiet, (long)d.n_iterations * d.n_sizes, 0);
    for (int i = 0; i < d.n_iterations; i++)
        for (int s = 0; s < d.n_sizes; s++) {
            measure_point(&d, d.iterations[i], d.sizes[s], new_rank_of);
            char what[64];
            snprintf(what, sizeof what, "iterations=%ld size_bytes=%llu", d.iterations[i],
                     (unsigned long long)d.sizes[s]);
            ml_progress_step(&progress, what);
        }
    ml_progress_end(&progress);

    int status = 0;
    if (d.rank == 0 && ml_results_close(d.results) != 0) {
        fprintf(stderr, PROGRAM ": writing \"%s\" failed at the end\n", d.opt.output);
        status = 2;
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(new_rank_of);
    free(d.sendbuf);
    free(d.recvbuf);
    free(d.table);
    MPI_Comm_free(&d.world_group);
    if (d.topology)
        mpilens_map_topology_free(d.topology);
    check_monitor(MPI_M_finalize(), "MPI_M_finalize");
    MPI_Finalize();
    return status;
}
