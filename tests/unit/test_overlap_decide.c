/* When mpilens-overlap stops repeating a map point (decide.c), on samples whose ratio interval is
 * known: exact samples are decided at the minimum, samples that straddle classes go on to the
 * maximum, a wide interval within one band is decided unless its neighbour's class differs. */
#include <math.h>

#include "check.h"
#include "clock.h"
#include "overlap.h"

/* The decision on n values of T cycling through t_values, n of T_comp all 100 ns. */
static ml_stop_t decide(const overlap_decision_t *d, const double *t_values, size_t k, size_t n)
{
    ml_sample_t t = {0}, comp = {0};
    for (size_t i = 0; i < n; i++)
        CHECK(ml_sample_add(&t, t_values[i % k]) == 0 && ml_sample_add(&comp, 100.0) == 0);
    ml_stop_t reason = overlap_decide(d, &t, &comp, 0.95);
    ml_sample_free(&t);
    ml_sample_free(&comp);
    return reason;
}

int main(void)
{
    /* savings enough for any number of repetitions: the class alone decides */
    double plenty = 1e18, none = 0.0;
    overlap_decision_t d = {.t_comm_ns = 200.0,
                            .comm_rel = {1.0, 1.0},
                            .min_reps = 6,
                            .reps = 10,
                            .max_reps = 40,
                            .neighbour_class = -1,
                            .start_ns = ml_clock_ns(),
                            .saved_ns = &plenty};

    /* T 300, T_comm 200, T_comp 100: ratio exactly 1 (serialised), decided once the median's
     * interval reaches 95% (6 values), not before */
    const double exact[] = {300.0};
    CHECK(decide(&d, exact, 1, 5) == ML_STOP_CONTINUE);
    CHECK(decide(&d, exact, 1, 6) == ML_STOP_DECIDED);

    /* T from 200 to 400: ratios 0 to 2, across every class, an interval too wide to narrow to 0.4
     * within 40 repetitions: undecidable once --reps (10) are done */
    const double spread[] = {200.0, 400.0, 250.0, 350.0, 300.0};
    CHECK(decide(&d, spread, 5, 9) == ML_STOP_CONTINUE);
    CHECK(decide(&d, spread, 5, 10) == ML_STOP_UNDECIDABLE);

    /* T 290 or 350: ratios 0.9 or 1.5, across the none/hurts edge, 0.6 wide: it could narrow, so
     * it goes on beyond --reps with savings; as it does not, it is given up once even 40
     * repetitions could not narrow it to 0.4 (0.6 x sqrt(n / 40) > 0.4 from 18 on), and stopped
     * at the maximum in any case; without savings, it stops at --reps: the run takes no longer
     * than with --reps everywhere */
    const double edge[] = {290.0, 350.0};
    CHECK(decide(&d, edge, 2, 10) == ML_STOP_CONTINUE);
    CHECK(decide(&d, edge, 2, 17) == ML_STOP_CONTINUE);
    CHECK(decide(&d, edge, 2, 18) == ML_STOP_UNDECIDABLE);
    d.max_reps = 12;
    CHECK(decide(&d, edge, 2, 12) == ML_STOP_MAX_REPS);
    d.max_reps = 40;
    d.saved_ns = &none;
    CHECK(decide(&d, edge, 2, 9) == ML_STOP_CONTINUE);
    CHECK(decide(&d, edge, 2, 10) == ML_STOP_TIME_BUDGET);
    d.saved_ns = &plenty;

    /* T from 330 to 450: ratios 1.3 to 2.5, wider than 0.4 but all "hurts": decided, unless the
     * neighbour's class is another (then only a determined interval will do) */
    const double hurts[] = {330.0, 450.0, 390.0};
    CHECK(decide(&d, hurts, 3, 12) == ML_STOP_DECIDED);
    d.neighbour_class = 3;
    CHECK(decide(&d, hurts, 3, 12) == ML_STOP_DECIDED);
    d.neighbour_class = 2;
    CHECK(decide(&d, hurts, 3, 9) == ML_STOP_CONTINUE);
    CHECK(decide(&d, hurts, 3, 12) == ML_STOP_UNDECIDABLE); /* 1.2 wide: 40 could not make it 0.4 */

    /* the uncertainty of T_comm counts too: an exact T with T_comm known to +-30% is not
     * determined (ratio 1 +- 0.6 at the corners) */
    d.neighbour_class = -1;
    d.comm_rel[0] = 0.7;
    d.comm_rel[1] = 1.3;
    CHECK(decide(&d, exact, 1, 9) == ML_STOP_CONTINUE);
    CHECK(decide(&d, exact, 1, 10) == ML_STOP_UNDECIDABLE); /* the reference's interval stays */

    /* classes as the report's bands number them */
    CHECK(overlap_class(-0.5) == 0 && overlap_class(0.19) == 0 && overlap_class(0.2) == 1);
    CHECK(overlap_class(0.8) == 2 && overlap_class(1.2) == 2 && overlap_class(1.21) == 3);
    CHECK(overlap_class(NAN) == -1);
    CHECK_DONE();
}
