#include "series.h"

#include <math.h>

size_t ml_geometric_series(int64_t lo, int64_t hi, double factor, int64_t *out, size_t max)
{
    if (factor <= 1.0 || lo > hi || lo < 0)
        return 0;
    size_t n = 0;
    if (lo == 0 && n < max) {
        out[n++] = 0;
        lo = 1;
    }
    /* Powers are computed from the start, not multiplied step by step, so rounding errors do not
     * accumulate; the 1e-9 slack keeps hi itself when lo * factor^k lands on it. */
    for (int k = 0; n < max; k++) {
        double x = (double)lo * pow(factor, k);
        if (x > (double)hi * (1.0 + 1e-9))
            break;
        int64_t v = (int64_t)llround(x);
        if (v > hi)
            v = hi;
        if (n == 0 || v != out[n - 1])
            out[n++] = v;
    }
    return n;
}
