/* The tool API of libmpilens-progress, linked: configure before MPI_Init (bad text refused, a good
 * one taken), refused after it; the thread runs and polls while the program computes, at the
 * program's MPI_THREAD_FUNNELED (the library is asked for MPI_THREAD_MULTIPLE underneath); it is
 * stopped at MPI_Finalize. usage: test_progress_api MODE (a mode to configure, e.g. yield) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mpilens/progress.h"

static int failures;
#define CHECK(cond)                                                                                                 \
    do {                                                                                                            \
        if (!(cond)) {                                                                                              \
            fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond);                                      \
            failures++;                                                                                             \
        }                                                                                                           \
    } while (0)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "yield";
    CHECK(mpilens_progress_configure(NULL) == MPILENS_PROGRESS_ERR_ARG);
    CHECK(mpilens_progress_configure("spin") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("sleep") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("poll:5") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("yield,cpu=x") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(strstr(mpilens_progress_status_string(MPILENS_PROGRESS_ERR_SPEC), "MODE"));
    CHECK(mpilens_progress_configure(mode) == MPILENS_PROGRESS_OK);

    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CHECK(provided >= MPI_THREAD_FUNNELED);
    CHECK(mpilens_progress_configure("poll") == MPILENS_PROGRESS_ERR_STARTED);

    mpilens_progress_info_t info;
    CHECK(mpilens_progress_info(&info) == MPILENS_PROGRESS_OK);
    CHECK(info.running == 1);
    CHECK(strncmp(info.mode, mode, strlen(info.mode)) == 0);
    unsigned long long before = info.polls;
    struct timespec pause = {0, 50 * 1000000};
    nanosleep(&pause, NULL);
    mpilens_progress_info(&info);
    CHECK(info.polls > before);

    int rank, sum = 0, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sum == size);

    MPI_Finalize();
    mpilens_progress_info(&info);
    CHECK(info.running == 0);
    if (rank == 0 && !failures)
        printf("passed\n");
    return failures ? 1 : 0;
}
