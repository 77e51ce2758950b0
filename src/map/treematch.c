/* Grouping by the machine's tree, bottom-up, as TreeMatch does (Jeannot, Mercier and Tessier;
 * seed 004, section 5): the processes are grouped into sets the size of the occupied slots, those
 * sets into sets the size of the next level's objects, and so on up to the root, each grouping
 * keeping inside its groups as much traffic as it can; the groups are then placed onto the
 * objects top-down.
 *
 * Where this differs from TreeMatch, and why:
 * - Everything stays sparse: the graph of groups at each level is made by merging neighbour
 *   lists, never as a dense matrix, so memory is O(nonzeros + processes) and 65536 processes map
 *   in seconds. Only the exact search below, which runs on at most a few hundred groups, uses a
 *   small dense matrix.
 * - The occupancy may be uneven (processes already running on some cores of some nodes, several
 *   processes on one slot): objects get a shape (their occupied subtree up to isomorphism) and
 *   each group is formed to the shape of one object, from groups of the right shapes, so every
 *   group fits an object and the result is always a one-to-one pairing with `allowed`.
 * - Greedy grouping grows each group from the heaviest remaining edge, adding the vertex with the
 *   most traffic to the group, the first reached among equals (so groups grow breadth-first and
 *   round), then a few passes of pairwise swaps between groups lower the cut. Where TreeMatch
 *   enumerates all candidate groups (at most 30000 of them), an exact branch-and-bound search
 *   over those candidates, seeded with the greedy result and bounded in steps, replaces its
 *   heuristic orderings.
 * - On large jobs the candidates are too many at every level, and the grouping alone ranks the
 *   traffic badly on regular patterns (groups grown round at each level do not pack into round
 *   groups at the next). So treematch, and not greedy (that is the difference between them at
 *   large P), also maps by top-down recursive bisection, as Scotch does: the occupied slots of the
 *   lowest object holding a set of processes are split into two halves of its children, the
 *   processes with them by multilevel bisection (bisection.c), down to objects whose children are
 *   single slots (no placement among those costs more than another). That mapping is kept only
 *   where its weighted cost (bytes x the cost of the level where their ends meet) is strictly
 *   lower, so small cases the grouping solves exactly keep their answer. It pairs processes with
 *   the sorted allowed slots, so uneven occupancy and oversubscription hold as above.
 * - Every other tie goes to the lowest index, so the result depends on nothing but the input, and
 *   traffic-free processes fill groups in index order: an empty matrix gives the packed mapping. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

/* TreeMatch's bound on the number of candidate groups for its exhaustive grouping. */
#define TM_EXHAUSTIVE_GROUPS 30000
/* Candidate groups the exact search may try before it keeps the best partition found so far: a
 * few milliseconds, whatever the matrix (on 36 stencil, random and CG matrices of 64 to 512
 * processes, the answers of ten times this budget, in up to 5 times the time). */
#define TM_SEARCH_BUDGET 200000L
/* The exact search runs for partitions into at most this many groups. On 432 generated matrices
 * (stencils, random, CG; 8 to 4096 processes on nine topologies) it improved the greedy grouping
 * only for partitions into at most 8 groups, and never where it had more than 16 to form (64
 * groups into pairs, at 1024 processes), where it took a third of the time. */
#define TM_SEARCH_GROUPS 16
/* Swap passes after greedy grouping: together they remove 1 to 2% of the traffic between groups
 * on stencils and random matrices, most of it in the first pass. */
#define TM_REFINE_PASSES 4

/* ---- the occupied tree --------------------------------------------------------------------- */

/* The occupied objects of one topology level, in index order, with their shapes: two objects of
 * the same shape have isomorphic occupied subtrees, so a group formed for one fits the other. */
typedef struct {
    int count;
    long *object;     /* [count]: topology index of each object (the slot, at the slot level) */
    int *child_start; /* [count + 1]: its occupied children, a range of the level below (of the
                         sorted allowed entries, at the slot level) */
    int *shape;       /* [count] */
    int nshape;
    int *comp_start; /* [nshape + 1]: what each shape holds: (child shape, how many) pairs */
    int *comp_shape;
    int *comp_count;
} tm_level_t;

static void free_level(tm_level_t *l)
{
    free(l->object);
    free(l->child_start);
    free(l->shape);
    free(l->comp_start);
    free(l->comp_shape);
    free(l->comp_count);
}

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int compare_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Ascending. The lists sorted here (a group's neighbour groups, an object's child shapes) are
 * mostly a few tens long, where qsort's calls through a pointer cost more than the sorting
 * (8700 of them took 16 M instructions of 240 M mapping CG at 8192). */
static void sort_ints(int *a, int n)
{
    if (n > 32) {
        qsort(a, (size_t)n, sizeof *a, compare_int);
        return;
    }
    for (int i = 1; i < n; i++) {
        int x = a[i], j = i;
        for (; j > 0 && a[j - 1] > x; j--)
            a[j] = a[j - 1];
        a[j] = x;
    }
}

/* The distinct values of keys[n] (ascending) as objects, each with the range of keys it covers. */
static int distinct_objects(const long *keys, int n, tm_level_t *l)
{
    int count = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || keys[i] != keys[i - 1])
            count++;
    l->object = malloc((size_t)count * sizeof *l->object);
    l->child_start = malloc(((size_t)count + 1) * sizeof *l->child_start);
    if (!l->object || !l->child_start)
        return MPILENS_MAP_ERR_NOMEM;
    count = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || keys[i] != keys[i - 1]) {
            l->object[count] = keys[i];
            l->child_start[count++] = i;
        }
    l->child_start[count] = n;
    l->count = count;
    return MPILENS_MAP_OK;
}

/* An object's key: the sorted shapes of its children. */
typedef struct {
    const int *key;
    int length, object;
} tm_key_t;

static int compare_key(const void *a, const void *b)
{
    const tm_key_t *x = a, *y = b;
    if (x->length != y->length)
        return (x->length > y->length) - (x->length < y->length);
    for (int i = 0; i < x->length; i++)
        if (x->key[i] != y->key[i])
            return (x->key[i] > y->key[i]) - (x->key[i] < y->key[i]);
    return (x->object > y->object) - (x->object < y->object);
}

static int same_key(const tm_key_t *x, const tm_key_t *y)
{
    return x->length == y->length && !memcmp(x->key, y->key, (size_t)x->length * sizeof *x->key);
}

/* Shapes of the objects of l from the shapes of their children (child_shape, indexed like the
 * level below), and what each shape holds. */
static int assign_shapes(tm_level_t *l, const int *child_shape)
{
    int children = l->child_start[l->count];
    int *keys = malloc(((size_t)children + 1) * sizeof *keys);
    tm_key_t *order = malloc((size_t)l->count * sizeof *order);
    l->shape = malloc((size_t)l->count * sizeof *l->shape);
    if (!keys || !order || !l->shape) {
        free(keys);
        free(order);
        return MPILENS_MAP_ERR_NOMEM;
    }
    memcpy(keys, child_shape, (size_t)children * sizeof *keys);
    for (int j = 0; j < l->count; j++) {
        int first = l->child_start[j], length = l->child_start[j + 1] - first;
        sort_ints(keys + first, length);
        order[j] = (tm_key_t){keys + first, length, j};
    }
    qsort(order, (size_t)l->count, sizeof *order, compare_key);
    int nshape = 0, pairs = 0;
    for (int j = 0; j < l->count; j++) {
        if (j == 0 || !same_key(&order[j - 1], &order[j]))
            nshape++;
        l->shape[order[j].object] = nshape - 1;
    }
    /* Pairs are counted on one representative per shape (the first in key order). */
    int *representative = malloc((size_t)nshape * sizeof *representative);
    if (!representative) {
        free(keys);
        free(order);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int j = l->count - 1; j >= 0; j--)
        representative[l->shape[order[j].object]] = j;
    for (int s = 0; s < nshape; s++) {
        const tm_key_t *k = &order[representative[s]];
        for (int i = 0; i < k->length; i++)
            pairs += i == 0 || k->key[i] != k->key[i - 1];
    }
    l->nshape = nshape;
    l->comp_start = malloc(((size_t)nshape + 1) * sizeof *l->comp_start);
    l->comp_shape = malloc(((size_t)pairs + 1) * sizeof *l->comp_shape);
    l->comp_count = malloc(((size_t)pairs + 1) * sizeof *l->comp_count);
    if (!l->comp_start || !l->comp_shape || !l->comp_count) {
        free(representative);
        free(keys);
        free(order);
        return MPILENS_MAP_ERR_NOMEM;
    }
    pairs = 0;
    for (int s = 0; s < nshape; s++) {
        const tm_key_t *k = &order[representative[s]];
        l->comp_start[s] = pairs;
        for (int i = 0; i < k->length; i++) {
            if (i == 0 || k->key[i] != k->key[i - 1]) {
                l->comp_shape[pairs] = k->key[i];
                l->comp_count[pairs++] = 0;
            }
            l->comp_count[pairs - 1]++;
        }
    }
    l->comp_start[nshape] = pairs;
    free(representative);
    free(keys);
    free(order);
    return MPILENS_MAP_OK;
}

/* The occupied objects of every level (lev[depth]) for the multiset `sorted` of slots. The
 * entries of `allowed` are the leaves below the slots (one per process), all of one shape. */
static int build_levels(const mpilens_map_topology_t *t, const long *sorted, int order, tm_level_t *lev)
{
    int depth = t->depth, status;
    long *parents = malloc((size_t)order * sizeof *parents);
    int *zeros = calloc((size_t)order, sizeof *zeros);
    if (!parents || !zeros) {
        free(parents);
        free(zeros);
        return MPILENS_MAP_ERR_NOMEM;
    }
    status = distinct_objects(sorted, order, &lev[depth - 1]);
    if (status == MPILENS_MAP_OK)
        status = assign_shapes(&lev[depth - 1], zeros);
    for (int d = depth - 2; d >= 0 && status == MPILENS_MAP_OK; d--) {
        const tm_level_t *below = &lev[d + 1];
        for (int j = 0; j < below->count; j++)
            parents[j] = below->object[j] / t->arity[d + 1];
        status = distinct_objects(parents, below->count, &lev[d]);
        if (status == MPILENS_MAP_OK)
            status = assign_shapes(&lev[d], below->shape);
    }
    free(parents);
    free(zeros);
    return status;
}

/* ---- graphs of processes and of groups ------------------------------------------------------ */

/* Undirected, weighted, in CSR form: the processes at the first stage, then the groups formed at
 * the stage below. */
typedef struct {
    int n;
    size_t *start; /* [n + 1] */
    int *adj;
    double *w;
    double *degree; /* [n]: total weight of each vertex's edges */
    double total;   /* sum of the degrees */
    int owned;      /* start, adj and w belong to the graph (else to the matrix) */
} tm_graph_t;

static void free_graph(tm_graph_t *g)
{
    if (g->owned) {
        free(g->start);
        free(g->adj);
        free(g->w);
    }
    free(g->degree);
    memset(g, 0, sizeof *g);
}

static int set_degrees(tm_graph_t *g)
{
    g->degree = malloc(((size_t)g->n + 1) * sizeof *g->degree);
    if (!g->degree)
        return MPILENS_MAP_ERR_NOMEM;
    g->total = 0;
    for (int v = 0; v < g->n; v++) {
        double sum = 0;
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            sum += g->w[e];
        g->degree[v] = sum;
        g->total += sum;
    }
    return MPILENS_MAP_OK;
}

/* Groups of one stage: members of group j (formed for object j of the level), ascending. */
typedef struct {
    int count;
    int *start;  /* [count + 1] */
    int *member; /* [vertices] */
} tm_stage_t;

static int build_stage(const int *group_of, int n, int count, tm_stage_t *s)
{
    s->count = count;
    s->start = calloc((size_t)count + 1, sizeof *s->start);
    s->member = malloc(((size_t)n + 1) * sizeof *s->member);
    if (!s->start || !s->member)
        return MPILENS_MAP_ERR_NOMEM;
    for (int v = 0; v < n; v++)
        s->start[group_of[v] + 1]++;
    for (int j = 0; j < count; j++)
        s->start[j + 1] += s->start[j];
    int *fill = malloc(((size_t)count + 1) * sizeof *fill);
    if (!fill)
        return MPILENS_MAP_ERR_NOMEM;
    memcpy(fill, s->start, (size_t)count * sizeof *fill);
    for (int v = 0; v < n; v++)
        s->member[fill[group_of[v]]++] = v;
    free(fill);
    return MPILENS_MAP_OK;
}

/* The graph of the groups: weight(A, B) is the traffic between their members. Neighbour lists are
 * merged with a scratch accumulator, so this is linear in the edges. */
static int aggregate(const tm_graph_t *g, const int *group_of, const tm_stage_t *s, tm_graph_t *out)
{
    int m = s->count;
    double *acc = calloc((size_t)m + 1, sizeof *acc);
    int *seen = malloc(((size_t)m + 1) * sizeof *seen);
    int *list = malloc(((size_t)m + 1) * sizeof *list);
    memset(out, 0, sizeof *out);
    out->n = m;
    out->owned = 1;
    out->start = calloc((size_t)m + 1, sizeof *out->start);
    if (!acc || !seen || !list || !out->start) {
        free(acc);
        free(seen);
        free(list);
        free(out->start);
        out->start = NULL;
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int j = 0; j < m; j++)
            seen[j] = -1;
        for (int a = 0; a < m; a++) {
            int listed = 0;
            for (int i = s->start[a]; i < s->start[a + 1]; i++) {
                int u = s->member[i];
                for (size_t e = g->start[u]; e < g->start[u + 1]; e++) {
                    int b = group_of[g->adj[e]];
                    if (b == a)
                        continue;
                    if (seen[b] != a) {
                        seen[b] = a;
                        acc[b] = 0;
                        list[listed++] = b;
                    }
                    acc[b] += g->w[e];
                }
            }
            if (pass == 0) {
                out->start[a + 1] = out->start[a] + (size_t)listed;
                continue;
            }
            sort_ints(list, listed);
            for (int i = 0; i < listed; i++) {
                out->adj[out->start[a] + (size_t)i] = list[i];
                out->w[out->start[a] + (size_t)i] = acc[list[i]];
            }
        }
        if (pass == 0) {
            out->adj = malloc((out->start[m] + 1) * sizeof *out->adj);
            out->w = malloc((out->start[m] + 1) * sizeof *out->w);
            if (!out->adj || !out->w)
                break;
        }
    }
    free(acc);
    free(seen);
    free(list);
    if (!out->adj || !out->w || set_degrees(out) != MPILENS_MAP_OK) {
        free_graph(out);
        return MPILENS_MAP_ERR_NOMEM;
    }
    return MPILENS_MAP_OK;
}

/* ---- greedy grouping -------------------------------------------------------------------------- */

/* A min-heap of vertices in a fixed array (each vertex enters at most once). */
static void index_push(int *heap, int *size, int v)
{
    int i = (*size)++;
    while (i > 0 && v < heap[(i - 1) / 2]) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = v;
}

static void index_pop(int *heap, int *size)
{
    int x = heap[--*size], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *size)
            break;
        if (c + 1 < *size && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= x)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*size)
        heap[i] = x;
}

typedef struct {
    double w;
    int u, v;
} tm_edge_t;

/* A key whose ascending order is the descending order of w >= 0. */
static uint64_t descending_key(double w)
{
    uint64_t bits;
    w += 0.0; /* -0.0, which a matrix accepts as a count of 0, as 0.0 */
    memcpy(&bits, &w, sizeof bits);
    return ~bits;
}

/* Byte b (0: the least significant) of a sort key. */
static unsigned key_byte(uint64_t key, int b) { return (unsigned)(key >> (8 * b)) & 255; }

/* Sorts e[n] into the order greedy grouping takes edges in: heaviest first, then by ends. The rows
 * of a tm_graph_t are ascending, so e[] arrives ordered by ends and a stable sort by weight alone
 * gives that order: a least-significant-digit radix sort over the bytes of the weights
 * (non-negative doubles order as their bit patterns), skipping the bytes all weights share, which
 * is most of them (a matrix's volumes are a few distinct values, or integers). The merge sort it
 * replaces compared 6000 edges in 1.2 M instructions of 17 M mapping CG at 1024. `tmp` holds n
 * edges. */
static void sort_edges(tm_edge_t *e, tm_edge_t *tmp, size_t n)
{
    static const int bytes = (int)sizeof(uint64_t);
    size_t count[sizeof(uint64_t)][256] = {{0}};
    for (size_t i = 0; i < n; i++) {
        uint64_t key = descending_key(e[i].w); /* once per edge, not once per byte */
        for (int b = 0; b < bytes; b++)
            count[b][key_byte(key, b)]++;
    }
    tm_edge_t *from = e, *to = tmp;
    for (int b = 0; b < bytes && n > 0; b++) {
        size_t *c = count[b];
        if (c[key_byte(descending_key(from[0].w), b)] == n)
            continue;
        size_t sum = 0;
        for (int d = 0; d < 256; d++) {
            size_t here = c[d];
            c[d] = sum;
            sum += here;
        }
        for (size_t i = 0; i < n; i++)
            to[c[key_byte(descending_key(from[i].w), b)]++] = from[i];
        tm_edge_t *swap = from;
        from = to;
        to = swap;
    }
    if (from != e)
        memcpy(e, from, n * sizeof *e);
}

/* The state of greedy grouping: one group is open at a time. */
typedef struct {
    const tm_graph_t *g;
    const int *vshape;
    const tm_level_t *lev;                /* the objects the groups are formed for */
    int *group_of;                        /* -1 while unassigned */
    double *conn;                         /* weight to the open group */
    int *rest_count;                      /* unassigned neighbours */
    int *touched, ntouched;               /* vertices whose conn is not zero */
    ml_map_heap_t cand;                   /* neighbours of the open group */
    int *by_shape, *shape_start, *cursor; /* vertices of each shape, ascending, and the first one
                                             that may still be unassigned */
    int *isolated, *isolated_size;        /* per shape (in by_shape's ranges): unassigned vertices without
                                      unassigned neighbours, lowest first */
    tm_edge_t *edge;
    size_t nedge, next_edge; /* edges by weight; those before next_edge touch an assigned vertex */
    int *rem;                /* what the open group still needs, per pair of its shape */
    int comp_first, comp_length;
} tm_greedy_t;

static void free_greedy(tm_greedy_t *s)
{
    free(s->conn);
    free(s->rest_count);
    free(s->touched);
    free(s->cand.e);
    free(s->by_shape);
    free(s->shape_start);
    free(s->cursor);
    free(s->isolated);
    free(s->isolated_size);
    free(s->edge);
    free(s->rem);
}

static int init_greedy(tm_greedy_t *s, const tm_graph_t *g, const int *vshape, int nvshape, const tm_level_t *lev,
                       int *group_of)
{
    int n = g->n, longest = 1;
    memset(s, 0, sizeof *s);
    s->g = g;
    s->vshape = vshape;
    s->lev = lev;
    s->group_of = group_of;
    for (int p = 0; p < lev->nshape; p++)
        if (lev->comp_start[p + 1] - lev->comp_start[p] > longest)
            longest = lev->comp_start[p + 1] - lev->comp_start[p];
    s->conn = calloc((size_t)n, sizeof *s->conn);
    s->rest_count = malloc((size_t)n * sizeof *s->rest_count);
    s->touched = malloc((size_t)n * sizeof *s->touched);
    s->by_shape = malloc((size_t)n * sizeof *s->by_shape);
    s->shape_start = calloc((size_t)nvshape + 1, sizeof *s->shape_start);
    s->cursor = malloc((size_t)nvshape * sizeof *s->cursor);
    s->isolated = malloc((size_t)n * sizeof *s->isolated);
    s->isolated_size = calloc((size_t)nvshape, sizeof *s->isolated_size);
    s->rem = malloc((size_t)longest * sizeof *s->rem);
    s->nedge = g->start[n] / 2;
    s->edge = malloc((s->nedge + 1) * sizeof *s->edge);
    if (!s->conn || !s->rest_count || !s->touched || !s->by_shape || !s->shape_start || !s->cursor || !s->isolated ||
        !s->isolated_size || !s->rem || !s->edge)
        return MPILENS_MAP_ERR_NOMEM;
    for (int v = 0; v < n; v++)
        s->shape_start[vshape[v] + 1]++;
    for (int c = 0; c < nvshape; c++)
        s->shape_start[c + 1] += s->shape_start[c];
    memcpy(s->cursor, s->shape_start, (size_t)nvshape * sizeof *s->cursor);
    size_t edges = 0;
    for (int v = 0; v < n; v++) {
        int c = vshape[v];
        s->by_shape[s->cursor[c]++] = v;
        group_of[v] = -1;
        s->rest_count[v] = (int)(g->start[v + 1] - g->start[v]);
        if (s->rest_count[v] == 0)
            index_push(s->isolated + s->shape_start[c], &s->isolated_size[c], v);
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            if (v < g->adj[e] && edges < s->nedge)
                s->edge[edges++] = (tm_edge_t){g->w[e], v, g->adj[e]};
    }
    s->nedge = edges;
    memcpy(s->cursor, s->shape_start, (size_t)nvshape * sizeof *s->cursor);
    tm_edge_t *tmp = malloc((s->nedge + 1) * sizeof *tmp);
    if (!tmp)
        return MPILENS_MAP_ERR_NOMEM;
    sort_edges(s->edge, tmp, s->nedge);
    free(tmp);
    return MPILENS_MAP_OK;
}

/* Which pair of the open group's shape v would fill, or -1 if the group has no room for it. */
static int fits(const tm_greedy_t *s, int v)
{
    for (int k = 0; k < s->comp_length; k++)
        if (s->lev->comp_shape[s->comp_first + k] == s->vshape[v])
            return s->rem[k] > 0 ? k : -1;
    return -1;
}

static int add_to_group(tm_greedy_t *s, int v, int group)
{
    const tm_graph_t *g = s->g;
    s->group_of[v] = group;
    s->rem[fits(s, v)]--;
    for (size_t e = g->start[v]; e < g->start[v + 1]; e++) {
        int x = g->adj[e];
        if (s->group_of[x] >= 0)
            continue;
        if (s->conn[x] == 0)
            s->touched[s->ntouched++] = x;
        s->conn[x] += g->w[e];
        if (--s->rest_count[x] == 0)
            index_push(s->isolated + s->shape_start[s->vshape[x]], &s->isolated_size[s->vshape[x]], x);
        /* The candidate that keeps the most traffic inside, as TreeMatch's greedy grouping picks
         * (on stencils and random matrices this does better than also counting what the candidate
         * sends elsewhere, as graph growing partitioners do). */
        if (ml_map_heap_push(&s->cand, s->conn[x], x) != MPILENS_MAP_OK)
            return MPILENS_MAP_ERR_NOMEM;
    }
    return MPILENS_MAP_OK;
}

/* The best neighbour of the open group that fits, or -1. Keys only grow while a group is open, so
 * the first entry popped for a vertex is its latest; older ones come after it is assigned. */
static int best_candidate(tm_greedy_t *s)
{
    while (s->cand.size) {
        int v = ml_map_heap_pop(&s->cand).v;
        if (s->group_of[v] < 0 && fits(s, v) >= 0)
            return v;
    }
    return -1;
}

/* The lowest unassigned vertex with no unassigned neighbours that fits: it costs nothing here. */
static int lowest_isolated(tm_greedy_t *s)
{
    int best = -1;
    for (int k = 0; k < s->comp_length; k++) {
        int c = s->lev->comp_shape[s->comp_first + k];
        int *heap = s->isolated + s->shape_start[c];
        if (s->rem[k] == 0)
            continue;
        while (s->isolated_size[c] && s->group_of[heap[0]] >= 0)
            index_pop(heap, &s->isolated_size[c]);
        if (s->isolated_size[c] && (best < 0 || heap[0] < best))
            best = heap[0];
    }
    return best;
}

/* An end of the heaviest edge between unassigned vertices, if one fits. */
static int heaviest_edge_end(tm_greedy_t *s)
{
    while (s->next_edge < s->nedge &&
           (s->group_of[s->edge[s->next_edge].u] >= 0 || s->group_of[s->edge[s->next_edge].v] >= 0))
        s->next_edge++;
    if (s->next_edge == s->nedge)
        return -1;
    if (fits(s, s->edge[s->next_edge].u) >= 0)
        return s->edge[s->next_edge].u;
    if (fits(s, s->edge[s->next_edge].v) >= 0)
        return s->edge[s->next_edge].v;
    return -1;
}

static int lowest_unassigned(tm_greedy_t *s)
{
    int best = -1;
    for (int k = 0; k < s->comp_length; k++) {
        int c = s->lev->comp_shape[s->comp_first + k];
        if (s->rem[k] == 0)
            continue;
        while (s->group_of[s->by_shape[s->cursor[c]]] >= 0)
            s->cursor[c]++;
        if (best < 0 || s->by_shape[s->cursor[c]] < best)
            best = s->by_shape[s->cursor[c]];
    }
    return best;
}

/* A group starts at the heaviest remaining edge; once its neighbours run out, traffic-free
 * vertices fill it before another edge is cut. */
static int next_vertex(tm_greedy_t *s, int first)
{
    int v = -1;
    if (!first) {
        v = best_candidate(s);
        if (v < 0)
            v = lowest_isolated(s);
    }
    if (v < 0)
        v = heaviest_edge_end(s);
    if (v < 0)
        v = lowest_isolated(s);
    if (v < 0)
        v = lowest_unassigned(s);
    return v;
}

static int greedy_group(const tm_graph_t *g, const int *vshape, int nvshape, const tm_level_t *lev, int *group_of)
{
    tm_greedy_t s;
    int status = init_greedy(&s, g, vshape, nvshape, lev, group_of);
    for (int j = 0; j < lev->count && status == MPILENS_MAP_OK; j++) {
        int shape = lev->shape[j], need = 0;
        s.comp_first = lev->comp_start[shape];
        s.comp_length = lev->comp_start[shape + 1] - s.comp_first;
        for (int k = 0; k < s.comp_length; k++)
            need += s.rem[k] = lev->comp_count[s.comp_first + k];
        for (int i = 0; i < s.ntouched; i++)
            s.conn[s.touched[i]] = 0;
        s.ntouched = 0;
        s.cand.size = 0;
        for (int i = 0; i < need && status == MPILENS_MAP_OK; i++)
            status = add_to_group(&s, next_vertex(&s, i == 0), j);
    }
    free_greedy(&s);
    return status;
}

/* ---- swaps between groups --------------------------------------------------------------------- */

/* Passes of pairwise swaps (vertices of the same shape, so every group keeps its shape) that lower
 * the traffic between groups: each vertex that would rather be in another group looks there for
 * the partner whose swap gains the most. */
static int refine(const tm_graph_t *g, const int *vshape, int m, int *group_of)
{
    int n = g->n;
    double tolerance = 1e-12 * g->total;
    double *acc = calloc((size_t)m, sizeof *acc);
    int *touched = malloc((size_t)m * sizeof *touched);
    int *pos = malloc((size_t)n * sizeof *pos);
    tm_stage_t s;
    int status = build_stage(group_of, n, m, &s);
    if (!acc || !touched || !pos || status != MPILENS_MAP_OK) {
        free(acc);
        free(touched);
        free(pos);
        free(s.start);
        free(s.member);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++)
        pos[s.member[i]] = i;
    for (int pass = 0; pass < TM_REFINE_PASSES; pass++) {
        int swaps = 0;
        for (int u = 0; u < n; u++) {
            int a = group_of[u], b = -1, ntouched = 0;
            for (size_t e = g->start[u]; e < g->start[u + 1]; e++) {
                int x = group_of[g->adj[e]];
                if (acc[x] == 0)
                    touched[ntouched++] = x;
                acc[x] += g->w[e];
            }
            for (int i = 0; i < ntouched; i++)
                if (touched[i] != a &&
                    (b < 0 || acc[touched[i]] > acc[b] || (acc[touched[i]] == acc[b] && touched[i] < b)))
                    b = touched[i];
            double gain_u = b >= 0 ? acc[b] - acc[a] : 0;
            for (int i = 0; i < ntouched; i++)
                acc[touched[i]] = 0;
            if (gain_u <= tolerance)
                continue;
            int partner = -1;
            double best = tolerance;
            for (int i = s.start[b]; i < s.start[b + 1]; i++) {
                int v = s.member[i];
                double to_a = 0, to_b = 0, uv = 0;
                if (vshape[v] != vshape[u])
                    continue;
                for (size_t e = g->start[v]; e < g->start[v + 1]; e++) {
                    int x = g->adj[e];
                    if (x == u)
                        uv = g->w[e];
                    if (group_of[x] == a)
                        to_a += g->w[e];
                    else if (group_of[x] == b)
                        to_b += g->w[e];
                }
                double gain = gain_u + to_a - to_b - 2 * uv;
                if (gain > best) {
                    best = gain;
                    partner = v;
                }
            }
            if (partner < 0)
                continue;
            int pu = pos[u], pv = pos[partner];
            group_of[u] = b;
            group_of[partner] = a;
            s.member[pu] = partner;
            s.member[pv] = u;
            pos[u] = pv;
            pos[partner] = pu;
            swaps++;
        }
        if (!swaps)
            break;
    }
    free(acc);
    free(touched);
    free(pos);
    free(s.start);
    free(s.member);
    return MPILENS_MAP_OK;
}

/* ---- exact search over all candidate groups ------------------------------------------------- */

/* Whether C(n, a) <= limit (counted without overflow). */
static int few_candidates(int n, int a, long limit, long *count)
{
    double c = 1;
    for (int i = 1; i <= a; i++) {
        c = c * (n - a + i) / i;
        if (c > (double)limit)
            return 0;
    }
    *count = (long)(c + 0.5);
    return 1;
}

/* Partitioning n vertices into groups of a: every a-subset is a candidate whose cost is the
 * traffic leaving it; the search picks, for the lowest free vertex, each candidate it leads (its
 * lowest member) in increasing cost, bounded below by each free vertex's cheapest candidate. */
typedef struct {
    int n, a;
    const int *member;         /* [candidates * a], by candidate index */
    const ml_map_keyed_t *led; /* candidates by leading vertex, then cost */
    const int *led_start;      /* [n + 1] */
    const double *share;       /* per vertex: its cheapest candidate's cost / a */
    char *used;
    int *chosen, *best; /* candidate indices, one per group */
    double best_cost, tolerance, free_share;
    long budget;
} tm_search_t;

static void search(tm_search_t *s, int depth, int from, double cost)
{
    int v = from;
    while (v < s->n && s->used[v])
        v++;
    if (v == s->n) {
        if (cost < s->best_cost - s->tolerance) {
            s->best_cost = cost;
            memcpy(s->best, s->chosen, (size_t)depth * sizeof *s->best);
        }
        return;
    }
    for (int i = s->led_start[v]; i < s->led_start[v + 1] && s->budget > 0; i++) {
        const int *m = s->member + (size_t)s->led[i].index * (size_t)s->a;
        double bound = cost + s->led[i].key + s->free_share;
        int clash = 0;
        s->budget--;
        for (int k = 0; k < s->a; k++) {
            clash |= s->used[m[k]];
            bound -= s->share[m[k]];
        }
        if (clash || bound >= s->best_cost - s->tolerance)
            continue;
        for (int k = 0; k < s->a; k++) {
            s->used[m[k]] = 1;
            s->free_share -= s->share[m[k]];
        }
        s->chosen[depth] = s->led[i].index;
        search(s, depth + 1, v + 1, cost + s->led[i].key);
        for (int k = 0; k < s->a; k++) {
            s->used[m[k]] = 0;
            s->free_share += s->share[m[k]];
        }
    }
}

/* The traffic leaving the groups of group_of, summed over groups. */
static double partition_cost(const tm_graph_t *g, const int *group_of)
{
    double cost = 0;
    for (int v = 0; v < g->n; v++)
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            if (group_of[g->adj[e]] != group_of[v])
                cost += g->w[e];
    return cost;
}

/* Every a-subset of the vertices with the traffic leaving it, in lexicographic order (so those led
 * by one vertex are contiguous), and each vertex's share of its cheapest candidate. */
typedef struct {
    int *member;         /* [candidates * a] */
    ml_map_keyed_t *led; /* by leading vertex, then cost */
    int *led_start;      /* [n + 1] */
    double *share;       /* [n] */
} tm_candidates_t;

static void free_candidates(tm_candidates_t *c)
{
    free(c->member);
    free(c->led);
    free(c->led_start);
    free(c->share);
}

static int enumerate_candidates(const tm_graph_t *g, int a, long candidates, tm_candidates_t *c)
{
    int n = g->n;
    double *dense = calloc((size_t)n * (size_t)n, sizeof *dense);
    int *combo = malloc((size_t)a * sizeof *combo);
    c->member = malloc((size_t)candidates * (size_t)a * sizeof *c->member);
    c->led = malloc((size_t)candidates * sizeof *c->led);
    c->led_start = calloc((size_t)n + 1, sizeof *c->led_start);
    c->share = malloc((size_t)n * sizeof *c->share);
    if (!dense || !combo || !c->member || !c->led || !c->led_start || !c->share) {
        free(dense);
        free(combo);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int v = 0; v < n; v++) {
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            dense[(size_t)v * (size_t)n + (size_t)g->adj[e]] = g->w[e];
        c->share[v] = -1;
    }
    for (int k = 0; k < a; k++)
        combo[k] = k;
    for (long i = 0; i < candidates; i++) {
        double cost = 0;
        for (int k = 0; k < a; k++) {
            c->member[i * a + k] = combo[k];
            cost += g->degree[combo[k]];
            for (int l = k + 1; l < a; l++)
                cost -= 2 * dense[(size_t)combo[k] * (size_t)n + (size_t)combo[l]];
        }
        c->led[i] = (ml_map_keyed_t){cost, (int)i};
        c->led_start[combo[0] + 1]++;
        for (int k = 0; k < a; k++)
            if (c->share[combo[k]] < 0 || cost / a < c->share[combo[k]])
                c->share[combo[k]] = cost / a;
        int k = a - 1;
        while (k >= 0 && combo[k] == n - a + k)
            k--;
        if (k < 0)
            break;
        combo[k]++;
        for (int l = k + 1; l < a; l++)
            combo[l] = combo[l - 1] + 1;
    }
    for (int v = 0; v < n; v++)
        c->led_start[v + 1] += c->led_start[v];
    for (int v = 0; v < n; v++)
        qsort(c->led + c->led_start[v], (size_t)(c->led_start[v + 1] - c->led_start[v]), sizeof *c->led, ml_map_by_key);
    free(dense);
    free(combo);
    return MPILENS_MAP_OK;
}

/* Replaces group_of by a better partition into groups of a if the search finds one. */
static int exhaustive_group(const tm_graph_t *g, int a, long candidates, int *group_of)
{
    int n = g->n, m = n / a;
    tm_candidates_t c = {0};
    char *used = calloc((size_t)n, 1);
    int *chosen = malloc((size_t)m * sizeof *chosen), *best = malloc((size_t)m * sizeof *best);
    int status = used && chosen && best ? enumerate_candidates(g, a, candidates, &c) : MPILENS_MAP_ERR_NOMEM;
    if (status == MPILENS_MAP_OK) {
        tm_search_t s = {n,      a,    c.member, c.led,           c.led_start, c.share,         used,
                         chosen, best, 0,        1e-9 * g->total, 0,           TM_SEARCH_BUDGET};
        double start_cost = s.best_cost = partition_cost(g, group_of);
        for (int v = 0; v < n; v++)
            s.free_share += c.share[v];
        search(&s, 0, 0, 0);
        if (s.best_cost < start_cost) {
            /* Groups numbered by their lowest member, as greedy grouping numbers them on an empty
             * matrix (candidate indices are lexicographic). */
            qsort(best, (size_t)m, sizeof *best, compare_int);
            for (int j = 0; j < m; j++)
                for (int k = 0; k < a; k++)
                    group_of[c.member[(size_t)best[j] * (size_t)a + (size_t)k]] = j;
        }
    }
    free_candidates(&c);
    free(used);
    free(chosen);
    free(best);
    return status;
}

/* ---- stages and placement --------------------------------------------------------------------- */

/* Groups the vertices of g (of shapes vshape) into one group per object of lev, to its shape. */
static int group_stage(const tm_graph_t *g, const int *vshape, int nvshape, const tm_level_t *lev, int greedy_only,
                       int *group_of)
{
    int uniform = nvshape == 1 && lev->nshape == 1, a = uniform ? lev->comp_count[0] : 0, status;
    long candidates;
    if (lev->count == 1 || (uniform && a == 1)) {
        for (int v = 0; v < g->n; v++)
            group_of[v] = lev->count == 1 ? 0 : v;
        return MPILENS_MAP_OK;
    }
    status = greedy_group(g, vshape, nvshape, lev, group_of);
    if (status == MPILENS_MAP_OK)
        status = refine(g, vshape, lev->count, group_of);
    if (status == MPILENS_MAP_OK && !greedy_only && uniform && g->total > 0 && g->n / a <= TM_SEARCH_GROUPS &&
        few_candidates(g->n, a, TM_EXHAUSTIVE_GROUPS, &candidates))
        status = exhaustive_group(g, a, candidates, group_of);
    return status;
}

/* Top-down: group j of level 0 goes to object j (it was formed for it); the members of a group
 * placed on an object go to its children of their shape, in order. */
static int place_groups(const tm_level_t *lev, const tm_stage_t *stages, int depth, long *slot_of)
{
    int *place = malloc((size_t)lev[0].count * sizeof *place);
    if (!place)
        return MPILENS_MAP_ERR_NOMEM;
    for (int j = 0; j < lev[0].count; j++)
        place[j] = j;
    for (int d = 0; d < depth - 1; d++) {
        const tm_level_t *below = &lev[d + 1];
        int *next = malloc((size_t)below->count * sizeof *next);
        int *cursor = malloc((size_t)below->nshape * sizeof *cursor);
        if (!next || !cursor) {
            free(next);
            free(cursor);
            free(place);
            return MPILENS_MAP_ERR_NOMEM;
        }
        for (int j = 0; j < lev[d].count; j++) {
            int first = lev[d].child_start[place[j]];
            for (int i = stages[d].start[j]; i < stages[d].start[j + 1]; i++)
                cursor[below->shape[stages[d].member[i]]] = first;
            for (int i = stages[d].start[j]; i < stages[d].start[j + 1]; i++) {
                int member = stages[d].member[i], shape = below->shape[member];
                while (below->shape[cursor[shape]] != shape)
                    cursor[shape]++;
                next[member] = cursor[shape]++;
            }
        }
        free(cursor);
        free(place);
        place = next;
    }
    const tm_level_t *slots = &lev[depth - 1];
    for (int j = 0; j < slots->count; j++)
        for (int i = stages[depth - 1].start[j]; i < stages[depth - 1].start[j + 1]; i++)
            slot_of[stages[depth - 1].member[i]] = slots->object[place[j]];
    free(place);
    return MPILENS_MAP_OK;
}

/* Bottom-up grouping, one stage per level, each on the graph of the groups of the stage below. */
static int group_levels(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, int greedy_only,
                        const tm_level_t *lev, tm_stage_t *stages)
{
    int order = m->order, status;
    tm_graph_t g = {order, m->row_start, m->column, m->weight, NULL, 0, 0};
    int *process_shape = calloc((size_t)order, sizeof *process_shape);
    int *group_of = malloc((size_t)order * sizeof *group_of);
    const int *vshape = process_shape;
    int nvshape = 1;
    status = process_shape && group_of ? set_degrees(&g) : MPILENS_MAP_ERR_NOMEM;
    for (int d = t->depth - 1; d >= 0 && status == MPILENS_MAP_OK; d--) {
        status = group_stage(&g, vshape, nvshape, &lev[d], greedy_only, group_of);
        if (status == MPILENS_MAP_OK)
            status = build_stage(group_of, g.n, lev[d].count, &stages[d]);
        if (status == MPILENS_MAP_OK && d > 0) {
            tm_graph_t groups;
            status = aggregate(&g, group_of, &stages[d], &groups);
            free_graph(&g);
            g = groups;
        }
        vshape = lev[d].shape;
        nvshape = lev[d].nshape;
    }
    free_graph(&g);
    free(process_shape);
    free(group_of);
    return status;
}

/* ---- recursive bisection, the second candidate ------------------------------------------------ */

/* The state of the top-down bisection: `proc` lists the processes in the order of the sorted
 * allowed slots, and each bisection splits a segment of it at the boundary between the children
 * of the lowest object holding the segment's slots. */
typedef struct {
    const mpilens_map_topology_t *t;
    const tm_graph_t *g;
    const long *sorted;
    int *proc;
    ml_map_bisection_t *work;
} tm_bisect_t;

/* Splits proc[lo, hi) into its first `size` processes and the rest, cutting little traffic. */
static int bisect(tm_bisect_t *b, int lo, int hi, int size)
{
    return ml_map_bisect(b->work, b->g->start, b->g->adj, b->g->w, b->proc + lo, hi - lo, size);
}

/* The segment's slots lie under one object; its occupied children are split into two halves and
 * the processes with them, down to single slots. */
static int bisect_range(tm_bisect_t *b, int lo, int hi, long *slot_of)
{
    const long *s = b->sorted;
    if (s[lo] == s[hi - 1]) {
        for (int i = lo; i < hi; i++)
            slot_of[b->proc[i]] = s[lo];
        return MPILENS_MAP_OK;
    }
    long width = b->t->below[ml_map_common_level(b->t, s[lo], s[hi - 1]) + 2];
    int distinct = 1;
    for (int i = lo + 1; i < hi && distinct; i++)
        distinct = s[i] != s[i - 1];
    if (width == 1 && distinct) {
        /* Slots of one object, a process each: every pair meets at that object, whatever goes
         * where, so no split can lower the cost. */
        for (int i = lo; i < hi; i++)
            slot_of[b->proc[i]] = s[i];
        return MPILENS_MAP_OK;
    }
    int children = 0, mid = lo;
    for (int i = lo; i < hi; i++)
        children += i == lo || s[i] / width != s[i - 1] / width;
    for (int seen = 0; seen <= children / 2; mid++)
        seen += mid == lo || s[mid] / width != s[mid - 1] / width;
    mid--;
    int status = bisect(b, lo, hi, mid - lo);
    if (status == MPILENS_MAP_OK)
        status = bisect_range(b, lo, mid, slot_of);
    if (status == MPILENS_MAP_OK)
        status = bisect_range(b, mid, hi, slot_of);
    return status;
}

/* Bytes times the topology's cost of the level where their ends meet (mpilens_map_cost's
 * weighted_bytes), each undirected edge once. */
static double weighted_cost(const mpilens_map_topology_t *t, const tm_graph_t *g, const long *slot_of)
{
    double cost = 0;
    for (int v = 0; v < g->n; v++)
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++) {
            int x = g->adj[e];
            if (x > v && slot_of[x] != slot_of[v])
                cost += g->w[e] * t->cost[ml_map_common_level(t, slot_of[v], slot_of[x]) + 1];
        }
    return cost;
}

/* Maps by recursive bisection and keeps that mapping instead of slot_of if it costs strictly
 * less. */
static int bisection_if_better(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, const long *sorted,
                               long *slot_of)
{
    int n = m->order;
    tm_graph_t g = {n, m->row_start, m->column, m->weight, NULL, 0, 0};
    tm_bisect_t b = {t, &g, sorted, NULL, NULL};
    long *other = malloc((size_t)n * sizeof *other);
    b.proc = malloc((size_t)n * sizeof *b.proc);
    int status = other && b.proc ? set_degrees(&g) : MPILENS_MAP_ERR_NOMEM;
    if (status == MPILENS_MAP_OK)
        status = ml_map_bisection_new(n, &b.work);
    if (status == MPILENS_MAP_OK) {
        for (int p = 0; p < n; p++)
            b.proc[p] = p;
        status = bisect_range(&b, 0, n, other);
    }
    if (status == MPILENS_MAP_OK && g.total > 0) {
        double mine = weighted_cost(t, &g, other), theirs = weighted_cost(t, &g, slot_of);
        if (mine < theirs * (1 - 1e-12))
            memcpy(slot_of, other, (size_t)n * sizeof *slot_of);
    }
    free_graph(&g);
    free(other);
    free(b.proc);
    ml_map_bisection_free(b.work);
    return status;
}

int ml_map_treematch(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, int greedy_only, unsigned seed,
                     const long *allowed, long *slot_of)
{
    /* Ties go to the lowest index: the result depends on the input only. */
    (void)seed;
    int order = m->order, depth = t->depth;
    int status = ml_map_matrix_graph(m);
    if (status != MPILENS_MAP_OK)
        return status;
    long *sorted = malloc((size_t)order * sizeof *sorted);
    tm_level_t *lev = calloc((size_t)depth, sizeof *lev);
    tm_stage_t *stages = calloc((size_t)depth, sizeof *stages);
    if (!sorted || !lev || !stages)
        status = MPILENS_MAP_ERR_NOMEM;
    if (status == MPILENS_MAP_OK) {
        memcpy(sorted, allowed, (size_t)order * sizeof *sorted);
        qsort(sorted, (size_t)order, sizeof *sorted, compare_long);
        status = build_levels(t, sorted, order, lev);
    }
    if (status == MPILENS_MAP_OK)
        status = group_levels(t, m, greedy_only, lev, stages);
    if (status == MPILENS_MAP_OK)
        status = place_groups(lev, stages, depth, slot_of);
    if (status == MPILENS_MAP_OK && !greedy_only)
        status = bisection_if_better(t, m, sorted, slot_of);
    for (int d = 0; lev && stages && d < depth; d++) {
        free_level(&lev[d]);
        free(stages[d].start);
        free(stages[d].member);
    }
    free(sorted);
    free(lev);
    free(stages);
    return status;
}
