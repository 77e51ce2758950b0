/* Statistics against known answers: quantiles of fixed samples (values numpy gives), the ranks of
 * the median's confidence interval (exact binomial values), and its coverage on synthetic data
 * whose true median is known. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "stats.h"

static void test_quantiles(void)
{
    const double x[] = {7, 1, 10, 4, 2, 9, 3, 8, 6, 5}; /* 1..10 shuffled */
    ml_summary_t s;
    CHECK(ml_summarize(x, 10, 0.95, &s) == 0);
    CHECK(s.n == 10);
    CHECK_NEAR(s.min, 1, 0);
    CHECK_NEAR(s.max, 10, 0);
    CHECK_NEAR(s.mean, 5.5, 1e-12);
    CHECK_NEAR(s.median, 5.5, 1e-12);
    CHECK_NEAR(s.q1, 3.25, 1e-12); /* numpy.quantile(range(1, 11), 0.25) */
    CHECK_NEAR(s.q3, 7.75, 1e-12);
    CHECK_NEAR(s.d1, 1.9, 1e-12);
    CHECK_NEAR(s.d9, 9.1, 1e-12);
    CHECK_NEAR(s.ci_lo, 2, 0); /* order statistics 2 and 9 for n = 10 */
    CHECK_NEAR(s.ci_hi, 9, 0);
    CHECK_NEAR(s.ci_coverage, 1.0 - 2.0 * 11.0 / 1024.0, 1e-12);
    CHECK(x[0] == 7); /* input untouched */

    const double one[] = {42};
    CHECK(ml_summarize(one, 1, 0.95, &s) == 0);
    CHECK_NEAR(s.median, 42, 0);
    CHECK_NEAR(s.q1, 42, 0);
    CHECK_NEAR(s.ci_lo, 42, 0);
    CHECK(s.ci_coverage < 0.95);

    CHECK(ml_summarize(one, 0, 0.95, &s) == -1);
}

/* 1 - 2 P(X <= j-1), X ~ Binomial(n, 1/2), computed directly for comparison. */
static double coverage_of(size_t n, size_t j)
{
    double cdf = 0.0;
    for (size_t i = 0; i + 1 <= j; i++)
        cdf += exp(lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1) - (double)n * log(2.0));
    return 1.0 - 2.0 * cdf;
}

static void test_ci_ranks(void)
{
    /* Known 95% intervals (1-based ranks): n=10 -> (2,9), n=20 -> (6,15), n=50 -> (18,33),
     * n=100 -> (40,61). */
    static const struct {
        size_t n, lo, hi;
    } known[] = {{10, 2, 9}, {20, 6, 15}, {50, 18, 33}, {100, 40, 61}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t lo, hi;
        double cov;
        ml_median_ci_ranks(known[i].n, 0.95, &lo, &hi, &cov);
        CHECK(lo + 1 == known[i].lo);
        CHECK(hi + 1 == known[i].hi);
        CHECK_NEAR(cov, coverage_of(known[i].n, known[i].lo), 1e-9);
        CHECK(cov >= 0.95);
        /* one rank narrower would miss the level: the interval is the narrowest */
        CHECK(coverage_of(known[i].n, known[i].lo + 1) < 0.95);
    }
    /* Too few values for 95%: [min, max] with its true, lower coverage. */
    size_t lo, hi;
    double cov;
    ml_median_ci_ranks(5, 0.95, &lo, &hi, &cov);
    CHECK(lo == 0 && hi == 4);
    CHECK_NEAR(cov, 1.0 - 2.0 / 32.0, 1e-12);
    /* Large n must not underflow. */
    ml_median_ci_ranks(100000, 0.95, &lo, &hi, &cov);
    CHECK(cov >= 0.95 && cov < 0.96);
    CHECK(lo > 49000 && hi < 51000 && lo + hi == 99999);
}

/* Deterministic generator, so the coverage test gives the same answer every run. */
static uint64_t rng_state = 88172645463325252ULL;
static double uniform(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static void test_ci_coverage(void)
{
    /* Exponential times (skewed, like latencies) with median ln 2: the interval must contain the
     * true median in about 95% (and at least the exact coverage, ~96.7% for n = 50) of trials. */
    const int trials = 4000;
    const size_t n = 50;
    double x[50];
    int hits = 0;
    for (int t = 0; t < trials; t++) {
        for (size_t i = 0; i < n; i++)
            x[i] = -log(uniform());
        ml_summary_t s;
        ml_summarize(x, n, 0.95, &s);
        hits += s.ci_lo <= log(2.0) && log(2.0) <= s.ci_hi;
    }
    double rate = (double)hits / trials;
    /* binomial sd at p = 0.967 over 4000 trials is 0.0028: +-4 sd */
    CHECK(rate > 0.967 - 0.012 && rate < 0.967 + 0.012);
}

static void test_sample(void)
{
    ml_sample_t s = {0};
    for (int i = 0; i < 1000; i++)
        CHECK(ml_sample_add(&s, i) == 0);
    CHECK(s.n == 1000 && s.values[999] == 999);
    ml_sample_reset(&s);
    CHECK(s.n == 0);
    ml_sample_free(&s);
    CHECK(s.values == NULL);
}

int main(void)
{
    test_quantiles();
    test_ci_ranks();
    test_ci_coverage();
    test_sample();
    CHECK_DONE();
}
