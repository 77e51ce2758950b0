#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

int ml_sample_add(ml_sample_t *s, double value)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        double *grown = realloc(s->values, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->values = grown;
        s->cap = cap;
    }
    s->values[s->n++] = value;
    return 0;
}

void ml_sample_reset(ml_sample_t *s) { s->n = 0; }

void ml_sample_free(ml_sample_t *s)
{
    free(s->values);
    memset(s, 0, sizeof *s);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ml_quantile_sorted(const double *sorted, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

/* With X ~ Binomial(n, 1/2) the number of values below the true median,
 * P(x_(j) <= median <= x_(n-j+1)) = 1 - 2 P(X <= j-1) (1-based order statistics).
 * We take the largest j whose coverage still reaches the level. The pmf is accumulated in log
 * space because 2^-n underflows beyond n ~ 1000. */
void ml_median_ci_ranks(size_t n, double level, size_t *lo, size_t *hi, double *coverage)
{
    const double tail = (1.0 - level) / 2.0;
    const double log_half_n = (double)n * log(0.5);
    double log_choose = 0.0; /* log C(n, i) */
    double cdf = 0.0;
    size_t j = 1; /* 1-based rank of the lower bound */
    double best_cdf = -1.0;

    for (size_t i = 0; 2 * i < n; i++) {
        if (i > 0)
            log_choose += log((double)(n - i + 1)) - log((double)i);
        cdf += exp(log_choose + log_half_n);
        if (cdf > tail)
            break;
        j = i + 1;
        best_cdf = cdf;
    }
    if (best_cdf < 0.0) /* not even [min, max] reaches the level */
        best_cdf = exp(log_half_n);
    *lo = j - 1;
    *hi = n - j;
    *coverage = 1.0 - 2.0 * best_cdf;
}

int ml_summarize(const double *values, size_t n, double ci_level, ml_summary_t *out)
{
    if (n == 0)
        return -1;
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return -1;
    memcpy(sorted, values, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);

    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += sorted[i];

    size_t lo, hi;
    ml_median_ci_ranks(n, ci_level, &lo, &hi, &out->ci_coverage);
    out->n = n;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->mean = sum / (double)n;
    out->median = ml_quantile_sorted(sorted, n, 0.5);
    out->q1 = ml_quantile_sorted(sorted, n, 0.25);
    out->q3 = ml_quantile_sorted(sorted, n, 0.75);
    out->d1 = ml_quantile_sorted(sorted, n, 0.1);
    out->d9 = ml_quantile_sorted(sorted, n, 0.9);
    out->ci_level = ci_level;
    out->ci_lo = sorted[lo];
    out->ci_hi = sorted[hi];
    free(sorted);
    return 0;
}

ml_stop_rule_t ml_stop_rule_auto(void)
{
    /* 2% of the median at 95% confidence: differences between MPI libraries of interest are
     * larger than that, and most points get there within a few dozen repetitions. */
    ml_stop_rule_t rule = {
        .fixed_reps = 0,
        .min_reps = 10,
        .max_reps = 1000,
        .precision = 0.02,
        .floor_ns = 0.0,
        .ci_level = 0.95,
        .time_budget_ns = 2000000000,
    };
    return rule;
}

ml_stop_rule_t ml_stop_rule_fixed(size_t reps)
{
    ml_stop_rule_t rule = ml_stop_rule_auto();
    rule.fixed_reps = reps;
    return rule;
}

static int precision_reached(const ml_stop_rule_t *rule, const double *values, size_t n)
{
    ml_summary_t sum;
    if (ml_summarize(values, n, rule->ci_level, &sum) != 0)
        return 0;
    if (sum.ci_coverage < rule->ci_level)
        return 0;
    double half_width = (sum.ci_hi - sum.ci_lo) / 2.0;
    return half_width <= rule->precision * fabs(sum.median) || half_width <= rule->floor_ns;
}

static ml_stop_t cheap_decision(const ml_stop_rule_t *rule, size_t n, int64_t elapsed_ns)
{
    if (rule->fixed_reps > 0)
        return n >= rule->fixed_reps ? ML_STOP_FIXED : ML_STOP_CONTINUE;
    if (n >= rule->max_reps)
        return ML_STOP_MAX_REPS;
    if (rule->time_budget_ns > 0 && elapsed_ns >= rule->time_budget_ns && n > 0)
        return ML_STOP_TIME_BUDGET;
    return ML_STOP_CONTINUE;
}

ml_stop_t ml_stop_decide(const ml_stop_rule_t *rule, const double *values, size_t n, int64_t elapsed_ns)
{
    ml_stop_t reason = cheap_decision(rule, n, elapsed_ns);
    if (reason != ML_STOP_CONTINUE || rule->fixed_reps > 0)
        return reason;
    if (n >= rule->min_reps && precision_reached(rule, values, n))
        return ML_STOP_PRECISION;
    return ML_STOP_CONTINUE;
}

const char *ml_stop_name(ml_stop_t reason)
{
    switch (reason) {
    case ML_STOP_CONTINUE: return "continue";
    case ML_STOP_FIXED: return "fixed";
    case ML_STOP_PRECISION: return "precision";
    case ML_STOP_MAX_REPS: return "max_reps";
    case ML_STOP_TIME_BUDGET: return "time_budget";
    case ML_STOP_DECIDED: return "decided";
    case ML_STOP_UNDECIDABLE: return "undecidable";
    }
    return "unknown";
}

void ml_stopper_start(ml_stopper_t *st, const ml_stop_rule_t *rule)
{
    st->rule = *rule;
    st->start_ns = ml_clock_ns();
    st->next_precision_check = rule->min_reps;
}

ml_stop_t ml_stopper_check(ml_stopper_t *st, const ml_sample_t *sample)
{
    size_t n = sample->n;
    ml_stop_t reason = cheap_decision(&st->rule, n, ml_clock_ns() - st->start_ns);
    if (reason != ML_STOP_CONTINUE || st->rule.fixed_reps > 0 || n < st->next_precision_check)
        return reason;
    st->next_precision_check = n + (n / 8 > 0 ? n / 8 : 1);
    return precision_reached(&st->rule, sample->values, n) ? ML_STOP_PRECISION : ML_STOP_CONTINUE;
}
