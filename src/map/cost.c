/* What a mapping costs: the bytes by level of their lowest common ancestor, hops, the topology's
 * costs, and the busiest edge of the tree. O(entries x depth) time, O(slots) memory. */
#include <stdlib.h>

#include "map_internal.h"

/* Bytes through the uplink of each object (the edge to its parent, both directions), one array
 * per level: level d has slots / below[d + 1] objects, so all levels hold fewer than 2 x slots. */
typedef struct {
    double *load;
    size_t start[MPILENS_MAP_MAX_DEPTH]; /* level d's objects begin at load + start[d] */
} uplinks_t;

static int uplinks_create(const mpilens_map_topology_t *t, uplinks_t *u)
{
    size_t objects = 0;
    for (int d = 0; d < t->depth; d++) {
        u->start[d] = objects;
        objects += (size_t)(t->slots / t->below[d + 1]);
    }
    u->load = calloc(objects, sizeof *u->load);
    return u->load ? MPILENS_MAP_OK : MPILENS_MAP_ERR_NOMEM;
}

/* A message climbs from each of its slots to just below their lowest common ancestor. */
static void uplinks_add(const mpilens_map_topology_t *t, uplinks_t *u, long a, long b, int common, double bytes)
{
    for (int d = common + 1; d < t->depth; d++) {
        u->load[u->start[d] + (size_t)(a / t->below[d + 1])] += bytes;
        u->load[u->start[d] + (size_t)(b / t->below[d + 1])] += bytes;
    }
}

/* The busiest uplink; on a tie, the one nearest the root (the scarcer link). Level -1 when no
 * byte leaves a slot. */
static void uplinks_busiest(const mpilens_map_topology_t *t, const uplinks_t *u, mpilens_map_cost_t *c)
{
    c->busiest_link = 0;
    c->busiest_level = -1;
    for (int d = 0; d < t->depth; d++) {
        size_t objects = (size_t)(t->slots / t->below[d + 1]);
        for (size_t o = 0; o < objects; o++) {
            double load = u->load[u->start[d] + o];
            if (load > c->busiest_link) {
                c->busiest_link = load;
                c->busiest_level = d;
            }
        }
    }
}

mpilens_map_status_t mpilens_map_cost(const mpilens_map_topology_t *topology, const mpilens_map_matrix_t *matrix,
                                      const long *slot_of, mpilens_map_cost_t *cost)
{
    if (!topology || !matrix || !slot_of || !cost)
        return MPILENS_MAP_ERR_ARG;
    /* Oversubscription is several processes on one slot, never a slot beyond the last. */
    for (int p = 0; p < matrix->order; p++)
        if (slot_of[p] < 0 || slot_of[p] >= topology->slots)
            return MPILENS_MAP_ERR_ARG;
    uplinks_t uplinks;
    int status = uplinks_create(topology, &uplinks);
    if (status != MPILENS_MAP_OK)
        return status;
    mpilens_map_cost_t c = {0};
    int depth = topology->depth;
    for (size_t e = 0; e < matrix->count; e++) {
        double bytes = matrix->bytes[e];
        long a = slot_of[matrix->from[e]], b = slot_of[matrix->to[e]];
        /* depth - 1 for a slot with itself: it lands in bytes_at_level[depth] and costs nothing */
        int common = ml_map_common_level(topology, a, b);
        c.total_bytes += bytes;
        c.bytes_at_level[common + 1] += bytes;
        if (a == b)
            continue;
        c.hop_bytes += bytes * 2.0 * (depth - 1 - common);
        c.weighted_bytes += bytes * topology->cost[common + 1];
        uplinks_add(topology, &uplinks, a, b, common, bytes);
    }
    uplinks_busiest(topology, &uplinks, &c);
    free(uplinks.load);
    *cost = c;
    return MPILENS_MAP_OK;
}
