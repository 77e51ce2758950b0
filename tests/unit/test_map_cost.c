/* The cost model against hand-computed values: a 4-process ring on "node:2 core:2" under three
 * mappings (packed, split across the nodes, two processes per slot), single messages on a
 * 3-level tree, and the arguments it refuses. */
#include <stdio.h>
#include <string.h>

#include "mapunit.h"

static void check_cost(const mpilens_map_cost_t *c, double total, double hops, double weighted, double busiest,
                       int busiest_level, const double *levels, int depth)
{
    CHECK_NEAR(c->total_bytes, total, 0);
    CHECK_NEAR(c->hop_bytes, hops, 0);
    CHECK_NEAR(c->weighted_bytes, weighted, 0);
    CHECK_NEAR(c->busiest_link, busiest, 0);
    CHECK(c->busiest_level == busiest_level);
    for (int k = 0; k <= depth; k++)
        CHECK_NEAR(c->bytes_at_level[k], levels[k], 0);
}

/* Ring 0 -> 1 -> 2 -> 3 -> 0 of 1, 2, 4 and 8 bytes, and 16 bytes process 3 sends itself, on
 * "node:2 core:2" (costs 10 between nodes, 1 inside one): slots 0, 1 on node 0 and 2, 3 on node 1.
 * Hops: 2 inside a node, 4 between nodes. */
static void test_ring(void)
{
    mpilens_map_topology_t *t = topology("node:2 core:2");
    mpilens_map_matrix_t *m;
    CHECK(mpilens_map_matrix_create(4, &m) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 1, 1) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 1, 2, 2) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 2, 3, 4) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 3, 0, 8) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 3, 3, 16) == MPILENS_MAP_OK);
    mpilens_map_cost_t c;

    /* Packed: 0-1 and 2-3 inside nodes (1 + 4 bytes), 1-2 and 3-0 between (2 + 8).
     * hops 1x2 + 2x4 + 4x2 + 8x4 = 50; weighted 1 + 20 + 4 + 80 = 105.
     * Uplinks: slot 0 carries 1 + 8, slot 1 1 + 2, slot 2 2 + 4, slot 3 4 + 8 = 12 (the busiest);
     * node 0 and node 1 carry 2 + 8 = 10 each. */
    const long packed[] = {0, 1, 2, 3};
    CHECK(mpilens_map_cost(t, m, packed, &c) == MPILENS_MAP_OK);
    check_cost(&c, 31, 50, 105, 12, 1, (double[]){10, 5, 16}, 2);

    /* Split: every ring message crosses nodes (processes 0, 2 on node 0; 1, 3 on node 1).
     * hops 15 x 4 = 60; weighted 15 x 10 = 150; each node's uplink carries all 15 bytes,
     * more than any slot's (slot 3: 4 + 8). */
    const long split[] = {0, 2, 1, 3};
    CHECK(mpilens_map_cost(t, m, split, &c) == MPILENS_MAP_OK);
    check_cost(&c, 31, 60, 150, 15, 0, (double[]){15, 0, 16}, 2);

    /* Two processes per slot, both on node 0: 0-1 and 2-3 stay in their slot (free), 1-2 and 3-0
     * go between slots 0 and 1: hops (2 + 8) x 2 = 20, weighted 10, each slot's uplink 10. */
    const long doubled[] = {0, 0, 1, 1};
    CHECK(mpilens_map_cost(t, m, doubled, &c) == MPILENS_MAP_OK);
    check_cost(&c, 31, 20, 10, 10, 1, (double[]){0, 10, 21}, 2);

    /* slots out of range are refused, the result untouched */
    const long beyond[] = {0, 1, 2, 4}, negative[] = {0, -1, 2, 3};
    memset(&c, 0, sizeof c);
    CHECK(mpilens_map_cost(t, m, beyond, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_cost(t, m, negative, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(c.total_bytes == 0);
    CHECK(mpilens_map_cost(NULL, m, packed, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_cost(t, NULL, packed, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_cost(t, m, NULL, &c) == MPILENS_MAP_ERR_ARG);
    CHECK(mpilens_map_cost(t, m, packed, NULL) == MPILENS_MAP_ERR_ARG);
    mpilens_map_matrix_free(m);
    mpilens_map_topology_free(t);
}

/* One message at a time on "node:2 package:2 core:2" with costs 100, 5, 1. */
static void test_single_messages(void)
{
    mpilens_map_topology_t *t = topology("node:2 package:2 core:2");
    const double costs[] = {100, 5, 1};
    CHECK(mpilens_map_topology_set_costs(t, costs, 3) == MPILENS_MAP_OK);
    mpilens_map_matrix_t *m;
    mpilens_map_cost_t c;
    CHECK(mpilens_map_matrix_create(2, &m) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 1, 3) == MPILENS_MAP_OK);

    /* slots 1 and 6: different nodes, 6 hops; the 3 bytes climb three uplinks on each side, and
     * the tie goes to the node level, the one nearest the root */
    CHECK(mpilens_map_cost(t, m, (long[]){1, 6}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 3, 18, 300, 3, 0, (double[]){3, 0, 0, 0}, 3);
    /* slots 4 and 6: same node, other package */
    CHECK(mpilens_map_cost(t, m, (long[]){4, 6}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 3, 12, 15, 3, 1, (double[]){0, 3, 0, 0}, 3);
    /* slots 2 and 3: same package */
    CHECK(mpilens_map_cost(t, m, (long[]){2, 3}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 3, 6, 3, 3, 2, (double[]){0, 0, 3, 0}, 3);
    /* one slot: nothing leaves it */
    CHECK(mpilens_map_cost(t, m, (long[]){5, 5}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 3, 0, 0, 0, -1, (double[]){0, 0, 0, 3}, 3);

    /* Two messages into one slot: process 0 on slot 0 sends 3 bytes and process 2 on slot 1
     * sends 5 to process 1 on slot 4. Slot 4, package 0, package 2, node 0 and node 1 each carry
     * 3 + 5 on their uplink; the node level wins the tie. */
    mpilens_map_matrix_free(m);
    CHECK(mpilens_map_matrix_create(3, &m) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 0, 1, 3) == MPILENS_MAP_OK);
    CHECK(mpilens_map_matrix_add(m, 2, 1, 5) == MPILENS_MAP_OK);
    CHECK(mpilens_map_cost(t, m, (long[]){0, 4, 1}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 8, 48, 800, 8, 0, (double[]){8, 0, 0, 0}, 3);
    mpilens_map_matrix_free(m);

    /* nothing sent */
    CHECK(mpilens_map_matrix_create(2, &m) == MPILENS_MAP_OK);
    CHECK(mpilens_map_cost(t, m, (long[]){0, 7}, &c) == MPILENS_MAP_OK);
    check_cost(&c, 0, 0, 0, 0, -1, (double[]){0, 0, 0, 0}, 3);
    mpilens_map_matrix_free(m);
    mpilens_map_topology_free(t);
}

int main(void)
{
    test_ring();
    test_single_messages();
    CHECK_DONE();
}
