#include "blocks.h"

#include <math.h>

const char *const coll_estimator_names[COLL_ESTIMATORS] = {"median", "mean"};

double coll_estimate(const double *values, size_t n, coll_estimator_t estimator)
{
    ml_summary_t s;
    if (ml_summarize(values, n, 0.95, &s) != 0)
        return NAN;
    return estimator == COLL_MEAN ? s.mean : s.median;
}

double coll_rsd(const double *values, size_t n)
{
    if (n < 2)
        return INFINITY;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += values[i];
    mean /= (double)n;
    if (mean == 0)
        return INFINITY;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (values[i] - mean) * (values[i] - mean);
    return sqrt(ss / (double)(n - 1)) / fabs(mean);
}

ml_stop_t coll_blocks_decide(const coll_block_rule_t *rule, const double *values, size_t n)
{
    if (rule->fixed > 0)
        return n >= rule->fixed ? ML_STOP_FIXED : ML_STOP_CONTINUE;
    if (n >= rule->min_blocks && coll_rsd(values, n) < rule->rsd)
        return ML_STOP_PRECISION;
    if (n >= rule->max_blocks)
        return ML_STOP_MAX_REPS;
    return ML_STOP_CONTINUE;
}

double coll_ol(double e_ns, double rtl_ns) { return e_ns - rtl_ns / 2; }

int coll_gap_bound(double e_ns, double rtl_ns, double gap_ns)
{
    return e_ns < gap_ns + fmax(rtl_ns / 4, GAP_BOUND_SHARE * gap_ns);
}
