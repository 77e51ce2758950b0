/* mpilens-coll: how long does a collective operation take? Seed 003's per-destination method
 * (oli) beside the usual methods, on the library's operation and on reference algorithms whose
 * latency is known under a hop delay (docs/coll.md, docs/methods/coll.md). This file holds the
 * options, the plan of points and the records. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "node.h"

#define OPS "bcast,reduce,allreduce"
#define METHODS "sendlat,rounds,rounds-reverse,barrier,barrier-ring,barrier-dissem,ack,oli"
#define ALGOS "library,linear,backward,binomial,flat"
#define MAX_HOP_DELAY_NS 1000000000LL

/* ---- setup --------------------------------------------------------------------------------- */

/* --wait auto: sleep when this node has more ranks than processing units, since a rank spinning
 * in a wait then takes the core of a rank that has work (a hop to forward, a delay to count). */
static void resolve_wait(coll_t *o)
{
    int share = ml_node_ranks() > ml_node_pus(), any_share;
    MPI_Allreduce(&share, &any_share, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (strcmp(o->wait_name, "auto") == 0)
        o->wait = any_share ? WAIT_SLEEP : WAIT_SPIN;
    else
        o->wait = strcmp(o->wait_name, "sleep") == 0 ? WAIT_SLEEP : WAIT_SPIN;
}

static void resolve_estimator(coll_t *o)
{
    o->estimator = strcmp(o->estimator_name, "mean") == 0 ? COLL_MEAN : COLL_MEDIAN;
}

static void check_options(coll_t *o)
{
    ml_program_t *p = &o->prog;
    if (p->size < 2)
        ml_program_exit_usage(p, "needs at least 2 ranks (a root and a destination); got %d", p->size);
    if (o->hop_delay_ns > MAX_HOP_DELAY_NS)
        ml_program_exit_usage(p,
                              "invalid value for --hop-delay: at most 1s per hop (a point would take hours); "
                              "got %s",
                              ml_options_find(p->options, "hop-delay")->value);
    if (o->min_blocks > o->max_blocks)
        ml_program_exit_usage(p, "--min-blocks %ld is above --max-blocks %ld", o->min_blocks, o->max_blocks);
    if (o->size > INT_MAX)
        ml_program_exit_usage(p, "invalid value for --size: at most %d bytes (MPI counts are int); got %s", INT_MAX,
                              ml_options_find(p->options, "size")->value);
}

/* Three buffers of --size bytes on every rank: refused, on every rank at once, when they would
 * take more than half of this rank's share of the node's memory. */
static void allocate_buffers(coll_t *o)
{
    double need = 3.0 * (double)o->size;
    double have = ml_node_memory_per_rank();
    int too_big = need > have / 2, any;
    MPI_Allreduce(&too_big, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any)
        ml_program_exit_usage(&o->prog,
                              "--size %s needs 3 buffers of that size per rank, more than half of the %.0f MiB "
                              "each rank has on this node; choose a smaller --size",
                              ml_options_find(o->prog.options, "size")->value, have / 1048576);
    size_t len = o->size ? o->size : 1;
    o->data = malloc(len);
    o->result = malloc(len);
    o->tmp = malloc(len);
    int failed = !o->data || !o->result || !o->tmp;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any)
        ml_program_exit_usage(&o->prog, "cannot allocate 3 buffers of %zu bytes", len);
    memset(o->data, o->prog.rank + 1, len);
    memset(o->result, 0, len);
    memset(o->tmp, 0, len);
}

/* ---- records ------------------------------------------------------------------------------- */

static void make_key(char *key, size_t len, const char *method, const coll_point_t *pt)
{
    snprintf(key, len, "%s/op=%s/algo=%s", method, coll_op_names[pt->op], coll_algo_names[pt->algo]);
}

static ml_stop_rule_t sample_rule(const coll_t *o)
{
    ml_stop_rule_t r = o->prog.stop_rule;
    r.fixed_reps = o->rule.fixed;
    r.precision = o->rule.rsd;
    return r;
}

static void doubles(ml_json_t *j, const char *key, const double *v, int n)
{
    ml_json_begin_array(j, key);
    for (int i = 0; i < n; i++)
        ml_json_double(j, NULL, v[i]); /* NAN is written null: not measured */
    ml_json_end_array(j);
}

/* NAME_median_ns or NAME_mean_ns: the estimate under one estimator, whichever was asked for. */
static void write_estimate(ml_json_t *j, const char *name, coll_estimator_t estimator, double value)
{
    char key[64];
    snprintf(key, sizeof key, "%s_%s_ns", name, coll_estimator_names[estimator]);
    ml_json_double(j, key, value);
}

static void ranks_where(ml_json_t *j, const char *key, const int *flag, int n, int value)
{
    ml_json_begin_array(j, key);
    for (int i = 0; i < n; i++)
        if (flag[i] == value)
            ml_json_int(j, NULL, i);
    ml_json_end_array(j);
}

static void begin_point(coll_t *o, ml_json_t *j, const coll_point_t *pt, const char *method, const char *key,
                        const char *from_method)
{
    ml_json_init(j);
    ml_record_point_begin(j, FAMILY, method, key);
    ml_json_string(j, "op", coll_op_names[pt->op]);
    ml_json_string(j, "algo", coll_algo_names[pt->algo]);
    ml_json_string(j, "method", method);
    ml_json_begin_object(j, "params");
    ml_json_string(j, "op", coll_op_names[pt->op]);
    ml_json_string(j, "algo", coll_algo_names[pt->algo]);
    ml_json_string(j, "method", method);
    ml_json_int(j, "np", o->prog.size);
    ml_json_int(j, "size_bytes", (int64_t)o->size);
    ml_json_int(j, "hop_delay_ns", o->hop_delay_ns);
    ml_json_int(j, "block", o->block);
    ml_json_int(j, "root", 0);
    ml_json_string(j, "wait", o->wait == WAIT_SLEEP ? "sleep" : "spin");
    ml_json_string(j, "estimator", coll_estimator_names[o->estimator]);
    ml_json_bool(j, "fast", o->fast);
    if (from_method)
        ml_json_string(j, "from_method", from_method);
    ml_json_end_object(j);
    ml_json_begin_object(j, "stats");
}

/* truth_ns (and per rank) when the algorithm is a reference one under a hop delay: with the
 * delay asked for, and truth_actual_ns with the mean delay the ranks really applied
 * (hop_delay_actual_ns; the latencies are linear in the delay). */
static void write_truth(coll_t *o, ml_json_t *j, const coll_point_t *pt, double actual_delay_ns, int per_rank)
{
    if (o->hop_delay_ns <= 0 || pt->algo == ALGO_LIBRARY)
        return;
    int np = o->prog.size;
    double *truth = malloc((size_t)np * sizeof *truth);
    double max = coll_truth(pt->op, pt->algo, np, (double)o->hop_delay_ns, truth);
    if (pt->op == OP_BCAST)
        truth[0] = NAN; /* the root's OL is not measured: it has the data */
    ml_json_double(j, "truth_ns", max);
    ml_json_double(j, "hop_delay_actual_ns", actual_delay_ns);
    ml_json_double(j, "truth_actual_ns", max * actual_delay_ns / (double)o->hop_delay_ns);
    if (per_rank)
        doubles(j, "per_rank_truth_ns", truth, np);
    free(truth);
}

/* The point's time, how much of it the ranks ran (null where unknown, or where sleeping ranks
 * make not running the point) and its truth. */
static void write_time(coll_t *o, ml_json_t *j, const coll_point_t *pt, int64_t elapsed_ns, const coll_conditions_t *c,
                       int per_rank)
{
    ml_json_int(j, "elapsed_ns", elapsed_ns);
    ml_json_double(j, "off_core_share", c->off_core);
    ml_json_double(j, "steal_share", c->steal);
    write_truth(o, j, pt, c->hop_delay_ns, per_rank);
}

/* The end of a method's point measured in blocks: their spread, count and time, the truth, the
 * sample; then the record is written. */
static void end_blocks_point(coll_t *o, ml_json_t *j, const coll_point_t *pt, const ml_sample_t *blocks,
                             int64_t elapsed_ns, ml_stop_t reason, const coll_conditions_t *c, int oli)
{
    ml_stop_rule_t rule = sample_rule(o);
    ml_json_double(j, "rsd", coll_rsd(blocks->values, blocks->n));
    ml_json_int(j, "blocks", (int64_t)blocks->n);
    write_time(o, j, pt, elapsed_ns, c, oli);
    ml_json_sample(j, "sample", blocks, &rule, reason);
    ml_program_point_end(&o->prog, j);
}

static void write_method(coll_t *o, const coll_point_t *pt, const char *method, const char *key, const coll_result_t *r,
                         const coll_conditions_t *c)
{
    if (o->prog.rank != 0)
        return;
    ml_json_t j;
    begin_point(o, &j, pt, method, key, NULL);
    ml_json_double(&j, "latency_ns", coll_estimate(r->blocks.values, r->blocks.n, o->estimator));
    for (int k = 0; k < COLL_ESTIMATORS; k++)
        write_estimate(&j, "latency", (coll_estimator_t)k, coll_estimate(r->blocks.values, r->blocks.n, k));
    end_blocks_point(o, &j, pt, &r->blocks, r->elapsed_ns, r->reason, c, 0);
}

/* What OSU (mean over ranks of each rank's mean local time) and IMB (the largest of them) would
 * report, from the runs of the barrier method with the library's barrier: the loop both run. */
static void write_local_time_methods(coll_t *o, const coll_point_t *pt, const coll_result_t *r,
                                     const coll_conditions_t *c)
{
    int np = o->prog.size;
    static const char *const names[] = {"osu", "imb"};
    for (int m = 0; m < 2; m++) {
        char key[128];
        make_key(key, sizeof key, names[m], pt);
        if (o->prog.rank == 0 && !ml_program_skip(&o->prog, key)) {
            double sum = 0, max = 0;
            for (int i = 0; i < np; i++) {
                sum += r->local_ns[i];
                max = fmax(max, r->local_ns[i]);
            }
            ml_json_t j;
            begin_point(o, &j, pt, names[m], key, "barrier");
            ml_json_double(&j, "latency_ns", m == 0 ? sum / np : max);
            doubles(&j, "per_rank_local_ns", r->local_ns, np);
            write_time(o, &j, pt, r->elapsed_ns, c, 0);
            ml_program_point_end(&o->prog, &j);
        }
        ml_program_progress(&o->prog, key);
    }
}

static void write_oli(coll_t *o, const coll_point_t *pt, const char *key, const coll_oli_t *r,
                      const coll_conditions_t *c)
{
    if (o->prog.rank != 0)
        return;
    int np = r->np, any_remedy = 0;
    for (int i = 0; i < np; i++)
        any_remedy |= r->gap_bound[i];
    ml_json_t j;
    begin_point(o, &j, pt, "oli", key, NULL);
    ml_json_double(&j, "latency_ns", r->argmax >= 0 ? r->ol[r->argmax] : NAN);
    ml_json_int(&j, "argmax_rank", r->argmax);
    doubles(&j, "per_rank_ns", r->ol, np);
    for (int k = 0; k < COLL_ESTIMATORS; k++) { /* the largest OL_i of the tasks measured in full */
        double max = NAN;
        for (int i = 0; i < np; i++)
            if (r->measured[i] == 2 && !isnan(r->ol_by[k][i]) && (isnan(max) || r->ol_by[k][i] > max))
                max = r->ol_by[k][i];
        write_estimate(&j, "latency", (coll_estimator_t)k, max);
        char key[64];
        snprintf(key, sizeof key, "per_rank_%s_ns", coll_estimator_names[k]);
        doubles(&j, key, r->ol_by[k], np);
    }
    doubles(&j, "per_rank_e_ns", r->e, np);
    doubles(&j, "per_rank_rtl_ns", r->rtl, np);
    doubles(&j, "per_rank_clock_ns", r->clock_ol, np);
    ml_json_double(&j, "gap_ns", r->gap_ns);
    ml_json_double(&j, "settle_ns", r->settle_ns);
    ranks_where(&j, "gap_bound_ranks", r->gap_bound, np, 1);
    ml_json_string(&j, "remedy", any_remedy ? "clock" : NULL);
    if (o->fast) {
        ranks_where(&j, "measured_ranks", r->measured, np, 2);
        ranks_where(&j, "audited_ranks", r->measured, np, 1);
        doubles(&j, "cheap_ns", r->cheap, np);
    }
    end_blocks_point(o, &j, pt, &r->blocks, r->elapsed_ns, r->reason, c, 1);
}

/* ---- the plan -------------------------------------------------------------------------------- */

static int selected(const coll_t *o, const char *method) { return ml_list_contains(&o->methods, method); }

static long points_total(const coll_t *o)
{
    long per_pair = (long)o->methods.n + (selected(o, "barrier") ? 2 : 0);
    return (long)o->ops.n * (long)o->algos.n * per_pair;
}

/* Runs one usual method (everything but oli) and writes its record; returns its estimate on rank 0
 * (sendlat's is the gap that oli checks against). */
static double run_method(coll_t *o, const coll_point_t *pt, const char *method, int record)
{
    char key[128];
    make_key(key, sizeof key, method, pt);
    coll_result_t r;
    memset(&r, 0, sizeof r);
    int rc;
    coll_conditions_start();
    if (strcmp(method, "sendlat") == 0)
        rc = coll_sendlat(o, pt, &r);
    else if (strncmp(method, "rounds", 6) == 0)
        rc = coll_rounds(o, pt, strcmp(method, "rounds-reverse") == 0, &r);
    else if (strncmp(method, "barrier", 7) == 0)
        rc = coll_barrier_method(o, pt, method, &r);
    else
        rc = coll_ack(o, pt, &r);
    double value = NAN;
    coll_conditions_t conditions = coll_conditions_end(o);
    if (rc != 0) {
        char text[160];
        snprintf(text, sizeof text, "%s: %s has no root to rotate; not measured", method, coll_op_names[pt->op]);
        ml_program_note(&o->prog, "skip", text, key);
    } else {
        if (o->prog.rank == 0 && r.blocks.n > 0)
            value = coll_estimate(r.blocks.values, r.blocks.n, o->estimator);
        if (record)
            write_method(o, pt, method, key, &r, &conditions);
    }
    if (record)
        ml_program_progress(&o->prog, key);
    if (record && rc == 0 && strcmp(method, "barrier") == 0)
        write_local_time_methods(o, pt, &r, &conditions);
    coll_result_free(&r);
    return value;
}

static void run_pair(coll_t *o, const coll_point_t *pt)
{
    static const char *const order[] = {"sendlat",        "rounds", "rounds-reverse", "barrier", "barrier-ring",
                                        "barrier-dissem", "ack"};
    char key[128];
    double gap = NAN; /* the root's gap g_0, on rank 0 */
    int have_gap = 0; /* the same on every rank */
    for (size_t m = 0; m < sizeof order / sizeof order[0]; m++) {
        if (!selected(o, order[m]))
            continue;
        make_key(key, sizeof key, order[m], pt);
        if (ml_program_skip(&o->prog, key)) {
            ml_program_progress(&o->prog, key);
            if (strcmp(order[m], "barrier") == 0) /* osu and imb come with it */
                for (int k = 0; k < 2; k++)
                    ml_program_progress(&o->prog, key);
            continue;
        }
        double value = run_method(o, pt, order[m], 1);
        if (m == 0) {
            gap = value;
            have_gap = 1;
        }
    }
    if (!selected(o, "oli"))
        return;
    make_key(key, sizeof key, "oli", pt);
    if (!ml_program_skip(&o->prog, key)) {
        /* oli checks each E_i against the root's gap: measured here when sendlat was not */
        if (pt->op == OP_BCAST && !have_gap)
            gap = run_method(o, pt, "sendlat", 0);
        coll_oli_t r;
        coll_conditions_start();
        coll_oli(o, pt, gap, &r);
        coll_conditions_t conditions = coll_conditions_end(o);
        write_oli(o, pt, key, &r, &conditions);
        coll_oli_free(&r);
    }
    ml_program_progress(&o->prog, key);
}

int main(int argc, char **argv)
{
    static const ml_program_spec_t spec = {
        .family = FAMILY,
        .program = "mpilens-coll",
        .summary = "How long does a collective operation take? Measures the latency of broadcast, reduce and\n"
                   "allreduce per destination with seed 003's method (oli: OL_i = E_i - RTL_i/2 for each task,\n"
                   "their maximum), beside the usual methods (sendlat, rounds, barrier, ack, and what OSU and IMB\n"
                   "report), on the library's operation and on reference algorithms whose latency is known under\n"
                   "--hop-delay (docs/coll.md). Needs at least 2 ranks.",
        .thread_level = MPI_THREAD_SINGLE,
        .thread_level_required = MPI_THREAD_SINGLE,
        .default_reps = "auto",
    };
    coll_t o;
    memset(&o, 0, sizeof o);
    ml_option_t options[] = {
        {"op", ML_OPT_LIST, "LIST", "bcast", OPS, "operations to measure", &o.ops, 0, 0, NULL},
        {"method", ML_OPT_LIST, "LIST", "all", METHODS, "methods to measure them with", &o.methods, 0, 0, NULL},
        {"algo", ML_OPT_LIST, "LIST", "all", ALGOS, "the library's operation and reference algorithms", &o.algos, 0, 0,
         NULL},
        {"size", ML_OPT_SIZE, "BYTES", "256", NULL, "message size (the seed's 256 B)", &o.size, 0, 0, NULL},
        {"hop-delay", ML_OPT_TIME, "TIME", "0", NULL,
         "reference algorithms wait this long before every send (a bare number is us)", &o.hop_delay_ns, 0, 0, NULL},
        {"block", ML_OPT_INT, "M", "100", NULL, "operations per block (the seed's M)", &o.block, 1, 100000, NULL},
        {"min-blocks", ML_OPT_INT, "N", "8", NULL, "blocks at least, under --reps auto", &o.min_blocks, 1, 10000, NULL},
        {"max-blocks", ML_OPT_INT, "N", "30", NULL, "blocks at most, under --reps auto", &o.max_blocks, 1, 10000, NULL},
        {"rsd", ML_OPT_FRACTION, "F", "3%", NULL, "stop when the blocks' relative standard deviation is below F",
         &o.rsd, 0, 0, NULL},
        {"fast", ML_OPT_FLAG, NULL, NULL, NULL, "oli: measure in full only the likely last task, plus audits", &o.fast,
         0, 0, NULL},
        {"audits", ML_OPT_INT, "N", "1", NULL, "--fast: tasks drawn at random to check the candidate", &o.audits, 0,
         1000, NULL},
        {"seed", ML_OPT_INT, "N", "1", NULL, "--fast: seed of the random draw", &o.seed, 0, INT_MAX, NULL},
        {"estimator", ML_OPT_CHOICE, "median|mean", "median", "median,mean",
         "a point's estimate: the median of its blocks (each oli block the median of its operations), or "
         "the mean of both (the seed's); the other is recorded beside it",
         &o.estimator_name, 0, 0, NULL},
        {"wait", ML_OPT_CHOICE, "auto|spin|sleep", "auto", "auto,spin,sleep",
         "how ranks wait: spin, or sleep between checks (auto: sleep when ranks share cores)", &o.wait_name, 0, 0,
         NULL},
        ML_OPTIONS_END,
    };
    ml_program_init(&o.prog, &spec, options, argc, argv);
    check_options(&o);
    resolve_wait(&o);
    resolve_estimator(&o);
    allocate_buffers(&o);
    MPI_Comm_dup(MPI_COMM_WORLD, &o.comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &o.ctl);

    ml_program_begin(&o.prog, points_total(&o));
    /* --reps N is known once ml_program_begin has read it: N blocks exactly */
    o.rule.fixed = o.prog.stop_rule.fixed_reps;
    o.rule.min_blocks = (size_t)o.min_blocks;
    o.rule.max_blocks = (size_t)o.max_blocks;
    o.rule.rsd = o.rsd;
    for (size_t a = 0; a < o.ops.n; a++)
        for (size_t b = 0; b < o.algos.n; b++) {
            coll_point_t pt = {OP_BCAST, ALGO_LIBRARY};
            for (int k = 0; k < N_OPS; k++)
                if (strcmp(o.ops.items[a], coll_op_names[k]) == 0)
                    pt.op = (coll_op_t)k;
            for (int k = 0; k < N_ALGOS; k++)
                if (strcmp(o.algos.items[b], coll_algo_names[k]) == 0)
                    pt.algo = (coll_algo_t)k;
            run_pair(&o, &pt);
        }

    MPI_Comm_free(&o.comm);
    MPI_Comm_free(&o.ctl);
    free(o.data);
    free(o.result);
    free(o.tmp);
    return ml_program_finish(&o.prog);
}
