/* Scotch's static mapping (Pellegrini; built only where Scotch is installed): the process graph
 * onto a tree-leaf architecture shaped like the topology, restricted to the places `allowed`
 * gives, then turned into a one-to-one pairing.
 *
 * Scotch balances loads within a tolerance rather than filling each place exactly, so a few
 * places may receive two processes and others none: the lightest processes of an overloaded slot
 * move to the nearest slot with room (the one sharing the deepest ancestor), which costs little
 * where it happens. Scotch runs in its own context (random state seeded from `seed`,
 * deterministic mode), so neither the process-wide Scotch state nor other Scotch users are
 * touched. Its errors are printed by libscotcherr (never exit) and come back as
 * MPILENS_MAP_ERR_NOMEM: given the checked input built here, memory is what Scotch runs out of; a
 * graph or machine whose numbers do not fit an int (SCOTCH_Num in Debian's build) is
 * MPILENS_MAP_ERR_UNSUPPORTED. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <scotch.h>

#include "map_internal.h"

/* The distance between two leaves under the root, in Scotch's integer units: enough resolution
 * for four levels of the default costs (1000, 100, 10, 1). */
#define SC_DISTANCE_RANGE 1000.0
/* Scotch sums edge weight x distance in SCOTCH_Num (32 bits here): weights are scaled so that the
 * sum over every edge at the largest distance stays below this. */
#define SC_LOAD_ROOM 1073741824.0

static int compare_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The places: the distinct slots of `allowed` (ascending) and how many processes each takes. */
typedef struct {
    int count, most; /* distinct slots; the largest multiplicity */
    long *slot;
    int *capacity;
} sc_places_t;

static int places_of(const long *allowed, int order, sc_places_t *p)
{
    long *sorted = malloc((size_t)order * sizeof *sorted);
    p->slot = malloc((size_t)order * sizeof *p->slot);
    p->capacity = malloc((size_t)order * sizeof *p->capacity);
    if (!sorted || !p->slot || !p->capacity) {
        free(sorted);
        return MPILENS_MAP_ERR_NOMEM;
    }
    memcpy(sorted, allowed, (size_t)order * sizeof *sorted);
    qsort(sorted, (size_t)order, sizeof *sorted, compare_long);
    p->count = 0;
    p->most = 1;
    for (int i = 0; i < order; i++) {
        if (i == 0 || sorted[i] != sorted[i - 1]) {
            p->slot[p->count] = sorted[i];
            p->capacity[p->count++] = 0;
        }
        if (++p->capacity[p->count - 1] > p->most)
            p->most = p->capacity[p->count - 1];
    }
    free(sorted);
    return MPILENS_MAP_OK;
}

/* A tree leaf whose distances follow the topology's costs: Scotch's distance between two leaves is
 * the sum of the link costs from their lowest common ancestor's level down, so level d's link
 * costs cost[d] - cost[d + 1]. Several processes on one slot add a level below the slots whose
 * distance is the smallest unit: sharing a slot is the cheapest. */
static int build_arch(const mpilens_map_topology_t *t, int most, SCOTCH_Arch *arch, double *largest)
{
    SCOTCH_Num size[MPILENS_MAP_MAX_DEPTH + 1], link[MPILENS_MAP_MAX_DEPTH + 1];
    int levels = t->depth + (most > 1);
    double scale = t->cost[0] > 0 ? SC_DISTANCE_RANGE / t->cost[0] : 0;
    *largest = 0;
    for (int d = 0; d < levels; d++) {
        double step = d < t->depth ? t->cost[d] - (d + 1 < t->depth ? t->cost[d + 1] : 0) : 0;
        size[d] = d < t->depth ? t->arity[d] : most;
        link[d] = (SCOTCH_Num)fmax(1, llround(step * scale));
        *largest += (double)link[d];
    }
    if (SCOTCH_archInit(arch) != 0)
        return MPILENS_MAP_ERR_NOMEM;
    if (SCOTCH_archTleaf(arch, levels, size, link) != 0) {
        SCOTCH_archExit(arch);
        return MPILENS_MAP_ERR_NOMEM;
    }
    return MPILENS_MAP_OK;
}

/* The sub-architecture of the places: place j of slot s is terminal s * most + j. */
static int build_subarch(SCOTCH_Arch *arch, const sc_places_t *p, int order, SCOTCH_Arch *sub, long *place_slot)
{
    SCOTCH_Num *terminal = malloc((size_t)order * sizeof *terminal);
    int n = 0, status = MPILENS_MAP_OK;
    if (!terminal)
        return MPILENS_MAP_ERR_NOMEM;
    for (int i = 0; i < p->count; i++)
        for (int j = 0; j < p->capacity[i]; j++) {
            place_slot[n] = p->slot[i];
            terminal[n++] = (SCOTCH_Num)(p->slot[i] * p->most + j);
        }
    if (SCOTCH_archInit(sub) != 0)
        status = MPILENS_MAP_ERR_NOMEM;
    else if (SCOTCH_archSub(sub, arch, order, terminal) != 0) {
        SCOTCH_archExit(sub);
        status = MPILENS_MAP_ERR_NOMEM;
    }
    free(terminal);
    return status;
}

/* Scotch's copy of the symmetrised graph, weights scaled to integers (at least 1 where anything
 * is sent). */
typedef struct {
    SCOTCH_Num *vert, *edge, *load;
} sc_graph_t;

static int build_graph(const mpilens_map_matrix_t *m, double largest, sc_graph_t *g, SCOTCH_Graph *graph)
{
    size_t edges = m->row_start[m->order];
    double total = 0;
    if (edges > (size_t)INT_MAX)
        return MPILENS_MAP_ERR_UNSUPPORTED;
    g->vert = malloc(((size_t)m->order + 1) * sizeof *g->vert);
    g->edge = malloc((edges + 1) * sizeof *g->edge);
    g->load = malloc((edges + 1) * sizeof *g->load);
    if (!g->vert || !g->edge || !g->load)
        return MPILENS_MAP_ERR_NOMEM;
    for (size_t e = 0; e < edges; e++)
        total += m->weight[e];
    double scale = total > 0 ? SC_LOAD_ROOM / (2 * total * largest) : 0;
    for (int v = 0; v <= m->order; v++)
        g->vert[v] = (SCOTCH_Num)m->row_start[v];
    for (size_t e = 0; e < edges; e++) {
        g->edge[e] = m->column[e];
        g->load[e] = (SCOTCH_Num)fmax(1, floor(m->weight[e] * scale));
    }
    if (SCOTCH_graphInit(graph) != 0)
        return MPILENS_MAP_ERR_NOMEM;
    if (SCOTCH_graphBuild(graph, 0, m->order, g->vert, NULL, NULL, NULL, (SCOTCH_Num)edges, g->edge, g->load) != 0) {
        SCOTCH_graphExit(graph);
        return MPILENS_MAP_ERR_NOMEM;
    }
    return MPILENS_MAP_OK;
}

/* SCOTCH_graphMap in a context of its own, seeded. */
static int map_graph(SCOTCH_Graph *graph, SCOTCH_Arch *sub, unsigned seed, SCOTCH_Num *part)
{
    SCOTCH_Context context;
    SCOTCH_Graph bound;
    SCOTCH_Strat strat;
    int status = MPILENS_MAP_ERR_NOMEM;
    if (SCOTCH_contextInit(&context) != 0)
        return status;
    if (SCOTCH_contextOptionSetNum(&context, SCOTCH_OPTIONNUMDETERMINISTIC, 1) == 0 &&
        SCOTCH_contextRandomClone(&context) == 0) {
        SCOTCH_contextRandomSeed(&context, (SCOTCH_Num)(seed & INT_MAX));
        if (SCOTCH_graphInit(&bound) == 0) {
            if (SCOTCH_contextBindGraph(&context, graph, &bound) == 0 && SCOTCH_stratInit(&strat) == 0) {
                if (SCOTCH_graphMap(&bound, sub, &strat, part) == 0)
                    status = MPILENS_MAP_OK;
                SCOTCH_stratExit(&strat);
            }
            SCOTCH_graphExit(&bound);
        }
    }
    SCOTCH_contextExit(&context);
    return status;
}

/* The first distinct slot at or after i with room left (union-find "next free" pointers, each slot
 * skipped for good once full). */
static int next_free(int *next, int i)
{
    int root = i;
    while (next[root] != root)
        root = next[root];
    while (next[i] != root) {
        int up = next[i];
        next[i] = root;
        i = up;
    }
    return root;
}

/* The index in the distinct slots of the first slot >= value. */
static int first_at_least(const sc_places_t *p, long value)
{
    int lo = 0, hi = p->count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->slot[mid] < value)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Slot index (in the distinct slots) for every process from Scotch's places, then the lightest
 * processes of overloaded slots moved to the nearest slots with room. */
static int repair(const mpilens_map_topology_t *t, const mpilens_map_matrix_t *m, const sc_places_t *p, int *slot_index,
                  long *slot_of)
{
    int order = m->order;
    int *room = malloc((size_t)p->count * sizeof *room);
    int *next = malloc(((size_t)p->count + 1) * sizeof *next);
    ml_map_keyed_t *movers = malloc((size_t)order * sizeof *movers);
    if (!room || !next || !movers) {
        free(room);
        free(next);
        free(movers);
        return MPILENS_MAP_ERR_NOMEM;
    }
    memcpy(room, p->capacity, (size_t)p->count * sizeof *room);
    for (int q = 0; q < order; q++)
        room[slot_index[q]]--;
    for (int i = 0; i <= p->count; i++)
        next[i] = i < p->count && room[i] <= 0 ? i + 1 : i;
    for (int q = 0; q < order; q++) {
        double weight = 0;
        for (size_t e = m->row_start[q]; e < m->row_start[q + 1]; e++)
            weight += m->weight[e];
        movers[q] = (ml_map_keyed_t){weight, q};
    }
    qsort(movers, (size_t)order, sizeof *movers, ml_map_by_key);
    for (int k = 0; k < order; k++) {
        int q = movers[k].index, from = slot_index[q];
        if (room[from] >= 0)
            continue;
        for (int d = t->depth - 2; d >= -1; d--) {
            long span = d >= 0 ? t->below[d + 1] : t->slots, lo = p->slot[from] / span * span;
            int to = next_free(next, first_at_least(p, lo));
            if (to < p->count && p->slot[to] < lo + span) {
                room[from]++;
                if (--room[to] == 0)
                    next[to] = to + 1;
                slot_index[q] = to;
                break;
            }
        }
    }
    for (int q = 0; q < order; q++)
        slot_of[q] = p->slot[slot_index[q]];
    free(room);
    free(next);
    free(movers);
    return MPILENS_MAP_OK;
}

/* Scotch's places (indices in the sub-architecture) to indices of distinct slots. */
static void slot_indices(const sc_places_t *p, const long *place_slot, const SCOTCH_Num *part, int order,
                         int *slot_index)
{
    for (int q = 0; q < order; q++)
        slot_index[q] = first_at_least(p, place_slot[part[q]]);
}

int ml_map_scotch(const mpilens_map_topology_t *t, mpilens_map_matrix_t *m, unsigned seed, const long *allowed,
                  long *slot_of)
{
    int order = m->order, status;
    /* Nothing to choose, and Scotch 7.0.3 crashes on a sub-architecture of one terminal. */
    if (order == 1) {
        slot_of[0] = allowed[0];
        return MPILENS_MAP_OK;
    }
    status = ml_map_matrix_graph(m);
    sc_places_t places = {0};
    sc_graph_t g = {0};
    SCOTCH_Arch arch, sub;
    SCOTCH_Graph graph;
    double largest;
    long *place_slot = malloc((size_t)order * sizeof *place_slot);
    SCOTCH_Num *part = malloc((size_t)order * sizeof *part);
    int *slot_index = malloc((size_t)order * sizeof *slot_index);
    if (status == MPILENS_MAP_OK && (!place_slot || !part || !slot_index))
        status = MPILENS_MAP_ERR_NOMEM;
    if (status == MPILENS_MAP_OK)
        status = places_of(allowed, order, &places);
    /* Terminal numbers are SCOTCH_Num: a machine beyond them is beyond this build of Scotch. */
    if (status == MPILENS_MAP_OK && t->slots > INT_MAX / places.most)
        status = MPILENS_MAP_ERR_UNSUPPORTED;
    if (status == MPILENS_MAP_OK && (status = build_arch(t, places.most, &arch, &largest)) == MPILENS_MAP_OK) {
        if ((status = build_subarch(&arch, &places, order, &sub, place_slot)) == MPILENS_MAP_OK) {
            if ((status = build_graph(m, largest, &g, &graph)) == MPILENS_MAP_OK) {
                status = map_graph(&graph, &sub, seed, part);
                SCOTCH_graphExit(&graph);
            }
            SCOTCH_archExit(&sub);
        }
        SCOTCH_archExit(&arch);
    }
    if (status == MPILENS_MAP_OK) {
        slot_indices(&places, place_slot, part, order, slot_index);
        status = repair(t, m, &places, slot_index, slot_of);
    }
    free(places.slot);
    free(places.capacity);
    free(g.vert);
    free(g.edge);
    free(g.load);
    free(place_slot);
    free(part);
    free(slot_index);
    return status;
}
