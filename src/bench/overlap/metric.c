/* The overhead ratio of seed 000 (eq. 1), in its own file so the unit tests link it alone. */
#include <math.h>

#include "overlap.h"

double ml_overlap_ratio(double t_measured, double t_comm, double t_comp)
{
    double lo = t_comm < t_comp ? t_comm : t_comp, hi = t_comm < t_comp ? t_comp : t_comm;
    /* also refuses NaN inputs: !(NaN > 0) */
    if (!(lo > 0.0) || isnan(t_measured) || isnan(hi))
        return NAN;
    return (t_measured - hi) / lo;
}
