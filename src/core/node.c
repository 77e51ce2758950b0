#include "node.h"

#include <hwloc.h>
#include <mpi.h>
#include <unistd.h>

int ml_node_pus(void)
{
    hwloc_topology_t topo;
    int pus = 1;
    if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0)
            pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        hwloc_topology_destroy(topo);
    }
    return pus > 0 ? pus : 1;
}

int ml_node_ranks(void)
{
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    return local;
}

double ml_node_memory_per_rank(void)
{
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / ml_node_ranks();
}
