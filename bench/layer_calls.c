/* bench/layer_calls: the calls whose instruction counts bench/layer_instructions compares with
 * and without a PMPI layer preloaded. One process sends to itself, so that one process holds every
 * instruction of a call: in a loop of N iterations (argv[1], default 1000), one 1-byte MPI_Send
 * (and its receive, posted before it) in send_loop, and one MPI_Allreduce of one int in
 * allreduce_loop, on MPI_COMM_WORLD of one process. The loops are functions of their own for
 * callgrind's --toggle-collect. */
#include <mpi.h>
#include <stdlib.h>

__attribute__((noinline)) void send_loop(int n)
{
    char out = 1, in;
    for (int i = 0; i < n; i++) {
        MPI_Request request;
        MPI_Irecv(&in, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &request);
        MPI_Send(&out, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
}

__attribute__((noinline)) void allreduce_loop(int n)
{
    int x = 1, y;
    for (int i = 0; i < n; i++)
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* The first calls resolve symbols and set up the library's paths: done here, not counted. */
__attribute__((noinline)) void warm_up(void)
{
    char out = 1, in;
    int x = 1, y;
    for (int i = 0; i < 10; i++) {
        MPI_Request request;
        MPI_Irecv(&in, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &request);
        MPI_Send(&out, 1, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    warm_up();
    send_loop(n);
    allreduce_loop(n);
    MPI_Finalize();
    return 0;
}
