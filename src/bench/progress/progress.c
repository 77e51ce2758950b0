/* mpilens-progress: what does progression cost the program, and do MPI_Test strategies or a
 * progress thread help? (seed 002, §V; docs/programs/mpilens-progress.md)
 *
 * The overhead of non-blocking point-to-point messages (p2p.c) and collectives (nbc.c), with
 * time-based and work-based computation and the strategies none and test; the CPU that timer
 * interrupts take from computing threads (interrupts.c). The program is plain MPI: run with
 * libmpilens-progress preloaded, or with the library's own asynchronous progress switched on,
 * it measures that setting, which it records in the metadata and in every point (core/progress_setting.c).
 * This file holds main, the options and the interrupt benchmark's records. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "interrupts.h"
#include "series.h"
#include "sync.h"
#include "warmup.h"

#define MAX_INTERVAL (1L << 30)

/* ---- options and presets ------------------------------------------------------------------ */

/* What a preset sets: one row per preset and option, applied to the options not given. */
static const struct {
    const char *preset, *option, *value;
} preset_rows[] = {
    {"quick", "sizes", "1K:1M"},          {"quick", "reps", "10"},
    {"quick", "interrupt-work", "100ms"}, {"quick", "interrupt-rounds", "3"},
    {"default", "sizes", "1K:4M"},        {"default", "reps", "auto"},
    {"default", "interrupt-work", "1s"},  {"default", "interrupt-rounds", "7"},
};

static void apply_preset(ml_bench_t *b)
{
    for (size_t i = 0; i < sizeof preset_rows / sizeof preset_rows[0]; i++)
        if (strcmp(preset_rows[i].preset, b->preset) == 0 &&
            ml_options_default_late(b->prog.options, preset_rows[i].option, preset_rows[i].value) != 0)
            ml_program_exit_usage(&b->prog, "internal error: preset %s: --%s %s does not parse", b->preset,
                                  preset_rows[i].option, preset_rows[i].value);
}

static void plan(ml_bench_t *b)
{
    ml_program_t *p = &b->prog;
    if (b->sizes.hi > INT_MAX)
        ml_program_exit_usage(p, "invalid value for --sizes: at most %d bytes (MPI counts are int); got %s", INT_MAX,
                              ml_options_find(p->options, "sizes")->value);
    if (b->intervals.lo < 1 || b->intervals.hi > (uint64_t)MAX_INTERVAL)
        ml_program_exit_usage(p,
                              "invalid value for --intervals: intervals are from 1 byte to 1GiB (the tests are "
                              "floor(size / interval) + 1); got %s",
                              ml_options_find(p->options, "intervals")->value);
    if (b->interrupt_work_ns < 1000000)
        ml_program_exit_usage(p,
                              "invalid value for --interrupt-work: at least 1ms (the timer must fire during it); "
                              "got %s",
                              ml_options_find(p->options, "interrupt-work")->value);
    int p2p = ml_list_contains(&b->benches, "p2p"), nbc = ml_list_contains(&b->benches, "nbc");
    if ((p2p || nbc) && p->size < 2)
        ml_program_exit_usage(p, "--bench %s need%s at least 2 ranks (%s); got %d (--bench interrupts runs on 1)",
                              p2p && nbc ? "p2p and nbc"
                              : p2p      ? "p2p"
                                         : "nbc",
                              p2p && nbc ? "" : "s", p2p ? "a client and a server" : "a collective among ranks",
                              p->size);
    b->n_sizes = ml_geometric_series((int64_t)b->sizes.lo, (int64_t)b->sizes.hi, 2.0, b->size_values, ML_MAX_VALUES);
    b->n_intervals =
        ml_geometric_series((int64_t)b->intervals.lo, (int64_t)b->intervals.hi, 2.0, b->interval_values, ML_MAX_VALUES);
    b->test_placement = strcmp(b->test_placement_name, "seed") == 0 ? ML_PLACE_SEED : ML_PLACE_EVEN;
}

/* ---- memory -------------------------------------------------------------------------------- */

static size_t buffer_bytes(const ml_bench_t *b)
{
    int64_t largest = b->n_sizes ? b->size_values[b->n_sizes - 1] : 0;
    size_t need = ml_list_contains(&b->benches, "p2p") ? (size_t)largest : 0;
    if (ml_list_contains(&b->benches, "nbc") && ml_nbc_buffer_bytes(b, largest) > need)
        need = ml_nbc_buffer_bytes(b, largest);
    return need ? need : 1;
}

/* Refused on every rank when the two buffers exceed half of a rank's share of its node's
 * memory; touched, so that first-touch costs are not measured. */
static void allocate_buffers(ml_bench_t *b)
{
    ml_program_t *p = &b->prog;
    size_t len = buffer_bytes(b);
    char what[64];
    snprintf(what, sizeof what, "--sizes up to %s", ml_options_find(p->options, "sizes")->value);
    ml_program_check_memory(p, 2.0 * (double)len, what, "lower the maximum of --sizes");
    b->send_buf = malloc(len);
    b->recv_buf = malloc(len);
    int failed = !b->send_buf || !b->recv_buf;
    int any;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (any)
        ml_program_exit_usage(p, "cannot allocate message buffers of %zu bytes", len);
    memset(b->send_buf, 1, len);
    memset(b->recv_buf, 0, len);
}

/* ---- the results: the progress setting is the run's context -------------------------------- */

static void begin(ml_bench_t *b, long points_total)
{
    ml_progress_setting_record(&b->prog, &b->setting);
    ml_program_begin(&b->prog, points_total);
    b->prog.stop_rule.time_budget_ns = b->budget_ns;
    ml_progress_setting_note(&b->prog, &b->setting);
}

/* ---- interrupt and context-switch cost (seed 002, §V-B2) ------------------------------------ */

static long interrupt_points(const ml_bench_t *b) { return ml_list_contains(&b->benches, "interrupts"); }

static void write_interrupts(ml_bench_t *b, const char *key, const interrupt_opts_t *o, const interrupt_result_t *r)
{
    ml_json_t j;
    ml_json_init(&j);
    ml_record_point_begin(&j, FAMILY, "interrupts", key);
    ml_json_begin_object(&j, "params");
    ml_json_double(&j, "rate_hz", o->rate_hz);
    ml_json_int(&j, "work_ns", o->work_ns);
    ml_json_int(&j, "rounds", o->rounds);
    ml_json_string(&j, "progress", b->setting.label);
    ml_json_end_object(&j);
    ml_json_begin_object(&j, "stats");
    ml_json_int(&j, "threads", r->threads);
    ml_json_int(&j, "rank_cpus", r->rank_cpus);
    ml_json_double(&j, "t1_ns", r->t1_ns);
    ml_json_double(&j, "t2_ns", r->t2_ns);
    ml_json_double(&j, "wakeups", r->wakeups);
    ml_json_double(&j, "achieved_hz", r->achieved_hz);
    ml_json_double(&j, "per_interrupt_ns", r->per_interrupt_ns);
    ml_json_double(&j, "spread", r->spread);
    ml_program_point_end(&b->prog, &j);
}

/* Rank 0 measures its node's processing units; the other ranks wait asleep, taking no core from it. */
static void measure_interrupts(ml_bench_t *b, const char *key)
{
    if (b->prog.thread_level < MPI_THREAD_FUNNELED) {
        /* its threads make no MPI call, but at MPI_THREAD_SINGLE the process may have no other thread */
        ml_program_note(&b->prog, "skip", "interrupts needs MPI_THREAD_FUNNELED (its computing threads)", key);
        return;
    }
    if (b->prog.rank != 0)
        return;
    interrupt_opts_t opts = {(double)b->rate_hz, b->interrupt_work_ns, (int)b->interrupt_rounds};
    interrupt_result_t r;
    if (progress_interrupt_cost(&opts, &r) == 0) {
        write_interrupts(b, key, &opts, &r);
        return;
    }
    char text[200];
    snprintf(text, sizeof text, "interrupts: cannot measure: %s", strerror(errno));
    fprintf(stderr, "%s: %s\n", PROGRAM, text);
    ml_program_note(&b->prog, "warning", text, key);
}

static void run_interrupts(ml_bench_t *b)
{
    if (!interrupt_points(b))
        return;
    char key[64];
    snprintf(key, sizeof key, "interrupts/rate_hz=%ld", b->rate_hz);
    if (!ml_program_skip(&b->prog, key))
        measure_interrupts(b, key);
    ml_idle_barrier(b->prog.sync);
    ml_program_progress(&b->prog, key);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static const ml_program_spec_t spec = {
        .family = FAMILY,
        .program = PROGRAM,
        .summary =
            "What does progression cost the program, and do MPI_Test strategies or a progress thread help?\n"
            "Measures the CPU overhead of non-blocking point-to-point messages (ranks 0 and 1) and collectives\n"
            "(every rank) over message sizes: the blocking time t_b, then start, compute for t_b (time-based)\n"
            "or a workload calibrated to t_b (work-based), wait; with no MPI call during the computation\n"
            "(strategy none) or MPI_Test every INTERVAL bytes (test). Also the CPU a timer interrupt takes\n"
            "from computing threads (seed 002, section V). Preload libmpilens-progress or set the MPI library's\n"
            "async progress to measure them: the setting is recorded with every point.",
        /* the interrupt benchmark's computing threads; with less it is skipped with a note */
        .thread_level = MPI_THREAD_FUNNELED,
        .thread_level_required = MPI_THREAD_SINGLE,
        .default_reps = NULL,
    };
    ml_bench_t b;
    memset(&b, 0, sizeof b);
    ml_option_t options[] = {
        {"preset", ML_OPT_CHOICE, "quick|default", "default", "quick,default",
         "sizes, repetitions and interrupt workload: quick 1K:1M, 10 reps, 100ms x 3; default 1K:4M, auto, 1s x 7",
         &b.preset, 0, 0, NULL},
        {"bench", ML_OPT_LIST, "LIST", "all", "p2p,nbc,interrupts", "benchmarks to run: p2p,nbc,interrupts", &b.benches,
         0, 0, NULL},
        {"ops", ML_OPT_LIST, "LIST", "all", "iallreduce,ibcast,ireduce,ialltoall",
         "nbc: the collectives, iallreduce,ibcast,ireduce,ialltoall", &b.ops, 0, 0, NULL},
        {"strategy", ML_OPT_LIST, "LIST", "all", "none,test",
         "none (start, compute, wait) and test (MPI_Test every INTERVAL bytes during the computation)", &b.strategies,
         0, 0, NULL},
        {"compute", ML_OPT_LIST, "LIST", "all", "time,work",
         "time-based (spin for t_b) and work-based (a workload calibrated to t_b) computation", &b.computes, 0, 0,
         NULL},
        {"sizes", ML_OPT_SIZE_RANGE, "MIN:MAX", NULL, NULL,
         "message sizes: every power of 2 from MIN to MAX (by preset: quick 1K:1M, default 1K:4M)", &b.sizes, 0, 0,
         NULL},
        {"intervals", ML_OPT_SIZE_RANGE, "MIN:MAX", "1K:256K", NULL,
         "test: every power of 2 from MIN to MAX bytes between tests (the seed's 2^10..2^18), 1 to 1G", &b.intervals, 0,
         0, NULL},
        {"test-placement", ML_OPT_CHOICE, "even|seed", "even", "even,seed",
         "test: where the N tests go in the computation: even (evenly inside it, at k/(N+1)) or seed (seed 002: at "
         "its start, evenly, and at its end, k/(N-1))",
         &b.test_placement_name, 0, 0, NULL},
        {"budget", ML_OPT_TIME, "TIME", "500ms", NULL,
         "with --reps auto: measure each point at most this long (0: no limit)", &b.budget_ns, 0, 0, NULL},
        {"interrupt-rate", ML_OPT_INT, "HZ", "8192", NULL, "interrupts: timer expirations per second, 1 to 100000",
         &b.rate_hz, 1, 100000, NULL},
        {"interrupt-work", ML_OPT_TIME, "TIME", NULL, NULL,
         "interrupts: each thread's fixed workload on a quiet core (by preset: quick 100ms, default 1s)",
         &b.interrupt_work_ns, 0, 0, NULL},
        {"interrupt-rounds", ML_OPT_INT, "N", NULL, NULL,
         "interrupts: rounds of both stages, the median kept (by preset: quick 3, default 7)", &b.interrupt_rounds, 1,
         100, NULL},
        ML_OPTIONS_END,
    };
    ml_program_init(&b.prog, &spec, options, argc, argv);
    apply_preset(&b);
    plan(&b);
    allocate_buffers(&b);
    MPI_Comm_dup(MPI_COMM_WORLD, &b.comm);
    /* measured in the library's first-use costs, the first points would read long (warmup.h) */
    if (ml_warm_up(b.comm, b.size_values, b.n_sizes, b.send_buf, b.recv_buf) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);

    begin(&b, ml_p2p_points(&b) + ml_nbc_points(&b) + interrupt_points(&b));
    ml_p2p_run(&b);
    ml_nbc_run(&b);
    run_interrupts(&b);

    MPI_Comm_free(&b.comm);
    free(b.send_buf);
    free(b.recv_buf);
    return ml_program_finish(&b.prog);
}
