/* The seed's repetition rule (seed 003, §3): a measurement is a block of M operations; blocks
 * are repeated until the relative standard deviation of their results is below a threshold
 * (3%), with at least 8 and at most 30 blocks. And the seed's correction of the acknowledgement:
 * OL_i = E_i - RTL_i / 2. Pure functions, unit tested (tests/unit/test_coll_blocks.c). */
#ifndef MPILENS_COLL_BLOCKS_H
#define MPILENS_COLL_BLOCKS_H

#include <stddef.h>

#include "stats.h"

/* How blocks make an estimate: the median (mpilens's default: a rank that loses its core for a
 * millisecond moves a median little and a mean a lot) or the mean (the seed's: each point "the
 * mean of several (between 8 and 30) reported measurements", each block the mean of M
 * operations). */
typedef enum { COLL_MEDIAN, COLL_MEAN, COLL_ESTIMATORS } coll_estimator_t;

extern const char *const coll_estimator_names[COLL_ESTIMATORS];

/* The median or the mean of n values (n > 0; the values are left as they are). */
double coll_estimate(const double *values, size_t n, coll_estimator_t estimator);

typedef struct {
    size_t fixed; /* > 0: exactly this many blocks (--reps N) */
    size_t min_blocks, max_blocks;
    double rsd; /* relative standard deviation to reach, e.g. 0.03 */
} coll_block_rule_t;

/* Sample standard deviation over the mean's absolute value; INFINITY for fewer than 2 values
 * or a zero mean. */
double coll_rsd(const double *values, size_t n);

/* ML_STOP_CONTINUE, ML_STOP_FIXED, ML_STOP_PRECISION (RSD below the threshold, at least
 * min_blocks) or ML_STOP_MAX_REPS. */
ml_stop_t coll_blocks_decide(const coll_block_rule_t *rule, const double *values, size_t n);

/* The operation latency to task i from E_i (root's time per broadcast-and-acknowledgement) and
 * RTL_i (root's round trip with task i): the acknowledgement's one-way latency removed. */
double coll_ol(double e_ns, double rtl_ns);

/* Whether E_i may be bounded by the root's gap g_0 rather than by the path to i (seed §4): the
 * acknowledgement could then have arrived before the root finished its broadcast. E_i must
 * exceed g_0 by a quarter of the round trip, and by GAP_BOUND_SHARE of g_0, to count as clear of
 * it: E_i and g_0 are measured apart, and on a busy machine their noise exceeds a round trip.
 * A rank taken as gap-bound is only measured again by the remedy, which is right either way. */
#define GAP_BOUND_SHARE 0.05
int coll_gap_bound(double e_ns, double rtl_ns, double gap_ns);

#endif
