/** \file mpilens/map.h
 * \brief libmpilens-map: which rank order fits a communication pattern to the machine (seed 004,
 * sections 5 and 6; docs/map.md is the contract).
 *
 * Status convention (the same words in every mpilens public header and in docs/CONTRIBUTING.md):
 * every function returns its library's status type, except `*_status_string`, which names a
 * status. `*_OK` is 0 and means success; every other value names what went wrong. A function
 * writes its outputs (what its pointer parameters point to) only when it returns `*_OK`: after
 * an error, everything the caller owns is as it was. Getters follow the same rule: they write the
 * value through a pointer and return the status, a null pointer being `*_ERR_ARG`.
 * `*_status_string` names every status of its library, and "unknown status" for a value that is
 * none. The monitoring API, mpi_monitoring.h, keeps the seed's convention instead: `MPI_SUCCESS`
 * or a negative `MPI_M_*` code, which `MPI_M_error_string` names.
 *
 * libmpilens-map never calls exit() and prints nothing of its own (Scotch, where the scotch
 * algorithm runs, prints its own errors on stderr).
 *
 * Three objects: a topology (a balanced tree of levels, from hwloc or a synthetic description,
 * with a cost per level), a matrix (sparse and directed: bytes each process sent to each other),
 * and a mapping (slot_of[p]: the leaf of the topology where process p should run). An algorithm
 * computes a mapping from a topology and a matrix; a cost function says what a mapping costs.
 * mpilens_map_reorder() does the seed's figure 1 in one call: gather the matrix at the root, map,
 * broadcast, MPI_Comm_split.
 *
 * Levels. A topology has `depth` levels below its root; the objects at level d (0 = the root's
 * children) each have arity[d + 1] children, the root has arity[0]. The leaves are the slots, in
 * order: slot s has coordinates (s / (arity[1]...arity[depth-1])) % arity[0], ... like the digits
 * of a mixed-radix number. Two slots whose lowest common ancestor is at level d (-1 for the root)
 * communicate at cost[d + 1] per byte; a process with itself costs nothing. */
#ifndef MPILENS_MAP_H
#define MPILENS_MAP_H

#include <mpi.h>
#include <stddef.h>

#include "mpi_monitoring.h"

#ifdef __cplusplus
extern "C" {
#endif

/** \brief What a libmpilens-map function did: MPILENS_MAP_OK, or why it failed. */
typedef enum {
    MPILENS_MAP_OK = 0,          /**< success */
    MPILENS_MAP_ERR_ARG,         /**< a null pointer, a negative or zero size, a rank out of range */
    MPILENS_MAP_ERR_NOMEM,       /**< memory ran out */
    MPILENS_MAP_ERR_SPEC,        /**< a topology description or option text that does not parse */
    MPILENS_MAP_ERR_IO,          /**< a file that cannot be opened, read or written */
    MPILENS_MAP_ERR_FORMAT,      /**< a file whose content is not a matrix (or a topology) */
    MPILENS_MAP_ERR_HWLOC,       /**< hwloc could not load or describe the machine */
    MPILENS_MAP_ERR_SHAPE,       /**< nodes of different shapes joined into one tree */
    MPILENS_MAP_ERR_SIZE,        /**< a matrix of another order than the processes to map */
    MPILENS_MAP_ERR_UNSUPPORTED, /**< an algorithm this build lacks (scotch without Scotch) */
    MPILENS_MAP_ERR_MPI,         /**< an MPI call failed */
    MPILENS_MAP_ERR_MONITOR      /**< the monitoring session could not give its matrix */
} mpilens_map_status_t;

/** \brief Names a status.
 * \param status a status a libmpilens-map function returned
 * \return a constant English phrase; "unknown status" for a value that is not an
 *         mpilens_map_status_t code */
const char *mpilens_map_status_string(mpilens_map_status_t status);

/* ---- topology --------------------------------------------------------------------------------- */

/** The most levels a topology may have below its root. */
#define MPILENS_MAP_MAX_DEPTH 8

/** A machine as a balanced tree of levels, each with a name, an arity and a cost per byte. */
typedef struct mpilens_map_topology mpilens_map_topology_t;

/** \brief A synthetic topology from text.
 * \param spec levels from the top, "NAME:ARITY" separated by spaces, for example
 *        "node:4 package:2 core:12"; optional "cost=C0,C1,..." (one per level, from the root's
 *        children down, non-increasing, non-negative; default 10^(depth-1-d))
 * \param topology receives the new topology, to free with mpilens_map_topology_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer), MPILENS_MAP_ERR_SPEC (text that
 *         does not parse), MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_topology_synthetic(const char *spec, mpilens_map_topology_t **topology);

/** \brief This machine as hwloc sees it: package, NUMA node or L3 where they split a package,
 * core, and PU where cores have more than one; levels that do not split (arity 1) are left out.
 * \param topology receives the new topology, to free with mpilens_map_topology_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_HWLOC, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_topology_hwloc(mpilens_map_topology_t **topology);

/** \brief A topology from a file: an hwloc XML export, or a text file holding a synthetic
 * description ('#' starts a comment).
 * \param path the file
 * \param topology receives the new topology, to free with mpilens_map_topology_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_IO, MPILENS_MAP_ERR_SPEC,
 *         MPILENS_MAP_ERR_HWLOC, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_topology_load(const char *path, mpilens_map_topology_t **topology);

/** \brief Joins copies of one node's topology under a root, one per host. Every node has the
 * shape of `node`.
 * \param node the topology of one node
 * \param nodes how many nodes (at least 1)
 * \param hosts their names, copied (NULL: node0, node1...)
 * \param topology receives the new topology, to free with mpilens_map_topology_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_SPEC (too deep, too many slots),
 *         MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_topology_join(const mpilens_map_topology_t *node, int nodes, const char *const *hosts,
                                               mpilens_map_topology_t **topology);

/** \brief Replaces a topology's costs.
 * \param topology the topology to change
 * \param costs one cost per byte per level, from the root's children down (non-increasing,
 *        non-negative)
 * \param levels how many costs: the topology's depth
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG */
mpilens_map_status_t mpilens_map_topology_set_costs(mpilens_map_topology_t *topology, const double *costs, int levels);

/** \brief How many levels a topology has below its root.
 * \param topology the topology
 * \param depth receives the depth
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG */
mpilens_map_status_t mpilens_map_topology_depth(const mpilens_map_topology_t *topology, int *depth);

/** \brief How many children each object of a level has.
 * \param topology the topology
 * \param level a level, 0 to depth - 1
 * \param arity receives the arity
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a level out of range) */
mpilens_map_status_t mpilens_map_topology_arity(const mpilens_map_topology_t *topology, int level, int *arity);

/** \brief The name of a level ("node", "package", "core"...).
 * \param topology the topology
 * \param level a level, 0 to depth - 1
 * \param name receives the name, valid while the topology lives
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a level out of range) */
mpilens_map_status_t mpilens_map_topology_level_name(const mpilens_map_topology_t *topology, int level,
                                                     const char **name);

/** \brief The cost per byte between two slots whose lowest common ancestor is at level - 1.
 * \param topology the topology
 * \param level a level, 0 to depth - 1
 * \param cost receives the cost
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a level out of range) */
mpilens_map_status_t mpilens_map_topology_cost(const mpilens_map_topology_t *topology, int level, double *cost);

/** \brief How many slots (leaves) a topology has.
 * \param topology the topology
 * \param slots receives the number of slots
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG */
mpilens_map_status_t mpilens_map_topology_slots(const mpilens_map_topology_t *topology, long *slots);

/** \brief Where a slot is, for rankfiles and host lists.
 * \param topology the topology
 * \param slot a slot, 0 to slots - 1
 * \param host receives its host: the name of its top-level object when that level is "node",
 *        else "localhost"; valid while the topology lives
 * \param core receives the logical index within its host of its core (of the slot itself when the
 *        topology has no core level, synthetic ones included)
 * \param pu receives the OS index of its processing unit (hwloc's; for a slot that is a whole
 *        core, the core's first PU; for a synthetic topology, the slot's index within its host)
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a slot out of range) */
mpilens_map_status_t mpilens_map_topology_slot_place(const mpilens_map_topology_t *topology, long slot,
                                                     const char **host, int *core, int *pu);

/** \brief The text of mpilens_map_topology_synthetic() that describes a topology.
 * \param topology the topology
 * \param text receives the text, terminated
 * \param room the bytes text can hold
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, too little room) */
mpilens_map_status_t mpilens_map_topology_describe(const mpilens_map_topology_t *topology, char *text, size_t room);

/** \brief Frees a topology.
 * \param topology the topology (NULL: nothing to do)
 * \return MPILENS_MAP_OK */
mpilens_map_status_t mpilens_map_topology_free(mpilens_map_topology_t *topology);

/* ---- matrix ----------------------------------------------------------------------------------- */

/** A communication matrix: bytes each process sent to each other, sparse and directed. */
typedef struct mpilens_map_matrix mpilens_map_matrix_t;

/** \brief An empty matrix.
 * \param order how many processes (at least 1)
 * \param matrix receives the new matrix, to free with mpilens_map_matrix_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_create(int order, mpilens_map_matrix_t **matrix);

/** \brief Adds bytes sent by one process to another (they accumulate).
 * \param matrix the matrix
 * \param from the sender, 0 to order - 1
 * \param to the receiver, 0 to order - 1
 * \param bytes the bytes sent (finite, >= 0)
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_add(mpilens_map_matrix_t *matrix, int from, int to, double bytes);

/** \brief A matrix from a dense one, as MPI_M_rootgather_data gives it.
 * \param order how many processes (at least 1)
 * \param values order x order bytes, row-major (row: the sender)
 * \param matrix receives the new matrix, to free with mpilens_map_matrix_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_from_dense(int order, const unsigned long *values,
                                                   mpilens_map_matrix_t **matrix);

/** \brief A matrix from a file: CSV "sender,receiver,bytes[,count]" (header line optional), a
 * dense ".mat" (one line per sender, values separated by spaces, as MPI_M_rootflush writes), or
 * Matrix Market coordinate.
 * \param path the file
 * \param matrix receives the new matrix, to free with mpilens_map_matrix_free()
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_IO, MPILENS_MAP_ERR_FORMAT,
 *         MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_load(const char *path, mpilens_map_matrix_t **matrix);

/** \brief How many processes a matrix has.
 * \param matrix the matrix
 * \param order receives the order
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG */
mpilens_map_status_t mpilens_map_matrix_order(const mpilens_map_matrix_t *matrix, int *order);

/** \brief How many nonzero directed entries a matrix has, repeated pairs merged.
 * \param matrix the matrix
 * \param nonzeros receives the count
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_nonzeros(const mpilens_map_matrix_t *matrix, size_t *nonzeros);

/** \brief The bytes a matrix holds, in all.
 * \param matrix the matrix
 * \param bytes receives the sum of its entries
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG */
mpilens_map_status_t mpilens_map_matrix_total(const mpilens_map_matrix_t *matrix, double *bytes);

/** \brief A matrix's directed entries, repeated pairs merged and zeros dropped, sorted by
 * (from, to). The arrays point into the matrix, valid until it is changed or freed.
 * \param matrix the matrix
 * \param count receives the number of entries
 * \param from receives the senders
 * \param to receives the receivers
 * \param bytes receives the bytes of each entry
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_matrix_entries(mpilens_map_matrix_t *matrix, size_t *count, const int **from,
                                                const int **to, const double **bytes);

/** \brief Frees a matrix.
 * \param matrix the matrix (NULL: nothing to do)
 * \return MPILENS_MAP_OK */
mpilens_map_status_t mpilens_map_matrix_free(mpilens_map_matrix_t *matrix);

/* ---- mapping ---------------------------------------------------------------------------------- */

/** A mapping algorithm. */
typedef enum {
    MPILENS_MAP_TREEMATCH,   /**< bottom-up grouping by arity: exhaustive for small groups, greedy above */
    MPILENS_MAP_GREEDY,      /**< the same grouping, greedy at every level (faster, for large P) */
    MPILENS_MAP_SCOTCH,      /**< Scotch's graph mapping onto a tree-leaf architecture, where built */
    MPILENS_MAP_IDENTITY,    /**< process p on slot p (the launcher's packed placement) */
    MPILENS_MAP_PACKED,      /**< slots filled in order, several processes per slot when oversubscribed */
    MPILENS_MAP_ROUND_ROBIN, /**< consecutive processes on different top-level objects (nodes) */
    MPILENS_MAP_RANDOM       /**< a random permutation of the packed mapping (seeded) */
} mpilens_map_algo_t;

/** \brief The algorithm a name stands for.
 * \param name "treematch", "greedy", "scotch", "identity", "packed", "rr" or "round-robin",
 *        "random"
 * \param algo receives the algorithm
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer), MPILENS_MAP_ERR_SPEC (an unknown
 *         name) */
mpilens_map_status_t mpilens_map_algo_parse(const char *name, mpilens_map_algo_t *algo);

/** \brief The name of an algorithm, the first mpilens_map_algo_parse() accepts for it.
 * \param algo the algorithm
 * \param name receives the name, a constant string
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a value that is no algorithm) */
mpilens_map_status_t mpilens_map_algo_name(mpilens_map_algo_t algo, const char **name);

/** \brief Whether this build has an algorithm (Scotch's is optional).
 * \param algo the algorithm
 * \param available receives 1 or 0
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG (a null pointer, a value that is no algorithm) */
mpilens_map_status_t mpilens_map_algo_available(mpilens_map_algo_t algo, int *available);

/** \brief Maps a matrix's processes onto a topology's slots.
 *
 * With fewer processes than slots, some slots stay empty; with more, slots take
 * ceil(order / slots) processes each at most (an extra level under each slot). Empty and
 * disconnected matrices are mapped (any mapping costs nothing where nothing is sent; the
 * algorithms then keep processes packed).
 * \param topology the machine
 * \param matrix the communication; its order is the number of processes
 * \param algo the algorithm
 * \param seed drives the random choices (random, ties)
 * \param slot_of receives slot_of[p], the slot of process p, for p < order
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_UNSUPPORTED, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_compute(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                                         mpilens_map_algo_t algo, unsigned seed, long *slot_of);

/** \brief Maps a matrix's processes onto given slots: slot_of becomes a one-to-one pairing of
 * processes with the entries of `allowed`.
 *
 * This is how processes already running are remapped (TreeMatch's constraints): they can only
 * trade places.
 * \param topology the machine
 * \param matrix the communication; its order is the number of processes
 * \param algo the algorithm
 * \param seed drives the random choices (random, ties)
 * \param allowed order slots (a slot may appear several times: it then takes that many processes)
 * \param slot_of receives slot_of[p], the slot of process p, for p < order
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_UNSUPPORTED, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_compute_onto(const mpilens_map_topology_t *topology,
                                              const mpilens_map_matrix_t *matrix, mpilens_map_algo_t algo,
                                              unsigned seed, const long *allowed, long *slot_of);

/** \brief What a mapping costs. Levels as in the topology. */
typedef struct {
    double total_bytes;    /**< the matrix's sum (directed, as sent) */
    double hop_bytes;      /**< sum of bytes x tree hops between the two slots (2 per level climbed) */
    double weighted_bytes; /**< sum of bytes x the topology's cost of their level */
    double busiest_link;   /**< bytes through the busiest tree edge (object to parent, both ways) */
    int busiest_level;     /**< the level of the object whose uplink that is */
    /** bytes_at_level[d + 1]: the traffic whose lowest common ancestor is at level d (index 0:
     * between top-level objects); the last entry (index depth) is traffic a slot keeps to itself
     * (oversubscription) */
    double bytes_at_level[MPILENS_MAP_MAX_DEPTH + 1];
} mpilens_map_cost_t;

/** \brief What a mapping costs under the topology's cost model.
 * \param topology the machine
 * \param matrix the communication
 * \param slot_of the slot of each process (order entries, each a slot of the topology)
 * \param cost receives the figures
 * \return MPILENS_MAP_OK; MPILENS_MAP_ERR_ARG, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_cost(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                                      const long *slot_of, mpilens_map_cost_t *cost);

/* ---- reordering a running program (seed 004, figure 1) ---------------------------------------- */

/** \brief The machine a communicator runs on, and the slot of each rank. Collective over comm.
 *
 * hwloc describes each node; the nodes are joined by host name in order of their lowest rank, and
 * every node must have the same shape. A rank bound inside one slot (or to one core whose PUs are
 * slots) sits there; the ranks that are not (unbound, or bound to several cores) take, in rank
 * order, their node's least used slots in slot order, after the bound ranks.
 * \param comm the communicator
 * \param topology receives the machine, to free with mpilens_map_topology_free()
 * \param slot_of_rank receives the slot of each rank (size of comm entries), on every rank
 * \param all_bound receives whether every rank was bound: if not, the placement is a guess
 * \return MPILENS_MAP_OK, or the same error on every rank: MPILENS_MAP_ERR_ARG,
 *         MPILENS_MAP_ERR_HWLOC, MPILENS_MAP_ERR_SHAPE, MPILENS_MAP_ERR_MPI, MPILENS_MAP_ERR_NOMEM */
mpilens_map_status_t mpilens_map_topology_of_comm(MPI_Comm comm, mpilens_map_topology_t **topology, long *slot_of_rank,
                                                  int *all_bound);

/** \brief The reordering of figure 1, collective over comm.
 *
 * Root 0 gathers the nonzero entries of every rank's row, maps the ranks onto the slots they
 * occupy now, and broadcasts the result. Errors are collective: every rank returns the same
 * status (the highest code where ranks failed differently), and nobody hangs. Rank r of comm is
 * rank new_rank_of[r] of newcomm, and plays there the part rank new_rank_of[r] played in comm (it
 * needs that rank's data: send yours to the rank that now plays your part, rank r sends to the
 * process whose new rank is r).
 * \param comm the communicator to reorder
 * \param row_bytes this rank's row: bytes it sent to each rank of comm (size entries)
 * \param topology NULL: the machine of mpilens_map_topology_of_comm(); else rank r is taken to be
 *        on slot r % slots, the slots then oversubscribed when there are more ranks than slots
 * \param algo the algorithm (the same on every rank)
 * \param newcomm receives MPI_Comm_split(comm, 0, new_rank_of[rank]), on every rank
 * \param new_rank_of receives the new rank of each rank of comm (size entries), on every rank
 * \param before receives the cost model's figures for the current placement (may be NULL)
 * \param after receives the cost model's figures for the new placement (may be NULL)
 * \return MPILENS_MAP_OK, or the same error on every rank */
mpilens_map_status_t mpilens_map_reorder(MPI_Comm comm, const unsigned long *row_bytes,
                                         const mpilens_map_topology_t *topology, mpilens_map_algo_t algo,
                                         MPI_Comm *newcomm, int *new_rank_of, mpilens_map_cost_t *before,
                                         mpilens_map_cost_t *after);

/** \brief mpilens_map_reorder() with the rows of a suspended monitoring session on comm
 * (MPI_M_get_data). Collective over comm.
 * \param comm the communicator to reorder, the session's
 * \param msid the session, suspended
 * \param flags the MPI_M_*_ONLY kinds to count
 * \param topology as for mpilens_map_reorder()
 * \param algo the algorithm (the same on every rank)
 * \param newcomm receives the reordered communicator, on every rank
 * \param new_rank_of receives the new rank of each rank of comm (size entries), on every rank
 * \param before receives the cost model's figures for the current placement (may be NULL)
 * \param after receives the cost model's figures for the new placement (may be NULL)
 * \return MPILENS_MAP_OK, or the same error on every rank (MPILENS_MAP_ERR_MONITOR: the program
 *         does not run libmpilens-monitor, or the session cannot give its rows) */
mpilens_map_status_t mpilens_map_reorder_session(MPI_Comm comm, MPI_M_msid msid, int flags,
                                                 const mpilens_map_topology_t *topology, mpilens_map_algo_t algo,
                                                 MPI_Comm *newcomm, int *new_rank_of, mpilens_map_cost_t *before,
                                                 mpilens_map_cost_t *after);

#ifdef __cplusplus
}
#endif

#endif
