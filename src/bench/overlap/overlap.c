/* mpilens-overlap: does non-blocking communication progress while the program computes?
 *
 * The benchmark suite of seed 000 over message size x computation time, plus non-blocking
 * collectives, several pending requests, late receivers and a blocking control
 * (docs/overlap.md). This file holds options, the parameter space, memory and the map records. */
#include <inttypes.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "node.h"
#include "overlap.h"
#include "warmup.h"
#include "series.h"
#include "sync.h"

#define BENCHES                                                                                                        \
    "sender,receiver,bidir,noncontig,cpu,nload,control,late,multi,multi-same,threads,ibcast,iallreduce,ialltoall"

int overlap_selected(const overlap_t *o, const char *bench) { return ml_list_contains(&o->benches, bench); }

/* ---- options and presets --------------------------------------------------------------- */

typedef struct {
    const char *name, *sizes, *compute, *density, *reps, *decide;
} preset_t;

/* The longest computation a point may ask for: 1 s, repeated reps times for each size. */
#define MAX_COMPUTE_NS 1000000000LL

static const preset_t presets[] = {
    {"quick", "1:1M", "1us:1ms", "1", "10", "on"},
    {"default", "1:16M", "1us:10ms", "2", "50", "on"},
    {"full", "1:16M", "1us:10ms", "2", "auto", "off"},
};

/* The processing units this rank may run on (its binding), at least 1. */
static int rank_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
}

/* Options whose default depends on --preset (or on the machine) get it once --preset is known. */
static void apply_presets(overlap_t *o)
{
    const preset_t *p = &presets[1];
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++)
        if (strcmp(presets[i].name, o->preset) == 0)
            p = &presets[i];
    static char pus[16]; /* the option keeps this text: it must outlive this function */
    snprintf(pus, sizeof pus, "%d", ml_node_pus());
    ml_option_t *t = o->prog.options;
    /* A repetition count given explicitly is what every point takes, unless --decide says so. */
    const char *decide = ml_options_find(t, "reps")->value ? "off" : p->decide;
    int openmp = strcmp(o->kernel, "openmp") == 0;
    if (ml_options_find(t, "omp-threads")->value && !openmp)
        ml_program_exit_usage(&o->prog, "--omp-threads needs --kernel openmp");
    static char rank_pus[16];
    snprintf(rank_pus, sizeof rank_pus, "%d", rank_cpus());
    if (ml_options_default_late(t, "sizes", p->sizes) || ml_options_default_late(t, "compute", p->compute) ||
        ml_options_default_late(t, "density", p->density) || ml_options_default_late(t, "reps", p->reps) ||
        ml_options_default_late(t, "threads", pus) || ml_options_default_late(t, "decide", decide) ||
        /* 0 under the time kernel: no region (the meta records a value, which --resume compares) */
        ml_options_default_late(t, "omp-threads", openmp ? rank_pus : "0"))
        ml_program_exit_usage(&o->prog, "internal error: a preset value does not parse");
    if (openmp && o->omp_threads < 1)
        ml_program_exit_usage(&o->prog, "invalid value for --omp-threads: at least 1 thread with --kernel openmp");
}

/* ---- the parameter space --------------------------------------------------------------- */

static void plan(overlap_t *o)
{
    double factor = pow(2.0, 1.0 / (double)o->density);
    o->n_sizes = ml_geometric_series((int64_t)o->sizes.lo, (int64_t)o->sizes.hi, factor, o->size_values, MAX_VALUES);
    o->n_computes = ml_geometric_series(o->compute.lo, o->compute.hi, factor, o->compute_values, MAX_VALUES);
    if (o->compute.lo == 0)
        ml_program_exit_usage(&o->prog, "invalid value for --compute: computation times must be at least 1ns "
                                        "(the ratio divides by them)");
    if (o->compute.hi > MAX_COMPUTE_NS)
        ml_program_exit_usage(&o->prog,
                              "invalid value for --compute: at most 1s per computation (each point repeats it "
                              "for every size, tens of times: the run would take days); got %s",
                              ml_options_find(o->prog.options, "compute")->value);

    /* noncontig: whole 32-byte blocks, the nearest to each size; below one block, nothing */
    o->n_noncontig = o->n_noncontig_too_small = 0;
    for (size_t i = 0; i < o->n_sizes; i++) {
        int64_t blocks = llround((double)o->size_values[i] / NONCONTIG_BLOCK);
        if (blocks < 1) {
            o->n_noncontig_too_small++;
            continue;
        }
        int64_t size = blocks * NONCONTIG_BLOCK;
        if (o->n_noncontig == 0 || o->noncontig_sizes[o->n_noncontig - 1] != size)
            o->noncontig_sizes[o->n_noncontig++] = size;
    }
}

const overlap_decision_t *overlap_decision(const overlap_t *o, double t_comm_ns, const double rel[2],
                                           int neighbour_class, overlap_decision_t *out)
{
    const ml_stop_rule_t *rule = &o->prog.stop_rule;
    if (strcmp(o->decide, "on") != 0 || rule->fixed_reps == 0)
        return NULL;
    out->t_comm_ns = t_comm_ns;
    out->comm_rel[0] = rel[0];
    out->comm_rel[1] = rel[1];
    out->neighbour_class = neighbour_class;
    out->min_reps = DECIDE_MIN_REPS;
    out->reps = rule->fixed_reps;
    out->max_reps = rule->fixed_reps * DECIDE_MAX_FACTOR;
    if (out->max_reps < out->min_reps)
        out->max_reps = out->min_reps;
    out->start_ns = ml_clock_ns();
    out->saved_ns = &o->saved_ns;
    return out;
}

const ml_stop_rule_t *overlap_reference_rule(const overlap_t *o, ml_stop_rule_t *out)
{
    *out = o->prog.stop_rule;
    if (strcmp(o->decide, "on") != 0 || out->fixed_reps == 0)
        return out;
    out->min_reps = out->fixed_reps;
    out->max_reps = out->fixed_reps * REFERENCE_MAX_FACTOR;
    out->precision = REFERENCE_PRECISION;
    out->time_budget_ns = REFERENCE_BUDGET_NS;
    out->fixed_reps = 0;
    return out;
}

void overlap_account(overlap_t *o, const overlap_decision_t *d, size_t n)
{
    if (!d || n == 0)
        return;
    double per_rep = (double)(ml_clock_ns() - d->start_ns) / (double)n;
    o->saved_ns += ((double)d->reps - (double)n) * per_rep;
}

/* ---- memory ---------------------------------------------------------------------------- */

/* Bytes of each of the two message buffers: the largest message of any selected benchmark. */
static size_t buffer_bytes(const overlap_t *o)
{
    size_t largest = o->n_sizes ? (size_t)o->size_values[o->n_sizes - 1] : 0;
    size_t need = largest;
    if (overlap_selected(o, "noncontig") && o->n_noncontig)
        need = (size_t)o->noncontig_sizes[o->n_noncontig - 1] / NONCONTIG_BLOCK * NONCONTIG_STRIDE;
    if (overlap_selected(o, "ialltoall") && largest * (size_t)o->prog.size > need)
        need = largest * (size_t)o->prog.size;
    if (overlap_selected(o, "threads") && largest * (size_t)o->comm_threads > need)
        need = largest * (size_t)o->comm_threads; /* each thread its own slot */
    return need > largest ? need : largest;
}

/* Refuses sizes whose buffers would not fit in a fair share of the node's memory, on every rank
 * at once; then allocates the buffers and touches them, so first-touch costs are not measured. */
static void allocate_buffers(overlap_t *o)
{
    o->buf_len = buffer_bytes(o);
    ml_program_check_memory(&o->prog, 2.0 * (double)o->buf_len, "these sizes", "lower the maximum of --sizes");
    o->send_buf = malloc(o->buf_len ? o->buf_len : 1);
    o->recv_buf = malloc(o->buf_len ? o->buf_len : 1);
    int failed = !o->send_buf || !o->recv_buf, any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any_failed)
        ml_program_exit_usage(&o->prog, "cannot allocate message buffers of %zu bytes", o->buf_len);
    memset(o->send_buf, 1, o->buf_len);
    memset(o->recv_buf, 0, o->buf_len);
}

/* ---- records --------------------------------------------------------------------------- */

static double median_of(const overlap_t *o, const ml_sample_t *s)
{
    ml_summary_t sum;
    return ml_summarize(s->values, s->n, o->prog.stop_rule.ci_level, &sum) == 0 ? sum.median : NAN;
}

double overlap_write_map_point(overlap_t *o, const overlap_map_point_t *m)
{
    double t_measured = median_of(o, m->t), t_comp = median_of(o, m->comp);
    double ratio = ml_overlap_ratio(t_measured, m->t_comm_ns, t_comp);
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, FAMILY, m->bench, m->key);
    ml_json_begin_object(&j, "params");
    ml_json_int(&j, "size_bytes", m->size);
    ml_json_int(&j, "compute_ns", m->compute_ns);
    if (m->extra_name)
        ml_json_int(&j, m->extra_name, m->extra_value);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    ml_json_double(&j, "t_measured_ns", t_measured);
    ml_json_double(&j, "t_comm_ns", m->t_comm_ns);
    ml_json_double(&j, "t_comp_ns", t_comp);
    ml_json_double(&j, "lat0_ns", m->lat0_ns);
    ml_json_double(&j, "ratio", ratio);
    ml_json_sample(&j, "sample", m->t, &o->prog.stop_rule, m->reason);
    ml_json_sample(&j, "comp", m->comp, &o->prog.stop_rule, m->reason);
    ml_json_sample(&j, "ref", m->ref, m->ref_rule, m->ref_reason);
    ml_program_point_end(&o->prog, &j);
    return ratio;
}

/* ---- main ------------------------------------------------------------------------------ */

/* The threads benchmark needs MPI_THREAD_MULTIPLE, which costs some libraries a lock in every
 * call: it is asked for when --bench names threads, not under the default "all" (where threads
 * is skipped with a note unless --thread-level multiple is given). */
static int thread_level_for_args(int argc, char **argv)
{
    const char *benches = ml_options_scan(argc, argv, "bench");
    return benches && ml_list_text_contains(benches, "threads") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

static void note_skips(overlap_t *o)
{
    if (o->prog.resume)
        return;
    if (overlap_selected(o, "noncontig") && o->n_noncontig_too_small) {
        char text[200];
        snprintf(text, sizeof text,
                 "noncontig: %zu size(s) below one 32-byte block skipped; other sizes rounded to whole blocks",
                 o->n_noncontig_too_small);
        ml_program_note(&o->prog, "skip", text, NULL);
    }
}

int main(int argc, char **argv)
{
    static const ml_program_spec_t spec = {
        .family = FAMILY,
        .program = "mpilens-overlap",
        .summary = "Does non-blocking communication progress while the program computes? Measures the overhead\n"
                   "ratio of seed 000 over message size x computation time for each benchmark: sender, receiver,\n"
                   "bidir, noncontig, cpu, nload, plus a blocking control, late receivers, several pending\n"
                   "requests, several communicating threads and non-blocking collectives (docs/overlap.md).\n"
                   "Needs at least 2 ranks.",
        /* nload needs FUNNELED, threads MULTIPLE; without it they alone are skipped */
        .thread_level = MPI_THREAD_FUNNELED,
        .thread_level_required = MPI_THREAD_SINGLE,
        .thread_level_for_args = thread_level_for_args,
        .default_reps = NULL,
    };
    overlap_t o;
    memset(&o, 0, sizeof o);
    ml_option_t options[] = {
        {"preset", ML_OPT_CHOICE, "quick|default|full", "default", "quick,default,full",
         "parameter space and repetitions (see docs/overlap.md)", &o.preset, 0, 0, NULL},
        {"bench", ML_OPT_LIST, "LIST", "all", BENCHES, "benchmarks to run", &o.benches, 0, 0, NULL},
        {"sizes", ML_OPT_SIZE_RANGE, "MIN:MAX", NULL, NULL, "message sizes (by preset: quick 1:1M, else 1:16M)",
         &o.sizes, 0, 0, NULL},
        {"compute", ML_OPT_TIME_RANGE, "MIN:MAX", NULL, NULL,
         "computation times (by preset: quick 1us:1ms, else 1us:10ms)", &o.compute, 0, 0, NULL},
        {"density", ML_OPT_INT, "N", NULL, NULL, "values per doubling of size and time (by preset: quick 1, else 2)",
         &o.density, 1, 8, NULL},
        {"threads", ML_OPT_INT, "N", NULL, NULL, "nload: up to N computing threads (default: the node's PUs)",
         &o.max_threads, 0, 1024, NULL},
        {"kernel", ML_OPT_CHOICE, "time|openmp", "time", "time,openmp",
         "the computation: time (a busy loop on the rank's thread) or openmp (that loop on --omp-threads "
         "threads of an OpenMP parallel region, seed 000's multi-threaded computation)",
         &o.kernel, 0, 0, NULL},
        {"omp-threads", ML_OPT_INT, "N", NULL, NULL,
         "--kernel openmp: the region's threads, 1 to 1024 (default: the processing units the rank may use)",
         &o.omp_threads, 0, 1024, NULL},
        {"comm-threads", ML_OPT_INT, "N", "2", NULL,
         "threads: the threads of each rank that communicate at once, 2 to 16 (needs MPI_THREAD_MULTIPLE, asked "
         "for when --bench names threads)",
         &o.comm_threads, 2, 16, NULL},
        {"decide", ML_OPT_CHOICE, "on|off", NULL, "on,off",
         "on: a map point stops once its ratio's class is decided (at least 6 repetitions; beyond --reps only "
         "with time decided points saved, at most 4x --reps); "
         "off: every point takes --reps (by preset: quick and default on, full off; off when --reps is given)",
         &o.decide, 0, 0, NULL},
        ML_OPTIONS_END,
    };
    ml_program_init(&o.prog, &spec, options, argc, argv);
    apply_presets(&o);
    if (o.prog.size < 2)
        ml_program_exit_usage(&o.prog, "needs at least 2 ranks (a sender and a receiver); got %d", o.prog.size);
    plan(&o);
    allocate_buffers(&o);
    MPI_Comm_dup(MPI_COMM_WORLD, &o.comm);

    ml_progress_setting_record(&o.prog, &o.progress_setting);
    ml_program_begin(&o.prog, p2p_points(&o) + nload_points(&o) + nbc_points(&o));
    ml_progress_setting_note(&o.prog, &o.progress_setting);
    note_skips(&o);
    /* before the references: measured in the library's first-use costs, they would read long */
    if (ml_warm_up(o.comm, o.size_values, o.n_sizes, o.send_buf, o.recv_buf) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    p2p_run(&o);
    nload_run(&o);
    nbc_run(&o);

    MPI_Comm_free(&o.comm);
    free(o.send_buf);
    free(o.recv_buf);
    return ml_program_finish(&o.prog);
}
