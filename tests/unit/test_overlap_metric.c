/* The seed's overhead ratio (eq. 1) against its defining cases. */
#include <math.h>

#include "check.h"
#include "overlap.h"

int main(void)
{
    /* perfect overlap: the sequence took as long as its longer part */
    CHECK_NEAR(ml_overlap_ratio(100.0, 40.0, 100.0), 0.0, 1e-12);
    CHECK_NEAR(ml_overlap_ratio(100.0, 100.0, 40.0), 0.0, 1e-12);
    /* serialised: both parts one after the other */
    CHECK_NEAR(ml_overlap_ratio(140.0, 40.0, 100.0), 1.0, 1e-12);
    CHECK_NEAR(ml_overlap_ratio(140.0, 100.0, 40.0), 1.0, 1e-12);
    /* half of the shorter part hidden */
    CHECK_NEAR(ml_overlap_ratio(120.0, 40.0, 100.0), 0.5, 1e-12);
    /* slower than serialised: above 1, not cropped */
    CHECK_NEAR(ml_overlap_ratio(180.0, 40.0, 100.0), 2.0, 1e-12);
    /* a T_comm measured a little too long gives a small negative ratio, kept as measured */
    CHECK_NEAR(ml_overlap_ratio(96.0, 40.0, 100.0), -0.1, 1e-12);
    /* nothing to normalise by: undefined, never a division by zero */
    CHECK(isnan(ml_overlap_ratio(100.0, 0.0, 100.0)));
    CHECK(isnan(ml_overlap_ratio(100.0, 100.0, 0.0)));
    CHECK(isnan(ml_overlap_ratio(100.0, -5.0, 100.0)));
    CHECK(isnan(ml_overlap_ratio(NAN, 40.0, 100.0)));
    CHECK(isnan(ml_overlap_ratio(100.0, NAN, 100.0)));
    CHECK_DONE();
}
