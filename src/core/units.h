/* Parsing of sizes, times and ranges given on command lines.
 *
 * The grammar is shared with the Python side (python/mpilens/units.py); both are tested against
 * tests/data/units_vectors.txt. Sizes are bytes with binary multiples (K = KiB = 1024); times are
 * nanoseconds, with units ns, us, µs, ms, s, and a bare number meaning microseconds. */
#ifndef MPILENS_CORE_UNITS_H
#define MPILENS_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Each returns 0 and sets its outputs, or -1 (outputs untouched) for text outside the grammar. */
int ml_parse_size(const char *text, uint64_t *bytes);
int ml_parse_time(const char *text, int64_t *ns);
/* MIN:MAX with MIN <= MAX, or one value for both. */
int ml_parse_size_range(const char *text, uint64_t *lo, uint64_t *hi);
int ml_parse_time_range(const char *text, int64_t *lo, int64_t *hi);

/* A byte count for people: "1.5 GiB". */
void ml_format_bytes(char *buf, size_t len, double bytes);

#endif
