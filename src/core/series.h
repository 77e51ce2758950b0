/* Parameter spaces explored geometrically (seed 000: every power of sqrt(2) in each direction). */
#ifndef MPILENS_CORE_SERIES_H
#define MPILENS_CORE_SERIES_H

#include <stddef.h>
#include <stdint.h>

/* Fills out with lo, lo*factor, lo*factor^2, ... up to hi (included when reached within rounding),
 * each rounded to an integer, duplicates after rounding dropped; a lo of 0 is kept as the first
 * value and the series continues from 1. Returns how many values were written (at most max), or
 * 0 when factor <= 1 or lo > hi. */
size_t ml_geometric_series(int64_t lo, int64_t hi, double factor, int64_t *out, size_t max);

#endif
