/* The stopping rule: each reason is reached exactly when it should be, and the cheap incremental
 * stopper agrees with the full decision. */
#include <stdint.h>

#include "check.h"
#include "stats.h"

static void test_fixed(void)
{
    ml_stop_rule_t rule = ml_stop_rule_fixed(50);
    double x[60] = {0};
    CHECK(ml_stop_decide(&rule, x, 49, 0) == ML_STOP_CONTINUE);
    CHECK(ml_stop_decide(&rule, x, 50, 0) == ML_STOP_FIXED);
    /* a fixed count ignores budget and precision */
    CHECK(ml_stop_decide(&rule, x, 10, INT64_MAX) == ML_STOP_CONTINUE);
}

static void test_precision(void)
{
    ml_stop_rule_t rule = ml_stop_rule_auto();
    double constant[20];
    for (int i = 0; i < 20; i++)
        constant[i] = 1000.0;
    /* no decision before min_reps, then a constant sample is precise at once */
    CHECK(ml_stop_decide(&rule, constant, rule.min_reps - 1, 0) == ML_STOP_CONTINUE);
    CHECK(ml_stop_decide(&rule, constant, rule.min_reps, 0) == ML_STOP_PRECISION);

    /* 1000 +- 100 alternating: half-width ~100 = 10% of the median, above 2%: go on */
    double noisy[20];
    for (int i = 0; i < 20; i++)
        noisy[i] = 1000.0 + (i % 2 ? 100.0 : -100.0) * (double)(i % 5);
    CHECK(ml_stop_decide(&rule, noisy, 20, 0) == ML_STOP_CONTINUE);
    rule.precision = 0.5;
    CHECK(ml_stop_decide(&rule, noisy, 20, 0) == ML_STOP_PRECISION);

    /* values at the clock's step: relative precision is hopeless, the absolute floor decides */
    double steps[20];
    for (int i = 0; i < 20; i++)
        steps[i] = (i % 3) * 20.0;
    rule = ml_stop_rule_auto();
    CHECK(ml_stop_decide(&rule, steps, 20, 0) == ML_STOP_CONTINUE);
    rule.floor_ns = 20.0;
    CHECK(ml_stop_decide(&rule, steps, 20, 0) == ML_STOP_PRECISION);
}

static void test_limits(void)
{
    ml_stop_rule_t rule = ml_stop_rule_auto();
    double x[2000];
    for (int i = 0; i < 2000; i++)
        x[i] = (i * 7919) % 1000; /* uniform-ish 0..999: never within 2% */
    CHECK(ml_stop_decide(&rule, x, rule.max_reps - 1, 0) == ML_STOP_CONTINUE);
    CHECK(ml_stop_decide(&rule, x, rule.max_reps, 0) == ML_STOP_MAX_REPS);
    CHECK(ml_stop_decide(&rule, x, 15, rule.time_budget_ns) == ML_STOP_TIME_BUDGET);
    /* the budget is hard, even below min_reps, but never stops an empty sample */
    CHECK(ml_stop_decide(&rule, x, 1, rule.time_budget_ns) == ML_STOP_TIME_BUDGET);
    CHECK(ml_stop_decide(&rule, x, 0, rule.time_budget_ns) == ML_STOP_CONTINUE);
    CHECK_STR(ml_stop_name(ML_STOP_MAX_REPS), "max_reps");
    CHECK_STR(ml_stop_name(ML_STOP_PRECISION), "precision");
}

/* The stopper checks precision only at growth steps; it must stop at the first step at which the
 * full decision says "precise", and never before the full decision would. */
static void test_stopper_agrees(void)
{
    ml_stop_rule_t rule = ml_stop_rule_auto();
    rule.time_budget_ns = 0;
    ml_sample_t s = {0};
    ml_stopper_t st;
    ml_stopper_start(&st, &rule);
    ml_stop_t reason = ML_STOP_CONTINUE;
    size_t first_precise = 0;
    for (int i = 0; reason == ML_STOP_CONTINUE && i < 1000; i++) {
        /* noise shrinking with i: precision arrives after a few dozen values */
        ml_sample_add(&s, 1000.0 + ((i % 2) ? 1.0 : -1.0) * 400.0 / (1.0 + i / 4.0));
        if (!first_precise && ml_stop_decide(&rule, s.values, s.n, 0) == ML_STOP_PRECISION)
            first_precise = s.n;
        reason = ml_stopper_check(&st, &s);
    }
    CHECK(reason == ML_STOP_PRECISION);
    CHECK(first_precise > 0 && s.n >= first_precise);
    CHECK(s.n <= first_precise + first_precise / 8 + 1);
    ml_sample_free(&s);
}

int main(void)
{
    test_fixed();
    test_precision();
    test_limits();
    test_stopper_agrees();
    CHECK_DONE();
}
