/* libmpilens-map: which rank order fits a communication pattern to the machine (seed 004, sections
 * 5 and 6; docs/map.md is the contract).
 *
 * Three objects: a topology (a balanced tree of levels, from hwloc or a synthetic description,
 * with a cost per level), a matrix (sparse and directed: bytes each process sent to each other),
 * and a mapping (slot_of[p]: the leaf of the topology where process p should run). An algorithm
 * computes a mapping from a topology and a matrix; a cost function says what a mapping costs.
 * mpilens_map_reorder does the seed's figure 1 in one call: gather the matrix at the root, map,
 * broadcast, MPI_Comm_split.
 *
 * Error convention: every function returns MPILENS_MAP_OK or one of the mpilens_map_status_t codes
 * below, and fills its outputs only on success; mpilens_map_status_string names a code. The
 * library never calls exit() and prints nothing of its own (Scotch, where the scotch algorithm
 * runs, prints its own errors on stderr); a failed call changes nothing the caller owns.
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

typedef enum {
    MPILENS_MAP_OK = 0,
    MPILENS_MAP_ERR_ARG,         /* a null pointer, a negative or zero size, a rank out of range */
    MPILENS_MAP_ERR_NOMEM,       /* memory ran out */
    MPILENS_MAP_ERR_SPEC,        /* a topology description or option text that does not parse */
    MPILENS_MAP_ERR_IO,          /* a file that cannot be opened, read or written */
    MPILENS_MAP_ERR_FORMAT,      /* a file whose content is not a matrix (or a topology) */
    MPILENS_MAP_ERR_HWLOC,       /* hwloc could not load or describe the machine */
    MPILENS_MAP_ERR_SHAPE,       /* nodes of different shapes joined into one tree */
    MPILENS_MAP_ERR_SIZE,        /* a matrix of another order than the processes to map */
    MPILENS_MAP_ERR_UNSUPPORTED, /* an algorithm this build lacks (scotch without Scotch) */
    MPILENS_MAP_ERR_MPI,         /* an MPI call failed */
    MPILENS_MAP_ERR_MONITOR      /* the monitoring session could not give its matrix */
} mpilens_map_status_t;

const char *mpilens_map_status_string(int status);

/* ---- topology --------------------------------------------------------------------------------- */

#define MPILENS_MAP_MAX_DEPTH 8

typedef struct mpilens_map_topology mpilens_map_topology_t;

/* A synthetic topology from text: levels from the top, "NAME:ARITY" separated by spaces, for
 * example "node:4 package:2 core:12"; optional "cost=C0,C1,..." (one per level, from the root's
 * children down, non-increasing, non-negative; default 10^(depth-1-d)). */
int mpilens_map_topology_synthetic(const char *spec, mpilens_map_topology_t **topology);
/* This machine as hwloc sees it: package, NUMA node or L3 where they split a package, core, and
 * PU where cores have more than one; levels that do not split (arity 1) are left out. */
int mpilens_map_topology_hwloc(mpilens_map_topology_t **topology);
/* A file: an hwloc XML export, or a text file holding a synthetic description. */
int mpilens_map_topology_load(const char *path, mpilens_map_topology_t **topology);
/* `nodes` copies of `node` joined under a root, one per host name (names are copied; NULL: node0,
 * node1...). Every node has the shape of `node`. */
int mpilens_map_topology_join(const mpilens_map_topology_t *node, int nodes, const char *const *hosts,
                              mpilens_map_topology_t **topology);
/* Replaces the costs (levels values, from the root's children down). */
int mpilens_map_topology_set_costs(mpilens_map_topology_t *topology, const double *costs, int levels);

int mpilens_map_topology_depth(const mpilens_map_topology_t *topology, int *depth);
int mpilens_map_topology_arity(const mpilens_map_topology_t *topology, int level, int *arity);
int mpilens_map_topology_level_name(const mpilens_map_topology_t *topology, int level, const char **name);
int mpilens_map_topology_cost(const mpilens_map_topology_t *topology, int level, double *cost);
int mpilens_map_topology_slots(const mpilens_map_topology_t *topology, long *slots);
/* Where a slot is, for rankfiles and host lists: its host (the name of its top-level object when
 * that level is "node", else "localhost"), the logical index within its host of its core (or of
 * the slot itself when the topology has no core level, synthetic ones included), and the OS index
 * of its processing unit (hwloc's; for a slot that is a whole core, the core's first PU; for a
 * synthetic topology, the slot's index within its host). */
int mpilens_map_topology_slot_place(const mpilens_map_topology_t *topology, long slot, const char **host,
                                    int *core, int *pu);
/* The text of mpilens_map_topology_synthetic describing this topology, in `text` of `room` bytes. */
int mpilens_map_topology_describe(const mpilens_map_topology_t *topology, char *text, size_t room);
int mpilens_map_topology_free(mpilens_map_topology_t *topology);

/* ---- matrix ----------------------------------------------------------------------------------- */

typedef struct mpilens_map_matrix mpilens_map_matrix_t;

/* An empty matrix of `order` processes. */
int mpilens_map_matrix_create(int order, mpilens_map_matrix_t **matrix);
/* Adds `bytes` sent by `from` to `to` (accumulates; bytes >= 0). */
int mpilens_map_matrix_add(mpilens_map_matrix_t *matrix, int from, int to, double bytes);
/* A dense row-major order x order matrix, as MPI_M_rootgather_data gives it. */
int mpilens_map_matrix_from_dense(int order, const unsigned long *values, mpilens_map_matrix_t **matrix);
/* A file: CSV "sender,receiver,bytes[,count]" (header line optional), a dense ".mat" (one line per
 * sender, values separated by spaces, as MPI_M_rootflush writes), or Matrix Market coordinate. */
int mpilens_map_matrix_load(const char *path, mpilens_map_matrix_t **matrix);
int mpilens_map_matrix_order(const mpilens_map_matrix_t *matrix, int *order);
/* Nonzero directed entries, after merging repeated pairs. */
int mpilens_map_matrix_nonzeros(const mpilens_map_matrix_t *matrix, size_t *nonzeros);
int mpilens_map_matrix_total(const mpilens_map_matrix_t *matrix, double *bytes);
/* The directed entries, repeated pairs merged and zeros dropped, sorted by (from, to): pointers
 * into the matrix, valid until it is changed or freed. */
int mpilens_map_matrix_entries(mpilens_map_matrix_t *matrix, size_t *count, const int **from, const int **to,
                               const double **bytes);
int mpilens_map_matrix_free(mpilens_map_matrix_t *matrix);

/* ---- mapping ---------------------------------------------------------------------------------- */

typedef enum {
    MPILENS_MAP_TREEMATCH,   /* bottom-up grouping by arity: exhaustive for small groups, greedy above */
    MPILENS_MAP_GREEDY,      /* the same grouping, greedy at every level (faster, for large P) */
    MPILENS_MAP_SCOTCH,      /* Scotch's graph mapping onto a tree-leaf architecture, where built */
    MPILENS_MAP_IDENTITY,    /* process p on slot p (the launcher's packed placement) */
    MPILENS_MAP_PACKED,      /* slots filled in order, several processes per slot when oversubscribed */
    MPILENS_MAP_ROUND_ROBIN, /* consecutive processes on different top-level objects (nodes) */
    MPILENS_MAP_RANDOM       /* a random permutation of the packed mapping (seeded) */
} mpilens_map_algo_t;

/* Parses a name ("treematch", "greedy", "scotch", "identity", "packed", "rr" or "round-robin",
 * "random"). */
int mpilens_map_algo_parse(const char *name, mpilens_map_algo_t *algo);
const char *mpilens_map_algo_name(mpilens_map_algo_t algo);
/* Whether this build has the algorithm (1 or 0 in *available). */
int mpilens_map_algo_available(mpilens_map_algo_t algo, int *available);

/* Maps the matrix's processes onto the topology's slots: slot_of[p] for p < order. With fewer
 * processes than slots, some slots stay empty; with more, slots take ceil(order / slots) processes
 * each at most (an extra level under each slot). `seed` drives the random choices (random, ties).
 * Empty and disconnected matrices are mapped (any mapping costs nothing where nothing is sent;
 * the algorithms then keep processes packed). */
int mpilens_map_compute(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                        mpilens_map_algo_t algo, unsigned seed, long *slot_of);
/* The same onto given slots: `allowed` lists order slots (a slot may appear several times: it
 * then takes that many processes), and slot_of becomes a one-to-one pairing of processes with
 * the entries of `allowed`. This is how processes already running are remapped (TreeMatch's
 * constraints): they can only trade places. */
int mpilens_map_compute_onto(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                             mpilens_map_algo_t algo, unsigned seed, const long *allowed, long *slot_of);

/* What a mapping costs. Levels as in the topology: bytes_at_level[d + 1] is the traffic whose
 * lowest common ancestor is at level d (index 0: between top-level objects); the last entry
 * (index depth) is traffic a slot keeps to itself (oversubscription). */
typedef struct {
    double total_bytes;     /* the matrix's sum (directed, as sent) */
    double hop_bytes;       /* sum of bytes x tree hops between the two slots (2 per level climbed) */
    double weighted_bytes;  /* sum of bytes x the topology's cost of their level */
    double busiest_link;    /* bytes through the busiest tree edge (object to parent, both ways) */
    int busiest_level;      /* the level of the object whose uplink that is */
    double bytes_at_level[MPILENS_MAP_MAX_DEPTH + 1];
} mpilens_map_cost_t;

int mpilens_map_cost(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                     const long *slot_of, mpilens_map_cost_t *cost);

/* ---- reordering a running program (seed 004, figure 1) ---------------------------------------- */

/* Collective over comm: the machine comm runs on (hwloc on each node, the nodes joined by host
 * name in order of their lowest rank; every node must have the same shape) and the slot of each
 * rank (slot_of_rank[size], on every rank). A rank bound inside one slot (or to one core whose
 * PUs are slots) sits there; the ranks that are not (unbound, or bound to several cores) take, in
 * rank order, their node's least used slots in slot order, after the bound ranks. *all_bound
 * says whether every rank was bound: if not, the current placement is a guess. */
int mpilens_map_topology_of_comm(MPI_Comm comm, mpilens_map_topology_t **topology, long *slot_of_rank,
                                 int *all_bound);

/* The reordering of figure 1, collective over comm. Each rank gives its row of the matrix
 * (row_bytes[size]: bytes it sent to each rank of comm); root 0 gathers the nonzero entries,
 * maps the ranks onto the slots they occupy now (topology NULL: mpilens_map_topology_of_comm;
 * else rank r is taken to be on slot r % slots, the slots then oversubscribed when there are
 * more ranks than slots), and broadcasts the result. Errors are collective: every rank returns
 * the same status (the highest code where ranks failed differently), and nobody hangs. Every rank gets *newcomm =
 * MPI_Comm_split(comm, 0, new_rank_of[rank]) and new_rank_of[size]: rank r of comm is rank
 * new_rank_of[r] of newcomm, and plays there the part rank new_rank_of[r] played in comm (it
 * needs that rank's data: send yours to the rank that now plays your part, rank r sends to the
 * process whose new rank is r). before/after (either may be NULL): the cost model's figures for
 * the current placement and for the new one. */
int mpilens_map_reorder(MPI_Comm comm, const unsigned long *row_bytes, const mpilens_map_topology_t *topology,
                        mpilens_map_algo_t algo, MPI_Comm *newcomm, int *new_rank_of, mpilens_map_cost_t *before,
                        mpilens_map_cost_t *after);
/* The same with the rows of a suspended monitoring session on comm (MPI_M_get_data; flags: the
 * MPI_M_*_ONLY kinds to count). */
int mpilens_map_reorder_session(MPI_Comm comm, MPI_M_msid msid, int flags, const mpilens_map_topology_t *topology,
                                mpilens_map_algo_t algo, MPI_Comm *newcomm, int *new_rank_of,
                                mpilens_map_cost_t *before, mpilens_map_cost_t *after);

#ifdef __cplusplus
}
#endif

#endif
