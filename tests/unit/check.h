/* Minimal assertions for the C unit tests: each failed check prints where and what, and the test
 * program exits non-zero at the end (CHECK_DONE) so ctest reports it. */
#ifndef MPILENS_TEST_CHECK_H
#define MPILENS_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                                 \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                \
            check_failures++;                                                                       \
        }                                                                                           \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                       \
    do {                                                                                            \
        double a_ = (a), b_ = (b);                                                                  \
        if (!(fabs(a_ - b_) <= (tol))) {                                                            \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g within %g\n", __FILE__, __LINE__, #a,  \
                    a_, b_, (double)(tol));                                                         \
            check_failures++;                                                                       \
        }                                                                                           \
    } while (0)

#define CHECK_STR(a, b)                                                                             \
    do {                                                                                            \
        const char *a_ = (a), *b_ = (b);                                                            \
        if (!a_ || strcmp(a_, b_) != 0) {                                                           \
            fprintf(stderr, "%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,         \
                    a_ ? a_ : "(null)", b_);                                                        \
            check_failures++;                                                                       \
        }                                                                                           \
    } while (0)

#define CHECK_DONE()                                                                                \
    do {                                                                                            \
        if (check_failures)                                                                         \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                                \
        return check_failures != 0;                                                                 \
    } while (0)

#endif
