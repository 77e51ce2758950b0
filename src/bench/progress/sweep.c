/* The points of one message size, in one order on every rank: the blocking time t_b first (every
 * other point computes for t_b), then for each kind of computation the strategy none, the test
 * strategy at each interval, and the test interval with the lowest overhead (test-best).
 *
 * A resumed run skips the points its file holds. It still needs what they measured: t_b for the
 * points left, the overheads of the intervals done for test-best. Rank 0 reads them back from
 * the file, so that a completed file is the same as one measured in a single run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "schedule.h"

#define MAX_POINTS (1 + 2 * (ML_MAX_VALUES + 2))

/* The points of a size, in the order they are measured. */
static size_t plan(const ml_bench_t *b, const char *bench, const char *op, int64_t size, ml_point_t *out)
{
    size_t n = 0;
    out[n++] = (ml_point_t){bench, op, size, -1, "blocking", 0};
    for (int work = 0; work <= 1; work++) {
        if (!ml_list_contains(&b->computes, work ? "work" : "time"))
            continue;
        if (ml_list_contains(&b->strategies, "none"))
            out[n++] = (ml_point_t){bench, op, size, work, "none", 0};
        if (!ml_list_contains(&b->strategies, "test"))
            continue;
        for (size_t i = 0; i < b->n_intervals; i++)
            out[n++] = (ml_point_t){bench, op, size, work, "test", b->interval_values[i]};
        out[n++] = (ml_point_t){bench, op, size, work, "test-best", 0};
    }
    return n;
}

void ml_point_once(const ml_comm_t *comm, const ml_point_t *pt, ml_placement_t placement, int64_t t_b, uint64_t units,
                   int64_t c_ns, ml_rep_t *rep)
{
    if (pt->work < 0) {
        ml_blocking_once(comm, rep);
        return;
    }
    int64_t tests = strcmp(pt->strategy, "test") == 0 ? ml_tests_for(pt->size, pt->interval) : 0;
    ml_overlapped_once(comm, pt->work, pt->work ? (int64_t)units : t_b, tests, placement, c_ns, rep);
}

long ml_sweep_points(const ml_bench_t *b)
{
    ml_point_t points[MAX_POINTS];
    return (long)plan(b, "p2p", NULL, 0, points);
}

/* The lowest overhead among the test intervals of one kind of computation, so far. */
typedef struct {
    size_t n;
    int64_t intervals[ML_MAX_VALUES];
    double t_o[ML_MAX_VALUES];
    char keys[ML_MAX_VALUES][160];
    int best; /* index, -1 before any finite overhead */
} best_t;

static void consider(best_t *best, const ml_point_t *pt, const char *key, double t_o)
{
    size_t i = best->n++;
    best->intervals[i] = pt->interval;
    best->t_o[i] = t_o;
    snprintf(best->keys[i], sizeof best->keys[i], "%s", key);
    if (isfinite(t_o) && (best->best < 0 || t_o < best->t_o[best->best]))
        best->best = (int)i;
}

static void write_best(ml_bench_t *b, const ml_sweep_t *s, ml_point_t pt, const char *key, const best_t *best)
{
    if (best->best < 0) {
        ml_program_note(&b->prog, "warning", "no test interval gave an overhead: no test-best point", key);
        return;
    }
    pt.interval = best->intervals[best->best];
    ml_json_t j;
    ml_point_begin(&j, b, &pt, key, s->ranks);
    ml_json_double(&j, "t_o_ns", best->t_o[best->best]);
    ml_json_int(&j, "tests", ml_tests_for(pt.size, pt.interval));
    ml_json_string(&j, "from_key", best->keys[best->best]);
    ml_json_begin_array(&j, "candidates");
    for (size_t i = 0; i < best->n; i++) {
        ml_json_begin_object(&j, NULL);
        ml_json_int(&j, "interval_bytes", best->intervals[i]);
        ml_json_double(&j, "t_o_ns", best->t_o[i]);
        ml_json_end_object(&j);
    }
    ml_json_end_array(&j);
    ml_program_point_end(&b->prog, &j);
}

/* Rank 0: a value of a point measured by an earlier run. The file was checked when it was
 * resumed, so a missing value means it was changed since: better stop than measure nonsense. */
static double recorded(ml_bench_t *b, const char *key, const char *field)
{
    double v;
    if (ml_recorded_number(b->prog.output, key, field, &v) != 0) {
        fprintf(stderr, "%s: cannot read %s of \"%s\" back from \"%s\"; resume from an unchanged file\n", PROGRAM,
                field, key, b->prog.output);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return v;
}

static int all_done(const ml_bench_t *b, const ml_point_t *points, size_t n)
{
    char key[160];
    for (size_t i = 0; i < n; i++) {
        ml_point_key(key, sizeof key, &points[i]);
        if (!ml_program_skip(&b->prog, key))
            return 0;
    }
    return 1;
}

void ml_sweep_size(ml_bench_t *b, const ml_sweep_t *s, const char *bench, const char *op, int64_t size)
{
    ml_point_t points[MAX_POINTS];
    size_t n = plan(b, bench, op, size, points);
    int rank0 = b->prog.rank == 0, everything_done = all_done(b, points, n), prepared = -1;
    double t_b = NAN;
    best_t best = {.best = -1};
    for (size_t i = 0; i < n; i++) {
        const ml_point_t *pt = &points[i];
        char key[160];
        ml_point_key(key, sizeof key, pt);
        int done = ml_program_skip(&b->prog, key);
        if (everything_done) {
            /* nothing to measure: only the progress count */
        } else if (strcmp(pt->strategy, "blocking") == 0) {
            t_b = done ? (rank0 ? recorded(b, key, "stats.t_b_ns") : NAN) : s->measure(s->ctx, pt, key, NAN);
            MPI_Bcast(&t_b, 1, MPI_DOUBLE, 0, s->group);
        } else if (strcmp(pt->strategy, "test-best") == 0) {
            if (!done && rank0)
                write_best(b, s, *pt, key, &best);
            best = (best_t){.best = -1};
        } else {
            double t_o;
            if (done) {
                t_o = rank0 ? recorded(b, key, "stats.t_o_ns") : NAN;
            } else {
                if (prepared != pt->work)
                    s->prepare(s->ctx, pt->work, t_b);
                prepared = pt->work;
                t_o = s->measure(s->ctx, pt, key, t_b);
            }
            if (strcmp(pt->strategy, "test") == 0)
                consider(&best, pt, key, t_o);
        }
        ml_program_progress(&b->prog, key);
    }
}
