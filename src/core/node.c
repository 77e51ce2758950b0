#include "node.h"
#include "machine.h"

#include <hwloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
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

static int shared_memory_ranks(void)
{
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
    return local;
}

int ml_node_ranks(void)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t mine = ml_machine_hash();
    uint64_t *all = malloc((size_t)size * sizeof *all);
    int known = mine != 0 && all != NULL, everywhere = 0;
    MPI_Allreduce(&known, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!everywhere) {
        free(all);
        return shared_memory_ranks();
    }
    MPI_Allgather(&mine, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int same = 0;
    for (int i = 0; i < size; i++)
        same += all[i] == mine;
    free(all);
    return same;
}

double ml_node_memory_per_rank(void)
{
    return (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / ml_node_ranks();
}
