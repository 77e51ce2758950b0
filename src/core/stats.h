/* Samples, their summary (median, quantiles, a distribution-free confidence interval of the
 * median) and the stopping rule that decides when a point has been measured enough.
 *
 * We report medians, not means: scheduler artefacts make the mean drift (seed 000, "Variability").
 * The median's confidence interval comes from order statistics, so it holds whatever the
 * distribution of the times. */
#ifndef MPILENS_CORE_STATS_H
#define MPILENS_CORE_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    double *values;
    size_t n, cap;
} ml_sample_t;

/* Appends one value; returns 0, or -1 when memory runs out (the sample is unchanged). */
int ml_sample_add(ml_sample_t *s, double value);
void ml_sample_reset(ml_sample_t *s);
void ml_sample_free(ml_sample_t *s);

typedef struct {
    size_t n;
    double min, max, mean;
    double median, q1, q3, d1, d9;
    double ci_level; /* level asked for */
    double ci_lo, ci_hi;
    double ci_coverage; /* exact coverage of [ci_lo, ci_hi]; < ci_level when n is too small */
} ml_summary_t;

/* Quantile p (0..1) of sorted values by linear interpolation between order statistics (numpy's
 * default, so the Python side computes the same numbers). n must be > 0. */
double ml_quantile_sorted(const double *sorted, size_t n, double p);

/* 0-based indices lo <= hi into n sorted values such that [x_lo, x_hi] covers the median with
 * probability >= level, as narrow as possible; coverage receives the exact probability. When no
 * interval reaches the level (n too small), [0, n-1] and its coverage are returned. */
void ml_median_ci_ranks(size_t n, double level, size_t *lo, size_t *hi, double *coverage);

/* Summarizes n > 0 values (not modified). Returns 0, or -1 if n == 0 or memory runs out. */
int ml_summarize(const double *values, size_t n, double ci_level, ml_summary_t *out);

/* ---- stopping rule ---------------------------------------------------------------------- */

typedef enum {
    ML_STOP_CONTINUE = 0,
    ML_STOP_FIXED,       /* the fixed count asked for was reached */
    ML_STOP_PRECISION,   /* the median's CI half-width is within `precision` of the median, or
                            within floor_ns */
    ML_STOP_MAX_REPS,    /* precision not reached within max_reps */
    ML_STOP_TIME_BUDGET, /* precision not reached within the time budget */
    ML_STOP_DECIDED,     /* what the measurement is for is decided (mpilens-overlap: a ratio's class) */
    ML_STOP_UNDECIDABLE, /* ... and no number of repetitions within the maximum would decide it */
} ml_stop_t;

typedef struct {
    size_t fixed_reps; /* > 0: exactly this many repetitions, the rest is ignored */
    size_t min_reps;   /* no precision decision before this many */
    size_t max_reps;
    double precision;       /* relative half-width of the median's CI to reach, e.g. 0.02 */
    double floor_ns;        /* a half-width this small is enough whatever the median: the clock's
                               resolution, below which no precision is meaningful */
    double ci_level;        /* e.g. 0.95 */
    int64_t time_budget_ns; /* 0 = none; the budget is hard: it may stop before min_reps */
} ml_stop_rule_t;

/* The rule used by `--reps auto`. */
ml_stop_rule_t ml_stop_rule_auto(void);
/* The rule used by `--reps N`. */
ml_stop_rule_t ml_stop_rule_fixed(size_t reps);

/* Pure decision on a sample (sorts a copy): for tests and for callers that check rarely. */
ml_stop_t ml_stop_decide(const ml_stop_rule_t *rule, const double *values, size_t n, int64_t elapsed_ns);

const char *ml_stop_name(ml_stop_t reason);

/* Applies a rule to a growing sample cheaply: the precision test (a sort) runs only when the
 * sample has grown by about 1/8 since the last one, so checking after every repetition costs
 * O(n log n) in total, not per repetition. */
typedef struct {
    ml_stop_rule_t rule;
    int64_t start_ns;
    size_t next_precision_check;
} ml_stopper_t;

void ml_stopper_start(ml_stopper_t *st, const ml_stop_rule_t *rule);
ml_stop_t ml_stopper_check(ml_stopper_t *st, const ml_sample_t *sample);

#endif
