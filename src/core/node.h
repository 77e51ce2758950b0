/* What a rank's node offers: its processing units, the ranks that share it, and its memory.
 * Programs use them to refuse buffers that would not fit and to notice ranks sharing cores.
 * A node here is a machine: host names that report one machine id (containers, the test
 * cluster's emulated nodes) are one node, as they share its cores and memory. */
#ifndef MPILENS_CORE_NODE_H
#define MPILENS_CORE_NODE_H

/* Processing units of this node as hwloc sees them (at least 1). */
int ml_node_pus(void);

/* Collective over MPI_COMM_WORLD: ranks on this rank's machine (same machine id; where a rank
 * has none, the ranks of its MPI shared-memory node). */
int ml_node_ranks(void);

/* Collective over MPI_COMM_WORLD: the node's physical memory divided by its ranks, in bytes. */
double ml_node_memory_per_rank(void);

#endif
