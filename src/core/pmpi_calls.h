/* Forced into the core sources when they are built for a PMPI layer (mpilens_core_layer): the
 * MPI calls the core makes go to PMPI_, so that a layer's own work is never seen by its own
 * wrappers or by other layers (DESIGN.md: inside PMPI layers, the layer's calls go to PMPI_). */
#ifndef MPILENS_PMPI_CALLS_H
#define MPILENS_PMPI_CALLS_H

#include <mpi.h>

#define MPI_Comm_rank PMPI_Comm_rank
#define MPI_Comm_size PMPI_Comm_size
#define MPI_Finalized PMPI_Finalized
#define MPI_Gather PMPI_Gather
#define MPI_Get_library_version PMPI_Get_library_version
#define MPI_Get_version PMPI_Get_version
#define MPI_Initialized PMPI_Initialized

#endif
