/* mpilens-coll's pure parts: the seed's stopping rule (RSD of block results below 3%, 8 to 30
 * blocks), the acknowledgement correction OL_i = E_i - RTL_i/2, the gap test, the analytic
 * latencies of the reference algorithms and the two estimators (median, the seed's mean). */
#include <math.h>

#include "check.h"
#include "coll.h"

static void test_rsd(void)
{
    const double v[] = {90, 100, 110}; /* sd 10, mean 100 */
    CHECK_NEAR(coll_rsd(v, 3), 0.1, 1e-12);
    CHECK(isinf(coll_rsd(v, 1)));
    const double zero[] = {0, 0};
    CHECK(isinf(coll_rsd(zero, 2)));
}

static void test_estimators(void)
{
    /* one operation that lost its core: the median ignores it, the mean spreads it */
    const double times[] = {100, 102, 98, 101, 5099};
    CHECK_NEAR(coll_estimate(times, 5, COLL_MEDIAN), 101, 1e-12);
    CHECK_NEAR(coll_estimate(times, 5, COLL_MEAN), 1100, 1e-9);
    CHECK(times[4] == 5099); /* left as they were */
    const double even[] = {4, 1, 3, 2};
    CHECK_NEAR(coll_estimate(even, 4, COLL_MEDIAN), 2.5, 1e-12);
    CHECK(isnan(coll_estimate(even, 0, COLL_MEAN)));
}

static void test_stop_rule(void)
{
    coll_block_rule_t seed = {0, 8, 30, 0.03};
    double steady[30], noisy[30];
    for (int i = 0; i < 30; i++) {
        steady[i] = 100 + (i % 2 ? 1 : -1);  /* RSD about 1% */
        noisy[i] = 100 + (i % 2 ? 20 : -20); /* RSD about 20% */
    }
    CHECK(coll_blocks_decide(&seed, steady, 7) == ML_STOP_CONTINUE); /* fewer than 8 blocks */
    CHECK(coll_blocks_decide(&seed, steady, 8) == ML_STOP_PRECISION);
    CHECK(coll_blocks_decide(&seed, noisy, 8) == ML_STOP_CONTINUE);
    CHECK(coll_blocks_decide(&seed, noisy, 29) == ML_STOP_CONTINUE);
    CHECK(coll_blocks_decide(&seed, noisy, 30) == ML_STOP_MAX_REPS);
    coll_block_rule_t fixed = {3, 8, 30, 0.03};
    CHECK(coll_blocks_decide(&fixed, noisy, 2) == ML_STOP_CONTINUE);
    CHECK(coll_blocks_decide(&fixed, noisy, 3) == ML_STOP_FIXED);
    /* the threshold is strict: exactly 3% does not stop */
    const double edge[] = {97, 103, 97, 103, 97, 103, 97, 103};
    double r = coll_rsd(edge, 8);
    coll_block_rule_t at = {0, 8, 30, r};
    CHECK(coll_blocks_decide(&at, edge, 8) == ML_STOP_CONTINUE);
}

static void test_correction(void)
{
    /* E_i = OL_i + one-way acknowledgement; the round trip is two one-way latencies */
    double ol = 7000, one_way = 400;
    CHECK_NEAR(coll_ol(ol + one_way, 2 * one_way), ol, 1e-9);
    /* an acknowledgement that arrives while the root still sends: E_i equals the gap */
    CHECK(coll_gap_bound(10000, 800, 10000));
    CHECK(coll_gap_bound(10150, 800, 10000));       /* less than a quarter of the round trip above */
    CHECK(coll_gap_bound(10400, 800, 10000));       /* within 5% of the gap: noise can do that */
    CHECK(!coll_gap_bound(10600, 800, 10000));      /* clearly after the root's last send */
    CHECK(coll_gap_bound(1005000, 40000, 1000000)); /* a quarter round trip above, still within 5% */
    CHECK(!coll_gap_bound(1060000, 40000, 1000000));
    CHECK(coll_gap_bound(1000, 800, 900)); /* for small gaps the round trip sets the margin */
    CHECK(!coll_gap_bound(1200, 800, 900));
}

static void test_truth(void)
{
    double d = 1000, per[8];
    /* broadcast: linear and backward (P-1) d, binomial ceil(log2 P) d, flat (P-1) d */
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_LINEAR, 8, d, per), 7 * d, 0);
    for (int i = 1; i < 7; i++) /* rank i returns after forwarding to i+1 */
        CHECK_NEAR(per[i], (i + 1) * d, 0);
    CHECK_NEAR(per[7], 7 * d, 0);
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_BACKWARD, 8, d, per), 7 * d, 0);
    CHECK_NEAR(per[7], 2 * d, 0);
    CHECK_NEAR(per[1], 7 * d, 0);
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_BINOMIAL, 8, d, per), 3 * d, 0);
    CHECK_NEAR(per[4], 3 * d, 0); /* receives at d, then sends to 6 and 5 */
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_BINOMIAL, 5, d, per), 3 * d, 0);
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_BINOMIAL, 2, d, per), d, 0);
    CHECK_NEAR(coll_truth(OP_BCAST, ALGO_FLAT, 8, d, per), 7 * d, 0);
    CHECK_NEAR(per[3], 3 * d, 0);
    /* reduce, rank i entering last: one delayed send per level of the tree */
    CHECK_NEAR(coll_truth(OP_REDUCE, ALGO_LINEAR, 8, d, per), 7 * d, 0);
    CHECK_NEAR(per[3], 3 * d, 0);
    CHECK_NEAR(per[0], 0, 0);
    CHECK_NEAR(coll_truth(OP_REDUCE, ALGO_BACKWARD, 8, d, per), 7 * d, 0);
    CHECK_NEAR(per[7], d, 0);
    CHECK_NEAR(coll_truth(OP_REDUCE, ALGO_BINOMIAL, 8, d, per), 3 * d, 0);
    CHECK_NEAR(per[5], 2 * d, 0); /* 5 -> 4 -> 0 */
    CHECK_NEAR(coll_truth(OP_REDUCE, ALGO_FLAT, 8, d, per), d, 0);
    /* allreduce, the root entering last: the broadcast part, root included */
    CHECK_NEAR(coll_truth(OP_ALLREDUCE, ALGO_LINEAR, 4, d, per), 3 * d, 0);
    CHECK_NEAR(per[0], d, 0);
    CHECK(coll_truth(OP_BCAST, ALGO_LIBRARY, 4, d, per) < 0);
}

int main(void)
{
    test_rsd();
    test_estimators();
    test_stop_rule();
    test_correction();
    test_truth();
    CHECK_DONE();
}
