/* mpilens-sanity: can this machine and MPI library be measured, and how finely?
 *
 * Checks, with the same core every other family uses: the clock (resolution, cost of a read) on
 * every rank; how close the two compute kernels come to the durations asked for; the clock offset
 * of every rank against rank 0, at the start and at the end of the run (drift); the cost of the
 * ready-first handshake between pairs; and how precisely all ranks can start at one global time.
 * Point records are described in docs/sanity.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "compute.h"
#include "program.h"
#include "series.h"
#include "stats.h"
#include "sync.h"

#define FAMILY "sanity"
#define MAX_TARGETS 64
#define OFFSET_MAX_ROUNDS 2000
/* Netgauge stops after 100 ping-pongs without a smaller round trip; so do we. */
#define OFFSET_PATIENCE 100
#define WORK_TOLERANCE 0.02

typedef struct {
    const char *preset;
    ml_time_range_t compute;
    ml_time_range_t leads;
    ml_list_t checks;
} sanity_options_t;

typedef struct {
    ml_program_t prog;
    sanity_options_t opt;
    int64_t targets[MAX_TARGETS];
    size_t n_targets;
    int64_t leads[MAX_TARGETS];
    size_t n_leads;
    double step; /* factor between consecutive targets and leads */
} sanity_t;

static const char *const kernels[] = {"time", "work"};
#define N_KERNELS 2

/* ---- planning -------------------------------------------------------------------------- */

static void plan(sanity_t *s)
{
    const char *preset = s->opt.preset;
    /* quick: decades; default: half decades; full: powers of sqrt(2), as the overlap maps. */
    s->step = strcmp(preset, "quick") == 0 ? 10.0 : strcmp(preset, "full") == 0 ? 1.41421356237 : 3.16227766017;
    s->n_targets = ml_geometric_series(s->opt.compute.lo, s->opt.compute.hi, s->step, s->targets, MAX_TARGETS);
    s->n_leads = ml_geometric_series(s->opt.leads.lo, s->opt.leads.hi, s->step, s->leads, MAX_TARGETS);
}

static int has_check(const sanity_t *s, const char *check) { return ml_list_contains(&s->opt.checks, check); }

static long points_total(const sanity_t *s)
{
    long size = s->prog.size, total = 0;
    if (has_check(s, "clock"))
        total += size;
    if (has_check(s, "offset"))
        total += 2 * size;
    if (has_check(s, "compute"))
        total += N_KERNELS * (long)s->n_targets;
    if (has_check(s, "handshake"))
        total += size / 2;
    if (has_check(s, "start"))
        total += (long)s->n_leads;
    return total;
}

/* ---- per-rank points: clock and offsets ------------------------------------------------- */

/* Gathers n values from every rank and writes one point per rank, keyed
 * "<bench>/[phase=P/]rank=R", whose stats are the values under `names`. */
static void per_rank_points(sanity_t *s, const char *bench, const char *phase, const double *mine,
                            const char *const *names, int n)
{
    ml_program_t *p = &s->prog;
    double *all = p->rank == 0 ? malloc(sizeof *all * (size_t)n * (size_t)p->size) : NULL;
    if (p->rank == 0 && !all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, p->sync);
    for (int r = 0; r < p->size; r++) {
        char key[64];
        if (phase)
            snprintf(key, sizeof key, "%s/phase=%s/rank=%d", bench, phase, r);
        else
            snprintf(key, sizeof key, "%s/rank=%d", bench, r);
        if (!ml_program_skip(p, key) && p->rank == 0) {
            ml_json_t j;
            ml_json_init(&j);
            ml_record_point_begin(&j, FAMILY, bench, key);
            ml_json_begin_object(&j, "params");
            ml_json_int(&j, "rank", r);
            if (phase)
                ml_json_string(&j, "phase", phase);
            ml_json_end_object(&j);
            ml_json_begin_object(&j, "stats");
            for (int i = 0; i < n; i++)
                ml_json_double(&j, names[i], all[(size_t)r * (size_t)n + (size_t)i]);
            ml_program_point_end(p, &j);
        }
        ml_program_progress(p, key);
    }
    free(all);
}

static void check_clock(sanity_t *s)
{
    static const char *const names[] = {"resolution_ns", "reported_resolution_ns", "read_cost_ns"};
    const ml_clock_info_t *c = &s->prog.clock;
    double mine[] = {c->resolution_ns, c->reported_resolution_ns, c->read_cost_ns};
    per_rank_points(s, "clock", NULL, mine, names, 3);
}

static void write_offsets(sanity_t *s, const char *phase, const ml_offset_t *o)
{
    static const char *const names[] = {"offset_ns", "rtt_ns", "rounds", "bound_ns"};
    /* The estimate errs by at most half the round trip, plus one step of this rank's clock. */
    double mine[] = {(double)o->offset_ns, (double)o->rtt_ns, (double)o->rounds,
                     (double)o->rtt_ns / 2.0 + s->prog.clock.resolution_ns};
    per_rank_points(s, "offset", phase, mine, names, 4);
}

static void estimate_offsets(sanity_t *s, ml_offset_t *offset)
{
    if (ml_offset_estimate(s->prog.sync, OFFSET_MAX_ROUNDS, OFFSET_PATIENCE, offset) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- compute kernels ------------------------------------------------------------------- */

/* Every rank runs the kernel at once, as ranks do in a benchmark; rank 0's stopping rule decides
 * the number of repetitions for all. */
static ml_stop_t measure_kernel(sanity_t *s, int kernel, int64_t target, ml_sample_t *sample, uint64_t *units)
{
    ml_program_t *p = &s->prog;
    ml_calibration_t cal = {.units = 0};
    if (kernel == 1 && ml_work_calibrate(target, WORK_TOLERANCE, &cal) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    *units = cal.units;

    ml_stopper_t stopper;
    ml_stopper_start(&stopper, &p->stop_rule);
    ml_stop_t reason = ML_STOP_CONTINUE;
    do {
        int64_t achieved = kernel == 0 ? ml_compute_time(target) : ml_compute_work(cal.units);
        if (ml_sample_add(sample, (double)achieved) != 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        if (p->rank == 0)
            reason = ml_stopper_check(&stopper, sample);
    } while (ml_program_agree(p, reason == ML_STOP_CONTINUE));
    return reason;
}

static void check_compute(sanity_t *s)
{
    ml_program_t *p = &s->prog;
    double *medians = p->rank == 0 ? malloc(sizeof(double) * (size_t)p->size) : NULL;
    if (p->rank == 0 && !medians)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int k = 0; k < N_KERNELS; k++) {
        for (size_t t = 0; t < s->n_targets; t++) {
            int64_t target = s->targets[t];
            char key[96];
            snprintf(key, sizeof key, "compute/kernel=%s/target_ns=%" PRId64, kernels[k], target);
            if (ml_program_skip(p, key)) {
                ml_program_progress(p, key);
                continue;
            }
            ml_sample_t sample = {0};
            uint64_t units;
            ml_stop_t reason = measure_kernel(s, k, target, &sample, &units);

            ml_summary_t sum;
            ml_summarize(sample.values, sample.n, p->stop_rule.ci_level, &sum);
            MPI_Gather(&sum.median, 1, MPI_DOUBLE, medians, 1, MPI_DOUBLE, 0, p->sync);
            if (p->rank == 0) {
                ml_json_t j;
                ml_json_init(&j);
                ml_record_point_begin(&j, FAMILY, "compute", key);
                ml_json_begin_object(&j, "params");
                ml_json_string(&j, "kernel", kernels[k]);
                ml_json_int(&j, "target_ns", target);
                ml_json_end_object(&j);
                ml_json_begin_object(&j, "stats");
                ml_json_double(&j, "achieved_ns", sum.median);
                ml_json_double(&j, "rel_error", (sum.median - (double)target) / (double)target);
                ml_json_begin_array(&j, "per_rank_achieved_ns");
                for (int r = 0; r < p->size; r++)
                    ml_json_double(&j, NULL, medians[r]);
                ml_json_end_array(&j);
                if (k == 1)
                    ml_json_int(&j, "units", (int64_t)units);
                ml_json_sample(&j, "sample", &sample, &p->stop_rule, reason);
                ml_program_point_end(p, &j);
            }
            ml_sample_free(&sample);
            ml_program_progress(p, key);
        }
    }
    free(medians);
}

/* ---- handshake ------------------------------------------------------------------------- */

/* Pairs (0,1), (2,3), ... measure at once; the even rank leads and times each handshake. */
static void check_handshake(sanity_t *s)
{
    ml_program_t *p = &s->prog;
    int pairs = p->size / 2;
    int leader = p->rank % 2 == 0, partner = leader ? p->rank + 1 : p->rank - 1;
    int in_pair = p->rank < 2 * pairs;
    char key[64];
    snprintf(key, sizeof key, "handshake/pair=%d-%d", p->rank - p->rank % 2, p->rank - p->rank % 2 + 1);
    ml_json_t j;
    ml_json_init(&j);

    if (in_pair && !ml_program_skip(p, key)) {
        if (leader) {
            ml_sample_t sample = {0};
            ml_stopper_t stopper;
            ml_stop_t reason;
            ml_stopper_start(&stopper, &p->stop_rule);
            do {
                int64_t t0 = ml_clock_ns();
                ml_handshake_lead(p->sync, partner, ML_CMD_GO);
                if (ml_sample_add(&sample, (double)(ml_clock_ns() - t0)) != 0)
                    MPI_Abort(MPI_COMM_WORLD, 2);
            } while ((reason = ml_stopper_check(&stopper, &sample)) == ML_STOP_CONTINUE);
            ml_handshake_lead(p->sync, partner, ML_CMD_STOP);

            ml_summary_t sum;
            ml_summarize(sample.values, sample.n, p->stop_rule.ci_level, &sum);
            ml_record_point_begin(&j, FAMILY, "handshake", key);
            ml_json_begin_object(&j, "params");
            ml_json_int(&j, "leader", p->rank);
            ml_json_int(&j, "follower", partner);
            ml_json_end_object(&j);
            ml_json_begin_object(&j, "stats");
            ml_json_double(&j, "round_trip_ns", sum.median);
            ml_json_sample(&j, "sample", &sample, &p->stop_rule, reason);
            ml_json_end_object(&j);
            ml_json_end_object(&j);
            ml_sample_free(&sample);
        } else {
            int cmd;
            do
                ml_handshake_follow(p->sync, partner, &cmd);
            while (cmd == ML_CMD_GO);
        }
    }
    ml_program_gather_points(p, &j);
    ml_json_free(&j);
    for (int pair = 0; pair < pairs; pair++) {
        snprintf(key, sizeof key, "handshake/pair=%d-%d", 2 * pair, 2 * pair + 1);
        ml_program_progress(p, key);
    }
    if (p->size % 2 == 1 && !p->resume)
        ml_program_note(p, "skip", "handshake needs an even number of ranks; the last rank has no partner and sat out",
                        NULL);
}

/* ---- synchronized start ---------------------------------------------------------------- */

static void check_start(sanity_t *s, const ml_offset_t *offset)
{
    ml_program_t *p = &s->prog;
    for (size_t l = 0; l < s->n_leads; l++) {
        int64_t lead = s->leads[l];
        char key[64];
        snprintf(key, sizeof key, "start/lead_ns=%" PRId64, lead);
        if (ml_program_skip(p, key)) {
            ml_program_progress(p, key);
            continue;
        }
        ml_sample_t sample = {0};
        ml_stopper_t stopper;
        ml_stopper_start(&stopper, &p->stop_rule);
        long late_reps = 0;
        ml_stop_t reason = ML_STOP_CONTINUE;
        ml_start_t start;
        for (;;) {
            /* rank 0's stopping decision travels with the next start time */
            ml_start_together(p->sync, offset, lead, reason == ML_STOP_CONTINUE, &start);
            if (!start.go)
                break;
            int64_t late_and_worst[2] = {start.late, start.lateness_ns}, max[2];
            MPI_Reduce(late_and_worst, max, 2, MPI_INT64_T, MPI_MAX, 0, p->sync);
            if (p->rank == 0) {
                late_reps += max[0];
                if (ml_sample_add(&sample, (double)max[1]) != 0)
                    MPI_Abort(MPI_COMM_WORLD, 2);
                reason = ml_stopper_check(&stopper, &sample);
            }
        }
        if (p->rank == 0) {
            ml_summary_t sum;
            ml_summarize(sample.values, sample.n, p->stop_rule.ci_level, &sum);
            ml_json_t j;
            ml_json_init(&j);
            ml_record_point_begin(&j, FAMILY, "start", key);
            ml_json_begin_object(&j, "params");
            ml_json_int(&j, "lead_ns", lead);
            ml_json_end_object(&j);
            ml_json_begin_object(&j, "stats");
            ml_json_double(&j, "max_lateness_ns", sum.median);
            ml_json_double(&j, "late_fraction", (double)late_reps / (double)sample.n);
            ml_json_sample(&j, "sample", &sample, &p->stop_rule, reason);
            ml_program_point_end(p, &j);
        }
        ml_sample_free(&sample);
        ml_program_progress(p, key);
    }
}

/* ---- main ------------------------------------------------------------------------------ */

static const char *preset_compute(const char *preset) { return strcmp(preset, "quick") == 0 ? "1us:1ms" : "1us:10ms"; }

int main(int argc, char **argv)
{
    static const ml_program_spec_t spec = {
        .family = FAMILY,
        .program = "mpilens-sanity",
        .summary = "Checks whether this machine and MPI library can be measured, and how finely: clock\n"
                   "resolution and cost, accuracy of the compute kernels, clock offsets between ranks and\n"
                   "their drift, the ready-first handshake, and starting all ranks at one global time.",
        .thread_level = MPI_THREAD_SINGLE,
        .thread_level_required = MPI_THREAD_SINGLE,
        .default_reps = "auto",
    };
    sanity_t s;
    memset(&s, 0, sizeof s);
    ml_option_t options[] = {
        {"preset", ML_OPT_CHOICE, "quick|default|full", "default", "quick,default,full",
         "how finely to sample the compute targets and start leads", &s.opt.preset, 0, 0, NULL},
        {"compute", ML_OPT_TIME_RANGE, "MIN:MAX", NULL, NULL,
         "compute targets (default by preset: quick 1us:1ms, else 1us:10ms)", &s.opt.compute, 0, 0, NULL},
        {"leads", ML_OPT_TIME_RANGE, "MIN:MAX", "10us:1ms", NULL, "lead times of the synchronized-start check",
         &s.opt.leads, 0, 0, NULL},
        {"checks", ML_OPT_LIST, "LIST", "all", "clock,offset,compute,handshake,start", "checks to run", &s.opt.checks,
         0, 0, NULL},
        ML_OPTIONS_END,
    };
    ml_program_init(&s.prog, &spec, options, argc, argv);
    if (ml_options_default_late(s.prog.options, "compute", preset_compute(s.opt.preset)) != 0)
        ml_program_exit_usage(&s.prog, "internal error: no default for --compute");
    plan(&s);
    if (s.n_targets == 0 || s.opt.compute.lo == 0)
        ml_program_exit_usage(&s.prog, "invalid value for --compute: targets must be at least 1ns");
    ml_program_begin(&s.prog, points_total(&s));

    /* Offsets are needed by the start check even when their points were written by an earlier,
     * resumed run, so they are always measured. */
    ml_offset_t offset;
    estimate_offsets(&s, &offset);
    if (has_check(&s, "offset"))
        write_offsets(&s, "start", &offset);
    if (has_check(&s, "clock"))
        check_clock(&s);
    if (has_check(&s, "compute"))
        check_compute(&s);
    if (has_check(&s, "handshake"))
        check_handshake(&s);
    if (has_check(&s, "start"))
        check_start(&s, &offset);
    if (has_check(&s, "offset")) {
        ml_offset_t end;
        estimate_offsets(&s, &end);
        write_offsets(&s, "end", &end);
    }
    return ml_program_finish(&s.prog);
}
