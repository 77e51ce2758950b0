/* The tool API of libmpilens-progress, linked: configure before MPI_Init (bad text refused, a good
 * one taken), refused after it; the thread runs and polls while the program computes, at the
 * program's MPI_THREAD_FUNNELED (the library is asked for MPI_THREAD_MULTIPLE underneath); it is
 * stopped at MPI_Finalize. The status convention (include/mpilens/progress.h): a refused call
 * changes nothing (the mode configured before it stays in force), every status has a name of its
 * own. Event mode watches the MPI library's descriptors: on one node, where shared memory has
 * none, it must fall back to sleep and say why; across nodes the thread must watch some, and a
 * message between the nodes must wake it (events, which the timer never counts).
 * usage: test_progress_api MODE (a mode to configure, e.g. yield) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* check.h, not mpitest.h: checks run before MPI_Init and after MPI_Finalize too */
#include "check.h"
#include "mpilens/progress.h"

/* Event mode after MPI_Init: on one node the sleep it fell back to, across nodes the library's
 * descriptors woken by messages from the other node (ranks 0 and size-1 are on two nodes when
 * the ranks are placed in blocks). Returns whether this rank's thread must have polled since:
 * under event:0 a thread whose rank exchanged nothing has no reason to wake. */
static int check_events(const mpilens_progress_info_t *at_init)
{
    int rank, size, local;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    if (local == size) {
        CHECK(strcmp(at_init->mode, "sleep") == 0);
        CHECK(strstr(at_init->reason, "share one node") != NULL);
        return 1;
    }
    CHECK(strcmp(at_init->mode, "event") == 0 && at_init->descriptors > 0);
    int peer = rank == 0 ? size - 1 : 0, exchanges = rank == 0 || rank == size - 1;
    /* The library opens a connection at the first message; when this rank's side opened it, the
     * thread watches it only from its next scan (events.c), so the pair exchanges until both
     * threads were woken (the truth), within a bound that only a thread never woken reaches. */
    static char message[1 << 20];
    mpilens_progress_info_t info;
    double start = MPI_Wtime();
    for (int woken = 0, both = 0; exchanges && !both;) {
        MPI_Sendrecv_replace(message, sizeof message, MPI_BYTE, peer, 0, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        mpilens_progress_info(&info);
        woken = info.events > 0 || MPI_Wtime() - start > 10.0;
        int theirs;
        MPI_Sendrecv(&woken, 1, MPI_INT, peer, 1, &theirs, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        both = woken && theirs;
    }
    mpilens_progress_info(&info);
    if (exchanges)
        CHECK(info.events > 0);
    return exchanges;
}

static void check_names(void)
{
    static const mpilens_progress_status_t codes[] = {MPILENS_PROGRESS_OK, MPILENS_PROGRESS_ERR_SPEC,
                                                      MPILENS_PROGRESS_ERR_STARTED, MPILENS_PROGRESS_ERR_ARG};
    const size_t n = sizeof codes / sizeof codes[0];
    CHECK(strcmp(mpilens_progress_status_string(MPILENS_PROGRESS_OK), "success") == 0);
    CHECK(strstr(mpilens_progress_status_string(MPILENS_PROGRESS_ERR_SPEC), "MODE"));
    for (size_t i = 0; i < n; i++) {
        CHECK(strcmp(mpilens_progress_status_string(codes[i]), "unknown status") != 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(mpilens_progress_status_string(codes[i]), mpilens_progress_status_string(codes[j])) != 0);
    }
    CHECK(strcmp(mpilens_progress_status_string((mpilens_progress_status_t)(MPILENS_PROGRESS_ERR_ARG + 1)),
                 "unknown status") == 0);
    CHECK(strcmp(mpilens_progress_status_string((mpilens_progress_status_t)-1), "unknown status") == 0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "yield";
    check_names();
    /* configured first: the refused calls after it must leave it in force */
    CHECK(mpilens_progress_configure(mode) == MPILENS_PROGRESS_OK);
    CHECK(mpilens_progress_configure(NULL) == MPILENS_PROGRESS_ERR_ARG);
    CHECK(mpilens_progress_configure("spin") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("sleep") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("poll:5") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_configure("yield,cpu=x") == MPILENS_PROGRESS_ERR_SPEC);
    CHECK(mpilens_progress_info(NULL) == MPILENS_PROGRESS_ERR_ARG);

    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    CHECK(provided >= MPI_THREAD_FUNNELED);
    CHECK(mpilens_progress_configure(strcmp(mode, "poll") == 0 ? "yield" : "poll") == MPILENS_PROGRESS_ERR_STARTED);

    mpilens_progress_info_t info;
    CHECK(mpilens_progress_info(&info) == MPILENS_PROGRESS_OK);
    CHECK(info.running == 1);
    unsigned long long before = info.polls;
    int polled = 1; /* whether the thread must have polled by the check below */
    if (strncmp(mode, "event", 5) == 0)
        polled = check_events(&info);
    else
        CHECK(strncmp(info.mode, mode, strlen(info.mode)) == 0);
    struct timespec pause = {0, 50 * 1000000};
    nanosleep(&pause, NULL);
    mpilens_progress_info(&info);
    CHECK(!polled || info.polls > before);

    int rank, sum = 0, one = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sum == size);

    MPI_Finalize();
    mpilens_progress_info(&info);
    CHECK(info.running == 0);
    if (rank == 0 && !check_failures)
        printf("passed\n");
    return check_failures ? 1 : 0;
}
