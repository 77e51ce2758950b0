/* When a map point has been measured enough (docs/overlap.md, "Repetitions"): as soon as its
 * ratio's interval, computed as the report computes it, is determined (no wider than 0.4) or lies
 * within one class band; while it does not, up to --reps, then on with the time decided points
 * saved, up to the point's maximum. The repetitions of a run go where classes are still
 * undecided instead of everywhere alike, in no more time than --reps everywhere. */
#include <math.h>

#include "clock.h"
#include "overlap.h"

/* The class bands of the report (analysis/overlap.py): overlap below 0.2, partial below 0.8,
 * none up to 1.2, hurts above. A band's interval must not reach below -0.2: a ratio below 0 is
 * not overlap but noise (or an invalid point), so it decides nothing. */
static const double band_edges[] = {-DECIDE_WIDTH / 2, 0.2, 0.8, 1.2, INFINITY};
#define N_BANDS 4

/* The band [lo, hi] lies within, or -1. */
static int band_of(double lo, double hi)
{
    for (int b = 0; b < N_BANDS; b++)
        if (lo >= band_edges[b] && hi <= band_edges[b + 1])
            return b;
    return -1;
}

int overlap_class(double ratio)
{
    if (isnan(ratio))
        return -1;
    for (int b = 1; b < N_BANDS; b++)
        if (ratio < band_edges[b] || (b == N_BANDS - 1 && ratio <= band_edges[b]))
            return b - 1;
    return N_BANDS - 1;
}

/* The smallest and largest eq. 1 over T_measured, T_comm and T_comp in their intervals: at the
 * 8 corners and, where the T_comm and T_comp intervals cross, at the ends of T_comm = T_comp
 * (analysis/overlap.py, ratio_bounds). */
static void ratio_bounds(const double m[2], const double comm[2], const double comp[2], double *lo, double *hi)
{
    double pairs[6][2];
    int n = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            pairs[n][0] = comm[i];
            pairs[n++][1] = comp[j];
        }
    double cross_lo = fmax(comm[0], comp[0]), cross_hi = fmin(comm[1], comp[1]);
    if (cross_lo <= cross_hi) {
        pairs[n][0] = pairs[n][1] = cross_lo;
        n++;
        pairs[n][0] = pairs[n][1] = cross_hi;
        n++;
    }
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < 2; i++) {
            double r = ml_overlap_ratio(m[i], pairs[k][0], pairs[k][1]);
            *lo = fmin(*lo, r);
            *hi = fmax(*hi, r);
        }
}

/* A sample's median interval, or 0 when the sample is too small for the level asked. */
static int interval(const ml_sample_t *s, double level, double out[2])
{
    ml_summary_t sum;
    if (!s || s->n == 0 || ml_summarize(s->values, s->n, level, &sum) != 0 || sum.ci_coverage < level)
        return 0;
    out[0] = sum.ci_lo;
    out[1] = sum.ci_hi;
    return 1;
}

/* Whether the run's savings pay one more repetition of the point, at its mean cost so far: so a
 * run takes no longer than with --reps everywhere. */
static int affordable(const overlap_decision_t *d, size_t n)
{
    double per_rep = (double)(ml_clock_ns() - d->start_ns) / (double)n;
    return d->saved_ns && *d->saved_ns >= per_rep * (double)(n + 1 - d->reps);
}

/* Whether the ratio's interval is determined, or its class decided and the neighbour's; width
 * receives the interval's width (infinite when it cannot be computed yet). */
static int decided(const overlap_decision_t *d, const ml_sample_t *t, const ml_sample_t *comp, double level,
                   double *width)
{
    double m[2], c[2], comm[2] = {d->t_comm_ns * d->comm_rel[0], d->t_comm_ns * d->comm_rel[1]};
    *width = INFINITY;
    if (!interval(t, level, m) || !interval(comp, level, c) || !(fmin(comm[0], c[0]) > 0.0))
        return 0;
    double lo, hi;
    ratio_bounds(m, comm, c, &lo, &hi);
    *width = hi - lo;
    if (hi - lo <= DECIDE_WIDTH)
        return 1;
    /* A class that differs from the neighbour's must be determined, not only within its band:
     * where the map changes class is what a reader looks at. */
    int band = band_of(lo, hi);
    return band >= 0 && (d->neighbour_class < 0 || band == d->neighbour_class);
}

/* Whether even the maximum of repetitions would leave the interval wider than DECIDE_WIDTH, were
 * it to narrow as 1/sqrt(n): a long computation next to a short message makes the ratio (T -
 * T_comp) / T_comm amplify the computation's jitter beyond any number of repetitions. */
static int hopeless(const overlap_decision_t *d, size_t n, double width)
{
    return !isfinite(width) || width * sqrt((double)n / (double)d->max_reps) > DECIDE_WIDTH;
}

ml_stop_t overlap_decide(const overlap_decision_t *d, const ml_sample_t *t, const ml_sample_t *comp, double level)
{
    if (t->n >= d->max_reps)
        return ML_STOP_MAX_REPS;
    if (t->n < d->min_reps)
        return ML_STOP_CONTINUE;
    double width;
    if (decided(d, t, comp, level, &width))
        return ML_STOP_DECIDED;
    if (t->n < d->reps)
        return ML_STOP_CONTINUE;
    /* Beyond --reps, spend the savings only where they can decide something (before, the
     * median's interval of a few values is too wide to project from). */
    if (hopeless(d, t->n, width))
        return ML_STOP_UNDECIDABLE;
    return affordable(d, t->n) ? ML_STOP_CONTINUE : ML_STOP_TIME_BUDGET;
}
