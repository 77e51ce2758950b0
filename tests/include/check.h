/* Assertions shared by the C unit tests and the MPI integration tests (tests/mpi/mpitest.h adds
 * the MPI side): each failed check prints where and what and is counted in check_failures; the
 * test exits non-zero at the end (CHECK_DONE, or mpitest_finish under MPI) so ctest reports it.
 * An includer may define CHECK_WHO() before including this header: a string printed before each
 * failure (the MPI tests print the rank). */
#ifndef MPILENS_TEST_CHECK_H
#define MPILENS_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef CHECK_WHO
#define CHECK_WHO() ""
#endif

static int check_failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s%s:%d: check failed: %s\n", CHECK_WHO(), __FILE__, __LINE__, #cond);                    \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                                          \
    do {                                                                                                               \
        double a_ = (a), b_ = (b);                                                                                     \
        if (!(fabs(a_ - b_) <= (tol))) {                                                                               \
            fprintf(stderr, "%s%s:%d: %s = %.9g, expected %.9g within %g\n", CHECK_WHO(), __FILE__, __LINE__, #a, a_,  \
                    b_, (double)(tol));                                                                                \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)

#define CHECK_STR(a, b)                                                                                                \
    do {                                                                                                               \
        const char *a_ = (a), *b_ = (b);                                                                               \
        if (!a_ || strcmp(a_, b_) != 0) {                                                                              \
            fprintf(stderr, "%s%s:%d: %s = \"%s\", expected \"%s\"\n", CHECK_WHO(), __FILE__, __LINE__, #a,            \
                    a_ ? a_ : "(null)", b_);                                                                           \
            check_failures++;                                                                                          \
        }                                                                                                              \
    } while (0)

#define CHECK_DONE()                                                                                                   \
    do {                                                                                                               \
        if (check_failures)                                                                                            \
            fprintf(stderr, "%d check(s) failed\n", check_failures);                                                   \
        return check_failures != 0;                                                                                    \
    } while (0)

#endif
