/* bench/layer_calls: the calls whose instruction counts bench/layer_instructions compares with
 * and without a PMPI layer preloaded. One process sends to itself, so that one process holds every
 * instruction of a call: in a loop of N iterations (argv[1], default 1000), one 1-byte MPI_Send
 * (and its receive, posted before it) in send_loop, and one MPI_Allreduce of one int in
 * allreduce_loop, on MPI_COMM_WORLD of one process; in N / 10 iterations of window_loop, a window
 * of 64 nonblocking 4 KiB messages (64 MPI_Irecv, 64 MPI_Isend, one MPI_Waitall), as a bandwidth
 * benchmark sends them. struct_window_loop is the same window sent and received with struct
 * types joining a 4-byte pb before each buffer, made before the loop and used through PMPI_, so
 * that no layer sees them: what the MPI library alone charges for an in-band piggyback's message
 * (the floor of docs/piggyback.md). The loops are functions of their own for callgrind's
 * --toggle-collect. */
#include <mpi.h>
#include <stdlib.h>

/* MPICH defines MPI_STATUSES_IGNORE as the address 1, which GCC takes for an empty array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

enum { WINDOW = 64, WINDOW_BYTES = 4096, PB_BYTES = 4 };
static char window_out[WINDOW][WINDOW_BYTES], window_in[WINDOW][WINDOW_BYTES];
static char pb_out[WINDOW][PB_BYTES], pb_in[WINDOW][PB_BYTES];
static MPI_Datatype struct_out[WINDOW], struct_in[WINDOW];

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

/* One window: with the program's buffers through MPI_ (and so through a layer), or with the
 * struct types through PMPI_. Called by the loops below and by warm_up, which is not counted. */
__attribute__((noinline)) static void one_window(int struct_types)
{
    MPI_Request requests[2 * WINDOW];
    if (struct_types) {
        for (int w = 0; w < WINDOW; w++)
            PMPI_Irecv(MPI_BOTTOM, 1, struct_in[w], 0, w, MPI_COMM_WORLD, &requests[w]);
        for (int w = 0; w < WINDOW; w++)
            PMPI_Isend(MPI_BOTTOM, 1, struct_out[w], 0, w, MPI_COMM_WORLD, &requests[WINDOW + w]);
        PMPI_Waitall(2 * WINDOW, requests, MPI_STATUSES_IGNORE);
        return;
    }
    for (int w = 0; w < WINDOW; w++)
        MPI_Irecv(window_in[w], WINDOW_BYTES, MPI_CHAR, 0, w, MPI_COMM_WORLD, &requests[w]);
    for (int w = 0; w < WINDOW; w++)
        MPI_Isend(window_out[w], WINDOW_BYTES, MPI_CHAR, 0, w, MPI_COMM_WORLD, &requests[WINDOW + w]);
    MPI_Waitall(2 * WINDOW, requests, MPI_STATUSES_IGNORE);
}

__attribute__((noinline)) void window_loop(int n)
{
    for (int i = 0; i < n; i++)
        one_window(0);
}

__attribute__((noinline)) void struct_window_loop(int n)
{
    for (int i = 0; i < n; i++)
        one_window(1);
}

/* A struct type of PB_BYTES bytes at pb then WINDOW_BYTES chars at buf, at absolute addresses. */
static void make_struct(char *pb, char *buf, MPI_Datatype *type)
{
    int lengths[2] = {PB_BYTES, WINDOW_BYTES};
    MPI_Aint displacements[2];
    MPI_Datatype types[2] = {MPI_BYTE, MPI_CHAR};
    PMPI_Get_address(pb, &displacements[0]);
    PMPI_Get_address(buf, &displacements[1]);
    PMPI_Type_create_struct(2, lengths, displacements, types, type);
    PMPI_Type_commit(type);
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
    for (int w = 0; w < WINDOW; w++) {
        make_struct(pb_out[w], window_out[w], &struct_out[w]);
        make_struct(pb_in[w], window_in[w], &struct_in[w]);
    }
    for (int i = 0; i < 2; i++) {
        one_window(0);
        one_window(1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    warm_up();
    send_loop(n);
    allreduce_loop(n);
    window_loop(n / 10 > 0 ? n / 10 : 1);
    struct_window_loop(n / 10 > 0 ? n / 10 : 1);
    MPI_Finalize();
    return 0;
}
