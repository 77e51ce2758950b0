/* Inside libmpilens-map (include/mpilens/map.h is the contract, docs/map.md the user's guide and
 * docs/methods/map.md the design). The two objects of the API, shared by the files of the library:
 * topology.c builds topologies, matrix.c matrices, the algorithms (treematch.c, baselines.c,
 * scotch.c) read both through compute.c, cost.c prices a mapping, reorder.c is the MPI part. */
#ifndef MPILENS_MAP_INTERNAL_H
#define MPILENS_MAP_INTERNAL_H

#include <stddef.h>

#include "mpilens/map.h"

#define ML_MAP_NAME_LEN 16
#define ML_MAP_HOST_LEN 64

/* A balanced tree: arity[d] children for each object at depth d (depth 0: the root), leaves (slots)
 * numbered as mixed-radix numbers, most significant digit at the top. */
struct mpilens_map_topology {
    int depth; /* levels below the root */
    int arity[MPILENS_MAP_MAX_DEPTH];
    char level_name[MPILENS_MAP_MAX_DEPTH][ML_MAP_NAME_LEN]; /* objects at level d (the root's children: 0) */
    double cost[MPILENS_MAP_MAX_DEPTH];                      /* per byte, lowest common ancestor at level d - 1 */
    long slots;                                              /* product of the arities */
    long below[MPILENS_MAP_MAX_DEPTH + 1]; /* slots under one object of level d - 1 (below[0] = slots) */
    /* Where the slots are, for rankfiles and host lists (both may be NULL: synthetic) */
    char (*hosts)[ML_MAP_HOST_LEN]; /* names of the top-level objects when they are nodes, else NULL */
    int *core;                      /* [slots]: logical index of the slot's core within its host, or NULL */
    int *pu;                        /* [slots]: OS index of the slot's (first) PU, or NULL */
};

/* A value to sort by and the index it belongs to. qsort with ml_map_by_key orders by key, then by
 * index, so that equal keys come out in the same order with every C library. */
typedef struct {
    double key;
    int index;
} ml_map_keyed_t;

static inline int ml_map_by_key(const void *a, const void *b)
{
    const ml_map_keyed_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The lowest common ancestor level of two slots: -1 for the root, depth - 1 for the same slot. */
int ml_map_common_level(const mpilens_map_topology_t *t, long a, long b);

/* Directed entries as added (merged on demand), and the symmetrised graph the algorithms use. */
struct mpilens_map_matrix {
    int order;
    size_t count, capacity; /* entries */
    int *from, *to;
    double *bytes;
    int merged; /* entries sorted by (from, to), repeats added up, zeros dropped */
    /* Symmetrised CSR (weight(i, j) = bytes(i -> j) + bytes(j -> i), no diagonal), built by
     * ml_map_matrix_graph; freed with the matrix. */
    size_t *row_start; /* [order + 1] */
    int *column;
    double *weight;
};

/* Reads a whole file into a NUL-terminated malloc'ed buffer (matrix and topology files). */
int ml_map_read_file(const char *path, char **text, size_t *length);

/* Sorts and merges the directed entries (idempotent). */
int ml_map_matrix_merge(mpilens_map_matrix_t *m);
/* Builds the symmetrised CSR graph (idempotent). */
int ml_map_matrix_graph(mpilens_map_matrix_t *m);

/* The algorithms, called by mpilens_map_compute_onto after it checked the arguments: map the
 * matrix's processes one-to-one onto the entries of `allowed` (order entries, slots possibly
 * repeated), writing slot_of. */
int ml_map_treematch(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, int greedy_only, unsigned seed,
                     const long *allowed, long *slot_of);
int ml_map_scotch(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, unsigned seed, const long *allowed,
                  long *slot_of);
int ml_map_baseline(const mpilens_map_topology_t *t, mpilens_map_algo_t algo, unsigned seed, int order,
                    const long *allowed, long *slot_of);

#endif
