/* Small pure pieces: geometric series, the progress estimate, recognising MPI flavours. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "meta.h"
#include "progress.h"
#include "series.h"

static void test_series(void)
{
    int64_t out[64];
    /* powers of sqrt(2) from 1 to 16, rounded, duplicates dropped */
    size_t n = ml_geometric_series(1, 16, 1.41421356237, out, 64);
    static const int64_t expect[] = {1, 2, 3, 4, 6, 8, 11, 16};
    CHECK(n == 8);
    for (size_t i = 0; i < n && i < 8; i++)
        CHECK(out[i] == expect[i]);
    /* decades, the top included despite floating point */
    n = ml_geometric_series(1000, 10000000, 10.0, out, 64);
    CHECK(n == 5 && out[0] == 1000 && out[4] == 10000000);
    /* 0 is kept, then the series goes on from 1 */
    n = ml_geometric_series(0, 4, 2.0, out, 64);
    CHECK(n == 4 && out[0] == 0 && out[1] == 1 && out[3] == 4);
    /* one value, bad inputs, capacity */
    CHECK(ml_geometric_series(5, 5, 2.0, out, 64) == 1 && out[0] == 5);
    CHECK(ml_geometric_series(8, 4, 2.0, out, 64) == 0);
    CHECK(ml_geometric_series(1, 4, 1.0, out, 64) == 0);
    CHECK(ml_geometric_series(1, 1 << 20, 2.0, out, 5) == 5);
    /* 1 B to 16 MiB by sqrt(2): 49 sizes, all increasing */
    n = ml_geometric_series(1, 16 << 20, 1.41421356237, out, 64);
    CHECK(out[n - 1] == 16 << 20);
    for (size_t i = 1; i < n; i++)
        CHECK(out[i] > out[i - 1]);
}

static void test_eta(void)
{
    const int64_t s = 1000000000;
    CHECK(ml_progress_eta_ns(100, 10, 0, 10 * s) == 90 * s);
    /* resumed points are not counted in the pace */
    CHECK(ml_progress_eta_ns(100, 60, 50, 10 * s) == 40 * s);
    CHECK(ml_progress_eta_ns(100, 50, 50, 10 * s) == -1);
    CHECK(ml_progress_eta_ns(100, 100, 100, 0) == 0);
    CHECK(ml_progress_eta_ns(100, 100, 0, 10 * s) == 0);
}

static void test_flavour(void)
{
    CHECK_STR(ml_mpi_flavour("Open MPI v4.1.4, package: Debian OpenMPI"), "openmpi");
    CHECK_STR(ml_mpi_flavour("MPICH Version:\t4.0.2\nMPICH Release date"), "mpich");
    CHECK_STR(ml_mpi_flavour("Intel(R) MPI Library 2021.6 for Linux* OS (based on MPICH)"), "intelmpi");
    CHECK_STR(ml_mpi_flavour("MVAPICH2 Version :\t2.3.7 (MPICH 3.2)"), "mvapich");
    CHECK_STR(ml_mpi_flavour("MPI VERSION    : CRAY MPICH version 8.1.25"), "craympich");
    CHECK_STR(ml_mpi_flavour("Spectrum MPI"), "unknown");
}

static void test_thread_levels(void)
{
    int level = -7;
    CHECK(ml_thread_level_parse("funneled", &level) == 0 && level == MPI_THREAD_FUNNELED);
    CHECK(ml_thread_level_parse("bogus", &level) == -1 && level == MPI_THREAD_FUNNELED);
    CHECK_STR(ml_thread_level_name(MPI_THREAD_MULTIPLE), "multiple");
    CHECK_STR(ml_thread_level_name(-42), "unknown");
}

static void test_binding_and_date(void)
{
    char buf[256], date[32];
    ml_binding_string(buf, sizeof buf);
    CHECK(buf[0] >= '0' && buf[0] <= '9');
    ml_utc_now(date, sizeof date);
    CHECK(strlen(date) == 20 && date[4] == '-' && date[10] == 'T' && date[19] == 'Z');
}

int main(void)
{
    test_series();
    test_eta();
    test_flavour();
    test_thread_levels();
    test_binding_and_date();
    CHECK_DONE();
}
