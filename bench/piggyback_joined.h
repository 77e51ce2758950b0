/* The struct type every in-band piggyback method sends and receives: pb_bytes at `pb`, then n
 * elements of the payload's type at `buf`, at absolute addresses (used from MPI_BOTTOM). Shared
 * by bench/piggyback_layouts (the library's floor) and bench/piggyback_model_layer.c (the least a
 * layer does), so that the two measure the same type. PMPI_ calls: a preloaded layer sees none of
 * them. */
#ifndef MPILENS_BENCH_PIGGYBACK_JOINED_H
#define MPILENS_BENCH_PIGGYBACK_JOINED_H

#include <mpi.h>

static inline MPI_Datatype piggyback_joined(const void *pb, int pb_bytes, const void *buf, int n, MPI_Datatype payload)
{
    MPI_Aint at[2];
    PMPI_Get_address(pb, &at[0]);
    PMPI_Get_address(buf, &at[1]);
    int lengths[2] = {pb_bytes, n};
    MPI_Datatype types[2] = {MPI_BYTE, payload}, t;
    PMPI_Type_create_struct(2, lengths, at, types, &t);
    PMPI_Type_commit(&t);
    return t;
}

#endif
