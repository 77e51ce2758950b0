/* mpilens-progress's test schedule (src/bench/progress/schedule.h): N = floor(size/interval) + 1
 * tests, cutting the computation into N + 1 slices as equal as integers allow (even), or placed at
 * its start, evenly, and at its end as seed 002 does (seed). */
#include <stdint.h>

#include "check.h"
#include "schedule.h"

/* The definition, in 128-bit arithmetic: the reference the function must match exactly. */
static int64_t reference_end(int64_t total, int64_t tests, int64_t k)
{
    return (int64_t)((unsigned __int128)total * (unsigned __int128)(k + 1) / (unsigned __int128)(tests + 1));
}

static void check_tests_for(void)
{
    CHECK(ml_tests_for(0, 1024) == 1); /* an empty message is still tested once */
    CHECK(ml_tests_for(1, 1024) == 1);
    CHECK(ml_tests_for(1023, 1024) == 1);
    CHECK(ml_tests_for(1024, 1024) == 2); /* one whole interval: one more test */
    CHECK(ml_tests_for(2047, 1024) == 2);
    CHECK(ml_tests_for(1048576, 65536) == 17); /* the seed's best interval at 1 MiB */
    CHECK(ml_tests_for(1048576, 1024) == 1025);
    CHECK(ml_tests_for(1048576, 262144) == 5);
    CHECK(ml_tests_for(INT32_MAX, 1) == (int64_t)INT32_MAX + 1);
    CHECK(ml_tests_for(1024, 0) == 0); /* no interval, no schedule */
    CHECK(ml_tests_for(1024, -1) == 0);
    CHECK(ml_tests_for(-1, 1024) == 0);
}

static void check_small_cases(void)
{
    /* one test: in the middle */
    CHECK(ml_slice_end(100, 1, 0) == 50);
    CHECK(ml_slice_end(100, 1, 1) == 100);
    /* two tests: at the thirds, rounded down */
    CHECK(ml_slice_end(10, 2, 0) == 3);
    CHECK(ml_slice_end(10, 2, 1) == 6);
    CHECK(ml_slice_end(10, 2, 2) == 10);
    /* no test: one slice, the whole computation */
    CHECK(ml_slice_end(12345, 0, 0) == 12345);
    /* more tests than units: some slices are empty, the tests still all happen */
    CHECK(ml_slice_end(2, 3, 0) == 0);
    CHECK(ml_slice_end(2, 3, 1) == 1);
    CHECK(ml_slice_end(2, 3, 2) == 1);
    CHECK(ml_slice_end(2, 3, 3) == 2);
    CHECK(ml_slice_end(0, 5, 2) == 0);
}

/* Every slice of every small schedule: exact, increasing, ending at total, and as even as
 * integers allow (lengths differ by at most one). */
static void check_evenness(void)
{
    for (int64_t total = 0; total <= 300; total++)
        for (int64_t tests = 0; tests <= 40; tests++) {
            int64_t prev = 0, shortest = INT64_MAX, longest = 0;
            for (int64_t k = 0; k <= tests; k++) {
                int64_t end = ml_slice_end(total, tests, k);
                if (end != reference_end(total, tests, k)) {
                    CHECK(end == reference_end(total, tests, k));
                    return;
                }
                int64_t len = end - prev;
                shortest = len < shortest ? len : shortest;
                longest = len > longest ? len : longest;
                prev = end;
            }
            CHECK(prev == total);
            CHECK(longest - shortest <= 1);
        }
}

/* Large computations (units of work, nanoseconds of hours) and the most tests a message can get:
 * products that overflow 64 bits in the naive formula. */
static void check_large(void)
{
    const int64_t totals[] = {INT64_MAX, INT64_MAX - 1, (int64_t)1 << 62, 3600000000000LL, 999999999937LL};
    const int64_t tests[] = {1, 2, 17, 1025, 65537, (int64_t)INT32_MAX + 1, (int64_t)UINT32_MAX - 1};
    for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++)
        for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
            const int64_t ks[] = {0, 1, tests[t] / 2, tests[t] - 1, tests[t]};
            for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++)
                CHECK(ml_slice_end(totals[i], tests[t], ks[k]) == reference_end(totals[i], tests[t], ks[k]));
            CHECK(ml_slice_end(totals[i], tests[t], tests[t]) == totals[i]);
        }
}

/* The seed's placement, in 128-bit arithmetic. */
static int64_t reference_seed(int64_t total, int64_t tests, int64_t k)
{
    if (tests <= 1)
        return 0;
    return (int64_t)((unsigned __int128)total * (unsigned __int128)k / (unsigned __int128)(tests - 1));
}

static void check_placements(void)
{
    /* the seed's example: 4096 bytes tested every 2048 bytes, N = 3: at 0%, 50% and 100% */
    int64_t n = ml_tests_for(4096, 2048);
    CHECK(n == 3);
    CHECK(ml_test_at(1000, n, 0, ML_PLACE_SEED) == 0);
    CHECK(ml_test_at(1000, n, 1, ML_PLACE_SEED) == 500);
    CHECK(ml_test_at(1000, n, 2, ML_PLACE_SEED) == 1000);
    /* even: the same three inside the computation, at its quarters */
    CHECK(ml_test_at(1000, n, 0, ML_PLACE_EVEN) == 250);
    CHECK(ml_test_at(1000, n, 1, ML_PLACE_EVEN) == 500);
    CHECK(ml_test_at(1000, n, 2, ML_PLACE_EVEN) == 750);
    /* one test: at the start (seed), in the middle (even); two: at both ends (seed) */
    CHECK(ml_test_at(1000, 1, 0, ML_PLACE_SEED) == 0);
    CHECK(ml_test_at(1000, 1, 0, ML_PLACE_EVEN) == 500);
    CHECK(ml_test_at(1000, 2, 0, ML_PLACE_SEED) == 0 && ml_test_at(1000, 2, 1, ML_PLACE_SEED) == 1000);
    /* every small schedule: exact, non-decreasing, from 0 to total; even is ml_slice_end */
    for (int64_t total = 0; total <= 200; total++)
        for (int64_t tests = 1; tests <= 30; tests++) {
            int64_t prev = 0;
            for (int64_t k = 0; k < tests; k++) {
                int64_t at = ml_test_at(total, tests, k, ML_PLACE_SEED);
                CHECK(at == reference_seed(total, tests, k));
                CHECK(at >= prev && at <= total);
                CHECK(ml_test_at(total, tests, k, ML_PLACE_EVEN) == ml_slice_end(total, tests, k));
                prev = at;
            }
            CHECK(prev == (tests > 1 ? total : 0));
        }
    /* no overflow at the largest products */
    const int64_t totals[] = {INT64_MAX, (int64_t)1 << 62, 3600000000000LL};
    const int64_t tests[] = {2, 17, (int64_t)INT32_MAX + 1};
    for (size_t i = 0; i < 3; i++)
        for (size_t t = 0; t < 3; t++) {
            const int64_t ks[] = {0, 1, tests[t] / 2, tests[t] - 1};
            for (size_t k = 0; k < 4; k++)
                CHECK(ml_test_at(totals[i], tests[t], ks[k], ML_PLACE_SEED) ==
                      reference_seed(totals[i], tests[t], ks[k]));
        }
}

int main(void)
{
    check_tests_for();
    check_small_cases();
    check_evenness();
    check_large();
    check_placements();
    CHECK_DONE();
}
