/* Inside libmpilens-map (include/mpilens/map.h is the contract, docs/map.md the user's guide and
 * docs/methods/map.md the design). The two objects of the API, shared by the files of the library:
 * topology.c builds topologies, matrix.c matrices, the algorithms (treematch.c with bisection.c
 * and heap.c, baselines.c, scotch.c) read both through compute.c, cost.c prices a mapping,
 * reorder.c is the MPI part. */
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

/* A max-heap of candidate vertices (heap.c): largest key first, then the oldest. First in, first
 * out among equals makes groups and parts grow breadth-first, round rather than in long rows, on
 * regular patterns (on a 16x16x16 stencil, 30% less traffic between packages and 10% less between
 * nodes than lowest-index-first). Entries are never updated: a vertex whose key changes is pushed
 * again, and the users drop stale entries as they pop them (bisection.c's FM pushes only keys that
 * rose, and pushes an entry that comes up above its key again at that key). */
typedef struct {
    double key;
    size_t age; /* pushes before this one */
    int v;
} ml_map_entry_t;

typedef struct {
    ml_map_entry_t *e;
    size_t size, capacity, pushes;
} ml_map_heap_t;

int ml_map_heap_push(ml_map_heap_t *h, double key, int v);
ml_map_entry_t ml_map_heap_pop(ml_map_heap_t *h);

/* Multilevel bisection (bisection.c) of sets of vertices of one undirected weighted graph in CSR
 * form (start[n + 1], adj, w): a workspace for the graph's n vertices, reused across calls. */
typedef struct ml_map_bisection ml_map_bisection_t;

int ml_map_bisection_new(int n, ml_map_bisection_t **out);
void ml_map_bisection_free(ml_map_bisection_t *b);
/* Reorders vert[0, count) so that its first `size` vertices and the others cut little traffic
 * between them (each part keeps its vertices' order). */
int ml_map_bisect(ml_map_bisection_t *b, const size_t *start, const int *adj, const double *w, int *vert, int count,
                  int size);

#endif
