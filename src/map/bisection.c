/* Multilevel bisection, as Scotch and METIS split graphs (Hendrickson and Leland; Karypis and
 * Kumar): the set's graph is coarsened by heavy-edge matching down to a few tens of vertices, each
 * standing for the processes merged into it; the coarsest graph is split by greedy graph growing
 * from a peripheral vertex and Fiduccia-Mattheyses passes; the split is then carried
 * back level by level, each level refined by FM passes. A flat FM pass only moves single
 * processes across a boundary grown round from one vertex, and stays in the nearest local minimum
 * (on a 3-D stencil, a boundary 9-12% longer than the planes Scotch finds); at the coarse levels a
 * move carries a whole block of processes, so the boundary straightens before the fine levels
 * polish it.
 *
 * Parts must have exact sizes (they fill the slots of objects): a coarse level allows its parts to
 * be off by its heaviest vertex, and the finest level, whose vertices weigh 1, first moves the
 * vertices that cost least out of the larger part, then refines keeping the sizes exact. Every tie
 * goes to the lowest index or the oldest candidate, so the result depends on the input only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map_internal.h"

/* Coarsening stops at this many vertices, or when a matching shrinks the graph by less than 10%
 * (no edges left to contract, or merges capped by the weight limit). */
#define BI_COARSEST 64
#define BI_MIN_SHRINK 0.9
#define BI_MAX_LEVELS 48
/* FM passes per level, and the moves a pass makes past its best state before it gives up. */
#define BI_FM_PASSES 2
#define BI_FM_PATIENCE 8

/* One level: an undirected weighted graph in CSR form, vw the processes each vertex stands for,
 * coarse[v] the vertex v merged into at the next coarser level. Its arrays stay allocated from
 * one bisection to the next (vertex_room and edge_room entries), so that the many bisections of
 * one mapping do not pay for fresh memory each. */
typedef struct {
    int n, maxvw;
    size_t *start;
    int *adj;
    double *w;
    int *vw;
    int *coarse;
    int vertex_room;
    size_t edge_room;
} bi_graph_t;

/* The split being refined at one level. */
typedef struct {
    const bi_graph_t *g;
    char *side;   /* 0: the part that must weigh `target` */
    double *gain; /* how much the cut drops if the vertex changes sides */
    char *locked;
    int *moved; /* also the queue of the breadth-first searches */
    ml_map_heap_t heap[2];
    long target, excess; /* excess: weight of part 0 - target */
    int tol;             /* |excess| a kept state may have */
    double eps;          /* a gain no larger is rounding */
} bi_split_t;

struct ml_map_bisection {
    int n;
    int *local; /* [n]: the vertex's index in the set being bisected, -1 for the others */
    bi_graph_t lev[BI_MAX_LEVELS];
    bi_split_t split;
    char *spare;   /* [n]: sides while projecting */
    int *order;    /* [n]: the vertices reordered */
    int *member;   /* [2n]: the vertices merged into each coarse vertex */
    size_t *where; /* [n]: a coarse neighbour's edge in the row being built, SIZE_MAX for none */
};

void ml_map_bisection_free(ml_map_bisection_t *b)
{
    if (!b)
        return;
    for (int l = 0; l < BI_MAX_LEVELS; l++) {
        bi_graph_t *g = &b->lev[l];
        free(g->start);
        free(g->adj);
        free(g->w);
        free(g->vw);
        free(g->coarse);
    }
    free(b->local);
    free(b->split.side);
    free(b->split.gain);
    free(b->split.locked);
    free(b->split.moved);
    free(b->split.heap[0].e);
    free(b->split.heap[1].e);
    free(b->spare);
    free(b->order);
    free(b->member);
    free(b->where);
    free(b);
}

int ml_map_bisection_new(int n, ml_map_bisection_t **out)
{
    size_t room = (size_t)n + 1;
    ml_map_bisection_t *b = calloc(1, sizeof *b);
    if (!b)
        return MPILENS_MAP_ERR_NOMEM;
    b->n = n;
    b->local = malloc(room * sizeof *b->local);
    b->split.side = malloc(room);
    b->split.gain = malloc(room * sizeof *b->split.gain);
    b->split.locked = calloc(room, 1);
    b->split.moved = malloc(room * sizeof *b->split.moved);
    b->spare = malloc(room);
    b->order = malloc(room * sizeof *b->order);
    b->member = malloc(2 * room * sizeof *b->member);
    b->where = malloc(room * sizeof *b->where);
    if (!b->local || !b->split.side || !b->split.gain || !b->split.locked || !b->split.moved || !b->spare ||
        !b->order || !b->member || !b->where) {
        ml_map_bisection_free(b);
        return MPILENS_MAP_ERR_NOMEM;
    }
    for (int v = 0; v < n; v++) {
        b->local[v] = -1;
        b->where[v] = SIZE_MAX;
    }
    *out = b;
    return MPILENS_MAP_OK;
}

/* Room for n vertices and `edges` edges (entries of both directions). */
static int reserve(bi_graph_t *g, int n, size_t edges)
{
    g->n = n;
    if (n > g->vertex_room) {
        size_t room = (size_t)n + 1;
        size_t *start = realloc(g->start, room * sizeof *start);
        if (start)
            g->start = start;
        int *vw = realloc(g->vw, room * sizeof *vw);
        if (vw)
            g->vw = vw;
        int *coarse = realloc(g->coarse, room * sizeof *coarse);
        if (coarse)
            g->coarse = coarse;
        if (!start || !vw || !coarse)
            return MPILENS_MAP_ERR_NOMEM;
        g->vertex_room = n;
    }
    if (edges > g->edge_room) {
        int *adj = realloc(g->adj, (edges + 1) * sizeof *adj);
        if (adj)
            g->adj = adj;
        double *w = realloc(g->w, (edges + 1) * sizeof *w);
        if (w)
            g->w = w;
        if (!adj || !w)
            return MPILENS_MAP_ERR_NOMEM;
        g->edge_room = edges;
    }
    return MPILENS_MAP_OK;
}

/* The graph induced by vert[0, count): vertex i is vert[i]. One pass over the rows, into room for
 * all of their edges (the set's own are a share of them); *total: the weight of its edges. */
static int set_graph(ml_map_bisection_t *b, const size_t *start, const int *adj, const double *w, const int *vert,
                     int count, bi_graph_t *g, double *total)
{
    size_t room = 0;
    for (int i = 0; i < count; i++) {
        b->local[vert[i]] = i;
        room += start[vert[i] + 1] - start[vert[i]];
    }
    int status = reserve(g, count, room);
    if (status == MPILENS_MAP_OK) {
        size_t k = 0;
        double sum = 0;
        for (int i = 0; i < count; i++) {
            g->start[i] = k;
            g->vw[i] = 1;
            for (size_t e = start[vert[i]]; e < start[vert[i] + 1]; e++) {
                int x = b->local[adj[e]];
                if (x >= 0) {
                    g->adj[k] = x;
                    sum += w[e];
                    g->w[k++] = w[e];
                }
            }
        }
        g->start[count] = k;
        g->maxvw = 1;
        *total = sum;
    }
    for (int i = 0; i < count; i++)
        b->local[vert[i]] = -1;
    return status;
}

/* Heavy-edge matching: each vertex in index order pairs with its unmatched neighbour over the
 * heaviest edge (the lighter neighbour among equals, then the first), if together they weigh at
 * most cap. The pairs and the vertices left alone are the vertices of c, whose edges add up their
 * members'. *coarser: whether c is worth another level (it has at most 90% of g's vertices and
 * of its edges). */
static int coarsen(ml_map_bisection_t *b, bi_graph_t *g, int cap, bi_graph_t *c, int *coarser)
{
    int n = g->n, cn = 0, *member = b->member;
    size_t *where = b->where;
    *coarser = 0;
    for (int v = 0; v < n; v++)
        g->coarse[v] = -1;
    for (int v = 0; v < n; v++) {
        if (g->coarse[v] >= 0)
            continue;
        int mate = -1;
        double heaviest = 0;
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++) {
            int x = g->adj[e];
            if (g->coarse[x] >= 0 || g->vw[v] + g->vw[x] > cap)
                continue;
            if (mate < 0 || g->w[e] > heaviest || (g->w[e] == heaviest && g->vw[x] < g->vw[mate])) {
                mate = x;
                heaviest = g->w[e];
            }
        }
        member[2 * cn] = v;
        member[2 * cn + 1] = mate;
        g->coarse[v] = cn;
        if (mate >= 0)
            g->coarse[mate] = cn;
        cn++;
    }
    if (cn > BI_MIN_SHRINK * n)
        return MPILENS_MAP_OK;
    int status = reserve(c, cn, g->start[n]);
    if (status != MPILENS_MAP_OK)
        return status;
    size_t k = 0;
    c->maxvw = 0;
    for (int x = 0; x < cn; x++) {
        size_t row = c->start[x] = k;
        c->vw[x] = 0;
        for (int j = 0; j < 2; j++) {
            int u = member[2 * x + j];
            if (u < 0)
                continue;
            c->vw[x] += g->vw[u];
            for (size_t e = g->start[u]; e < g->start[u + 1]; e++) {
                int y = g->coarse[g->adj[e]];
                if (y == x)
                    continue;
                if (where[y] == SIZE_MAX) {
                    where[y] = k;
                    c->adj[k] = y;
                    c->w[k++] = g->w[e];
                } else
                    c->w[where[y]] += g->w[e];
            }
        }
        for (size_t e = row; e < k; e++)
            where[c->adj[e]] = SIZE_MAX;
        if (c->vw[x] > c->maxvw)
            c->maxvw = c->vw[x];
    }
    c->start[cn] = k;
    *coarser = k <= BI_MIN_SHRINK * g->start[n];
    return MPILENS_MAP_OK;
}

/* Gains and the excess of part 0, from the sides. */
static void set_gains(bi_split_t *s)
{
    const bi_graph_t *g = s->g;
    s->excess = -s->target;
    for (int v = 0; v < g->n; v++) {
        double gain = 0;
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            gain += s->side[g->adj[e]] != s->side[v] ? g->w[e] : -g->w[e];
        s->gain[v] = gain;
        s->excess += s->side[v] == 0 ? g->vw[v] : 0;
    }
}

/* v changes sides; the gains of its neighbours follow. A neighbour whose gain rose enters its
 * side's heap with it, unless locked; one whose gain fell keeps its entry, now above its gain,
 * which valid_top puts right when it comes up: half the pushes (the pushes were 2.1 M
 * instructions of 17 M mapping CG at 1024). */
static int flip(bi_split_t *s, int v)
{
    const bi_graph_t *g = s->g;
    int from = s->side[v];
    s->side[v] = (char)!from;
    s->gain[v] = -s->gain[v];
    s->excess += from == 0 ? -g->vw[v] : g->vw[v];
    for (size_t e = g->start[v]; e < g->start[v + 1]; e++) {
        int x = g->adj[e];
        if (s->side[x] != from) {
            s->gain[x] -= 2 * g->w[e];
            continue;
        }
        s->gain[x] += 2 * g->w[e];
        if (!s->locked[x] && ml_map_heap_push(&s->heap[from], s->gain[x], x) != MPILENS_MAP_OK)
            return MPILENS_MAP_ERR_NOMEM;
    }
    return MPILENS_MAP_OK;
}

/* The top of a side's heap once stale entries are dropped (locked, moved, or below the gain: a
 * later entry holds it) or pushed again at their gain (above it: the gain fell since). Every
 * unlocked vertex of the side that has an entry thus comes up at its gain. */
static int valid_top(bi_split_t *s, int side)
{
    ml_map_heap_t *h = &s->heap[side];
    while (h->size) {
        int v = h->e[0].v;
        double key = h->e[0].key;
        if (!s->locked[v] && s->side[v] == side && key == s->gain[v])
            return v;
        ml_map_heap_pop(h);
        /* The pop left room for this push: it cannot fail. */
        if (!s->locked[v] && s->side[v] == side && key > s->gain[v])
            (void)ml_map_heap_push(h, s->gain[v], v);
    }
    return -1;
}

/* Moves the vertices whose move costs least out of the heavier part until the excess is within
 * tolerance. No move overshoots: a level's tolerance is at least its heaviest vertex. */
static int rebalance(bi_split_t *s)
{
    const bi_graph_t *g = s->g;
    int status = MPILENS_MAP_OK;
    if (labs(s->excess) <= s->tol)
        return status;
    int heavy = s->excess > 0 ? 0 : 1;
    s->heap[heavy].size = 0;
    for (int v = 0; v < g->n && status == MPILENS_MAP_OK; v++)
        if (s->side[v] == heavy)
            status = ml_map_heap_push(&s->heap[heavy], s->gain[v], v);
    while (status == MPILENS_MAP_OK && labs(s->excess) > s->tol) {
        int v = valid_top(s, heavy);
        if (v < 0)
            break;
        status = flip(s, v);
    }
    return status;
}

/* One Fiduccia-Mattheyses pass from a state within tolerance: moves take the best gain of either
 * side while the excess is within tolerance, else come from the heavier side, and the moves after
 * the best state within tolerance are undone. *gained: what the pass removed from the cut. */
static int fm_pass(bi_split_t *s, double *gained)
{
    const bi_graph_t *g = s->g;
    int status = MPILENS_MAP_OK, moves = 0, best_moves = 0;
    double sum = 0, best = 0;
    s->heap[0].size = s->heap[1].size = 0;
    for (int v = 0; v < g->n && status == MPILENS_MAP_OK; v++) {
        int boundary = 0;
        for (size_t e = g->start[v]; e < g->start[v + 1] && !boundary; e++)
            boundary = s->side[g->adj[e]] != s->side[v];
        if (boundary)
            status = ml_map_heap_push(&s->heap[(int)s->side[v]], s->gain[v], v);
    }
    while (status == MPILENS_MAP_OK && moves < g->n && moves - best_moves <= BI_FM_PATIENCE) {
        int top0 = valid_top(s, 0), top1 = valid_top(s, 1), v;
        if (s->excess > s->tol)
            v = top0;
        else if (s->excess < -s->tol)
            v = top1;
        else
            v = top1 < 0 || (top0 >= 0 && s->gain[top0] >= s->gain[top1]) ? top0 : top1;
        if (v < 0)
            break;
        sum += s->gain[v];
        s->locked[v] = 1;
        s->moved[moves++] = v;
        status = flip(s, v);
        if (labs(s->excess) <= s->tol && sum > best + s->eps) {
            best = sum;
            best_moves = moves;
        }
    }
    for (int i = 0; i < moves; i++)
        s->locked[s->moved[i]] = 0;
    while (status == MPILENS_MAP_OK && moves > best_moves)
        status = flip(s, s->moved[--moves]);
    *gained = best;
    return status;
}

static int refine(bi_split_t *s)
{
    int status = rebalance(s);
    double gained = 1;
    for (int pass = 0; pass < BI_FM_PASSES && gained > 0 && status == MPILENS_MAP_OK; pass++)
        status = fm_pass(s, &gained);
    return status;
}

/* The last vertex a breadth-first search from `from` reaches: two sweeps give a vertex on the
 * periphery, where growing a part cuts least. */
static int farthest(bi_split_t *s, int from)
{
    const bi_graph_t *g = s->g;
    int *queue = s->moved, head = 0, tail = 0;
    queue[tail++] = from;
    s->locked[from] = 1;
    while (head < tail) {
        int v = queue[head++];
        for (size_t e = g->start[v]; e < g->start[v + 1]; e++)
            if (!s->locked[g->adj[e]]) {
                s->locked[g->adj[e]] = 1;
                queue[tail++] = g->adj[e];
            }
    }
    for (int i = 0; i < tail; i++)
        s->locked[queue[i]] = 0;
    return queue[tail - 1];
}

/* Greedy graph growing: part 0 grows from seed, taking the vertex whose move lowers the cut most
 * (the first reached among equals), until it weighs the target; once its component is used up,
 * the lowest vertex left. */
static int grow(bi_split_t *s, int seed)
{
    const bi_graph_t *g = s->g;
    int status = MPILENS_MAP_OK, next = 0, v = seed;
    for (int x = 0; x < g->n; x++)
        s->side[x] = 1;
    set_gains(s);
    s->heap[1].size = 0;
    while (s->excess < 0 && status == MPILENS_MAP_OK) {
        if (v < 0)
            v = valid_top(s, 1);
        while (v < 0)
            if (s->side[next++] == 1)
                v = next - 1;
        s->locked[v] = 1;
        status = flip(s, v);
        v = -1;
    }
    for (int x = 0; x < g->n; x++)
        s->locked[x] = 0;
    return status;
}

/* total: the weight of the finest level's edges. */
static int split_levels(bi_graph_t *lev, int levels, int size, double total, bi_split_t *s, char *spare)
{
    s->eps = 1e-12 * total;
    s->target = size;
    s->g = &lev[levels - 1];
    s->tol = levels > 1 ? s->g->maxvw : 0;
    int status = grow(s, farthest(s, farthest(s, 0)));
    if (status == MPILENS_MAP_OK)
        status = refine(s);
    for (int l = levels - 2; l >= 0 && status == MPILENS_MAP_OK; l--) {
        for (int u = 0; u < lev[l].n; u++)
            spare[u] = s->side[lev[l].coarse[u]];
        memcpy(s->side, spare, (size_t)lev[l].n);
        s->g = &lev[l];
        s->tol = l > 0 ? lev[l].maxvw : 0;
        set_gains(s);
        status = refine(s);
    }
    return status;
}

int ml_map_bisect(ml_map_bisection_t *b, const size_t *start, const int *adj, const double *w, int *vert, int count,
                  int size)
{
    if (size <= 0 || size >= count)
        return MPILENS_MAP_OK;
    bi_graph_t *lev = b->lev;
    int levels = 1, coarser = 1, cap = count / BI_COARSEST * 3 / 2 > 2 ? count / BI_COARSEST * 3 / 2 : 2;
    double total = 0;
    int status = set_graph(b, start, adj, w, vert, count, &lev[0], &total);
    while (status == MPILENS_MAP_OK && coarser && levels < BI_MAX_LEVELS && lev[levels - 1].n > BI_COARSEST) {
        status = coarsen(b, &lev[levels - 1], cap, &lev[levels], &coarser);
        levels += coarser;
    }
    if (status == MPILENS_MAP_OK)
        status = split_levels(lev, levels, size, total, &b->split, b->spare);
    if (status == MPILENS_MAP_OK) {
        /* The finest level's tolerance is 0: part 0 holds exactly `size` vertices. */
        int first = 0, second = size;
        for (int i = 0; i < count; i++)
            b->order[b->split.side[i] == 0 ? first++ : second++] = vert[i];
        memcpy(vert, b->order, (size_t)count * sizeof *vert);
    }
    return status;
}
