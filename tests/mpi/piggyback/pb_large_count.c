/* MPI-4's large-count forms under libmpilens-piggyback (`large narrow`, src/wrap): counts that fit
 * in an int go through the layer's int forms, their pb carried and verified like any other; a
 * count above INT_MAX is refused with MPI_ERR_COUNT (the layer's records hold int counts).
 * Ranks 2k and 2k+1 exchange: MPI_Send_c / MPI_Recv_c, MPI_Isend_c / MPI_Irecv_c, a persistent
 * pair started twice, MPI_Sendrecv_c. Then each rank sends INT_MAX + 1 elements of a zero-size
 * type to itself: refused under the layer (argv[1] "refused"), delivered without it ("delivered").
 * Rank 0 prints "expected N messages with piggyback" and "passed" on stderr, like test_pb_calls. */
#include <limits.h>
#include <string.h>

#include "../mpitest.h"

#if MPI_VERSION < 4
#error "the large-count forms need MPI-4"
#endif

static int rank, size, partner;
static long received;

static void fill(int *buffer, int n, int exchange)
{
    for (int i = 0; i < n; i++)
        buffer[i] = 1000000 * exchange + 1000 * rank + i;
}

static void expect_from_partner(const int *buffer, int n, int exchange)
{
    for (int i = 0; i < n; i++)
        if (buffer[i] != 1000000 * exchange + 1000 * partner + i) {
            CHECK(!"a payload arrived intact");
            return;
        }
    received++;
}

static void exchanges(void)
{
    int out[64], in[64];
    MPI_Status status, statuses[2]; /* not MPI_STATUSES_IGNORE: gcc's bounds warnings on MPICH's */
    MPI_Count count;
    MPI_Request requests[2];
    fill(out, 40, 1);
    if (rank % 2 == 0) {
        MPI_Send_c(out, 40, MPI_INT, partner, 1, MPI_COMM_WORLD);
        MPI_Recv_c(in, 64, MPI_INT, partner, 1, MPI_COMM_WORLD, &status);
    } else {
        MPI_Recv_c(in, 64, MPI_INT, partner, 1, MPI_COMM_WORLD, &status);
        MPI_Send_c(out, 40, MPI_INT, partner, 1, MPI_COMM_WORLD);
    }
    MPI_Get_count_c(&status, MPI_INT, &count);
    CHECK(count == 40);
    expect_from_partner(in, 40, 1);

    fill(out, 64, 2);
    MPI_Irecv_c(in, 64, MPI_INT, partner, 2, MPI_COMM_WORLD, &requests[0]);
    MPI_Isend_c(out, 64, MPI_INT, partner, 2, MPI_COMM_WORLD, &requests[1]);
    MPI_Waitall(2, requests, statuses);
    expect_from_partner(in, 64, 2);

    fill(out, 9, 3);
    MPI_Recv_init_c(in, 9, MPI_INT, partner, 3, MPI_COMM_WORLD, &requests[0]);
    MPI_Send_init_c(out, 9, MPI_INT, partner, 3, MPI_COMM_WORLD, &requests[1]);
    for (int k = 0; k < 2; k++) {
        MPI_Startall(2, requests);
        MPI_Waitall(2, requests, statuses);
        expect_from_partner(in, 9, 3);
    }
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);

    fill(out, 5, 4);
    MPI_Sendrecv_c(out, 5, MPI_INT, partner, 4, in, 5, MPI_INT, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_from_partner(in, 5, 4);
}

/* INT_MAX + 1 elements of nothing, to this rank: no memory, a count no int holds. */
static void beyond_int(int refused)
{
    MPI_Comm self;
    MPI_Datatype nothing;
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(0, MPI_INT, &nothing);
    MPI_Type_commit(&nothing);
    MPI_Count huge = (MPI_Count)INT_MAX + 1;
    MPI_Request request;
    int rc = MPI_Isend_c(NULL, huge, nothing, 0, 9, self, &request), class = MPI_SUCCESS;
    MPI_Error_class(rc, &class);
    if (refused) {
        CHECK(class == MPI_ERR_COUNT);
    } else {
        CHECK(rc == MPI_SUCCESS);
        MPI_Recv_c(NULL, huge, nothing, 0, 9, self, MPI_STATUS_IGNORE);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    MPI_Type_free(&nothing);
    MPI_Comm_free(&self);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    REQUIRE(argc == 2 && (strcmp(argv[1], "refused") == 0 || strcmp(argv[1], "delivered") == 0));
    partner = rank % 2 == 0 ? rank + 1 : rank - 1;
    if (partner < size)
        exchanges();
    beyond_int(strcmp(argv[1], "refused") == 0);
    long all;
    MPI_Reduce(&received, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("expected %ld messages with piggyback\n", all);
    return mpitest_finish();
}
